#!/bin/bash
# Our new kernel files: one "<repo path> <kernel-tree path>" line each.
#   mm-replica/<path>     -> <path>  (but not *.patch, series)
#   policies/<name>.c     -> mm/replica/policies/<name>.c
#   selftests/<path>      -> tools/testing/selftests/replica/<path>
#   Documentation/<path>  -> Documentation/<path>
set -euo pipefail
cd "${1:-$(dirname "$0")/..}"
find mm-replica policies Documentation selftests -type f 2>/dev/null |
LC_ALL=C sort | while read -r f; do
	case "$f" in
	mm-replica/*.patch|mm-replica/series|mm-replica/steps|*/README*) continue ;;
	mm-replica/*)	rel=${f#mm-replica/} ;;
	policies/*)	rel=mm/replica/policies/${f#policies/} ;;
	selftests/*)	rel=tools/testing/selftests/replica/${f#selftests/} ;;
	Documentation/*) rel=$f ;;
	esac
	echo "$f $rel"
done
