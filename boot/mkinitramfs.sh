#!/bin/bash
# Build the guest initramfs: busybox-static, its applet links and /init.
# gen_init_cpio (from the kernel tree) makes /dev/console without root.
#
# Usage: mkinitramfs.sh <kernel-tree> <repo-dir> <out.cpio>
set -euo pipefail

tree=$1
repo=$2
out=$3
work=$(dirname "$out")/initramfs.work
mkdir -p "$work"

gen=$work/gen_init_cpio
if [ ! -x "$gen" ] || [ "$tree/usr/gen_init_cpio.c" -nt "$gen" ]; then
	gcc -O2 -o "$gen" "$tree/usr/gen_init_cpio.c"
fi

busybox=/bin/busybox
spec=$work/spec
{
	for d in /bin /sbin /dev /proc /sys /tmp /mnt /root /etc; do
		echo "dir $d 0755 0 0"
	done
	echo "nod /dev/console 0600 0 0 c 5 1"
	echo "nod /dev/null 0666 0 0 c 1 3"
	echo "file /bin/busybox $busybox 0755 0 0"
	echo "file /init $repo/boot/init 0755 0 0"
	# Dynamically linked programs live on the ext4 disk, with their
	# libraries, so their text is page cache of a real disk filesystem.
	echo "slink /lib ../mnt/lib 0777 0 0"
	echo "slink /lib64 ../mnt/lib64 0777 0 0"
	echo "slink /usr ../mnt/usr 0777 0 0"
	echo "file /etc/passwd $repo/boot/passwd 0644 0 0"
	echo "file /etc/group $repo/boot/group 0644 0 0"
	# /usr is the disk's, so every applet goes to /bin or /sbin.
	$busybox --list-full | sed -E 's#^usr/##' | sort -u |
	while read -r a; do
		case $a in
		bin/busybox|linuxrc) continue ;;
		esac
		echo "slink /$a /bin/busybox 0777 0 0"
	done
} > "$spec"
"$gen" "$spec" > "$out.tmp"
mv "$out.tmp" "$out"
