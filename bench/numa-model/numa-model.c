// SPDX-License-Identifier: GPL-2.0
/*
 * numa-model: a QEMU TCG plugin that models what guest memory accesses
 * would cost on a NUMA machine.
 *
 * Every instruction fetch and every data access is given the guest
 * physical address it touches and goes through a cache model: an L1i, an
 * L1d and (when the preset has one) a private L2 per vCPU, and (when the
 * preset has one) a last-level cache shared by the vCPUs of a node.  What
 * misses the last level is a memory access, local when the address
 * belongs to the vCPU's own node and remote otherwise.  The modelled time
 * of a vCPU is
 *
 *   instructions * cpi + L2 hits * l2_lat + LLC hits * llc_lat
 *                      + local misses * local_lat + remote misses * remote_lat
 *
 * where a remote miss between the nodes of a pair given as near= or far=
 * costs near_lat or far_lat instead.
 * in cycles (L1 hits are in the base CPI).  The report adds what the
 * counts below let it cost at any latency: hits in a node cache, and
 * stores that invalidate copies in other caches.  Caches are physically tagged
 * and kept coherent by a directory: a store takes the line out of every
 * other vCPU's private caches and every other node's LLC, and a miss on a
 * line that another vCPU holds dirty is served from that vCPU's cache: a
 * remote transfer (remote_lat, counted remote and as a transfer) when that
 * vCPU is on another node, an LLC hit (or, with no LLC, a local access)
 * when it is on the same node.  That is the cost of struct page and rmap
 * lines written on one node and read on another.
 *
 * Data addresses come from QEMU (the physical address of each access).
 * QEMU 7.2 reports one as its RAM block's offset in QEMU's own RAM space
 * plus the block's address in the guest: node n's memory, in block n at
 * n * node_mb, shows at 2 * n * node_mb onwards (phys=doubled, the
 * default); later QEMUs report the guest physical address (phys=exact).
 * The validation run (validate.sh) tells which holds.
 * Instruction fetches are modelled once per executed translation block:
 * each cache line the block spans is fetched once.  Their physical address
 * is found from QEMU's host address for the block's bytes, which is why
 * the guest's RAM must be memory-backend-file objects: node N's file is
 * <ram>N, and /proc/self/maps says where QEMU mapped it.
 *
 * A node cache (the NUMA-Q's remote cache on its IQ-Link board, the
 * XceL4 cache of IBM's EXA chipsets) sits between a node's caches and
 * memory: it keeps the lines of remote memory (scope=remote) or of all
 * memory (scope=all) that the node fetched.  Its size was not published
 * for every machine, so the plugin keeps up to NC_SIZES of them side by
 * side, of different sizes, none affecting the others or the caches
 * above (what a node cache holds never changes what the CPUs' caches
 * hold): each counts which memory accesses it would have served.  A store
 * takes the line out of other nodes' node caches too.
 * With iprefetch=1, an instruction fetch that misses the L1i also brings
 * the next line into the caches (next-line prefetch), off the clock:
 * counted as a prefetch, not as a miss.
 *
 * The guest marks the points to measure between with a marker instruction
 * (see marker.h); at each marker, and at exit, the plugin appends every
 * vCPU's cumulative counts to the output file.  bench/numa-model/report
 * turns two marks into figures.
 *
 * Arguments (-plugin numa-model.so,key=value,...):
 *   out=FILE          where the counts go (required)
 *   ram=PREFIX        node N's RAM is the file PREFIX<N> (required)
 *   nodes=N cpus_per_node=C node_mb=M [cpu_nodes=K]
 *                     the guest's layout: vCPU v is on node v / C, and
 *                     node n holds guest physical [n * M, (n + 1) * M) MiB;
 *                     only the first K nodes (default N) have CPUs, the
 *                     others memory alone (a CXL memory expander)
 *   near=A-B[:C-D...] far=A-B[:C-D...]
 *                     node pairs whose remote accesses cost near_lat or
 *                     far_lat, not remote_lat: on a machine with a CXL
 *                     memory expander, its node and the socket it hangs
 *                     off (near), or the other socket, two hops away
 *                     (far).  A miss from one to the other's memory or
 *                     caches is also counted near or far.  The report
 *                     cannot cost such pairs with node caches: a hit
 *                     there does not say which latency it saved
 *   phys=doubled|exact how QEMU reports a data access's address (above)
 *   preset=modern|numaq|p4|altra2s|cxl  cache geometry and latencies
 *                     (see presets below)
 *   cpi= l2_lat= llc_lat= local_lat= remote_lat= near_lat= far_lat=
 *   mhz= line= l1i_kb=
 *   l1d_kb= l1_ways= l2_kb= l2_ways= llc_kb_per_cpu= llc_kb_per_node=
 *   llc_ways= nc_ways= iprefetch=0|1
 *                     override one figure of the preset (l2_kb=0: no
 *                     private L2; llc_kb_per_cpu=0 and llc_kb_per_node=0:
 *                     no shared LLC; llc_kb_per_node, when not 0, is the
 *                     LLC of a node whatever its CPUs)
 *   nc_kb=A:B:C       the sizes of the node caches kept side by side
 *                     (KiB; at most NC_SIZES; nc_kb=0: none)
 *   nc_scope=remote|all  what a node cache keeps
 *   llc_scope=all|local  what a node's LLC keeps: any line its CPUs
 *                     fetch (the default), or, as a memory-side cache
 *                     would, only lines of the node's own memory
 *   icount_shift=N    QEMU's -icount shift, only written into the counts
 *                     file (the turns depend on it, see struct counts)
 *   kernel_text=remote|local  local: the kernel's instruction fetches are
 *                     always local, as if its text were replicated on
 *                     every node (the seed's NUMA-Q kernels did that);
 *                     remote, the default: from the node it lives on
 *
 * The plugin keeps no locks on its caches: QEMU must run the vCPUs in one
 * thread (-accel tcg,thread=single, which -icount needs anyway).
 *   profile=FILE      also write, at each NUMA_MODEL_END, the instructions
 *                     that the vCPU which marked NUMA_MODEL_BEGIN ran
 *                     since, its L1 misses and its accesses that missed
 *                     every cache (instruction fetches and the block's
 *                     loads and stores), per translation block (by guest
 *                     virtual address): nmprofile.py makes it a profile
 *                     by function
 */
