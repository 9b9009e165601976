// SPDX-License-Identifier: GPL-2.0
/*
 * mark begin|end: a numa-model mark from the shell, pinned to @node's
 * first CPU when given one ("mark begin 0"), so that the measurement can
 * be told apart from the workload it frames.
 */
#include "node.h"

#include <stdio.h>
#include <stdlib.h>
#include <string.h>

#include "../numa-model/marker.h"

int main(int argc, char **argv)
{
	if (argc < 2 || argc > 3) {
		fprintf(stderr, "usage: %s begin|end [NODE]\n", argv[0]);
		return 2;
	}
	if (argc == 3 && pin_to_node(atoi(argv[2]))) {
		perror("node");
		return 1;
	}
	if (!strcmp(argv[1], "begin")) {
		NUMA_MODEL_BEGIN();
	} else if (!strcmp(argv[1], "end")) {
		NUMA_MODEL_END();
	} else {
		fprintf(stderr, "%s: begin or end, not %s\n", argv[0], argv[1]);
		return 2;
	}
	return 0;
}
