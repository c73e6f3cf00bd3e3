#!/usr/bin/env bash
# Runs the bulk-ingest lab (docs/design.md) at the sizes of its targets on SQLite and on the
# project's PostgreSQL (scripts/postgres.sh), one scenario at a time, writing
# JSON and HTML reports under OUT (default bench-out/). Takes about 90 minutes
# on a 2-core machine. SIZE overrides the patents, collection and oai work counts.
#
# It runs the lab binary, shelfmark-bench, and the shelfmark binary beside
# it as the servers: LAB names a built lab (make bench builds
# bin/shelfmark-bench and bin/shelfmark); without it both are built into OUT.
#
#   scripts/bench.sh [OUT]
set -euo pipefail
cd "$(dirname "$0")/.."
out=${1:-bench-out}
size=${SIZE:-1000000}
mkdir -p "$out"
lab=${LAB:-}
if [ -z "$lab" ]; then
	go build -tags "$(scripts/tags.sh)" -o "$out/shelfmark" ./cmd/shelfmark
	go build -tags "$(scripts/tags.sh)" -o "$out/shelfmark-bench" ./cmd/shelfmark-bench
	lab=$out/shelfmark-bench
fi
bash scripts/postgres.sh start >/dev/null

run() { # name, then the bench arguments
	local name=$1
	shift
	echo "== $name: shelfmark-bench $*"
	"$lab" "$@" --json "$out/$name.json" --report "$out/$name" | tail -n 3
}
run patents-sqlite patents --objects "$size"
run collection-sqlite collection --objects "$size"
run book-sqlite book
run oai-sqlite oai --objects "$size"
run patents-postgres patents --objects "$size" --database "$(bash scripts/postgres.sh fresh bench_patents)"
run collection-postgres collection --objects "$size" --database "$(bash scripts/postgres.sh fresh bench_collection)"
run book-postgres book --database "$(bash scripts/postgres.sh fresh bench_book)"
run oai-postgres oai --objects "$size" --database "$(bash scripts/postgres.sh fresh bench_oai)"
