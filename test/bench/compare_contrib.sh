#!/usr/bin/env bash
# bloomidx vs contrib/bloom, side by side in one run, on identical copies
# of one table of six int4 columns (random()*1000000)::int, as in
# PostgreSQL's bloom documentation.  Not a test: it asserts nothing.
#
#   bash test/bench/compare_contrib.sh            # 10,000,000 rows
#   ROWS=1000000 bash test/bench/compare_contrib.sh
#
# Measures, for each setting (each kind's defaults, then the same length
# and colN for both) and each index kind: CREATE INDEX time (median of
# BUILDS), index size, Bitmap Index Scan time and whole-query time (median
# of RUNS runs after a warm-up) for 1-, 2- and 3-column queries, index
# buffers and time of an IN list of 10 values, and the false-positive rate
# of 1-column misses next to bloomidx's formula.
# Writes a markdown report to test/bench/results/ (or $OUT).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

ROWS="${ROWS:-10000000}"
BUILDS="${BUILDS:-3}"
RUNS="${RUNS:-7}"
MISSES="${MISSES:-100}"
PORT="${PORT:-5497}"
OUT="${OUT:-$BLOOMIDX_REPO/test/bench/results/contrib-compare-$ROWS.md}"
# Settings compared: "defaults" (no options: each kind's own defaults), or
# "length colbits" (the same bits for all six columns, for both kinds).
SETTINGS=("defaults" "80 2" "80 9" "96 4")

deps_install
build_and_install
make -s -C "$BLOOMIDX_REPO" test/bench/fpr_formula PG_CONFIG="$PG_CONFIG"
FPR_FORMULA="$BLOOMIDX_REPO/test/bench/fpr_formula"

trap cluster_stop EXIT
cluster_start "$PORT" bench
cluster_psql -q -c "ALTER SYSTEM SET shared_buffers = '4GB'" \
	-c "ALTER SYSTEM SET max_wal_size = '16GB'" -c "ALTER SYSTEM SET work_mem = '256MB'" \
	-c "ALTER SYSTEM SET jit = off" -c "ALTER SYSTEM SET max_parallel_workers_per_gather = 0"
(cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -l "$CLUSTER_DIR/server.log" -w restart >/dev/null)

psql_q() { cluster_psql -qAt "$@"; }

log "bench: loading $ROWS rows"
psql_q <<SQL
CREATE EXTENSION bloom;
CREATE EXTENSION bloomidx;
CREATE TABLE base AS
SELECT (random() * 1000000)::int AS i1, (random() * 1000000)::int AS i2,
       (random() * 1000000)::int AS i3, (random() * 1000000)::int AS i4,
       (random() * 1000000)::int AS i5, (random() * 1000000)::int AS i6
FROM generate_series(1, $ROWS);
CREATE TABLE t_bloom AS SELECT * FROM base;
CREATE TABLE t_bloomidx AS SELECT * FROM base;
VACUUM ANALYZE t_bloom;
VACUUM ANALYZE t_bloomidx;
-- Milliseconds one statement takes.
CREATE FUNCTION ms(stmt text) RETURNS float8 LANGUAGE plpgsql AS \$\$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE stmt;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END \$\$;
-- Of one query: Bitmap Index Scan time (ms), rows, buffers; whole query ms.
CREATE FUNCTION scan(query text, OUT ms float8, OUT nrows float8, OUT buffers float8,
                     OUT total_ms float8) LANGUAGE plpgsql AS \$\$
DECLARE plan json; node json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || query INTO plan;
    total_ms := (plan->0->>'Execution Time')::float8;
    node := plan->0->'Plan';
    WHILE node->>'Node Type' <> 'Bitmap Index Scan' LOOP
        node := node->'Plans'->0;
    END LOOP;
    ms := (node->>'Actual Total Time')::float8;
    nrows := (node->>'Actual Rows')::float8;
    buffers := (node->>'Shared Hit Blocks')::float8 + (node->>'Shared Read Blocks')::float8;
END \$\$;
CREATE FUNCTION median(float8[]) RETURNS float8 LANGUAGE sql AS \$\$
    SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(\$1) x
\$\$;
SQL
# Values that are in the table (for hits) and one that is not (misses).
mkdir -p "$(dirname "$OUT")"
read -r V2 V5 V3 <<<"$(psql_q -F' ' -c "SELECT i2, i5, i3 FROM base LIMIT 1")"

{
	echo "# bloomidx vs contrib/bloom: $ROWS rows x 6 int4 columns"
	echo
	echo "Measured $(date -u +%Y-%m-%d) on this machine ($(nproc) cores), PostgreSQL $(psql_q -c 'SHOW server_version'),"
	echo "shared_buffers 4GB, both indexes warm. Times in ms; ratio = bloomidx / contrib/bloom (lower is better)."
	echo
} >"$OUT.tmp"

# median_of FIELD QUERY: median of RUNS runs of scan(QUERY).FIELD, after a warm-up.
median_of() {
	psql_q <<SQL | tail -n1
SET enable_seqscan = off;
SELECT (scan('$2')).$1;
SELECT round(median(array_agg(v))::numeric, 2)
FROM (SELECT (scan('$2')).$1 AS v FROM generate_series(1, $RUNS)) s;
SQL
}
ratio() { psql_q -c "SELECT CASE WHEN $2::numeric > 0 THEN round($1::numeric / $2::numeric, 2) END"; }
IN10="$(psql_q -c "SELECT string_agg(i2::text, ', ') FROM (SELECT i2 FROM base LIMIT 10) s")"

