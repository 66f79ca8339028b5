#!/usr/bin/env bash
# bloomidx vs contrib/bloom, side by side in one run, on identical copies
# of one table of six int4 columns (random()*1000000)::int, as in
# PostgreSQL's bloom documentation.  Not a test: it asserts nothing.
#
#   bash test/bench/compare_contrib.sh            # 10,000,000 rows
#   ROWS=1000000 bash test/bench/compare_contrib.sh
#
# Measures, for each setting (length, colN) and each index kind: CREATE
# INDEX time (median of BUILDS), index size, Bitmap Index Scan time (median
# of RUNS runs after a warm-up) for 1-, 2- and 3-column queries, and the
# false-positive rate of 1-column misses next to bloomidx's formula.
# Writes a markdown report to test/bench/results/ (or $OUT).
set -euo pipefail
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"

ROWS="${ROWS:-10000000}"
BUILDS="${BUILDS:-3}"
RUNS="${RUNS:-7}"
MISSES="${MISSES:-100}"
PORT="${PORT:-5497}"
OUT="${OUT:-$BLOOMIDX_REPO/test/bench/results/contrib-compare-$ROWS.md}"
# Settings compared: "length colbits" (the same bits for all six columns).
SETTINGS=("80 2" "80 9" "96 4")

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
-- Bitmap Index Scan time (ms) and rows of one query.
CREATE FUNCTION scan(query text, OUT ms float8, OUT nrows float8) LANGUAGE plpgsql AS \$\$
DECLARE plan json; node json;
BEGIN
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || query INTO plan;
    node := plan->0->'Plan';
    WHILE node->>'Node Type' <> 'Bitmap Index Scan' LOOP
        node := node->'Plans'->0;
    END LOOP;
    ms := (node->>'Actual Total Time')::float8;
    nrows := (node->>'Actual Rows')::float8;
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

for setting in "${SETTINGS[@]}"; do
	read -r LEN BITS <<<"$setting"
	WITH="length = $LEN"
	for c in 1 2 3 4 5 6; do WITH="$WITH, col$c = $BITS"; done
	log "bench: length=$LEN, $BITS bits per column"
	declare -A R=()
	for am in bloom bloomidx; do
		builds=()
		for ((b = 0; b < BUILDS; b++)); do
			psql_q -c "DROP INDEX IF EXISTS ix_$am" >/dev/null
			builds+=("$(psql_q -c "SELECT ms('CREATE INDEX ix_$am ON t_$am USING $am (i1, i2, i3, i4, i5, i6) WITH ($WITH)')")")
		done
		R[$am.build]="$(psql_q -c "SELECT round(median(ARRAY[$(IFS=,; echo "${builds[*]}")])::numeric, 0)")"
		R[$am.size]="$(psql_q -c "SELECT pg_relation_size('ix_$am') / 1048576.0" | xargs printf '%.1f')"
		psql_q -c "SELECT pg_prewarm('ix_$am')" >/dev/null 2>&1 || true
		for q in "1:i2 = $V2" "2:i2 = $V2 AND i5 = $V5" "3:i2 = $V2 AND i3 = $V3 AND i5 = $V5"; do
			name="${q%%:*}"
			cond="${q#*:}"
			R[$am.q$name]="$(psql_q <<SQL
SET enable_seqscan = off;
SELECT (scan('SELECT * FROM t_$am WHERE $cond')).ms;
SELECT round(median(array_agg(ms))::numeric, 2)
FROM (SELECT (scan('SELECT * FROM t_$am WHERE $cond')).ms FROM generate_series(1, $RUNS)) s;
SQL
)"
			R[$am.q$name]="$(tail -n1 <<<"${R[$am.q$name]}")"
		done
		# False positives: 1-column misses (values outside the data's range).
		R[$am.fpr]="$(psql_q <<SQL | tail -n1
SET enable_seqscan = off;
SELECT round((avg(nrows) / $ROWS)::numeric, 6)
FROM (SELECT (scan('SELECT * FROM t_$am WHERE i' || (1 + k % 6) || ' = ' || (-1 - k))).nrows
      FROM generate_series(1, $MISSES) k) s;
SQL
)"
		psql_q -c "DROP INDEX ix_$am" >/dev/null
	done
	formula="$("$FPR_FORMULA" "$LEN" 6 "$BITS" 1)"
	ratio() { psql_q -c "SELECT CASE WHEN $2::numeric > 0 THEN round($1::numeric / $2::numeric, 2) END"; }
	{
		echo "## length = $LEN, $BITS bits per column (col1..col6)"
		echo
		echo "| measure | contrib/bloom | bloomidx | ratio |"
		echo "|---|---:|---:|---:|"
		echo "| CREATE INDEX (ms, median of $BUILDS) | ${R[bloom.build]} | ${R[bloomidx.build]} | $(ratio "${R[bloomidx.build]}" "${R[bloom.build]}") |"
		echo "| index size (MB) | ${R[bloom.size]} | ${R[bloomidx.size]} | $(ratio "${R[bloomidx.size]}" "${R[bloom.size]}") |"
		for n in 1 2 3; do
			echo "| Bitmap Index Scan, $n-column hit (ms, median of $RUNS) | ${R[bloom.q$n]} | ${R[bloomidx.q$n]} | $(ratio "${R[bloomidx.q$n]}" "${R[bloom.q$n]}") |"
		done
		echo "| false-positive rate, 1-column misses (mean of $MISSES) | ${R[bloom.fpr]} | ${R[bloomidx.fpr]} | $(ratio "${R[bloomidx.fpr]}" "${R[bloom.fpr]}") |"
		echo "| bloomidx formula (core/sizing.cpp) | | $formula | measured/formula $(ratio "${R[bloomidx.fpr]}" "$formula") |"
		echo
	} >>"$OUT.tmp"
	unset R
done
mv "$OUT.tmp" "$OUT"
log "bench: report in $OUT"
cat "$OUT"
