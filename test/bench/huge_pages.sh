#!/usr/bin/env bash
# What huge pages do for a connection's first query (doc/benchmarks.md, "Huge pages").
#
#   sysctl -w vm.nr_hugepages=2200      # as root: 4.3 GB of 2 MB pages, for shared_buffers = 4GB
#   bash test/bench/huge_pages.sh
#
# A new backend page-faults on every shared buffer it touches for the first
# time, 4 kB at a time; with huge_pages = on, 2 MB at a time.  On data set A
# (ROWS rows, default 10 M), with a bloomidx index (defaults) and a
# contrib/bloom index (defaults) on a copy each, the cluster runs once with
# huge_pages = off and once with on.  Each time, a first connection reads
# every query (the buffers are then in shared memory, as on a busy server),
# and then each query runs as the first statement of FIRSTS new connections:
# the median of their EXPLAIN ANALYZE times is printed per query, kind and
# setting, with the ratio bloomidx / contrib/bloom.  Benchmarks are never
# part of the tests.
#
# Settings (environment): ROWS, FIRSTS (default 5), BLOOMIDX_BENCH_PORT
# (default 5497), BLOOMIDX_BENCH_NO_BUILD=1 (measure the installed
# extension), and those of test/lib/common.sh (PG_CONFIG, ...).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

ROWS="${ROWS:-10000000}"
FIRSTS="${FIRSTS:-5}"
PORT="${BLOOMIDX_BENCH_PORT:-5497}"

need=$(( (4 * 1024 + 200) / 2 ))
have="$(awk '/^HugePages_Free:/ { print $2 }' /proc/meminfo)"
((have >= need)) || die "huge_pages = on needs $need free 2 MB huge pages, the kernel has $have: sysctl -w vm.nr_hugepages=$((need + 100))"

pg_env_init
[[ "${BLOOMIDX_BENCH_NO_BUILD:-0}" == 1 ]] || build_and_install >/dev/null
CLUSTER_INITDB_FLAGS=--data-checksums cluster_start "$PORT" bloomidx-hugepages "
shared_buffers = 4GB
work_mem = 256MB
maintenance_work_mem = 1GB
max_wal_size = 32GB
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
" || die "no cluster"
cluster_trap
q() { cluster_psql -qAt "$@"; }

log "data set A: $ROWS rows, a copy for each index"
q -c "CREATE EXTENSION bloomidx" -c "CREATE EXTENSION bloom" -c "SELECT setseed(0.42)" \
	-c "CREATE TABLE hp_bloomidx AS SELECT (random() * 1000000)::int AS i1, (random() * 1000000)::int AS i2,
	        (random() * 1000000)::int AS i3, (random() * 1000000)::int AS i4,
	        (random() * 1000000)::int AS i5, (random() * 1000000)::int AS i6
	    FROM generate_series(1, $ROWS)" \
	-c "CREATE TABLE hp_bloom AS SELECT * FROM hp_bloomidx" \
	-c "CREATE INDEX ON hp_bloomidx USING bloomidx (i1, i2, i3, i4, i5, i6)" \
	-c "CREATE INDEX ON hp_bloom USING bloom (i1, i2, i3, i4, i5, i6)" \
	-c "VACUUM (FREEZE, ANALYZE) hp_bloomidx" -c "VACUUM (FREEZE, ANALYZE) hp_bloom" -c "CHECKPOINT"

mapfile -t row < <(q -c "SELECT i2, i3, i5 FROM hp_bloomidx LIMIT 1 OFFSET $ROWS / 3" | tr '|' '\n')
queries=("1-column hit|i2 = ${row[0]}" "2-column hit|i2 = ${row[0]} AND i5 = ${row[2]}"
	"2-column miss|i2 = -1 AND i5 = -1")

# The median time (ms) of EXPLAIN ANALYZE of a query on table $1 as the
# first statement of $FIRSTS new connections.
first_ms() {
	local table="$1" cond="$2" i
	for ((i = 0; i < FIRSTS; i++)); do
		q -c "SET enable_seqscan = off" \
			-c "EXPLAIN (ANALYZE, FORMAT JSON) SELECT * FROM $table WHERE $cond" |
			sed -n 's/.*"Execution Time": \([0-9.]*\).*/\1/p'
	done | sort -n | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'
}

printf '\n| query | huge_pages | bloomidx (ms) | contrib/bloom (ms) | bloomidx / contrib/bloom |\n|---|---|---:|---:|---:|\n' \
	>"$CLUSTER_DIR/table.md"
for setting in off on; do
	q -c "ALTER SYSTEM SET huge_pages = $setting"
	(cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -l "$CLUSTER_DIR/server.log" -w restart >/dev/null)
	[[ "$(q -c 'SHOW huge_pages')" == "$setting" ]] || die "huge_pages is not $setting"
	for entry in "${queries[@]}"; do
		for t in hp_bloomidx hp_bloom; do
			q -c "SET enable_seqscan = off" -c "SELECT count(*) FROM $t WHERE ${entry#*|}" >/dev/null
		done
	done
	for entry in "${queries[@]}"; do
		a="$(first_ms hp_bloomidx "${entry#*|}")"
		b="$(first_ms hp_bloom "${entry#*|}")"
		printf '| %s | %s | %s | %s | %s |\n' "${entry%%|*}" "$setting" "$a" "$b" \
			"$(awk -v a="$a" -v b="$b" 'BEGIN { printf "%.2f", a / b }')" >>"$CLUSTER_DIR/table.md"
	done
done
cat "$CLUSTER_DIR/table.md"
