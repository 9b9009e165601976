#!/bin/bash
# Guest disk.
#
#   mkdisk.sh stage <stage-dir> <selftests-dir> <tools-dir> <tests...>
#	Stage the files every guest disk holds: real dynamically linked
#	programs with their shared libraries (merged-/usr layout, as on the
#	host), our tools (in /usr/local/bin), the selftest binaries and the
#	guest-side runner; with MM_SELFTESTS=<dir>, the kernel's mm
#	selftests built there, in /mm-tests.
#   mkdisk.sh image <stage-dir> <image> <env-file> <run-file> <tests-file>
#                   [add-dir]
#	Make an ext4 image of the stage plus the run's own files, with
#	mke2fs -d (no root needed): the guest environment, the command to
#	run, the selftests to run.  ADD's files land in /add.
#   mkdisk.sh xfs <image>
#	Make an empty XFS image (sparse), the guest's /xfs: XFS caches most
#	files in large folios.
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)

# Programs from this machine that the guest runs from the disk.
programs=(bash ls cat cp mv rm sort uniq wc head tail tr cut sed grep gawk
	  md5sum sha256sum gzip find xargs env sleep seq dd stat date uname
	  numactl taskset true false stress-ng)

stage() {
	local dir=$1 tests=$2 tools=$3
	shift 3
	local tmp=$dir.tmp
	rm -rf "$tmp"
	mkdir -p "$tmp/usr/bin" "$tmp/usr/lib/x86_64-linux-gnu" "$tmp/lib64" \
		"$tmp/usr/local/bin" "$tmp/tests" "$tmp/guest"
	cp "$tools"/* "$tmp/usr/local/bin/"
	ln -s usr/lib "$tmp/lib"

	local p path libs=()
	for p in "${programs[@]}"; do
		path=$(type -P "$p") || { echo "mkdisk: $p not found" >&2; exit 1; }
		cp -L "$path" "$tmp/usr/bin/$p"
		libs+=("$path")
	done
	# The closure of their shared libraries, by soname.
	ldd "${libs[@]}" 2>/dev/null | awk '/=> \//{print $3} /^\t\/lib64\//{print $1}' |
	sort -u | while read -r lib; do
		cp -L "$lib" "$tmp/usr/lib/x86_64-linux-gnu/$(basename "$lib")"
	done
	ln -s ../lib/x86_64-linux-gnu/ld-linux-x86-64.so.2 \
		"$tmp/lib64/ld-linux-x86-64.so.2"
	[ -f "$tmp/usr/lib/x86_64-linux-gnu/ld-linux-x86-64.so.2" ] ||
		{ echo "mkdisk: no dynamic loader staged" >&2; exit 1; }

	local t
	: > "$tmp/guest/tests.list"
	for t in "$@"; do
		cp "$tests/$t" "$tmp/tests/$t"
		echo "$t" >> "$tmp/guest/tests.list"
	done
	# The kernel's mm selftests, for upstream_mm: /mnt/mm-tests.
	if [ -n "${MM_SELFTESTS:-}" ]; then
		mkdir -p "$tmp/mm-tests"
		find "$MM_SELFTESTS" -maxdepth 1 -type f -perm -u+x \
			-exec cp {} "$tmp/mm-tests/" \;
	fi
	cp "$here/run-tests" "$tmp/guest/run-tests"
	rm -rf "$dir"
	mv "$tmp" "$dir"
}

image() {
	local dir=$1 img=$2 env=$3 run=$4 tests=$5 add=${6:-}
	local root=$img.root
	rm -rf "$root" "$img"
	cp -al "$dir" "$root"
	cp "$env" "$root/guest/env"
	cp "$run" "$root/guest/run.sh"
	rm -f "$root/guest/tests.list"
	cp "$tests" "$root/guest/tests.list"
	mkdir -p "$root/add"
	if [ -n "$add" ]; then
		[ -d "$add" ] || { echo "mkdisk: ADD=$add is not a directory" >&2; exit 2; }
		cp -a "$add/." "$root/add/"
	fi
	local size=${DISK_SIZE:-1G}
	mke2fs -q -F -t ext4 -L replica -E root_owner=0:0 -d "$root" "$img" "$size" >/dev/null
	rm -rf "$root"
}

xfs() {
	local img=$1
	rm -f "$img"
	truncate -s "${XFS_SIZE:-1G}" "$img"
	mkfs.xfs -q -f -L replica-xfs "$img"
}

cmd=$1
shift
case $cmd in
stage) stage "$@" ;;
image) image "$@" ;;
xfs) xfs "$@" ;;
*) echo "mkdisk: unknown command $cmd" >&2; exit 2 ;;
esac
