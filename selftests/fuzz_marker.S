/* SPDX-License-Identifier: GPL-2.0 */
/*
 * The marker a copy of coherence_fuzz prints, in the executable segment,
 * so that the "text" policy replicates the page that holds it.
 */
	.section .text.fuzz_marker, "ax"
	.globl exec_marker
exec_marker:
	.asciz "0000000000000000"
	.section .note.GNU-stack, "", @progbits
