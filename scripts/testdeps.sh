#!/usr/bin/env bash
# Installs what the tests need, idempotently (apt packages, and under .build/):
#   xmllint            (Debian libxml2-utils) to validate responses against oai/testdata/schemas
#   vips, vipsthumbnail, pdftoppm, pdftotext, tesseract (+ English)
#                      (Debian libvips-tools, poppler-utils, tesseract-ocr, tesseract-ocr-eng)
#                      the background pipeline's tools: derivatives, tiles, PDF text, OCR
#   chromium           (Debian chromium) headless, to render and screenshot HTML reports
#   curl, jq, openssl  (Debian curl, jq, openssl) the README's five-minute walk
#   .build/venv        (a link to one in ~/.cache/shelfmark, made once per machine)
#                      a Python virtualenv with sickle, the third-party OAI-PMH harvester,
#                      schemathesis, which checks the server against its OpenAPI document,
#                      iiif-prezi3, which loads the IIIF manifests into its models, and
#                      iiif-validator, which checks the IIIF Image API (needs libmagic1),
#                      warcio and surt, which the WARC reader's offsets and SURTs must match,
#                      ocfl-py, whose validator checks the OCFL objects the ocfl package writes
#   .build/testdata/pymarc-5.4.0   the pymarc source distribution: real LoC MARC records under test/
#   haproxy            (Debian haproxy) the load balancer in front of the cluster fault test's servers
#   .build/bin/versitygw  versitygw, a real S3 API over a local directory (built from the Go
#                      module proxy, pinned, once per machine: kept in ~/.cache/shelfmark):
#                      the content store of the S3 and cluster tests
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
# the README's five-minute walk (e2e TestReadmeWalk) runs with these
command -v curl >/dev/null 2>&1 || missing+=(curl)
command -v jq >/dev/null 2>&1 || missing+=(jq)
command -v openssl >/dev/null 2>&1 || missing+=(openssl)
# iiif-validator's python-magic loads libmagic
[[ -n $(ls /usr/lib/*/libmagic.so.1 2>/dev/null) ]] || missing+=(libmagic1)
# bench rest's other load generator (the Fedora comparison's credentials test)
command -v wrk >/dev/null 2>&1 || missing+=(wrk)
# the cluster fault test's load balancer
command -v haproxy >/dev/null 2>&1 || [[ -x /usr/sbin/haproxy ]] || missing+=(haproxy)
if (( ${#missing[@]} )); then
	echo "== installing ${missing[*]}" >&2
	apt-get update -qq >&2 && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq --no-install-recommends "${missing[@]}" >&2
fi

# The Python tools, pinned, installed in this order:
#   sickle          the third-party OAI-PMH harvester
#   schemathesis 4  (its CLI differs from 3.x: --max-examples, not
#                   --hypothesis-max-examples; --checks all; no --stateful flag)
#   iiif-prezi3     the IIIF Presentation 3.0 models (pydantic, after the
#                   official schema) that the manifests are loaded into under test
#   iiif-validator  the IIIF consortium's Image API validator, run against the
#                   image service at the level its info.json claims
#   warcio          the Webrecorder WARC library pywb reads archives with; the warc
#                   package's tests check that it finds Shelfmark's records at the
#                   same offsets and lengths
#   surt            the Internet Archive's URL key library, which the SURTs of the
#                   web index must match
#   ocfl-py         the OCFL editors' reference Python implementation; its
#                   validator (ocfl-validate) checks the storage roots and
#                   objects the ocfl package writes, independently of the
#                   package's own validator
#   bagit           the Library of Congress's BagIt implementation (bagit-python);
#                   it validates the bags shelfmark export writes
# The virtualenv is kept outside the clone, in the user's cache beside Go's
# own build cache (one per Python version and set of pins, never changed once
# complete), and $build/venv links to it: a fresh clone on the same machine
# reuses it instead of installing everything again.
python_pins=(sickle==0.7.0 schemathesis==4.32.5 iiif-prezi3==3.1.1 iiif-validator==1.0.5 warcio==1.7.4 surt==0.3.1 ocfl-py==2.1.0 bagit==1.9.0)
tools=${XDG_CACHE_HOME:-$HOME/.cache}/shelfmark
mkdir -p "$tools"
venv=$tools/venv-$({ python3 --version; printf '%s\n' "${python_pins[@]}"; } | sha256sum | cut -c1-16)
if [[ ! -e $venv/complete ]]; then
	(
		flock 9 # another clone may be making the same one
		if [[ ! -e $venv/complete ]]; then
			rm -rf "$venv"
			python3 -m venv "$venv" >&2
			for pin in "${python_pins[@]}"; do
				echo "== installing $pin into $venv" >&2
				"$venv/bin/pip" install -q "$pin" >&2
			done
			touch "$venv/complete"
		fi
	) 9>"$venv.lock"
fi
if [[ -d $build/venv && ! -L $build/venv ]]; then
	rm -rf "$build/venv" # a virtualenv of its own, from before the shared one
fi
ln -sfn "$venv" "$build/venv"

# the source distribution is kept in the user's cache: a fresh clone unpacks it
if [[ ! -d $build/testdata/pymarc-5.4.0/test ]]; then
	if [[ ! -s $tools/pymarc-5.4.0.tar.gz ]]; then
		echo "== fetching the pymarc 5.4.0 source distribution (test records)" >&2
		tmp=$(mktemp -d "$tools/fetch.XXXXXX")
		python3 -m pip download -q --no-binary :all: --no-deps -d "$tmp" pymarc==5.4.0 >&2
		mv "$tmp"/pymarc-5.4.0.tar.gz "$tools/pymarc-5.4.0.tar.gz"
		rm -rf "$tmp"
	fi
	tar -xzf "$tools/pymarc-5.4.0.tar.gz" -C "$build/testdata"
fi

# axe-core: the browser tests (e2e TestBrowser) inject axe.min.js
# into every page; fetched as scripts/vendor-ui.sh fetches the interface's
# packages, checked against the registry's published integrity
axe_version=4.14.1
axe_integrity=sha512-FHfa+lmNjQZfJz1q8wKqIDwC6DExcHt/pkjNQb09a3NPjCKg2rhu5qb2S4r76ASyFNNtuFooJpZe37OgudVGtQ==
# (the package is kept in the user's cache, and checked again on every use)
if [[ $(cat "$build/axe-core/VERSION" 2>/dev/null) != "$axe_version" || ! -s $build/axe-core/axe.min.js ]]; then
	tmp=$(mktemp -d)
	if [[ -s $tools/axe-core-$axe_version.tgz ]]; then
		cp "$tools/axe-core-$axe_version.tgz" "$tmp/axe.tgz"
	else
		echo "== fetching axe-core $axe_version from the npm registry" >&2
		curl -fsSL "https://registry.npmjs.org/axe-core/-/axe-core-$axe_version.tgz" -o "$tmp/axe.tgz"
	fi
	got="sha512-$(openssl dgst -sha512 -binary "$tmp/axe.tgz" | base64 -w0)"
	if [[ $got != "$axe_integrity" ]]; then
		echo "axe-core@$axe_version: integrity $got, want $axe_integrity" >&2
		rm -rf "$tmp"
		exit 1
	fi
	cp "$tmp/axe.tgz" "$tools/axe-core-$axe_version.tgz.tmp"
	mv "$tools/axe-core-$axe_version.tgz.tmp" "$tools/axe-core-$axe_version.tgz"
	tar -xzf "$tmp/axe.tgz" -C "$tmp"
	rm -rf "$build/axe-core"
	mkdir -p "$build/axe-core"
	cp "$tmp/package/axe.min.js" "$tmp/package/LICENSE" "$build/axe-core/"
	echo "$axe_version" >"$build/axe-core/VERSION"
	rm -rf "$tmp"
fi

# versitygw: a real S3 API over a local directory (Apache-2.0), built from
# the module proxy at a pinned version; the S3 content store's tests and the
# cluster fault test run it on 127.0.0.1. The build is kept outside the
# clone, in the user's cache beside Go's own build cache (one per version,
# Go version and platform), so a fresh clone on the same machine copies it
# instead of building it again.
versitygw_version=v1.8.0
versitygw_cached=$tools/versitygw-$versitygw_version-$(go env GOVERSION)-$(go env GOOS)-$(go env GOARCH)
if [[ ! -x $versitygw_cached ]]; then
	echo "== building versitygw $versitygw_version into $tools (once per machine)" >&2
	tmp=$(mktemp -d "$tools/build.XXXXXX")
	(cd / && GOFLAGS= GOBIN="$tmp" go install "github.com/versity/versitygw/cmd/versitygw@$versitygw_version") >&2
	mv "$tmp/versitygw" "$versitygw_cached" # a rename: a cut-short build leaves no binary behind
	rm -rf "$tmp"
fi
if [[ $(cat "$build/bin/versitygw.version" 2>/dev/null) != "$versitygw_version" || ! -x $build/bin/versitygw ]] ||
	! cmp -s "$versitygw_cached" "$build/bin/versitygw"; then
	mkdir -p "$build/bin"
	cp "$versitygw_cached" "$build/bin/versitygw.tmp"
	mv "$build/bin/versitygw.tmp" "$build/bin/versitygw"
	echo "$versitygw_version" >"$build/bin/versitygw.version"
fi