#include <errno.h>
#include <inttypes.h>
#include <limits.h>
#include <pthread.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "plugin-api.h"
#include "marker.h"

PLUGIN_EXPORT int qemu_plugin_version = PLUGIN_API_VERSION;

#define MAX_VCPUS	32	/* a bit each in a directory word */
#define MAX_NODES	8	/* a bit each in a directory byte */
#define MAX_RAM_MAPS	64
#define NC_SIZES	3	/* node cache sizes modelled side by side */

/*
 * The figures of a preset; where each comes from is in README.md here.
 * The last-level cache of a node is the real socket's (llc_kb_per_node),
 * or the per-core share of it times the guest's CPUs per node.  Node
 * cache sizes are swept where no figure was published.
 */
struct model {
	const char *name;
	double cpi;		/* cycles per instruction, all L1 hits */
	unsigned int l2_lat;	/* cycles: an L1 miss that hits the L2 */
	unsigned int llc_lat;	/* cycles: an L2 miss that hits the LLC */
	unsigned int local_lat;	/* cycles: an LLC miss to local memory */
	unsigned int remote_lat;/* cycles: an LLC miss to remote memory */
	unsigned int near_lat;	/* cycles: one between near= nodes */
	unsigned int far_lat;	/* cycles: one between far= nodes */
	unsigned int mhz;	/* to turn cycles into seconds */
	unsigned int line;	/* bytes */
	unsigned int l1i_kb, l1d_kb, l1_ways;
	unsigned int l2_kb, l2_ways;		/* private; 0: none */
	unsigned int llc_kb_per_cpu, llc_ways;	/* shared by a node; 0: none */
	unsigned int llc_kb_per_node;		/* if not 0: the node's LLC */
	unsigned int nc_kb[NC_SIZES], nc_ways;	/* node caches; 0: none */
	bool nc_all;		/* a node cache keeps local lines too */
	bool llc_local;		/* the LLC keeps lines of its node's memory only */
	bool iprefetch;		/* next-line instruction prefetch */
};

static const struct model presets[] = {
	{
		/* 2-socket Xeon Platinum 8180 (Skylake-SP), 2.5 GHz */
		.name = "modern", .cpi = 1.0, .l2_lat = 14, .llc_lat = 55,
		.local_lat = 203, .remote_lat = 328, .mhz = 2500,
		.line = 64, .l1i_kb = 32, .l1d_kb = 32, .l1_ways = 8,
		.l2_kb = 1024, .l2_ways = 16,
		.llc_kb_per_cpu = 1408, .llc_ways = 11,
		.llc_kb_per_node = 28 * 1408,
		.iprefetch = true,
	},
	{
		/*
		 * NUMA-Q quads of 700 MHz Pentium III Xeon, 2 MB private
		 * L2 each, and the quad's remote cache for remote lines.
		 */
		.name = "numaq", .cpi = 1.0, .l2_lat = 10, .llc_lat = 0,
		.local_lat = 126, .remote_lat = 1260, .mhz = 700,
		.line = 32, .l1i_kb = 16, .l1d_kb = 16, .l1_ways = 4,
		.l2_kb = 2048, .l2_ways = 4,
		.llc_kb_per_cpu = 0, .llc_ways = 0,
		.nc_kb = { 8 << 10, 32 << 10, 128 << 10 }, .nc_ways = 8,
		.iprefetch = true,
	},
	{
		/*
		 * IBM x445-class nodes (EXA2 chipset) of 2 GHz Pentium 4
		 * Xeon MP (Gallatin): a private 512 KiB L2 and 2 MiB L3 on
		 * each chip, and the chipset's node cache (XceL4) for all
		 * memory.
		 */
		.name = "p4", .cpi = 1.0, .l2_lat = 7, .llc_lat = 14,
		.local_lat = 530, .remote_lat = 1470, .mhz = 2000,
		.line = 64, .l1i_kb = 16, .l1d_kb = 8, .l1_ways = 4,
		.l2_kb = 512, .l2_ways = 8,
		.llc_kb_per_cpu = 2048, .llc_ways = 8,
		.nc_kb = { 16 << 10, 32 << 10, 64 << 10 }, .nc_ways = 8,
		.nc_all = true, .iprefetch = true,
	},
	{
		/*
		 * 2-socket Ampere Altra Q80-30 (Neoverse N1), 3 GHz, the
		 * machine of ScyllaDB's text-on-the-other-node measurement:
		 * 1 MiB private L2, the socket's 32 MiB system-level cache.
		 * No remote memory latency is published: the report sweeps
		 * it (nmreport.py, COSTING).
		 */
		.name = "altra2s", .cpi = 1.0, .l2_lat = 13, .llc_lat = 86,
		.local_lat = 285, .remote_lat = 1350, .mhz = 3000,
		.line = 64, .l1i_kb = 64, .l1d_kb = 64, .l1_ways = 4,
		.l2_kb = 1024, .l2_ways = 8,
		.llc_kb_per_cpu = 410, .llc_ways = 16,
		.llc_kb_per_node = 32 << 10,
		.iprefetch = true,
	},
	{
		/*
		 * 2-socket Xeon Gold 6430 (Sapphire Rapids), 2.1 GHz, and a
		 * CXL Type-3 memory expander behind socket 0 (near=), two
		 * hops from socket 1 (far=: the guest's layout sets both).
		 * The LLC latency is not published; the report sweeps it
		 * with the CXL latencies (COSTING).
		 */
		.name = "cxl", .cpi = 1.0, .l2_lat = 16, .llc_lat = 70,
		.local_lat = 227, .remote_lat = 411, .near_lat = 509,
		.far_lat = 693,
		.mhz = 2100,
		.line = 64, .l1i_kb = 32, .l1d_kb = 48, .l1_ways = 8,
		.l2_kb = 2048, .l2_ways = 16,
		.llc_kb_per_cpu = 1920, .llc_ways = 15,
		.llc_kb_per_node = 32 * 1920,
		.iprefetch = true,
	},
};

