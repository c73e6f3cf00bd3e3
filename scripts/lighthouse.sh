#!/usr/bin/env bash
# Lighthouse's performance and accessibility scores for the web interface's
# work page and search page, as a browser on this machine sees them:
#   scripts/lighthouse.sh            builds shelfmark, serves a fresh data
#                                    directory on 127.0.0.1 with one work of
#                                    PAGES page images, and prints the scores
# Lighthouse comes from the npm registry at a pinned version, installed into
# .build/lighthouse (needs Node and npm); it drives the system chromium
# (CHROME_PATH, default /usr/bin/chromium), headless. Not part of the tests:
# scores depend on the machine and its load. Each page is measured with
# Lighthouse's mobile defaults (simulated slow network and CPU) and with its
# desktop preset.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${SHELFMARK_BUILD_DIR:-$PWD/.build}
version=12.8.2
pages=${PAGES:-24}
export CHROME_PATH=${CHROME_PATH:-/usr/bin/chromium}
lh=$build/lighthouse

for tool in node npm jq curl openssl "$CHROME_PATH"; do
	command -v "$tool" >/dev/null 2>&1 || { echo "lighthouse.sh needs $tool" >&2; exit 1; }
done
if [[ $(node -p "try { require('$lh/node_modules/lighthouse/package.json').version } catch (e) { '' }") != "$version" ]]; then
	echo "== installing lighthouse $version into $lh" >&2
	mkdir -p "$lh"
	npm install --silent --no-audit --no-fund --prefix "$lh" "lighthouse@$version" >&2
fi

tmp=$(mktemp -d)
pid=
cleanup() {
	[[ -n $pid ]] && kill "$pid" 2>/dev/null && wait "$pid" 2>/dev/null
	rm -rf "$tmp"
}
trap cleanup EXIT

echo "== building shelfmark" >&2
go build -tags "$(scripts/tags.sh)" -o "$tmp/shelfmark" ./cmd/shelfmark
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
base=http://127.0.0.1:$port
(cd "$tmp" && exec ./shelfmark serve --addr "127.0.0.1:$port" >serve.log 2>&1) &
pid=$!
for _ in $(seq 600); do
	curl -fs "$base/readyz" >/dev/null 2>&1 && break
	kill -0 "$pid" 2>/dev/null || { cat "$tmp/serve.log" >&2; exit 1; }
	sleep 0.1
done
curl -fs "$base/readyz" >/dev/null || { echo "serve did not become ready" >&2; exit 1; }

echo "== a work of $pages pages" >&2
auth="Authorization: Bearer $("$tmp/shelfmark" token create --user admin --data "$tmp/shelfmark-data" | tail -n 1)"
api=$base/api/v1
work=$(curl -fs -X POST "$api/works" -H "$auth" -H 'Content-Type: application/json' -d '{"visibility": "public",
  "metadata": {"dc:title": "Atlas of the Rhine", "dc:creator": "Hydrographic Office", "dc:date": "1899",
  "dc:subject": ["Rivers", "Maps"], "dc:description": "A river atlas in sheets, one page image each."}}' | jq -r .id)
# a small real PNG page image (64x48)
echo 'iVBORw0KGgoAAAANSUhEUgAAAEAAAAAwCAAAAACEICPDAAAALUlEQVR42mN4TSFgGDVg1IBRA4alARpEglEDRg0YNWD4GzBaJo4aMGrAiDYAAPkoHQjshpmMAAAAAElFTkSuQmCC' |
	openssl base64 -d -A >"$tmp/page.png"
for i in $(seq "$pages"); do
	fs=$(curl -fs -X POST "$api/filesets" -H "$auth" -H 'Content-Type: application/json' \
		-d "{\"parent\": \"$work\", \"visibility\": \"public\", \"metadata\": {\"dc:title\": \"Sheet $i\"}}" | jq -r .id)
	curl -fs -X POST "$api/resources/$fs/files?name=sheet-$i.png" -H "$auth" -H 'Content-Type: image/png' \
		--data-binary @"$tmp/page.png" >/dev/null
done
# the thumbnails are made in the background: wait (up to two minutes)
for _ in $(seq 240); do
	(( $(curl -fs "$base/works/$work" | grep -o '<img' | wc -l) >= pages )) && break
	sleep 0.5
done

score() { # url preset
	local out=$tmp/report.json flags=()
	[[ $2 == desktop ]] && flags=(--preset=desktop)
	"$lh/node_modules/.bin/lighthouse" "$1" --quiet --only-categories=performance,accessibility "${flags[@]}" \
		--chrome-flags="--headless=new --no-sandbox --disable-dev-shm-usage" --output=json --output-path="$out" >&2
	jq -r --arg preset "$2" --arg url "${1#"$base"}" \
		'"\($url)\t\($preset)\tperformance \(.categories.performance.score * 100 | round)\taccessibility \(.categories.accessibility.score * 100 | round)\tLCP \(.audits["largest-contentful-paint"].displayValue)\tTBT \(.audits["total-blocking-time"].displayValue)"' "$out"
}
echo "== lighthouse $version, $("$CHROME_PATH" --version 2>/dev/null | head -n 1)" >&2
for url in "$base/works/$work" "$base/search?q=rhine"; do
	score "$url" mobile
	score "$url" desktop
done
