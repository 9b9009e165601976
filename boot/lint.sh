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
# pristine tree's index (a few MB) serves.  Debian's python3 has the ply and
# git modules that boot/deps.sh installs.
export PATH=/usr/bin:$PATH
root=$cache/lint-root
pristine=$(git --git-dir="$cache/pristine.git" rev-parse HEAD)
if [ "$(git -C "$root" rev-parse HEAD 2>/dev/null)" != "$pristine" ]; then
	rm -rf "$root"
	git clone -q --shared --no-checkout "$cache/pristine.git" "$root"
	git -C "$root" sparse-checkout set scripts LICENSES
	git -C "$root" checkout -q "$pristine"
	# checkpatch's test for the top of a kernel tree
	mkdir -p "$root"/{Documentation,arch,include,drivers,fs,init,ipc,kernel,lib}
fi
tree=$root

cd "$repo"
checkpatch=("$tree/scripts/checkpatch.pl" --root="$tree" --strict
	    --no-summary --quiet --show-types --color=never)

fail=0
n=0
for p in $(grep -v -e '^#' -e '^$' mm-replica/series 2>/dev/null); do
	n=$((n + 1))
	"${checkpatch[@]}" "mm-replica/$p" || fail=1
done
while read -r f; do
	n=$((n + 1))
	"${checkpatch[@]}" -f "$f" || fail=1
	case $f in
	*.c|*.h)
		out=$("$tree/scripts/kernel-doc" -none "$f" 2>&1)
		[ -z "$out" ] || { echo "$out"; fail=1; }
		;;
	esac
done < <(find mm-replica policies selftests Documentation -type f \
	  \( -name '*.c' -o -name '*.h' -o -name '*.rst' -o -name Kconfig \
	     -o -name Makefile -o -name '*.txt' \) 2>/dev/null | LC_ALL=C sort)
if [ $fail -ne 0 ]; then
	echo "lint: checkpatch --strict or kernel-doc found problems" >&2
	exit 1
fi
echo "lint: $n files clean (checkpatch --strict, kernel-doc)"
