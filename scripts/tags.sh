#!/usr/bin/env bash
# Prints the build tags of shelfmark on this machine: sqlite_fts5 (SQLite's
# full-text search, always), and nolibjpeg when libjpeg-turbo's header
# (jpeglib.h; Debian libjpeg-dev) is missing, so the build uses Go's
# image/jpeg instead, several times slower at composing IIIF images; it
# says so on stderr.
set -euo pipefail
cc=$(go env CC 2>/dev/null || echo cc)
if printf '#include <stdio.h>\n#include <jpeglib.h>\n' | $cc -E -x c - >/dev/null 2>&1; then
	echo sqlite_fts5
else
	echo "note: jpeglib.h not found: building without libjpeg-turbo (apt-get install libjpeg-dev for faster IIIF images)" >&2
	echo sqlite_fts5,nolibjpeg
fi
