#!/bin/bash
# make bench: stage the programs and inputs of the large-text workloads in
# a directory the guest gets at /mnt/add (its ext4 disk), so that their
# text is cached from a disk file system, as a distribution runs them.
#
# Usage: stage-workloads.sh <dir> [-I<include dir>...] <C sources...>
#   bin/        cc1 (gcc 12's compiler proper), perl, python3.11, sqlite3,
#               and sqlthreads (bench/guest/sqlthreads.c: the sqlite3
#               workload in the threads of one process)
#   lib/        the shared libraries of those that the guest's disk lacks
#   py/         python3.11 and the part of its standard library that an
#               isolated (-I -S) run imports, laid out so that it finds
#               its prefix by itself
#   src/*.i     the C sources, preprocessed here: cc1 needs no headers
#   bench.db    a SQLite database of 50000 rows with an index, and
#   queries.sql what the sqlite3 workload asks of it
#   bench.pl, bench.py  the perl and python3 workloads' short runs: build
#               a hash of 5000 keys, sort its values as hex strings
set -euo pipefail
here=$(cd "$(dirname "$0")" && pwd)
dir=$1
shift
rm -rf "$dir"
mkdir -p "$dir/bin" "$dir/lib" "$dir/src" "$dir/py/bin" \
	"$dir/py/lib/python3.11/lib-dynload"

cc1=$(gcc -print-prog-name=cc1)
cp -L "$cc1" "$dir/bin/cc1"
cp -L "$(type -P perl)" "$dir/bin/perl"
cp -L "$(type -P sqlite3)" "$dir/bin/sqlite3"
gcc -O2 -Wall -Wextra -Wno-unused-parameter -Werror -pthread \
	-o "$dir/bin/sqlthreads" "$here/guest/sqlthreads.c" -lsqlite3
python=/usr/bin/python3.11
cp -L "$python" "$dir/py/bin/python3.11"

# Every shared library of these but the C library's own, which the disk
# has (boot/mkdisk.sh) and which must stay the one its loader belongs to.
ldd "$dir/bin/cc1" "$dir/bin/perl" "$dir/bin/sqlite3" "$dir/bin/sqlthreads" \
	"$python" |
	awk '/=> \//{print $3}' | sort -u | while read -r lib; do
	case $(basename "$lib") in
	libc.so.*|libm.so.*|ld-linux*) continue ;;
	esac
	cp -L "$lib" "$dir/lib/"
done

# What python3.11 -I -S imports that is not frozen into it: the codecs.
stdlib=/usr/lib/python3.11
cp "$stdlib/os.py" "$dir/py/lib/python3.11/"	# its prefix's landmark
mkdir -p "$dir/py/lib/python3.11/encodings"
cp "$stdlib"/encodings/{__init__,aliases,utf_8}.py \
	"$dir/py/lib/python3.11/encodings/"

incs=()
for src in "$@"; do
	case $src in
	-I*) incs+=("$src"); continue ;;
	esac
	gcc -E -D_GNU_SOURCE -I"$(dirname "$src")" "${incs[@]}" "$src" \
		-o "$dir/src/$(basename "${src%.c}").i"
done

# Rows of (id, name, group, value): the queries aggregate over groups,
# look names up by index and sort.
sqlite3 "$dir/bench.db" <<'SQL'
PRAGMA page_size = 4096;
CREATE TABLE t (id INTEGER PRIMARY KEY, name TEXT, grp INTEGER, val REAL);
WITH RECURSIVE n(i) AS (SELECT 1 UNION ALL SELECT i + 1 FROM n WHERE i < 50000)
INSERT INTO t SELECT i, printf('name-%08d', (i * 7919) % 50000), i % 97,
	(i * 31337 % 10007) / 7.0 FROM n;
CREATE INDEX t_name ON t (name);
VACUUM;
SQL
cat > "$dir/queries.sql" <<'SQL'
SELECT grp, count(*), avg(val) FROM t GROUP BY grp ORDER BY 3 DESC LIMIT 3;
SELECT count(*) FROM t WHERE name BETWEEN 'name-00010000' AND 'name-00010500';
SELECT name FROM t ORDER BY val DESC LIMIT 5;
SQL
cat > "$dir/bench.pl" <<'PERL'
my %h;
for my $i (1 .. 5000) { $h{"k$i"} = $i * $i }
my $s = 0;
$s += length for keys %h;
my @w = sort map { sprintf("%x", $_) } values %h;
print scalar(@w), " $s\n";
PERL
cat > "$dir/bench.py" <<'PYTHON'
d = {str(i): i * i for i in range(5000)}
w = sorted("%x" % v for v in d.values())
print(len(w), sum(map(len, d)))
PYTHON