struct cache {
	unsigned int sets, ways;
	uint64_t *tag;		/* line number + 1; 0 is empty */
	uint64_t *used;		/* for LRU */
	uint64_t clock;
};

/*
 * What an access is counted as: kernel text is apart from user text, as
 * page-cache replication can only ever move the latter.
 */
enum fetch { IFETCH_USER, IFETCH_KERNEL, DATA, NR_FETCH };

struct counts {
	uint64_t insns;
	uint64_t l1[NR_FETCH], l1_miss[NR_FETCH], l2_hit[NR_FETCH];
	uint64_t local_miss[NR_FETCH], remote_miss[NR_FETCH];
	/* Of the remote ones: lines another node's cache held dirty. */
	uint64_t remote_xfer[NR_FETCH];
	/* Of the remote ones, and of those transfers: near= and far= ones. */
	uint64_t near_miss[NR_FETCH], near_xfer[NR_FETCH];
	uint64_t far_miss[NR_FETCH], far_xfer[NR_FETCH];
	uint64_t unknown[NR_FETCH];	/* not RAM of any node (ROM, I/O) */
	/* Of the memory accesses: what node cache k would have served. */
	uint64_t nc_local[NR_FETCH][NC_SIZES], nc_remote[NR_FETCH][NC_SIZES];
	/* Prefetches of the next instruction line that reached memory. */
	uint64_t prefetch[NR_FETCH];
	/*
	 * Stores whose line other caches held: an invalidation that crosses
	 * to another node, or stays within the node.
	 */
	uint64_t inval_remote, inval_local;
	/*
	 * Of the remote ones, the other nodes that held a copy, summed: what
	 * a store waits for where each is invalidated one after the other
	 * (SCI's sharing lists, on the NUMA-Q).
	 */
	uint64_t inval_nodes;
	/*
	 * Turns: how often this vCPU ran a block after another vCPU had.
	 * QEMU's single TCG thread runs the vCPUs one after the other, each
	 * for a turn of many instructions, where real CPUs run at once:
	 * insns / turns says how coarse the interleaving of their accesses
	 * to shared lines was.
	 */
	uint64_t turns;
};

struct vcpu {
	struct cache l1i, l1d, l2;
	struct counts n;
};

struct node {
	struct cache llc;
	struct cache nc[NC_SIZES];
};

/*
 * The coherence directory, one entry per line of guest RAM: which vCPUs'
 * private caches and which nodes' LLCs and node caches may hold it (a
 * superset: a bit is
 * cleared when the line is invalidated, not when it is evicted), and
 * which vCPU holds it dirty (vCPU + 1; 0: memory is up to date).
 */
struct directory {
	uint32_t *sharers;
	uint8_t *llc_nodes;
	uint8_t *owner;
	uint64_t lines;
};

/* A cache line a translation block spans, and its node. */
struct tb_line {
	uint64_t line;
	int node;		/* -1: not RAM */
};

struct tb_info {
	unsigned int insns, nr_lines;
	enum fetch kind;
	uint64_t vaddr;
	/* Written by one vCPU at a time: the one profiled. */
	uint64_t profiled, profiled_l1_misses, profiled_memory;
	struct tb_info *next_profiled;
	struct tb_line lines[];
};

struct ram_map {
	uintptr_t start, end;	/* host addresses */
	uint64_t gpa;		/* guest physical address of start */
};

static struct model m;
static struct directory dir;
static bool kernel_text_local;
static unsigned int icount_shift;
static int nr_nodes = 2, cpus_per_node = 2, nr_vcpus, cpu_nodes;
/* Per node, the nodes of its near= and far= pairs, and the arguments. */
static uint8_t near_nodes[MAX_NODES], far_nodes[MAX_NODES];
static char near_arg[64], far_arg[64];
static bool phys_doubled = true;
static uint64_t node_bytes = 512ULL << 20;
static unsigned int line_shift;
static const char *out_path, *ram_prefix;
static FILE *out;
static pthread_mutex_t out_lock = PTHREAD_MUTEX_INITIALIZER;
static struct vcpu vcpus[MAX_VCPUS];
static struct node nodes[MAX_NODES];
static pthread_once_t maps_once = PTHREAD_ONCE_INIT;
static struct ram_map ram_maps[MAX_RAM_MAPS];
static int nr_ram_maps;
static const char *profile_path;
static FILE *profile_out;
/* The vCPU between NUMA_MODEL_BEGIN and NUMA_MODEL_END, or -1. */
static volatile int profile_vcpu = -1;
static struct tb_info *profiled_tbs;
static pthread_mutex_t profile_lock = PTHREAD_MUTEX_INITIALIZER;

/* A cache of @kb KiB; with @optional, none at all when @kb is 0. */
static int cache_init(struct cache *c, unsigned int kb, unsigned int ways,
		      bool optional)
{
	unsigned int sets = ways ? kb * 1024 / m.line / ways : 0;

	if (!kb && optional)
		return 0;
	if (!sets)
		return -1;
	c->sets = sets;
	c->ways = ways;
	c->tag = calloc((size_t)sets * ways, sizeof(*c->tag));
	c->used = calloc((size_t)sets * ways, sizeof(*c->used));
	return c->tag && c->used ? 0 : -1;
}

/* Look @line up, fill it on a miss (LRU victim); true on a hit. */
static bool cache_access(struct cache *c, uint64_t line)
{
	size_t base = (size_t)(line % c->sets) * c->ways;
	uint64_t *tag = c->tag + base, *used = c->used + base;
	unsigned int w, victim = 0;

	c->clock++;
	for (w = 0; w < c->ways; w++) {
		if (tag[w] == line + 1) {
			used[w] = c->clock;
			return true;
		}
		if (used[w] < used[victim])
			victim = w;
	}
	tag[victim] = line + 1;
	used[victim] = c->clock;
	return false;
}

/* True if @c holds @line; takes it out with @evict.  No LRU update. */
static bool cache_holds(struct cache *c, uint64_t line, bool evict)
{
	size_t base = (size_t)(line % c->sets) * c->ways;
	unsigned int w;

	if (!c->sets)
		return false;
	for (w = 0; w < c->ways; w++) {
		if (c->tag[base + w] == line + 1) {
			if (evict)
				c->tag[base + w] = 0;
			return true;
		}
	}
	return false;
}

