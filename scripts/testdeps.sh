#!/usr/bin/env bash
# Installs what the tests need, idempotently (apt packages, and under .build/):
#   xmllint            (Debian libxml2-utils) to validate responses against oai/testdata/schemas
#   vips, vipsthumbnail, pdftoppm, pdftotext, tesseract (+ English)
#                      (Debian libvips-tools, poppler-utils, tesseract-ocr, tesseract-ocr-eng)
#                      the background pipeline's tools: derivatives, tiles, PDF text, OCR
#   chromium           (Debian chromium) headless, to render and screenshot HTML reports
#   curl, jq, openssl  (Debian curl, jq, openssl) the README's five-minute walk
#   .build/venv        a Python virtualenv with sickle, the third-party OAI-PMH harvester,
#                      schemathesis, which checks the server against its OpenAPI document,
#                      iiif-prezi3, which loads the IIIF manifests into its models, and
#                      iiif-validator, which checks the IIIF Image API (needs libmagic1),
#                      warcio and surt, which the WARC reader's offsets and SURTs must match
#   .build/testdata/pymarc-5.4.0   the pymarc source distribution: real LoC MARC records under test/
#   haproxy            (Debian haproxy) the load balancer in front of the cluster fault test's servers
#   .build/bin/versitygw  versitygw, a real S3 API over a local directory (built from the Go
#                      module proxy, pinned): the content store of the S3 and cluster tests
#   .build/axe-core/axe.min.js     axe-core from the npm registry (pinned, its published SHA-512
#                      checked; no Node): the accessibility rules the browser tests run in chromium
# Prints nothing on stdout; tests find these through the variables scripts/test.sh exports.
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
build=${SHELFMARK_BUILD_DIR:-$PWD/.build}
mkdir -p "$build/testdata"

if ! command -v xmllint >/dev/null 2>&1; then
	echo "== installing xmllint (libxml2-utils)" >&2
	apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq libxml2-utils >&2
fi

