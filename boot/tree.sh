#!/bin/bash
# Assemble the kernel tree: pristine linux-source-6.12 plus our new files and
# patches.  Files whose assembled content is unchanged keep their mtime, so
# kbuild rebuilds only what an edit touched; anything else that differs from
# the pristine tarball (a stale patch, a stray file) is reset first.
#
# Usage: tree.sh <cache-dir> <repo-dir>
set -euo pipefail

cache=$1
repo=$(cd "$2" && pwd)
tarball=/usr/src/linux-source-6.12.tar.xz
tree=$cache/linux-source-6.12
gitdir=$cache/pristine.git
git=(git --git-dir="$gitdir" --work-tree="$tree" -c core.quotepath=off)

pkgver=$(dpkg-query -W -f='${Version}' linux-source-6.12)
stamp=$cache/pristine.version

unpack() {
	echo "tree: unpacking $tarball ($pkgver)"
	rm -rf "$tree" "$gitdir" "$stamp"
	mkdir -p "$cache"
	tar -C "$cache" -xf "$tarball"
	# An index of the pristine tree (kept outside it, so kbuild's
	# setlocalversion never sees a repository) finds every file that
	# differs from the tarball in well under a second.
	"${git[@]}" init -q
	"${git[@]}" -c core.compression=1 -c core.looseCompression=1 add -A -f
	"${git[@]}" -c user.name=pristine -c user.email=pristine@localhost \
		commit -q -m "linux-source-6.12 $pkgver"
	echo "$pkgver" > "$stamp"
}

if [ ! -f "$stamp" ] || [ "$(cat "$stamp")" != "$pkgver" ] ||
   ! "${git[@]}" rev-parse -q --verify HEAD >/dev/null 2>&1; then
	unpack
fi
echo "tree: linux-source-6.12 $pkgver in $tree"

# Build the overlay: patched copies of the files our patches touch, and our
# new files, at their kernel-tree paths.
stage=$(mktemp -d)
trap 'rm -rf "$stage"' EXIT
mkdir -p "$stage/t"

npatches=0
if [ -f "$repo/mm-replica/series" ]; then
	while read -r p; do
		case "$p" in ''|'#'*) continue ;; esac
		# Seed the stage with the pristine version of every file the patch
		# names, then apply it strictly (no fuzz).
		grep -E '^(\+\+\+|---) [ab]/' "$repo/mm-replica/$p" |
		sed -E 's#^(\+\+\+|---) [ab]/##; s#\t.*##' | sort -u |
		while read -r f; do
			[ -e "$stage/t/$f" ] && continue
			if "${git[@]}" cat-file -e "HEAD:$f" 2>/dev/null; then
				mkdir -p "$stage/t/$(dirname "$f")"
				"${git[@]}" show "HEAD:$f" > "$stage/t/$f"
			fi
		done
		if ! patch -s -p1 -F0 -N --no-backup-if-mismatch -r - \
			-d "$stage/t" < "$repo/mm-replica/$p"; then
			echo "tree: patch $p does not apply to pristine $pkgver" >&2
			exit 1
		fi
		npatches=$((npatches + 1))
	done < "$repo/mm-replica/series"
fi

nnew=0
while read -r src rel; do
	if [ -e "$stage/t/$rel" ] || "${git[@]}" cat-file -e "HEAD:$rel" 2>/dev/null; then
		echo "tree: $src would overwrite the kernel's $rel; make it a patch" >&2
		exit 1
	fi
	mkdir -p "$stage/t/$(dirname "$rel")"
	cp "$repo/$src" "$stage/t/$rel"
	nnew=$((nnew + 1))
done < <("$repo/boot/newfiles.sh" "$repo")

(cd "$stage/t" && find . -type f | sed 's#^\./##' | LC_ALL=C sort) > "$stage/want"

# Everything in the tree that differs from the tarball now.
"${git[@]}" status --porcelain=v1 -z --ignored --untracked-files=all |
	tr '\0' '\n' | cut -c4- | LC_ALL=C sort -u > "$stage/dirty"

# Reset what is dirty but not wanted.
nreset=0
while read -r f; do
	[ -n "$f" ] || continue
	if "${git[@]}" cat-file -e "HEAD:$f" 2>/dev/null; then
		"${git[@]}" checkout -q HEAD -- "$f"
	else
		rm -f "$tree/$f"
	fi
	nreset=$((nreset + 1))
done < <(LC_ALL=C comm -23 "$stage/dirty" "$stage/want")

# Install what is wanted, touching only files whose content changes.
nchanged=0
while read -r f; do
	if ! cmp -s "$stage/t/$f" "$tree/$f"; then
		mkdir -p "$tree/$(dirname "$f")"
		cp "$stage/t/$f" "$tree/$f"
		nchanged=$((nchanged + 1))
	fi
done < "$stage/want"

# Prove it: the tree now differs from the tarball in exactly our files.
"${git[@]}" status --porcelain=v1 -z --ignored --untracked-files=all |
	tr '\0' '\n' | cut -c4- | sed '/^$/d' | LC_ALL=C sort -u > "$stage/after"
if ! LC_ALL=C comm -23 "$stage/after" "$stage/want" | cmp -s - /dev/null; then
	echo "tree: files differ from pristine that are not ours:" >&2
	LC_ALL=C comm -23 "$stage/after" "$stage/want" >&2
	exit 1
fi
echo "tree: $npatches patches, $nnew new files; $nchanged updated, $nreset reset to pristine"
