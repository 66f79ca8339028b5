#!/usr/bin/env bash
# The cold section of the benchmarks (issue 30): the first query after a
# server restart with the OS page cache dropped, so that every page the
# query needs comes from disk.  As root, like run.sh: installs what is
# missing, builds and installs bloomidx (BLOOMIDX_BENCH_NO_BUILD=1: the
# installed one), starts a throwaway cluster; dropping the page cache
# (`echo 3 > /proc/sys/vm/drop_caches`) needs root.
#
#   make bench-cold                       # 10 M rows, about 2 minutes here
#   COLD_ROWS=3000000 COLD_IO_CONCURRENCY=16 bash test/bench/cold.sh
#
# COLD_IO_CONCURRENCY sets effective_io_concurrency (default: the
# server's, 1 before PostgreSQL 18, 16 from 18 on); COLD_SETTINGS more
# settings, separated by ';' (e.g. "io_method = io_uring" on 18);
# COLD_RUNS (default 3, odd) and COLD_KINDS (default "bloomidx bloom
# btree") too.
#
# Data set A (six int4 columns) in one table per kind, the same rows:
# bloomidx on all six columns, contrib/bloom on all six (its defaults), and
# one btree per column (a 2-column query is their BitmapAnd).  bloomidx is
# built serially: a parallel build's pages fall differently from run to
# run, and with them the pages a query reads.  For each
# kind and query (2-column hit, 2-column miss, 1-column hit), COLD_RUNS
# times: stop the server, drop the OS page cache, start it, then one
# EXPLAIN (ANALYZE, BUFFERS) of the query with sequential scans off.  The
# medians: whole query, index node, the index node's buffers and how many
# of them it read from outside shared_buffers.  Writes
# test/bench/results/cold.md (BLOOMIDX_BENCH_OUT).  Asserts nothing.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
BENCH="$BLOOMIDX_REPO/test/bench"

COLD_ROWS="${COLD_ROWS:-10000000}"
COLD_RUNS="${COLD_RUNS:-3}"
COLD_KINDS="${COLD_KINDS:-bloomidx bloom btree}"
COLD_IO_CONCURRENCY="${COLD_IO_CONCURRENCY:-}"
COLD_SETTINGS="${COLD_SETTINGS:-}"
PORT="${BLOOMIDX_BENCH_PORT:-5496}"
OUT_DIR="${BLOOMIDX_BENCH_OUT:-$BENCH/results}"
[[ "$COLD_ROWS" =~ ^[0-9]+$ && "$COLD_ROWS" -ge 100 ]] || die "COLD_ROWS must be a whole number of 100 or more"
[[ "$COLD_RUNS" =~ ^[0-9]*[13579]$ ]] || die "COLD_RUNS must be odd (a median), not '$COLD_RUNS'"
for kind in $COLD_KINDS; do
	[[ "$kind" =~ ^(bloomidx|bloom|btree)$ ]] || die "unknown kind '$kind' (bloomidx, bloom, btree)"
done
is_root || die "the cold section drops the OS page cache: run it as root"
[[ -w /proc/sys/vm/drop_caches ]] || die "/proc/sys/vm/drop_caches is not writable here"

bench_install

cluster_trap
CLUSTER_INITDB_FLAGS=--data-checksums cluster_start "$PORT" bloomidx-cold
q() { cluster_psql -qAt "$@"; }
settings=()
if [[ -n "$COLD_IO_CONCURRENCY" ]]; then
	[[ "$COLD_IO_CONCURRENCY" =~ ^[0-9]+$ ]] || die "COLD_IO_CONCURRENCY must be a whole number"
	settings+=("effective_io_concurrency = $COLD_IO_CONCURRENCY")
fi
IFS=';' read -ra extra <<<"$COLD_SETTINGS"
settings+=("${extra[@]}")
bench_cluster_settings "${settings[@]}"

q -c "CREATE EXTENSION bloomidx" -c "CREATE EXTENSION bloom" -f "$BENCH/scaling.sql" -f "$BENCH/cold.sql"

mkdir -p "$OUT_DIR"
OUT="$OUT_DIR/cold.md"
START=$SECONDS
TMP_OUT="$(mktemp)"
trap 'rm -f "$TMP_OUT"; cluster_stop' EXIT

for kind in $COLD_KINDS; do
	log "$kind: loading $COLD_ROWS rows, building"
	q -c "SELECT scaling_load('cold_$kind', $COLD_ROWS)" -c "VACUUM FREEZE ANALYZE cold_$kind"
	case "$kind" in
	bloomidx) q -c "SET max_parallel_maintenance_workers = 0" -c "CREATE INDEX ON cold_bloomidx USING bloomidx (i1, i2, i3, i4, i5, i6)" ;;
	bloom) q -c "CREATE INDEX ON cold_bloom USING bloom (i1, i2, i3, i4, i5, i6)" ;;
	btree) for c in i1 i2 i3 i4 i5 i6; do q -c "CREATE INDEX ON cold_btree ($c)"; done ;;
	esac
