/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The marker the numa-model plugin watches for: a 7-byte no-op,
 * "nopl disp32(%rax)", whose displacement is "NM" and a 16-bit mark
 * number.  When a vCPU executes one, the plugin appends every vCPU's
 * counts to its output under that number, and the marks' order.  By
 * convention a measurement runs from NUMA_MODEL_BEGIN to NUMA_MODEL_END;
 * the guest says what each one measured in its own output, in order.
 */
#ifndef NUMA_MODEL_MARKER_H
#define NUMA_MODEL_MARKER_H

#define NUMA_MODEL_MARKER_PREFIX	0x0f, 0x1f, 0x80, 'N', 'M'

#define NUMA_MODEL_MARK(id)						\
	__asm__ volatile(".byte 0x0f, 0x1f, 0x80, 0x4e, 0x4d, %c0, %c1"	\
			 : : "i" ((id) & 0xff), "i" (((id) >> 8) & 0xff)	\
			 : "memory")

#define NUMA_MODEL_MARK_BEGIN	1
#define NUMA_MODEL_MARK_END	2
#define NUMA_MODEL_BEGIN()	NUMA_MODEL_MARK(NUMA_MODEL_MARK_BEGIN)
#define NUMA_MODEL_END()	NUMA_MODEL_MARK(NUMA_MODEL_MARK_END)

#endif