/*
 * The node whose cache holds @line dirty for another vCPU than @vcpu, or
 * -1; memory is up to date afterwards, as the owner writes the line back
 * when it hands it over.  An owner that evicted it wrote it back then.
 */
static int dirty_elsewhere(unsigned int vcpu, uint64_t line)
{
	int owner = dir.owner[line] - 1;
	int owner_node = owner / cpus_per_node;
	bool held;

	if (owner < 0 || owner == (int)vcpu)
		return -1;
	held = cache_holds(&vcpus[owner].l1d, line, false) ||
	       cache_holds(&vcpus[owner].l2, line, false) ||
	       cache_holds(&nodes[owner_node].llc, line, false);
	dir.owner[line] = 0;
	return held ? owner_node : -1;
}

/* Where a store's invalidations went. */
enum inval { INVAL_NONE, INVAL_LOCAL, INVAL_REMOTE };

/*
 * A store by @vcpu: every other copy of @line goes.  Returns the farthest
 * cache that really held one (the directory's bits are a superset), and
 * in @holders the other nodes whose caches did.
 */
static enum inval take_ownership(unsigned int vcpu, uint64_t line,
				 unsigned int *holders)
{
	int home = vcpu / cpus_per_node;
	uint32_t others = dir.sharers[line] & ~(1U << vcpu);
	uint8_t other_nodes = dir.llc_nodes[line] & ~(1U << home);
	uint8_t held_by = 0;
	enum inval inval = INVAL_NONE;
	int v, n, k;

	for (v = 0; others; v++, others >>= 1) {
		int node = v / cpus_per_node;

		if (!(others & 1))
			continue;
		/* No short cuts: every copy must go. */
		if (!(cache_holds(&vcpus[v].l1i, line, true) |
		      cache_holds(&vcpus[v].l1d, line, true) |
		      cache_holds(&vcpus[v].l2, line, true)))
			continue;
		if (node == home)
			inval = inval > INVAL_LOCAL ? inval : INVAL_LOCAL;
		else
			held_by |= 1U << node;
	}
	for (n = 0; other_nodes; n++, other_nodes >>= 1) {
		bool held;

		if (!(other_nodes & 1))
			continue;
		held = cache_holds(&nodes[n].llc, line, true);
		for (k = 0; k < NC_SIZES; k++)
			held |= cache_holds(&nodes[n].nc[k], line, true);
		if (held)
			held_by |= 1U << n;
	}
	if (held_by)
		inval = INVAL_REMOTE;
	*holders = __builtin_popcount(held_by);
	dir.sharers[line] &= 1U << vcpu;
	dir.llc_nodes[line] &= 1U << home;
	dir.owner[line] = vcpu + 1;
	return inval;
}

static int gpa_node(uint64_t gpa)
{
	uint64_t n = gpa / node_bytes;

	return n < (uint64_t)nr_nodes ? (int)n : -1;
}

/* The node of a data access QEMU reported at @phys, and its line. */
static int data_node(uint64_t phys, uint64_t *line)
{
	uint64_t n = phys / (2 * node_bytes);

	if (!phys_doubled) {
		*line = phys >> line_shift;
		return gpa_node(phys);
	}
	if (n >= (uint64_t)nr_nodes || phys % (2 * node_bytes) >= node_bytes)
		return -1;
	*line = (phys - n * node_bytes) >> line_shift;
	return (int)n;
}

/*
 * A memory access of @vcpu's node to @line of node @node, remote or not:
 * fill the node caches, and count which of them would have served it
 * unless it is a @prefetch (which is not counted as a memory access).
 */
static void node_caches(struct vcpu *v, int home, enum fetch kind,
			uint64_t line, int node, bool prefetch)
{
	bool remote = node != home;
	int k;

	if (!remote && !m.nc_all)
		return;
	dir.llc_nodes[line] |= 1U << home;
	for (k = 0; k < NC_SIZES; k++) {
		if (!nodes[home].nc[k].sets ||
		    !cache_access(&nodes[home].nc[k], line) || prefetch)
			continue;
		if (remote)
			v->n.nc_remote[kind][k]++;
		else
			v->n.nc_local[kind][k]++;
	}
}

/*
 * A miss of @vcpu's private caches on @line of node @node: served by a
 * cache that holds it dirty, the node's LLC, or memory; true if it
 * counts as an access that missed every cache.
 */
static bool private_miss(unsigned int vcpu, enum fetch kind, uint64_t line,
			 int node)
{
	struct vcpu *v = &vcpus[vcpu];
	int home = vcpu / cpus_per_node;
	int dirty_node = dirty_elsewhere(vcpu, line);
	bool llc_hit = false;

	dir.sharers[line] |= 1U << vcpu;
	if (nodes[home].llc.sets && (node == home || !m.llc_local)) {
		llc_hit = cache_access(&nodes[home].llc, line);
		dir.llc_nodes[line] |= 1U << home;
	}
	if (dirty_node >= 0 && dirty_node != home) {
		v->n.remote_miss[kind]++;
		v->n.remote_xfer[kind]++;
		if (near_nodes[home] & (1U << dirty_node)) {
			v->n.near_miss[kind]++;
			v->n.near_xfer[kind]++;
		} else if (far_nodes[home] & (1U << dirty_node)) {
			v->n.far_miss[kind]++;
			v->n.far_xfer[kind]++;
		}
	} else if (dirty_node == home) {
		/* Within the node: as fast as its LLC, or its memory. */
		if (nodes[home].llc.sets)
			return false;
		v->n.local_miss[kind]++;
	} else if (llc_hit) {
		return false;
	} else if (node == home ||
		   (kind == IFETCH_KERNEL && kernel_text_local)) {
		v->n.local_miss[kind]++;
		node_caches(v, home, kind, line, home, false);
	} else {
		v->n.remote_miss[kind]++;
		if (near_nodes[home] & (1U << node))
			v->n.near_miss[kind]++;
		else if (far_nodes[home] & (1U << node))
			v->n.far_miss[kind]++;
		node_caches(v, home, kind, line, node, false);
	}
	return true;
}

