#!/bin/bash
# Install the Debian packages the project needs, only those missing.
set -euo pipefail

pkgs=(
	linux-source-6.12 qemu-system-x86 busybox-static
	gcc libc6-dev make bc flex bison libelf-dev libssl-dev cpio
	e2fsprogs xfsprogs ccache libnuma-dev numactl git perl python3 python3-ply
	python3-git xz-utils
	coreutils grep sed gawk stress-ng gnuplot-nox sqlite3
	libsqlite3-dev
)

missing=()
for p in "${pkgs[@]}"; do
	st=$(dpkg-query -W -f='${db:Status-Status}' "$p" 2>/dev/null || true)
	[ "$st" = installed ] || missing+=("$p")
done
[ ${#missing[@]} -eq 0 ] && exit 0

echo "deps: installing ${missing[*]}"
sudo=
[ "$(id -u)" -eq 0 ] || sudo=sudo
export DEBIAN_FRONTEND=noninteractive
if ! $sudo apt-get install -y --no-install-recommends "${missing[@]}"; then
	$sudo apt-get update
	$sudo apt-get install -y --no-install-recommends "${missing[@]}"
fi
