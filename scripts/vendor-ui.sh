#!/usr/bin/env bash
# Fetches the web interface's front-end packages from the npm registry at
# pinned versions, checks each tarball against the registry's published
# integrity (SHA-512), and copies the files the interface serves into
# http/ui/static/vendor/, where go:embed puts them into the binary. The
# copies are committed: neither building nor running Shelfmark needs Node
# or the network. Run it again only to change a version (then record the
# new version in docs/dependencies.md).
set -euo pipefail
cd "$(dirname "${BASH_SOURCE[0]}")/.."
dest=http/ui/static/vendor
mkdir -p "$dest"

# name version file-in-package integrity
packages=(
	"sortablejs 1.15.7 package/Sortable.min.js sha512-Kk8wLQPlS+yi1ZEf48a4+fzHa4yxjC30M/Sr2AnQu+f/MPwvvX9XjZ6OWejiz8crBsLwSq8GHqaxaET7u6ux0A=="
	# the book viewer: Mirador's browser bundle (UMD, with React and its
	# other dependencies inside; sets window.Mirador), no build step
	# needed. 3.x, not 4.0.0: 4.0.0's bundle runs React in development
	# mode (its build replaced process.env with {}), with warnings on the
	# console and slower rendering.
	"mirador 3.4.3 package/dist/mirador.min.js sha512-yHoug0MHy4e9apykbbBhK+4CmbZS94zMxmugw2E2VX6iB0b2PKKY0JfYr/QfXh9P29YnWAbymaXJVpgbHVpTVw=="
)

for p in "${packages[@]}"; do
	read -r name version file integrity <<<"$p"
	tmp=$(mktemp -d)
	tgz="$tmp/pkg.tgz"
	curl -fsSL "https://registry.npmjs.org/$name/-/$name-$version.tgz" -o "$tgz"
	got="sha512-$(openssl dgst -sha512 -binary "$tgz" | base64 -w0)"
	if [[ $got != "$integrity" ]]; then
		echo "$name@$version: integrity $got, want $integrity" >&2
		exit 1
	fi
	tar -xzf "$tgz" -C "$tmp"
	cp "$tmp/$file" "$dest/"
	cp "$tmp/package/LICENSE"* "$dest/$name.LICENSE" 2>/dev/null || true
	# the licences of what a bundle holds, as its bundler collected them
	cp "$tmp/$file.LICENSE.txt" "$dest/" 2>/dev/null || true
	rm -rf "$tmp"
	echo "$name@$version -> $dest/$(basename "$file")" >&2
done