/*
 * Next-line prefetch of instruction line @line of node @node into
 * @vcpu's caches, off the clock; a line another vCPU holds dirty is left
 * where it is.
 */
static void prefetch_line(unsigned int vcpu, enum fetch kind, uint64_t line,
			  int node)
{
	struct vcpu *v = &vcpus[vcpu];
	int home = vcpu / cpus_per_node;

	if (node < 0 || (dir.owner[line] && dir.owner[line] != vcpu + 1) ||
	    cache_holds(&v->l1i, line, false))
		return;
	cache_access(&v->l1i, line);
	dir.sharers[line] |= 1U << vcpu;
	if (v->l2.sets && cache_access(&v->l2, line))
		return;
	if (nodes[home].llc.sets && (node == home || !m.llc_local)) {
		dir.llc_nodes[line] |= 1U << home;
		if (cache_access(&nodes[home].llc, line))
			return;
	}
	v->n.prefetch[kind]++;
	node_caches(v, home, kind, line,
		    kind == IFETCH_KERNEL && kernel_text_local ? home : node,
		    true);
}

/* Where an access was served, for the profile. */
enum served { SERVED_L1, SERVED_CACHE, SERVED_MEMORY };

/*
 * One access of @kind by @vcpu to the line @line of node @node; where it
 * was served (an access outside RAM counts as an L1 hit).
 */
static enum served access_line(unsigned int vcpu, enum fetch kind,
			       uint64_t line, int node, bool store)
{
	struct vcpu *v = &vcpus[vcpu];
	enum served served = SERVED_L1;

	if (node < 0) {
		v->n.unknown[kind]++;
		return served;
	}
	v->n.l1[kind]++;
	if (!cache_access(kind == DATA ? &v->l1d : &v->l1i, line)) {
		v->n.l1_miss[kind]++;
		served = SERVED_CACHE;
		if (v->l2.sets && cache_access(&v->l2, line))
			v->n.l2_hit[kind]++;
		else if (private_miss(vcpu, kind, line, node))
			served = SERVED_MEMORY;
	}
	if (store && (dir.owner[line] != vcpu + 1 ||
		      dir.sharers[line] != 1U << vcpu)) {
		unsigned int holders;
		enum inval inval = take_ownership(vcpu, line, &holders);

		/*
		 * A store that went to memory waited as long as the
		 * invalidations (the directory sends them meanwhile); one
		 * served by a cache waits for them on top.
		 */
		if (inval == INVAL_REMOTE && served != SERVED_MEMORY) {
			v->n.inval_remote++;
			v->n.inval_nodes += holders;
		} else if (inval == INVAL_LOCAL && served != SERVED_MEMORY)
			v->n.inval_local++;
	}
	return served;
}

/* An access of the profiled vCPU by the block @tb, served from @served. */
static void profile_access(struct tb_info *tb, enum served served)
{
	tb->profiled_l1_misses += served != SERVED_L1;
	tb->profiled_memory += served == SERVED_MEMORY;
}

/*
 * Where QEMU mapped each node's RAM file.  Read at the first translation,
 * when the RAM exists; the mappings never move.
 */
static void read_ram_maps(void)
{
	char line[512], path[256];
	size_t plen = strlen(ram_prefix);
	FILE *f = fopen("/proc/self/maps", "r");

	if (!f)
		return;
	while (fgets(line, sizeof(line), f) && nr_ram_maps < MAX_RAM_MAPS) {
		unsigned long start, end, offset;
		char *end_num;
		long n;

		if (sscanf(line, "%lx-%lx %*s %lx %*s %*s %255s", &start, &end,
			   &offset, path) != 4 ||
		    strncmp(path, ram_prefix, plen))
			continue;
		n = strtol(path + plen, &end_num, 10);
		if (*end_num || n < 0 || n >= nr_nodes)
			continue;
		ram_maps[nr_ram_maps++] = (struct ram_map) {
			.start = start, .end = end,
			.gpa = (uint64_t)n * node_bytes + offset,
		};
	}
	fclose(f);
}

/* The guest physical address QEMU holds at host address @host, or -1. */
static int64_t host_to_gpa(const void *host)
{
	uintptr_t h = (uintptr_t)host;
	int i;

	pthread_once(&maps_once, read_ram_maps);
	for (i = 0; i < nr_ram_maps; i++)
		if (h >= ram_maps[i].start && h < ram_maps[i].end)
			return ram_maps[i].gpa + (h - ram_maps[i].start);
	return -1;
}

static void tb_exec(unsigned int vcpu, void *udata)
{
	static unsigned int last_vcpu = UINT_MAX;
	struct tb_info *tb = udata;
	unsigned int i;

	if (vcpu >= (unsigned int)nr_vcpus)
		return;
	if (vcpu != last_vcpu) {
		vcpus[vcpu].n.turns++;
		last_vcpu = vcpu;
	}
	vcpus[vcpu].n.insns += tb->insns;
	if ((int)vcpu == profile_vcpu)
		tb->profiled += tb->insns;
	for (i = 0; i < tb->nr_lines; i++) {
		const struct tb_line *l = &tb->lines[i];
		enum served served = access_line(vcpu, tb->kind, l->line,
						 l->node, false);

		if ((int)vcpu == profile_vcpu)
			profile_access(tb, served);
		if (m.iprefetch && served != SERVED_L1 && l->node >= 0)
			prefetch_line(vcpu, tb->kind, l->line + 1,
				      gpa_node((l->line + 1) << line_shift));
	}
}

static void mem_access(unsigned int vcpu, qemu_plugin_meminfo_t info,
		       uint64_t vaddr, void *udata)
{
	struct qemu_plugin_hwaddr *hw = qemu_plugin_get_hwaddr(info, vaddr);
	uint64_t line = 0;
	enum served served;
	int node;

	if (vcpu >= (unsigned int)nr_vcpus || !hw ||
	    qemu_plugin_hwaddr_is_io(hw))
		return;
	node = data_node(qemu_plugin_hwaddr_phys_addr(hw), &line);
	served = access_line(vcpu, DATA, line, node,
			     qemu_plugin_mem_is_store(info));
	/* @udata: the block of the load or store */
	if ((int)vcpu == profile_vcpu)
		profile_access(udata, served);
}