done
q -c "CHECKPOINT"
first="$(set -- $COLD_KINDS; echo "$1")"
read -r h2 h5 < <(q -F ' ' -c "SELECT i2, i5 FROM cold_$first LIMIT 1 OFFSET $((COLD_ROWS / 3))")
declare -A QUERY=(
	["2-column hit"]="i2 = $h2 AND i5 = $h5"
	["2-column miss"]="i2 = -1 AND i5 = -1"
	["1-column hit"]="i2 = $h2"
)
QUERIES=("2-column hit" "2-column miss" "1-column hit")

# A restart with nothing cached: shared_buffers empty, the page cache dropped.
cold_restart() {
	(cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -m fast -w stop >/dev/null)
	sync
	echo 3 >/proc/sys/vm/drop_caches
	cluster_pg_ctl_start
}
# median of the numbers on stdin
median() { sort -g | awk '{ v[NR] = $1 } END { print v[int((NR + 1) / 2)] }'; }

declare -A EXEC NODE READ BUF NROWS
for query in "${QUERIES[@]}"; do
	for kind in $COLD_KINDS; do
		log "$kind: $query, $COLD_RUNS cold runs"
		runs=()
		for ((r = 0; r < COLD_RUNS; r++)); do
			cold_restart
			runs+=("$(q -F ' ' -c "SELECT * FROM cold_measure('SELECT * FROM cold_$kind WHERE ${QUERY[$query]}')")")
		done
		key="$kind/$query"
		EXEC[$key]="$(printf '%s\n' "${runs[@]}" | awk '{ print $1 }' | median)"
		NODE[$key]="$(printf '%s\n' "${runs[@]}" | awk '{ print $2 }' | median)"
		READ[$key]="$(printf '%s\n' "${runs[@]}" | awk '{ print $3 }' | median)"
		BUF[$key]="$(printf '%s\n' "${runs[@]}" | awk '{ print $4 }' | median)"
		NROWS[$key]="$(printf '%s\n' "${runs[@]}" | awk '{ print $5 }' | median)"
	done
done

label() {
	case "$1" in
	bloomidx) echo "bloomidx" ;;
	bloom) echo "contrib/bloom" ;;
	btree) echo "one btree per column" ;;
	esac
}
ratio() { awk -v a="$1" -v b="$2" 'BEGIN { if (b > 0) printf "%.2f", a / b; else print "-" }'; }
{
	echo "# bloomidx benchmarks: cold reads"
	echo
	echo "\`bash test/bench/cold.sh\` on $(date -u +%Y-%m-%d): $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"
	echo "PostgreSQL $(q -c 'SHOW server_version'), $BUILT at commit $COMMIT."
	echo "Data set A, $COLD_ROWS rows (six int4 columns \`(random() * 1000000)::int\`), one table per kind,"
	echo "the same rows: bloomidx and contrib/bloom on all six columns (defaults), one btree per column."
	echo "Each figure is the median of $COLD_RUNS first queries, each after a server restart with the OS"
	echo "page cache dropped; EXPLAIN (ANALYZE, BUFFERS), sequential scans off, shared_buffers 4GB, data"
	echo "checksums on, effective_io_concurrency $(q -c 'SHOW effective_io_concurrency')$(q -c "SELECT CASE WHEN current_setting('server_version_num')::int >= 180000 THEN ', io_method ' || current_setting('io_method') ELSE '' END")."
	echo "Hit: \`i2 = x AND i5 = y\` of a row (and \`i2 = x\`); miss: values outside the data."
	echo
	echo "| query | index | rows | whole query (ms) | index node (ms) | index buffers | read from disk | query / btrees |"
	echo "|---|---|---:|---:|---:|---:|---:|---:|"
	for query in "${QUERIES[@]}"; do
		for kind in $COLD_KINDS; do
			key="$kind/$query"
			echo "| $query | $(label "$kind") | ${NROWS[$key]} | ${EXEC[$key]} | ${NODE[$key]} | ${BUF[$key]} | ${READ[$key]} | $(ratio "${EXEC[$key]}" "${EXEC[btree/$query]:-0}") |"
		done
	done
	echo
	echo "The run took $(((SECONDS - START) / 60)) minutes."
} >"$TMP_OUT"
mv "$TMP_OUT" "$OUT"
log "wrote $OUT"
cat "$OUT"
