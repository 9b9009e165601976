#!/bin/bash
# Count the replica special cases in existing kernel files: the call sites
# outside mm/replica/ that our hook patches add, one per added line that
# calls a replica_*() or *_replica() function ("call") or tests PG_replica
# ("flag": where something that finds a page by its frame or its page table
# entry must tell a replica from page cache).  Declarations and comments
# are not counted.  Per file, then the totals.
#
# Usage: boot/special-cases.sh [patch-dir]	(default: mm-replica)
set -euo pipefail
dir=${1:-$(dirname "$0")/../mm-replica}
for p in $(grep -v -e '^#' -e '^$' "$dir/series"); do
	awk '
		/^\+\+\+ b\// { file = substr($2, 3); next }
		/^\+/ && file !~ /^(Documentation|MAINTAINERS|include\/linux\/replica\.h)/ {
			line = substr($0, 2)
			if (line ~ /^[ \t]*(\*|\/\*|\/\/)/) next
			if (line ~ /^(static inline |extern )?(void|bool|int|long) \**[a-z_]*replica[a-z_]*\(/) next
			if (line ~ /folio_test_replica\(/) print file, "flag"
			else if (line ~ /(replica_[a-z_]+|[a-z_]+_replica[a-z_]*)\(/) print file, "call"
		}' "$dir/$p"
done | sort | uniq -c | sort -rn |
awk '{ n += $1; if ($3 == "flag") f += $1; print }
     END { print n, "total,", f, "of them PG_replica tests (pfn walkers)" }'