/*
 * Append every vCPU's counts, as mark @mark (executed by @by) number
 * @seq in the order of marks.  The other vCPUs' counts are read while
 * they run: off by what they do meanwhile, which is nothing when idle.
 */
static void write_counts(const char *mark, unsigned int by)
{
	static const char *const prefix[NR_FETCH] = {
		[IFETCH_USER] = "i", [IFETCH_KERNEL] = "k", [DATA] = "d",
	};
	static unsigned int seq;
	int v, k, s;

	pthread_mutex_lock(&out_lock);
	seq++;
	for (v = 0; v < nr_vcpus; v++) {
		const struct counts *c = &vcpus[v].n;

		fprintf(out, "mark=%s seq=%u by=%u vcpu=%d node=%d insns=%" PRIu64,
			mark, seq, by, v, v / cpus_per_node, c->insns);
		for (k = 0; k < NR_FETCH; k++)
			fprintf(out, " %s_l1=%" PRIu64 " %s_l1_miss=%" PRIu64
				" %s_l2=%" PRIu64
				" %s_local=%" PRIu64 " %s_remote=%" PRIu64
				" %s_xfer=%" PRIu64 " %s_unknown=%" PRIu64
				" %s_near=%" PRIu64 " %s_nearxfer=%" PRIu64
				" %s_far=%" PRIu64 " %s_farxfer=%" PRIu64,
				prefix[k], c->l1[k], prefix[k], c->l1_miss[k],
				prefix[k], c->l2_hit[k],
				prefix[k], c->local_miss[k], prefix[k],
				c->remote_miss[k], prefix[k], c->remote_xfer[k],
				prefix[k], c->unknown[k], prefix[k],
				c->near_miss[k], prefix[k], c->near_xfer[k],
				prefix[k], c->far_miss[k], prefix[k],
				c->far_xfer[k]);
		for (k = 0; k < NR_FETCH; k++) {
			fprintf(out, " %s_pf=%" PRIu64, prefix[k],
				c->prefetch[k]);
			for (s = 0; s < NC_SIZES; s++)
				fprintf(out, " %s_ncl%d=%" PRIu64
					" %s_ncr%d=%" PRIu64, prefix[k], s,
					c->nc_local[k][s], prefix[k], s,
					c->nc_remote[k][s]);
		}
		fprintf(out, " inval_local=%" PRIu64 " inval_remote=%" PRIu64
			" inval_nodes=%" PRIu64 " turns=%" PRIu64,
			c->inval_local, c->inval_remote, c->inval_nodes,
			c->turns);
		fputc('\n', out);
	}
	fflush(out);
	pthread_mutex_unlock(&out_lock);
}

/*
 * Append the profile of the measurement that ends, and start afresh: only
 * the vCPU that ends it (running this) adds to the blocks' counts.
 */
static void write_profile(void)
{
	static unsigned int measurement;
	struct tb_info *tb;

	pthread_mutex_lock(&profile_lock);
	fprintf(profile_out, "measurement %u\n", ++measurement);
	for (tb = profiled_tbs; tb; tb = tb->next_profiled) {
		/*
		 * The block that marked the beginning ran before it, but its
		 * loads and stores after the mark count.
		 */
		if (tb->profiled || tb->profiled_l1_misses)
			fprintf(profile_out, "%" PRIx64 " %" PRIu64 " %" PRIu64
				" %" PRIu64 "\n", tb->vaddr, tb->profiled,
				tb->profiled_l1_misses, tb->profiled_memory);
		tb->profiled = 0;
		tb->profiled_l1_misses = 0;
		tb->profiled_memory = 0;
	}
	fflush(profile_out);
	pthread_mutex_unlock(&profile_lock);
}

static void marker_exec(unsigned int vcpu, void *udata)
{
	char mark[16];

	snprintf(mark, sizeof(mark), "%u", (unsigned int)(uintptr_t)udata);
	write_counts(mark, vcpu);
	if (!profile_out)
		return;
	if ((uintptr_t)udata == NUMA_MODEL_MARK_BEGIN) {
		profile_vcpu = vcpu;
	} else if ((uintptr_t)udata == NUMA_MODEL_MARK_END &&
		   profile_vcpu == (int)vcpu) {
		profile_vcpu = -1;
		write_profile();
	}
}


/* The marker's number if @insn is one, or -1. */
static int marker_id(const struct qemu_plugin_insn *insn)
{
	static const unsigned char prefix[] = { NUMA_MODEL_MARKER_PREFIX };
	const unsigned char *b = qemu_plugin_insn_data(insn);

	if (qemu_plugin_insn_size(insn) != sizeof(prefix) + 2 ||
	    memcmp(b, prefix, sizeof(prefix)))
		return -1;
	return b[sizeof(prefix)] | b[sizeof(prefix) + 1] << 8;
}

