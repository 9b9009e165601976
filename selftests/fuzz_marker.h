/* SPDX-License-Identifier: GPL-2.0 */
#ifndef FUZZ_MARKER_H
#define FUZZ_MARKER_H

#define MARKER_DIGITS	16

/* In fuzz_marker.S: MARKER_DIGITS hex digits in executable memory. */
extern const char exec_marker[MARKER_DIGITS + 1];

#endif
