#!/bin/bash
# The unpatched linux-source-6.12 tree that `make bench` builds as its
# reference, unpacked once into <cache-dir>/vanilla; prints its path.
#
# Usage: vanilla-tree.sh <cache-dir>
set -euo pipefail
tarball=/usr/src/linux-source-6.12.tar.xz
dir=$1/vanilla
tree=$dir/linux-source-6.12
pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12)

if [ "$(cat "$dir/version" 2>/dev/null)" != "$pkgver" ]; then
	echo "vanilla: unpacking $tarball ($pkgver)" >&2
	rm -rf "$dir"
	mkdir -p "$dir"
	tar -C "$dir" -xf "$tarball"
	echo "$pkgver" > "$dir/version"
fi
echo "$tree"