missing=()
command -v vipsthumbnail >/dev/null 2>&1 || missing+=(libvips-tools)
command -v pdftoppm >/dev/null 2>&1 || missing+=(poppler-utils)
command -v tesseract >/dev/null 2>&1 || missing+=(tesseract-ocr)
[[ -n $(ls /usr/share/tesseract-ocr/*/tessdata/eng.traineddata 2>/dev/null) ]] || missing+=(tesseract-ocr-eng)
command -v chromium >/dev/null 2>&1 || missing+=(chromium)
# the README's five-minute walk (cmd/shelfmark TestReadmeWalk) runs with these
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# iiif-validator's python-magic loads libmagic
[[ -n $(ls /usr/lib/*/libmagic.so.1 2>/dev/null) ]] || missing+=(libmagic1)
# the cluster fault test's load balancer
command -v haproxy >/dev/null 2>&1 || [[ -x /usr/sbin/haproxy ]] || missing+=(haproxy)
if (( ${#missing[@]} )); then
	echo "== installing ${missing[*]}" >&2
	apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

if [[ ! -x $build/venv/bin/python ]] || ! "$build/venv/bin/python" -c 'import sickle' 2>/dev/null; then
	echo "== installing sickle into $build/venv" >&2
	python3 -m venv "$build/venv" >&2
	"$build/venv/bin/pip" install -q 'sickle==0.7.0' >&2
fi

# schemathesis 4 (its CLI differs from 3.x: --max-examples, not
# --hypothesis-max-examples; --checks all; no --stateful flag)
schemathesis_version=4.32.5
if [[ $("$build/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("schemathesis"))' 2>/dev/null) != "$schemathesis_version" ]]; then
	echo "== installing schemathesis $schemathesis_version into $build/venv" >&2
	"$build/venv/bin/pip" install -q "schemathesis==$schemathesis_version" >&2
fi

# iiif-prezi3: the IIIF Presentation 3.0 models (pydantic, after the
# official schema) that the manifests are loaded into under test
iiif_prezi3_version=3.1.1
if [[ $("$build/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("iiif-prezi3"))' 2>/dev/null) != "$iiif_prezi3_version" ]]; then
	echo "== installing iiif-prezi3 $iiif_prezi3_version into $build/venv" >&2
	"$build/venv/bin/pip" install -q "iiif-prezi3==$iiif_prezi3_version" >&2
fi

# iiif-validator: the IIIF consortium's Image API validator, run against
# the image service at the level its info.json claims
iiif_validator_version=1.0.5
if [[ $("$build/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("iiif-validator"))' 2>/dev/null) != "$iiif_validator_version" ]]; then
	echo "== installing iiif-validator $iiif_validator_version into $build/venv" >&2
	"$build/venv/bin/pip" install -q "iiif-validator==$iiif_validator_version" >&2
fi

# warcio: the Webrecorder WARC library pywb reads archives with; the warc
# package's tests check that it finds Shelfmark's records at the same
# offsets and lengths. surt: the Internet Archive's URL key library, which
# the SURTs of the web index must match.
warcio_version=1.7.4
if [[ $("$build/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("warcio"))' 2>/dev/null) != "$warcio_version" ]]; then
	echo "== installing warcio $warcio_version into $build/venv" >&2
	"$build/venv/bin/pip" install -q "warcio==$warcio_version" >&2
fi
surt_version=0.3.1
if [[ $("$build/venv/bin/python" -c 'import importlib.metadata as m; print(m.version("surt"))' 2>/dev/null) != "$surt_version" ]]; then
	echo "== installing surt $surt_version into $build/venv" >&2
	"$build/venv/bin/pip" install -q "surt==$surt_version" >&2
fi

if [[ ! -d $build/testdata/pymarc-5.4.0/test ]]; then
	echo "== fetching the pymarc 5.4.0 source distribution (test records)" >&2
	tmp=$(mktemp -d)
	python3 -m pip download -q --no-binary :all: --no-deps -d "$tmp" pymarc==5.4.0 >&2
	tar -xzf "$tmp"/pymarc-5.4.0.tar.gz -C "$build/testdata"
	rm -rf "$tmp"
fi

# axe-core: the browser tests (cmd/shelfmark TestBrowser) inject axe.min.js
# into every page; fetched as scripts/vendor-ui.sh fetches the interface's
# packages, checked against the registry's published integrity
axe_version=4.14.1
axe_integrity=sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==
if [[ $(cat "$build/axe-core/VERSION" 2>/dev/null) != "$axe_version" || ! -s $build/axe-core/axe.min.js ]]; then
	echo "== fetching axe-core $axe_version from the npm registry" >&2
	tmp=$(mktemp -d)
	curl -fsSL "https://registry.npmjs.org/axe-core/-/axe-core-$axe_version.tgz" -o "$tmp/axe.tgz"
	got="sha512-$(openssl dgst -sha512 -binary "$tmp/axe.tgz" | base64 -w0)"
	if [[ $got != "$axe_integrity" ]]; then
		echo "axe-core@$axe_version: integrity $got, want $axe_integrity" >&2
		rm -rf "$tmp"
		exit 1
	fi
	tar -xzf "$tmp/axe.tgz" -C "$tmp"
	rm -rf "$build/axe-core"
	mkdir -p "$build/axe-core"
	cp "$tmp/package/axe.min.js" "$tmp/package/LICENSE" "$build/axe-core/"
	echo "$axe_version" >"$build/axe-core/VERSION"
	rm -rf "$tmp"
fi

# versitygw: a real S3 API over a local directory (Apache-2.0), built once
# from the module proxy at a pinned version; the S3 content store's tests and
# the cluster fault test run it on 127.0.0.1
versitygw_version=v1.8.0
if [[ $(cat "$build/bin/versitygw.version" 2>/dev/null) != "$versitygw_version" || ! -x $build/bin/versitygw ]]; then
	echo "== building versitygw $versitygw_version into $build/bin" >&2
	mkdir -p "$build/bin"
	(cd / && GOFLAGS= GOBIN="$build/bin" go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version") >&2
	echo "$versitygw_version" >"$build/bin/versitygw.version"
fi
