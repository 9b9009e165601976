#!/bin/bash
# checkpatch --strict over our patches and our new kernel-tree files, and
# kernel-doc over our C sources.  Any finding fails.
#
# Usage: lint.sh <cache-dir> <repo-dir>
set -uo pipefail
cache=$1
repo=$(cd "$2" && pwd)

# checkpatch validates SPDX tags with scripts/spdxcheck.py, which needs the
# kernel's scripts/ and LICENSES/ in a git work tree: a sparse clone of the
# pristine tree's index (a few MB) serves.  Its include/ lets --strict learn
# the kernel's own CamelCase names (__SetPageMovable()), as in a full tree.
# Debian's python3 has the ply and git modules that boot/deps.sh installs.
export PATH=/usr/bin:$PATH
root=$cache/lint-root
pristine=$(git --git-dir="$cache/pristine.git" rev-parse HEAD)
if [ "$(git -C "$root" rev-parse HEAD 2>/dev/null)" != "$pristine" ] ||
   [ ! -d "$root/include/linux" ]; then
	rm -rf "$root"
	git clone -q --shared --no-checkout "$cache/pristine.git" "$root"
	git -C "$root" sparse-checkout set scripts LICENSES include
	git -C "$root" checkout -q "$pristine"
	# checkpatch's test for the top of a kernel tree
	mkdir -p "$root"/{Documentation,arch,include,drivers,fs,init,ipc,kernel,lib}
fi
tree=$root

cd "$repo"
# Run from the tree, whose git index lists the include/ files that --strict
# reads CamelCase names from (and where it caches them), on absolute paths.
# A patch checkpatch found clean is remembered by its content, the tree's
# (so the tree's checkpatch) and this script's (checkpatch's options):
# each run checks only what changed.
clean=$cache/lint-clean
mkdir -p "$clean"
checkpatch() {
	local key

	key=$( { echo "$pristine"; cat "${BASH_SOURCE[0]}" "$1"; } |
		sha256sum | cut -d' ' -f1)
	[ ! -e "$clean/$key" ] || return 0
	(cd "$tree" && "$tree/scripts/checkpatch.pl" --root="$tree" --strict \
		--no-summary --quiet --show-types --color=never "$1") &&
		touch "$clean/$key"
}

fail=0
n=0
patches=$(grep -v -e '^#' -e '^$' mm-replica/series 2>/dev/null || true)
for p in $patches; do
	n=$((n + 1))
	# An absolute path: checkpatch would take a relative path git tracks
	# for a source file, not a patch.
	checkpatch "$repo/mm-replica/$p" || fail=1
done

# All of our change as one patch, with new files at their kernel-tree
# paths: checks that span files (a __setup() and its documentation, new
# files and MAINTAINERS) see what the series provides as a whole.
whole=$(mktemp -d)
trap 'rm -rf "$whole"' EXIT
[ -n "${LINT_KEEP:-}" ] && trap - EXIT && echo "lint: whole patch in $whole/all.patch"
{
	for p in $patches; do
		sed -n '/^diff --git /,$p' "mm-replica/$p"
	done
	boot/newfiles.sh . | while read -r src dst; do
		git diff --no-index --no-color -- /dev/null "$src" |
			sed -e "s#^diff --git a/$src b/$src#diff --git a/$dst b/$dst#" \
			    -e "s#^+++ b/$src\$#+++ b/$dst#"
	done
} > "$whole/body"
{
	echo "From 0000000000000000000000000000000000000000 Mon Sep 17 00:00:00 2001"
	echo "From: numa-replica <numa-replica@example.org>"
	echo "Subject: [PATCH] numa-replica: the whole change"
	echo
	echo "Every hook patch and every new file at once, as the series adds them."
	echo
	echo "Signed-off-by: numa-replica <numa-replica@example.org>"
	echo "---"
	git apply --stat "$whole/body"
	echo
	cat "$whole/body"
} > "$whole/all.patch"
checkpatch "$whole/all.patch" || fail=1

newfiles=$(boot/newfiles.sh . | cut -d' ' -f1)
for f in $newfiles; do
	n=$((n + 1))
	case $f in
	*.c|*.h)
		out=$("$tree/scripts/kernel-doc" -none "$f" 2>&1)
		[ -z "$out" ] || { echo "$out"; fail=1; }
		;;
	esac
done
if [ $fail -ne 0 ]; then
	echo "lint: checkpatch --strict or kernel-doc found problems" >&2
	exit 1
fi
echo "lint: $n files and patches clean (checkpatch --strict, kernel-doc)"
