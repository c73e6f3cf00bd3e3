#!/usr/bin/env bash
# The whole test suite, as CI runs it (.ci/run calls exactly this):
#   scripts/test.sh            all tests, both backends (SQLite and a real PostgreSQL)
#   scripts/test.sh -short     the same with the long crash/soak tests cut short
# Extra arguments go to `go test`. PostgreSQL is installed (apt) if absent,
# started on 127.0.0.1:55432 with its data under .build/, and stopped at the end.
# scripts/testdeps.sh installs what the OAI-PMH and MARC tests need (xmllint,
# a virtualenv with the sickle harvester, pymarc's test records) under .build/.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
# SQLite's FTS5 (full-text search) is compiled into mattn/go-sqlite3 only
# with this tag; every go command below builds with it.
export GOFLAGS="${GOFLAGS:+$GOFLAGS }-tags=sqlite_fts5"
export SHELFMARK_BUILD_DIR=${SHELFMARK_BUILD_DIR:-$PWD/.build}
mkdir -p "$SHELFMARK_BUILD_DIR"

step() { echo "== $*" >&2; }

# a C compiler for the SQLite driver (cgo), and libjpeg-turbo's header: the
# suite tests the build that uses it (and, below, the one that does not)
if ! command -v gcc >/dev/null 2>&1; then
	step "installing gcc"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq gcc libc6-dev >&2
fi
if [[ $(scripts/tags.sh 2>/dev/null) == *nolibjpeg* ]]; then
	step "installing libjpeg-dev"
	apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libjpeg-dev >&2
fi

step "gofmt"
unformatted=$(gofmt -l $(git ls-files '*.go' 2>/dev/null || find . -name '*.go' -not -path './.build/*'))
if [[ -n $unformatted ]]; then
	echo "gofmt would change: $unformatted" >&2
	exit 1
fi

step "go mod tidy"
if ! go mod tidy -diff >&2; then
	echo "go.mod or go.sum is not tidy: run go mod tidy" >&2
	exit 1
fi

step "go vet"
go vet ./...
# the build without libjpeg-turbo (make chooses it where jpeglib.h is missing)
go vet -tags sqlite_fts5,nolibjpeg ./libjpeg/ ./http/iiif/ ./worker/

step "staticcheck"
# pinned, and built once per machine and Go version, outside the clone (in
# the user's cache, beside Go's own build cache): a fresh clone reuses it
staticcheck_version=v0.8.2
staticcheck=${XDG_CACHE_HOME:-$HOME/.cache}/shelfmark/staticcheck-$staticcheck_version-$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)
if [[ ! -x $staticcheck ]]; then
	step "building staticcheck $staticcheck_version (once per machine)"
	mkdir -p "$(dirname "$staticcheck")"
	tmp=$(mktemp -d "$(dirname "$staticcheck")/build.XXXXXX")
	(cd / && GOFLAGS= GOBIN="$tmp" go install "honnef.co/go/tools/cmd/staticcheck@$staticcheck_version")
	mv "$tmp/staticcheck" "$staticcheck" # a rename: a cut-short build leaves no binary behind
	rm -rf "$tmp"
fi
"$staticcheck" ./...

# Litestream, the companion that replicates the SQLite database to S3
# (docs/backup.md), for the test that replicates and restores with it:
# pinned, built once per machine and Go version, as staticcheck is
litestream_version=v0.5.18
litestream=${XDG_CACHE_HOME:-$HOME/.cache}/shelfmark/litestream-$litestream_version-$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)
if [[ ! -x $litestream ]]; then
	step "building litestream $litestream_version (once per machine)"
	mkdir -p "$(dirname "$litestream")"
	tmp=$(mktemp -d "$(dirname "$litestream")/build.XXXXXX")
	(cd / && GOFLAGS= GOBIN="$tmp" go install "github.com/benbjohnson/litestream/cmd/litestream@$litestream_version")
	mv "$tmp/litestream" "$litestream"
	rm -rf "$tmp"
fi
export SHELFMARK_LITESTREAM=$litestream

step "test tools and data: xmllint, vips, poppler, tesseract, sickle, pymarc's MARC records"
scripts/testdeps.sh
# tests that need the pipeline's tools fail rather than skip without them
export SHELFMARK_REQUIRE_TOOLS=1
export SHELFMARK_PYMARC_DIR=$SHELFMARK_BUILD_DIR/testdata/pymarc-5.4.0
export SHELFMARK_TEST_PYTHON=$SHELFMARK_BUILD_DIR/venv/bin/python
export SHELFMARK_VERSITYGW=$SHELFMARK_BUILD_DIR/bin/versitygw

step "PostgreSQL for the conformance suite"
scripts/postgres.sh start
trap 'scripts/postgres.sh stop' EXIT
SHELFMARK_TEST_DATABASE_URL=$(scripts/postgres.sh url)
export SHELFMARK_TEST_DATABASE_URL
# a streaming replica of it, for the read replica tests
scripts/postgres.sh replica-start
SHELFMARK_TEST_REPLICA_URL=$(scripts/postgres.sh replica-url)
export SHELFMARK_TEST_REPLICA_URL

step "go test"
go test -count=1 -timeout 25m "$@" ./...
step "go test, the JPEG code without libjpeg-turbo (nolibjpeg)"
go test -count=1 -tags sqlite_fts5,nolibjpeg "$@" ./libjpeg/ ./http/iiif/