static void tb_trans(qemu_plugin_id_t id, struct qemu_plugin_tb *tb)
{
	size_t n = qemu_plugin_tb_n_insns(tb), i;
	struct tb_info *info;
	uint64_t last = UINT64_MAX;

	/* At most two lines per instruction (x86 ones are up to 15 bytes). */
	info = malloc(sizeof(*info) + 2 * n * sizeof(info->lines[0]));
	if (!info)
		return;
	info->insns = n;
	info->nr_lines = 0;
	info->vaddr = qemu_plugin_tb_vaddr(tb);
	info->profiled = 0;
	info->profiled_l1_misses = 0;
	info->profiled_memory = 0;
	if (profile_out) {
		pthread_mutex_lock(&profile_lock);
		info->next_profiled = profiled_tbs;
		profiled_tbs = info;
		pthread_mutex_unlock(&profile_lock);
	}
	/* x86-64 kernel addresses have the top bit set. */
	info->kind = qemu_plugin_tb_vaddr(tb) >> 63 ? IFETCH_KERNEL :
						      IFETCH_USER;
	for (i = 0; i < n; i++) {
		struct qemu_plugin_insn *insn = qemu_plugin_tb_get_insn(tb, i);
		const char *host = qemu_plugin_insn_haddr(insn);
		size_t size = qemu_plugin_insn_size(insn);
		int64_t first = host ? host_to_gpa(host) : -1;
		int64_t end = host ? host_to_gpa(host + size - 1) : -1;
		int64_t gpa;
		int mark = marker_id(insn);

		if (mark >= 0)
			qemu_plugin_register_vcpu_insn_exec_cb(insn, marker_exec,
				QEMU_PLUGIN_CB_NO_REGS, (void *)(uintptr_t)mark);
		qemu_plugin_register_vcpu_mem_cb(insn, mem_access,
						 QEMU_PLUGIN_CB_NO_REGS,
						 QEMU_PLUGIN_MEM_RW, info);
		for (gpa = first; ; gpa = end) {
			uint64_t line = gpa < 0 ? UINT64_MAX - 1 :
				(uint64_t)gpa >> line_shift;

			if (line != last) {
				info->lines[info->nr_lines++] = (struct tb_line) {
					.line = line,
					.node = gpa < 0 ? -1 : gpa_node(gpa),
				};
				last = line;
			}
			if (gpa == end)
				break;
		}
	}
	qemu_plugin_register_vcpu_tb_exec_cb(tb, tb_exec, QEMU_PLUGIN_CB_NO_REGS,
					     info);
}

static void at_exit(qemu_plugin_id_t id, void *udata)
{
	write_counts("exit", 0);
	fclose(out);
	if (profile_out)
		fclose(profile_out);
}

/* A-B[:C-D...] into @pairs, and kept in @arg; nodes checked later. */
static int parse_pairs(const char *val, uint8_t *pairs, char *arg,
		       size_t len)
{
	if (strlen(val) >= len)
		return -1;
	strcpy(arg, val);
	while (*val) {
		char *end;
		unsigned long a, b;

		if (*val < '0' || *val > '9')
			return -1;
		a = strtoul(val, &end, 10);
		if (*end != '-' || end[1] < '0' || end[1] > '9')
			return -1;
		b = strtoul(end + 1, &end, 10);
		if ((*end && *end != ':') || a >= MAX_NODES ||
		    b >= MAX_NODES || a == b)
			return -1;
		pairs[a] |= 1U << b;
		pairs[b] |= 1U << a;
		val = *end ? end + 1 : end;
	}
	return 0;
}

static int parse_arg(const char *arg)
{
	const char *eq = strchr(arg, '=');
	const char *val = eq ? eq + 1 : "";
	size_t klen = eq ? (size_t)(eq - arg) : strlen(arg);
	static const struct {
		const char *key;
		unsigned int *field;
	} uints[] = {
		{ "l2_lat", &m.l2_lat },
		{ "llc_lat", &m.llc_lat }, { "local_lat", &m.local_lat },
		{ "remote_lat", &m.remote_lat }, { "near_lat", &m.near_lat },
		{ "far_lat", &m.far_lat },
		{ "mhz", &m.mhz },
		{ "line", &m.line }, { "l1i_kb", &m.l1i_kb },
		{ "l1d_kb", &m.l1d_kb }, { "l1_ways", &m.l1_ways },
		{ "l2_kb", &m.l2_kb }, { "l2_ways", &m.l2_ways },
		{ "llc_kb_per_cpu", &m.llc_kb_per_cpu },
		{ "llc_ways", &m.llc_ways },
		{ "llc_kb_per_node", &m.llc_kb_per_node },
		{ "nc_ways", &m.nc_ways }, { "icount_shift", &icount_shift },
	};
	size_t i;

#define KEY(k)	(klen == strlen(k) && !strncmp(arg, k, klen))
	if (KEY("out")) {
		out_path = val;
	} else if (KEY("profile")) {
		profile_path = val;
	} else if (KEY("ram")) {
		ram_prefix = val;
	} else if (KEY("nodes")) {
		nr_nodes = atoi(val);
	} else if (KEY("cpus_per_node")) {
		cpus_per_node = atoi(val);
	} else if (KEY("cpu_nodes")) {
		cpu_nodes = atoi(val);
		if (cpu_nodes < 1)
			return -1;
	} else if (KEY("near")) {
		return parse_pairs(val, near_nodes, near_arg,
				   sizeof(near_arg));
	} else if (KEY("far")) {
		return parse_pairs(val, far_nodes, far_arg, sizeof(far_arg));
	} else if (KEY("node_mb")) {
		node_bytes = strtoull(val, NULL, 10) << 20;
	} else if (KEY("phys")) {
		if (strcmp(val, "doubled") && strcmp(val, "exact"))
			return -1;
		phys_doubled = !strcmp(val, "doubled");
	} else if (KEY("kernel_text")) {
		if (strcmp(val, "local") && strcmp(val, "remote"))
			return -1;
		kernel_text_local = !strcmp(val, "local");
	} else if (KEY("nc_scope")) {
		if (strcmp(val, "remote") && strcmp(val, "all"))
			return -1;
		m.nc_all = !strcmp(val, "all");
	} else if (KEY("llc_scope")) {
		if (strcmp(val, "all") && strcmp(val, "local"))
			return -1;
		m.llc_local = !strcmp(val, "local");
	} else if (KEY("iprefetch")) {
		if (strcmp(val, "0") && strcmp(val, "1"))
			return -1;
		m.iprefetch = !strcmp(val, "1");
	} else if (KEY("nc_kb")) {
		char *end;

		memset(m.nc_kb, 0, sizeof(m.nc_kb));
		for (i = 0; i < NC_SIZES; i++) {
			m.nc_kb[i] = strtoul(val, &end, 10);
			if (*end != ':')
				break;
			val = end + 1;
		}
		if (*end)
			return -1;
	} else if (KEY("cpi")) {
		m.cpi = strtod(val, NULL);
	} else if (KEY("preset")) {
		for (i = 0; i < sizeof(presets) / sizeof(presets[0]); i++)
			if (!strcmp(val, presets[i].name))
				break;
		if (i == sizeof(presets) / sizeof(presets[0]))
			return -1;
		m = presets[i];
	} else {
		for (i = 0; i < sizeof(uints) / sizeof(uints[0]); i++) {
			if (KEY(uints[i].key)) {
				*uints[i].field = strtoul(val, NULL, 10);
				return 0;
			}
		}
		return -1;
	}
#undef KEY
	return 0;
}

