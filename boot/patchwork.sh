#!/bin/bash
# Edit the hook patches as commits in a sparse git work tree of the
# pristine kernel, and export them back to mm-replica/.
#
#   boot/patchwork.sh init     (re)create $CACHE/patchwork with our series
#                              applied as commits (git am)
#   boot/patchwork.sh export   write its commits to mm-replica/*.patch and
#                              mm-replica/series
#   boot/patchwork.sh dir      print the work tree's path
#
# In between, edit files there and commit (git commit --fixup / rebase -i
# to change an earlier patch).  Only the files our patches touch are
# checked out; add more with `git sparse-checkout add <path>`.
set -euo pipefail
repo=$(cd "$(dirname "$0")/.." && pwd)
cache=${CACHE:-${XDG_CACHE_HOME:-$HOME/.cache}/numa-replica}
work=$cache/patchwork
base=$(git --git-dir="$cache/pristine.git" rev-parse HEAD)

case ${1:-} in
init)
	rm -rf "$work"
	git clone -q --shared --no-checkout "$cache/pristine.git" "$work"
	cd "$work"
	git config user.name numa-replica
	git config user.email numa-replica@example.org
	paths=$(grep -v -e '^#' -e '^$' "$repo/mm-replica/series" 2>/dev/null |
		while read -r p; do
			sed -n 's#^+++ b/##p' "$repo/mm-replica/$p"
		done | sort -u)
	git sparse-checkout set --no-cone ${paths:-/MAINTAINERS}
	git checkout -q -B work "$base"
	grep -v -e '^#' -e '^$' "$repo/mm-replica/series" 2>/dev/null |
	while read -r p; do
		git am -q "$repo/mm-replica/$p"
	done
	git log --oneline "$base"..
	;;
export)
	cd "$work"
	rm -f "$repo"/mm-replica/*.patch
	git format-patch -q --zero-commit --no-signature --no-numbered \
		-o "$repo/mm-replica" "$base"..HEAD
	(cd "$repo/mm-replica" && ls -1 ./*.patch | sed 's#^\./##') \
		> "$repo/mm-replica/series"
	cat "$repo/mm-replica/series"
	;;
dir)
	echo "$work"
	;;
*)
	sed -n '2,14p' "$0" | sed 's/^# \{0,1\}//'
	exit 2
	;;
esac