for setting in "${SETTINGS[@]}"; do
	if [[ "$setting" == defaults ]]; then
		WITH=""
		title="each kind's defaults (no options)"
	else
		read -r LEN BITS <<<"$setting"
		WITH="WITH (length = $LEN"
		for c in 1 2 3 4 5 6; do WITH="$WITH, col$c = $BITS"; done
		WITH="$WITH)"
		title="length = $LEN, $BITS bits per column (col1..col6)"
	fi
	log "bench: $title"
	declare -A R=()
	for am in bloom bloomidx; do
		builds=()
		for ((b = 0; b < BUILDS; b++)); do
			psql_q -c "DROP INDEX IF EXISTS ix_$am" >/dev/null
			builds+=("$(psql_q -c "SELECT ms('CREATE INDEX ix_$am ON t_$am USING $am (i1, i2, i3, i4, i5, i6) $WITH')")")
		done
		R[$am.build]="$(psql_q -c "SELECT round(median(ARRAY[$(IFS=,; echo "${builds[*]}")])::numeric, 0)")"
		R[$am.size]="$(psql_q -c "SELECT pg_relation_size('ix_$am') / 1048576.0" | xargs printf '%.1f')"
		for q in "1:i2 = $V2" "2:i2 = $V2 AND i5 = $V5" "3:i2 = $V2 AND i3 = $V3 AND i5 = $V5"; do
			R[$am.q${q%%:*}]="$(median_of ms "SELECT * FROM t_$am WHERE ${q#*:}")"
			R[$am.t${q%%:*}]="$(median_of total_ms "SELECT * FROM t_$am WHERE ${q#*:}")"
		done
		R[$am.in_ms]="$(median_of ms "SELECT * FROM t_$am WHERE i2 IN ($IN10)")"
		R[$am.in_buf]="$(median_of buffers "SELECT * FROM t_$am WHERE i2 IN ($IN10)")"
		# False positives: 1-column misses (values outside the data's range).
		R[$am.fpr]="$(psql_q <<SQL | tail -n1
SET enable_seqscan = off;
SELECT round((avg(nrows) / $ROWS)::numeric, 6)
FROM (SELECT (scan('SELECT * FROM t_$am WHERE i' || (1 + k % 6) || ' = ' || (-1 - k))).nrows
      FROM generate_series(1, $MISSES) k) s;
SQL
)"
		if [[ "$am" == bloomidx ]]; then
			# The length and bits bloomidx chose (or was given), from its metapage.
			read -r R[len] R[bits] <<<"$(psql_q -F' ' -c "SET client_min_messages = debug1" \
				-c "REINDEX INDEX ix_bloomidx" 2>&1 |
				sed -n 's/.*length \([0-9]*\), bits per column \([0-9]*\).*/\1 \2/p' | tail -n1)"
		fi
		psql_q -c "DROP INDEX ix_$am" >/dev/null
	done
	formula="$("$FPR_FORMULA" "${R[len]}" 6 "${R[bits]}" 1)"
	{
		echo "## $title"
		echo
		[[ "$setting" == defaults ]] &&
			echo "contrib/bloom: length 80, 2 bits per column; bloomidx chose length ${R[len]}, ${R[bits]} bits per column." && echo
		echo "| measure | contrib/bloom | bloomidx | ratio |"
		echo "|---|---:|---:|---:|"
		echo "| CREATE INDEX (ms, median of $BUILDS) | ${R[bloom.build]} | ${R[bloomidx.build]} | $(ratio "${R[bloomidx.build]}" "${R[bloom.build]}") |"
		echo "| index size (MB) | ${R[bloom.size]} | ${R[bloomidx.size]} | $(ratio "${R[bloomidx.size]}" "${R[bloom.size]}") |"
		for n in 1 2 3; do
			echo "| Bitmap Index Scan, $n-column hit (ms, median of $RUNS) | ${R[bloom.q$n]} | ${R[bloomidx.q$n]} | $(ratio "${R[bloomidx.q$n]}" "${R[bloom.q$n]}") |"
			echo "| whole query, $n-column hit (ms, median of $RUNS) | ${R[bloom.t$n]} | ${R[bloomidx.t$n]} | $(ratio "${R[bloomidx.t$n]}" "${R[bloom.t$n]}") |"
		done
		echo "| IN list of 10 values: index buffers | ${R[bloom.in_buf]} | ${R[bloomidx.in_buf]} | $(ratio "${R[bloomidx.in_buf]}" "${R[bloom.in_buf]}") |"
		echo "| IN list of 10 values: Bitmap Index Scan (ms) | ${R[bloom.in_ms]} | ${R[bloomidx.in_ms]} | $(ratio "${R[bloomidx.in_ms]}" "${R[bloom.in_ms]}") |"
		echo "| false-positive rate, 1-column misses (mean of $MISSES) | ${R[bloom.fpr]} | ${R[bloomidx.fpr]} | $(ratio "${R[bloomidx.fpr]}" "${R[bloom.fpr]}") |"
		echo "| bloomidx formula (core/sizing.cpp) | | $formula | measured/formula $(ratio "${R[bloomidx.fpr]}" "$formula") |"
		echo
	} >>"$OUT.tmp"
	unset R
done
mv "$OUT.tmp" "$OUT"
log "bench: report in $OUT"
cat "$OUT"