PLUGIN_EXPORT int qemu_plugin_install(qemu_plugin_id_t id,
				      const qemu_info_t *info, int argc,
				      char **argv)
{
	char msg[256];
	int i;

	m = presets[0];
	/* The preset first, so that single figures override it. */
	for (i = 0; i < argc; i++)
		if (!strncmp(argv[i], "preset=", 7) && parse_arg(argv[i]))
			goto bad_arg;
	for (i = 0; i < argc; i++)
		if (strncmp(argv[i], "preset=", 7) && parse_arg(argv[i]))
			goto bad_arg;
	if (!cpu_nodes)
		cpu_nodes = nr_nodes;
	if (!info->system_emulation || !out_path || !ram_prefix ||
	    nr_nodes < 1 || nr_nodes > MAX_NODES || cpus_per_node < 1 ||
	    cpu_nodes < 1 || cpu_nodes > nr_nodes ||
	    cpu_nodes * cpus_per_node > MAX_VCPUS || !node_bytes ||
	    !m.line || (m.line & (m.line - 1))) {
		qemu_plugin_outs("numa-model: needs system emulation, out=, ram=, and a sane layout\n");
		return -1;
	}
	line_shift = __builtin_ctz(m.line);
	nr_vcpus = cpu_nodes * cpus_per_node;
	if (!m.near_lat)
		m.near_lat = m.remote_lat;
	if (!m.far_lat)
		m.far_lat = m.remote_lat;
	for (i = 0; i < MAX_NODES; i++) {
		if (i >= nr_nodes && (near_nodes[i] || far_nodes[i])) {
			qemu_plugin_outs("numa-model: near= or far= names a node the guest lacks\n");
			return -1;
		}
		if (near_nodes[i] & far_nodes[i]) {
			qemu_plugin_outs("numa-model: a pair both near= and far=\n");
			return -1;
		}
	}
	for (i = 0; i < nr_vcpus; i++)
		if (cache_init(&vcpus[i].l1i, m.l1i_kb, m.l1_ways, false) ||
		    cache_init(&vcpus[i].l1d, m.l1d_kb, m.l1_ways, false) ||
		    cache_init(&vcpus[i].l2, m.l2_kb, m.l2_ways, true))
			goto bad_cache;
	for (i = 0; i < nr_nodes; i++) {
		int k;

		if (cache_init(&nodes[i].llc, m.llc_kb_per_node ?:
			       m.llc_kb_per_cpu * cpus_per_node,
			       m.llc_ways, true))
			goto bad_cache;
		for (k = 0; k < NC_SIZES; k++)
			if (cache_init(&nodes[i].nc[k], m.nc_kb[k], m.nc_ways,
				       true))
				goto bad_cache;
	}
	/* Untouched lines of these stay unbacked zero pages. */
	dir.lines = ((uint64_t)nr_nodes * node_bytes) >> line_shift;
	dir.sharers = calloc(dir.lines, sizeof(*dir.sharers));
	dir.llc_nodes = calloc(dir.lines, sizeof(*dir.llc_nodes));
	dir.owner = calloc(dir.lines, sizeof(*dir.owner));
	if (!dir.sharers || !dir.llc_nodes || !dir.owner) {
		qemu_plugin_outs("numa-model: no memory for the directory\n");
		return -1;
	}
	out = fopen(out_path, "w");
	if (!out) {
		snprintf(msg, sizeof(msg), "numa-model: %s: %s\n", out_path,
			 strerror(errno));
		qemu_plugin_outs(msg);
		return -1;
	}
	if (profile_path) {
		profile_out = fopen(profile_path, "w");
		if (!profile_out) {
			snprintf(msg, sizeof(msg), "numa-model: %s: %s\n",
				 profile_path, strerror(errno));
			qemu_plugin_outs(msg);
			return -1;
		}
	}
	fprintf(out, "model preset=%s cpi=%g l2_lat=%u llc_lat=%u local_lat=%u remote_lat=%u near_lat=%u far_lat=%u mhz=%u line=%u l1i_kb=%u l1d_kb=%u l1_ways=%u l2_kb=%u l2_ways=%u llc_kb_per_cpu=%u llc_kb_per_node=%u llc_ways=%u nc_kb=%u:%u:%u nc_ways=%u nc_scope=%s llc_scope=%s iprefetch=%d nodes=%d cpu_nodes=%d near=%s far=%s cpus_per_node=%d phys=%s kernel_text=%s icount_shift=%u\n",
		m.name, m.cpi, m.l2_lat, m.llc_lat, m.local_lat, m.remote_lat,
		m.near_lat, m.far_lat, m.mhz, m.line, m.l1i_kb, m.l1d_kb, m.l1_ways, m.l2_kb,
		m.l2_ways, m.llc_kb_per_cpu, m.llc_kb_per_node, m.llc_ways,
		m.nc_kb[0], m.nc_kb[1], m.nc_kb[2], m.nc_ways,
		m.nc_all ? "all" : "remote", m.llc_local ? "local" : "all",
		m.iprefetch, nr_nodes,
		cpu_nodes, near_arg[0] ? near_arg : "-",
		far_arg[0] ? far_arg : "-", cpus_per_node, phys_doubled ? "doubled" : "exact",
		kernel_text_local ? "local" : "remote", icount_shift);
	qemu_plugin_register_vcpu_tb_trans_cb(id, tb_trans);
	qemu_plugin_register_atexit_cb(id, at_exit, NULL);
	return 0;

bad_arg:
	snprintf(msg, sizeof(msg), "numa-model: bad argument \"%s\"\n", argv[i]);
	qemu_plugin_outs(msg);
	return -1;
bad_cache:
	qemu_plugin_outs("numa-model: a cache smaller than a line per way\n");
	return -1;
}
