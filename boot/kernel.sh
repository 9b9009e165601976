#!/bin/bash
# Configure and build one kernel flavour out of tree, with ccache.
#
# Usage: kernel.sh <cache-dir> <repo-dir> <flavour> <log>
#   debug:   base + replica + debug fragments (what `make check` boots)
#   bench:   base + replica + bench, no debugging (what `make bench` measures)
#   vanilla: base + bench, on the pristine tree (bench's reference)
set -euo pipefail

cache=$1
repo=$(cd "$2" && pwd)
flavour=$3
log=$4
tree=$cache/linux-source-6.12
obj=$cache/build/$flavour
cfg=$cache/build/.config-$flavour

case $flavour in
debug)	frags=(base replica debug) ;;
bench)	frags=(base replica bench) ;;
vanilla) frags=(base bench)
	tree=$("$repo/boot/vanilla-tree.sh" "$cache") ;;
*)	echo "kernel: unknown flavour '$flavour'" >&2; exit 2 ;;
esac
fragfiles=()
for f in "${frags[@]}"; do
	[ -f "$repo/boot/$f.config" ] && fragfiles+=("$repo/boot/$f.config")
done

mkdir -p "$obj" "$cfg" "$(dirname "$log")"
export CCACHE_DIR=$cache/ccache CCACHE_MAXSIZE=${CCACHE_MAXSIZE:-8G}
{
	echo "kernel: flavour $flavour, linux-source-6.12 $(dpkg-query -W -f='${Version}' linux-source-6.12)"
	echo "kernel: fragments ${fragfiles[*]}"
} | tee "$log"

# Generate the config in a scratch directory and install it only when it
# changed, so an unchanged config costs no rebuild.
make -s -C "$tree" O="$cfg" tinyconfig >>"$log" 2>&1
"$tree/scripts/kconfig/merge_config.sh" -m -O "$cfg" "$cfg/.config" \
	"${fragfiles[@]}" >>"$log" 2>&1
make -s -C "$tree" O="$cfg" olddefconfig >>"$log" 2>&1

# Every line of every fragment must survive olddefconfig: an option that
# silently fell away (a missing dependency) would test the wrong kernel.
bad=0
for f in "${fragfiles[@]}"; do
	while IFS= read -r line; do
		sym=${line%%=*}
		val=${line#*=}
		if [ "$val" = n ]; then
			grep -q "^$sym=" "$cfg/.config" || continue
		else
			grep -qxF "$line" "$cfg/.config" && continue
		fi
		echo "kernel: $(basename "$f"): $line did not hold; got:" \
			"$(grep -E "^$sym=|^# $sym is not set" "$cfg/.config")" >&2
		bad=1
	done < <(grep -E '^CONFIG_[A-Za-z0-9_]+=' "$f")
done
[ $bad -eq 0 ] || exit 1

if ! cmp -s "$cfg/.config" "$obj/.config"; then
	echo "kernel: config changed"
	cp "$cfg/.config" "$obj/.config"
fi

start=$(date +%s)
kmake=(make -C "$tree" O="$obj" CC="ccache gcc" -j"$(($(nproc) + 1))"
       KBUILD_BUILD_USER=numa-replica KBUILD_BUILD_HOST=guest)
# Our own objects must also be clean with W=1 (checked when they change).
w1stamp=$obj/.replica-w1.stamp
if [ -d "$tree/mm/replica" ] && { [ ! -f "$w1stamp" ] ||
   [ -n "$(find "$tree/mm/replica" "$tree/include/linux/replica.h" \
	   "$obj/.config" -newer "$w1stamp" 2>/dev/null)" ]; }; then
	rm -f "$obj"/mm/replica/*.o "$obj"/mm/replica/policies/*.o
	if ! "${kmake[@]}" W=1 mm/replica/ > "$log.w1" 2>&1 ||
	   grep -E '(warning|error):' "$log.w1"; then
		echo "kernel: mm/replica/ does not build cleanly with W=1:" >&2
		tail -n 20 "$log.w1" >&2
		exit 1
	fi
	rm -f "$obj"/mm/replica/*.o "$obj"/mm/replica/policies/*.o
	touch "$w1stamp"
fi
if ! "${kmake[@]}" bzImage headers >>"$log" 2>&1; then
	echo "kernel: build failed; last lines of $log:" >&2
	grep -E 'error|Error' "$log" | tail -n 20 >&2
	exit 1
fi
# A warning in a file we add or patch fails the build.
ours=
[ "$flavour" = vanilla ] ||
	ours=$(cd "$tree" && git --git-dir="$cache/pristine.git" --work-tree=. \
		status --porcelain --untracked-files=all | cut -c4- |
		grep -E '\.[ch]$' || true)
warned=0
for f in $ours; do
	if grep -E "^($tree/)?$f:[0-9]+:[0-9]+: (warning|error):" "$log"; then
		warned=1
	fi
done
[ $warned -eq 0 ] || { echo "kernel: warnings in our files" >&2; exit 1; }
echo "kernel: $obj/arch/x86/boot/bzImage built in $(($(date +%s) - start)) s"
