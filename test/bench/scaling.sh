#!/usr/bin/env bash
# The scaling section of the benchmarks: how a selective query's index cost
# grows with the table (issue 28; src/storage/README.md, "Filters at
# scale").  As root, like run.sh: installs what is missing, builds and
# installs bloomidx (BLOOMIDX_BENCH_NO_BUILD=1: the installed one), starts
# a throwaway cluster.
#
#   make bench-scaling                       # 2 M and 32 M rows, about 15 minutes here
#   SCALING_ROWS="10000000 100000000" SCALING_REFERENCES=1 bash test/bench/scaling.sh
#
# For each size in SCALING_ROWS (data set A, default settings): CREATE
# INDEX time and size, and of a 2-column hit, a 2-column miss, an IN list
# of 10 values and its 10 values one by one: the whole query, the index
# node and its buffers (median of RUNS after a warm-up).  With
# SCALING_REFERENCES=1, the same for contrib/bloom and one btree per
# column at each size.  With SCALING_ALSO_WITH (a setting, such as
# "bloomidx.debug_group_header_cache = off"), bloomidx's queries again
# under it, beside.  Then the table of the smallest size with
# bloomidx.segment_rows lowered (SCALING_SEGMENT_ROWS) to emulate the
# segment counts of a bigger table.  (No synchronized sequential scans: the
# queries' values are rows at fixed offsets, which a scan starting where
# another left off would change from kind to kind.)  Writes
# test/bench/results/scaling.md (BLOOMIDX_BENCH_OUT).  Asserts nothing.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
BENCH="$BLOOMIDX_REPO/test/bench"

SCALING_ROWS="${SCALING_ROWS:-2000000 32000000}"
SCALING_SEGMENT_ROWS="${SCALING_SEGMENT_ROWS:-65024 4096 1024}"
SCALING_REFERENCES="${SCALING_REFERENCES:-0}"
SCALING_ALSO_WITH="${SCALING_ALSO_WITH:-}"
RUNS="${RUNS:-5}"
PORT="${BLOOMIDX_BENCH_PORT:-5497}"
OUT_DIR="${BLOOMIDX_BENCH_OUT:-$BENCH/results}"
for n in $SCALING_ROWS $SCALING_SEGMENT_ROWS $RUNS; do
	[[ "$n" =~ ^[0-9]+$ && "$n" -gt 0 ]] || die "sizes and RUNS must be positive whole numbers, not '$n'"
done

bench_install

cluster_trap
CLUSTER_INITDB_FLAGS=--data-checksums cluster_start "$PORT" bloomidx-scaling
q() { cluster_psql -qAt "$@"; }
bench_cluster_settings
q -c "CREATE EXTENSION bloomidx" -c "CREATE EXTENSION bloom" -f "$BENCH/scaling.sql"

mkdir -p "$OUT_DIR"
OUT="$OUT_DIR/scaling.md"
START=$SECONDS
TMP_OUT="$(mktemp)"
trap 'rm -f "$TMP_OUT"; cluster_stop' EXIT

# build KIND TABLE: the kind's index (indexes) on TABLE; prints "ms MB".
build() {
	local kind="$1" tbl="$2" ddl
	case "$kind" in
	bloomidx) ddl="CREATE INDEX ${tbl}_idx ON $tbl USING bloomidx (i1, i2, i3, i4, i5, i6)" ;;
	bloom) ddl="CREATE INDEX ${tbl}_idx ON $tbl USING bloom (i1, i2, i3, i4, i5, i6)" ;;
	btree_each) ddl="$(printf 'CREATE INDEX ON %s (i%s); ' "$tbl" 1 "$tbl" 2 "$tbl" 3 "$tbl" 4 "$tbl" 5 "$tbl" 6)" ;;
	esac
	q -c CHECKPOINT
	q -c "SELECT round(extract(epoch FROM clock_timestamp()) * 1000)" -c "$ddl" \
		-c "SELECT round(extract(epoch FROM clock_timestamp()) * 1000)" \
		-c "SELECT round(sum(pg_relation_size(indexrelid)) / 1048576.0, 1) FROM pg_index WHERE indrelid = '$tbl'::regclass" |
		awk 'NR == 1 { t0 = $1 } NR == 2 { t1 = $1 } NR == 3 { printf "%d %s\n", t1 - t0, $1 }'
}

