# `make run`: what the NUMA guest looks like.  Runs in the guest under sh.
echo "== NUMA topology of the guest"
numactl --hardware
echo
echo "== a dynamically linked program from the ext4 disk, on each node"
for node in $(seq 0 $(($(ls -d /sys/devices/system/node/node* | wc -l) - 1))); do
	printf 'node %s: ' "$node"
	numactl --cpunodebind="$node" --membind="$node" \
		sh -c 'sha256sum /usr/bin/bash | cut -c1-16; grep -h " /usr/bin/bash" /proc/self/numa_maps 2>/dev/null | head -n 1' 
done