# queries TABLE LABEL [SETTING]: one markdown row per query (SETTING: set first).
queries() {
	q -F ' | ' -c "${3:+SET $3}" -c "SELECT '| $2 | ' || query, round(exec_ms::numeric, 3), round(node_ms::numeric, 3),
	                      CASE WHEN buffers = floor(buffers) THEN buffers::bigint::text ELSE round(buffers::numeric, 1)::text END, nrows::bigint || ' |'
	               FROM scaling_queries('$1', $RUNS)"
}

{
	echo "# bloomidx benchmarks: scaling"
	echo
	echo "\`bash test/bench/scaling.sh\` on $(date -u +%Y-%m-%d): $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"
	echo "PostgreSQL $(q -c 'SHOW server_version'), $BUILT at commit $COMMIT."
	echo "Data set A (six int4 columns \`(random() * 1000000)::int\`), default settings, shared_buffers 4GB,"
	echo "data checksums on; CREATE INDEX with up to 2 parallel workers. Queries: median of $RUNS runs of"
	echo "EXPLAIN (ANALYZE, BUFFERS) after a warm-up, sequential scans off; *index node*: the Bitmap Index"
	echo "Scan (or the BitmapAnd over the btrees), its time and shared buffers."
	echo
	echo "## By table size"
	echo
	echo "| rows | index | CREATE INDEX (ms) | size (MB) | segments |"
	echo "|---:|---|---:|---:|---:|"
} >"$TMP_OUT"
QUERY_ROWS=""
for rows in $SCALING_ROWS; do
	log "data set A, $rows rows"
	q -c "DROP TABLE IF EXISTS a" -c "SELECT scaling_load('a', $rows)" -c "VACUUM FREEZE ANALYZE a"
	kinds=(bloomidx)
	[[ "$SCALING_REFERENCES" == 1 ]] && kinds+=(bloom btree_each)
	for kind in "${kinds[@]}"; do
		read -r ms mb < <(build "$kind" a)
		segments=""
		[[ "$kind" == bloomidx ]] && segments="$(q -c "SELECT segments FROM bloomidx_index_info('a_idx')")"
		echo "| $rows | $kind | $ms | $mb | $segments |" >>"$TMP_OUT"
		QUERY_ROWS+="$(queries a "$rows | $kind")"$'\n'
		[[ "$kind" == bloomidx && -n "$SCALING_ALSO_WITH" ]] &&
			QUERY_ROWS+="$(queries a "$rows | $kind, $SCALING_ALSO_WITH" "$SCALING_ALSO_WITH")"$'\n'
		q -c "DO \$\$ DECLARE i regclass; BEGIN FOR i IN SELECT indexrelid::regclass FROM pg_index WHERE indrelid = 'a'::regclass LOOP EXECUTE 'DROP INDEX ' || i; END LOOP; END \$\$"
	done
done
{
	echo
	echo "| rows | index | query | whole query (ms) | index node (ms) | index buffers | rows |"
	echo "|---:|---|---|---:|---:|---:|---:|"
	printf '%s' "$QUERY_ROWS"
	echo
	echo "## Segments emulated: the smallest table with bloomidx.segment_rows lowered"
	echo
	echo "| segment_rows | segments | query | whole query (ms) | index node (ms) | index buffers | rows |"
	echo "|---:|---:|---|---:|---:|---:|---:|"
} >>"$TMP_OUT"
smallest="$(tr ' ' '\n' <<<"$SCALING_ROWS" | sort -n | head -1)"
log "emulated segments on $smallest rows"
q -c "DROP TABLE IF EXISTS a" -c "SELECT scaling_load('a', $smallest)" -c "VACUUM FREEZE ANALYZE a"
for seg in $SCALING_SEGMENT_ROWS; do
	q -c "SET bloomidx.segment_rows = $seg" -c "CREATE INDEX a_idx ON a USING bloomidx (i1, i2, i3, i4, i5, i6)"
	segments="$(q -c "SELECT segments FROM bloomidx_index_info('a_idx')")"
	queries a "$seg | $segments" >>"$TMP_OUT"
	[[ -z "$SCALING_ALSO_WITH" ]] || queries a "$seg | $segments, $SCALING_ALSO_WITH" "$SCALING_ALSO_WITH" >>"$TMP_OUT"
	q -c "DROP INDEX a_idx"
done
echo >>"$TMP_OUT"
echo "The run took $(((SECONDS - START) / 60)) minutes." >>"$TMP_OUT"
mv "$TMP_OUT" "$OUT"
log "wrote $OUT"
cat "$OUT"
