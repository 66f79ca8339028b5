#!/usr/bin/env bash
# bloomidx benchmark suite.  Not a test: it asserts nothing, and no test
# suite runs it.
#
#   make bench                # SCALE=1: 10,000,000 + 5,000,000 rows, about 40 minutes on 2 cores
#   make bench SCALE=0.02     # a quick run, about 3 minutes
#   SCALE=0.1 bash test/bench/run.sh
#
# In one throwaway cluster, on identical copies of each data set's table,
# one copy per index kind (bloomidx with its defaults, bloomidx without
# segment filters (segment_filter_rate = 0), contrib/bloom with its
# defaults, one btree on all columns, one btree per column, one GIN index
# through btree_gin on all columns):
#   - data set A (data_a.sql): 10,000,000 * SCALE rows of six int4 columns,
#     as in PostgreSQL's bloom documentation;
#   - data set B (data_b.sql): 5,000,000 * SCALE rows of mixed types, with
#     NULLs;
#   - CREATE INDEX time, index size, WAL written by the build;
#   - each query of the data set (1-, 2-, 3-column hits and misses, an IN
#     list of 10 values, IS NULL, ...) with sequential scans off: a warm-up,
#     then the median of RUNS runs of EXPLAIN (ANALYZE, BUFFERS): whole query,
#     index node time and buffers, rows removed by recheck; for the Bloom
#     kinds, the false-positive rate of misses (mean over MISSES values) next
#     to the one core/sizing.cpp predicts (test/bench/fpr_formula);
#   - each query once more as the first query of FIRSTS new connections
#     (median): a new backend page-faults on each shared buffer it touches
#     for the first time;
#   - pgbench, 2 clients, 2-column equality lookups of values drawn from
#     up to 10,000 rows of the table for LOOKUP_SECONDS (sequential scans off);
#   - WRITE_ROUNDS rounds, each kind in turn (the order rotates): INSERT of
#     INSERT_ROWS rows (time and WAL), then pgbench, 2 clients inserting one
#     row per transaction for PGBENCH_SECONDS; medians of the rounds.
# Writes test/bench/results/scale-<SCALE>.md (markdown tables, ratios
# bloomidx / contrib/bloom) and scale-<SCALE>.png (gnuplot chart).
#
# Settings (environment; make passes SCALE):
#   SCALE           fraction of the full data sets (default 1)
#   RUNS            measured runs per query, after one warm-up (default 5)
#   MISSES          values per miss query for the false-positive rates (default 20)
#   INSERT_ROWS     rows of the INSERT test (default 200,000, times SCALE below 1, at least 10,000)
#   PGBENCH_SECONDS seconds of pgbench inserts per kind and round (default 10; 5 when SCALE < 0.5)
#   WRITE_ROUNDS    rounds of the write tests (default 3)
#   BUILD_ROUNDS    parallel builds of each kind but GIN (1), each in a new connection, the median kept (default 3)
#   LOOKUP_SECONDS  seconds of pgbench lookups per kind (default 30; 5 when SCALE < 0.5)
#   FIRSTS          new connections per query for the first-query time (default 3)
#   BLOOMIDX_BENCH_PORT     port of the cluster (default 5496)
#   BLOOMIDX_BENCH_OUT      folder of the results (default test/bench/results)
#   BLOOMIDX_BENCH_NO_BUILD=1  measure the installed extension (no make install)
#   and those of test/lib/common.sh (PG_CONFIG, BLOOMIDX_TMPDIR, ...).
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
BENCH="$BLOOMIDX_REPO/test/bench"

SCALE="${SCALE:-1}"
[[ "$SCALE" =~ ^[0-9]*\.?[0-9]+$ ]] || die "SCALE must be a number, e.g. 1 or 0.02"
scaled() { awk -v s="$SCALE" -v n="$1" -v min="$2" 'BEGIN { x = int(n * s + 0.5); print (x < min ? min : x) }'; }
ROWS_A="$(scaled 10000000 1000)"
ROWS_B="$(scaled 5000000 1000)"
INSERT_ROWS="${INSERT_ROWS:-$(awk -v s="$SCALE" 'BEGIN { x = int(200000 * (s < 1 ? s : 1)); print (x < 10000 ? 10000 : x) }')}"
PGBENCH_SECONDS="${PGBENCH_SECONDS:-$(awk -v s="$SCALE" 'BEGIN { print (s < 0.5 ? 5 : 10) }')}"
WRITE_ROUNDS="${WRITE_ROUNDS:-3}"
BUILD_ROUNDS="${BUILD_ROUNDS:-3}"
[[ "$BUILD_ROUNDS" =~ ^[0-9]*[13579]$ ]] || { echo "BUILD_ROUNDS must be odd (a median of builds)" >&2; exit 2; }
LOOKUP_SECONDS="${LOOKUP_SECONDS:-$(awk -v s="$SCALE" 'BEGIN { print (s < 0.5 ? 5 : 30) }')}"
FIRSTS="${FIRSTS:-3}"
RUNS="${RUNS:-5}"
MISSES="${MISSES:-20}"
PORT="${BLOOMIDX_BENCH_PORT:-5496}"
OUT_DIR="${BLOOMIDX_BENCH_OUT:-$BENCH/results}"
NAME="scale-$SCALE"
START=$SECONDS

BLOOMIDX_APT_PACKAGES+=(gnuplot-nox)
bench_install
make -s -C "$BLOOMIDX_REPO" test/bench/fpr_formula PG_CONFIG="$PG_CONFIG"

cluster_trap
# Data checksums on, as careful production clusters run (and PostgreSQL 18's
# initdb does by default): PostgreSQL then checks every page it reads from
# disk, and bloomidx verifies a segment page's own sum once per page image
# instead of at every read (src/support/page.cpp).
CLUSTER_INITDB_FLAGS=--data-checksums cluster_start "$PORT" bloomidx-bench
TMP="$CLUSTER_DIR/bench"
mkdir -p "$TMP" "$OUT_DIR"
q() { cluster_psql -qAt "$@"; }

# Enough shared_buffers for every index and the table being measured; no
# checkpoint but ours (before each build and insert test: the WAL then holds
# the full-page images of the pages first touched, as after any checkpoint);
# no autovacuum, JIT or parallel query to muddle the figures; index builds
# keep PostgreSQL's default of up to 2 parallel workers (each is timed
# serially too).
q -c "ALTER SYSTEM SET shared_buffers = '4GB'" -c "ALTER SYSTEM SET work_mem = '256MB'" \
	-c "ALTER SYSTEM SET maintenance_work_mem = '1GB'" -c "ALTER SYSTEM SET max_wal_size = '32GB'" \
	-c "ALTER SYSTEM SET checkpoint_timeout = '1h'" -c "ALTER SYSTEM SET full_page_writes = on" \
	-c "ALTER SYSTEM SET autovacuum = off" -c "ALTER SYSTEM SET jit = off" \
	-c "ALTER SYSTEM SET max_parallel_workers_per_gather = 0" \
	-c "ALTER SYSTEM SET synchronize_seqscans = off"
(cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -l "$CLUSTER_DIR/server.log" -w restart >/dev/null)
q -f "$BENCH/lib.sql"
mapfile -t KINDS < <(q -c "SELECT key FROM kind ORDER BY ord")

# bench_dataset DS ROWS: load, build, query, insert, pgbench; results into
# the table result; then drop the data set's tables.
bench_dataset() {
	local ds="$1" rows="$2" nkeys k msg lsn tps tx wal qord len ncols bits cols p c1 c2 rounds
	log "bench $ds: $rows rows, a copy per kind (${KINDS[*]})"
	q -v rows="$rows" -f "$BENCH/data_$ds.sql" >/dev/null
	for k in "${KINDS[@]:1}"; do
		q -c "CREATE TABLE ${ds}_$k AS SELECT * FROM ${ds}_${KINDS[0]}"
	done
	for k in "${KINDS[@]}"; do
		q -c "VACUUM (FREEZE, ANALYZE) ${ds}_$k"
	done
	# Write the loaded tables out now, so that the kernel's writeback of
	# gigabytes of dirty pages does not slow the first builds down.
	q -c "CHECKPOINT"
	sync
	for k in "${KINDS[@]}"; do
		log "bench $ds: $k: CREATE INDEX, then queries"
		# bloomidx says the length and bits it chose at debug1.
		q -c "SET client_min_messages = debug1" -c "SELECT build_one('$ds', '$k', false)" \
			>/dev/null 2>"$TMP/build.err" || { cat "$TMP/build.err"; die "build of $k failed"; }
		# GIN's build takes minutes: once.
		rounds=$BUILD_ROUNDS
		[[ "$k" == gin ]] && rounds=1
		for _ in $(seq "$rounds"); do
			q -c "SELECT build_one('$ds', '$k', true)" >/dev/null
		done
		q -c "SELECT build_summary('$ds', '$k', $BUILD_ROUNDS)" >/dev/null
		msg="$(sed -n 's/.*bloomidx index "[^"]*": length \([0-9]*\), bits per column \([0-9, ]*\),.*/\1 \2/p' "$TMP/build.err" | head -n 1)"
		if [[ -n "$msg" ]]; then
			q -c "INSERT INTO settings VALUES ('$ds', '$k', ${msg%% *}, '$(tr -d ' ' <<<"${msg#* }")')"
		fi
		q -c "SELECT measure('$ds', '$k', $RUNS)" >/dev/null
		for qord in $(q -c "SELECT ord FROM query WHERE ds = '$ds' ORDER BY ord"); do
			for _ in $(seq "$FIRSTS"); do
				q -c "SELECT first_query('$ds', '$k', $qord)" >/dev/null
			done
		done
		if [[ "$k" == bloom* ]]; then
			q -c "SELECT false_positives('$ds', '$k', $MISSES)" >/dev/null
		fi
	done
	log "bench $ds: ${LOOKUP_SECONDS}s of pgbench 2-column lookups per kind"
	q -c "SELECT make_lookups('$ds')" >/dev/null
	read -r c1 c2 < <(q -F' ' -c "SELECT lookup_columns[1], lookup_columns[2] FROM dataset WHERE ds = '$ds'")
	nkeys="$(q -c "SELECT count(*) FROM lookup_$ds")"
	for k in "${KINDS[@]}"; do
		PGOPTIONS="-c enable_seqscan=off" "$PG_BINDIR/pgbench" -n -c 2 -j 2 -T "$LOOKUP_SECONDS" \
			-f "$BENCH/lookup.sql" -D tbl="${ds}_$k" -D keys="lookup_$ds" -D nkeys="$nkeys" -D c1="$c1" -D c2="$c2" \
			>"$TMP/pgbench.out" 2>&1 || { cat "$TMP/pgbench.out"; die "pgbench lookups on $k failed"; }
		tps="$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$TMP/pgbench.out")"
		q -c "SELECT put('$ds', 940, '**Lookups under load**', NULL, NULL),
		             put('$ds', 941, 'pgbench, 2-column lookups (\`$c1\`, \`$c2\`) of values from the table, 2 clients, ${LOOKUP_SECONDS} s (transactions/s)', '$k', $tps)" >/dev/null
	done
	log "bench $ds: $WRITE_ROUNDS rounds of INSERT of $INSERT_ROWS rows and ${PGBENCH_SECONDS}s of pgbench per kind"
	local round i n=${#KINDS[@]}
	for round in $(seq "$WRITE_ROUNDS"); do
		for i in $(seq 0 $((n - 1))); do
			k="${KINDS[$(((i + round) % n))]}"
			q -c "SELECT insert_rows('$ds', '$k', $INSERT_ROWS, $round)" >/dev/null
			q -c "CHECKPOINT"
			lsn="$(q -c "SELECT pg_current_wal_insert_lsn()")"
			"$PG_BINDIR/pgbench" -n -c 2 -j 2 -T "$PGBENCH_SECONDS" -f "$BENCH/insert_one.sql" \
				-D tbl="${ds}_$k" -D gen="gen_$ds" >"$TMP/pgbench.out" 2>&1 ||
				{ cat "$TMP/pgbench.out"; die "pgbench on $k failed"; }
			wal="$(q -c "SELECT pg_wal_lsn_diff(pg_current_wal_insert_lsn(), '$lsn')")"
			tps="$(sed -n 's/^tps = \([0-9.]*\) .*/\1/p' "$TMP/pgbench.out")"
			tx="$(sed -n 's/^number of transactions actually processed: \([0-9]*\).*/\1/p' "$TMP/pgbench.out")"
			q -c "INSERT INTO writes VALUES ('$ds', '$k', $round, 954, $tps), ('$ds', '$k', $round, 955, $wal / $tx)"
		done
	done
	q -c "SELECT summarize_writes('$ds', $INSERT_ROWS, $WRITE_ROUNDS, $PGBENCH_SECONDS)" >/dev/null
	q -c "SELECT summarize('$ds')" >/dev/null
	# The false-positive rate core/sizing.cpp predicts for each miss.
	while IFS='|' read -r k qord len ncols bits cols; do
		p="$("$BENCH/fpr_formula" "$len" "$ncols" "$bits" "$cols")"
		q -c "SELECT put('$ds', 900 + 2 * $qord, (SELECT label FROM query WHERE ds = '$ds' AND ord = $qord)
		                 || ', predicted (%)', '$k', 100 * $p)" >/dev/null
	done < <(q -F'|' -c "SELECT s.kind, q.ord, s.length, cardinality(d.columns), s.bits, q.miss_cols
	                     FROM settings s JOIN dataset d USING (ds) JOIN query q USING (ds)
	                     WHERE ds = '$ds' AND q.miss_cols IS NOT NULL")
	for k in "${KINDS[@]}"; do
		q -c "DROP TABLE ${ds}_$k"
	done
	q -c "DROP TABLE lookup_$ds"
}
bench_dataset a "$ROWS_A"
bench_dataset b "$ROWS_B"

log "bench: report and chart"
MINUTES="$(awk -v s=$((SECONDS - START)) 'BEGIN { printf "%.1f", s / 60 }')"
{
	cat <<-EOF
		# bloomidx benchmarks, SCALE=$SCALE

		\`make bench SCALE=$SCALE\` ([test/bench/run.sh](../run.sh)) on $(date -u +%Y-%m-%d): $(nproc) cores
		($(sed -n 's/^model name\s*: //p' /proc/cpuinfo | head -n1)), $(free -g | awk '/^Mem:/ { print $2 }') GiB, PostgreSQL $(q -c 'SHOW server_version'),
		$BUILT at commit $COMMIT; the whole run took $MINUTES minutes.
		Cluster: data checksums on, shared_buffers 4GB, work_mem 256MB, maintenance_work_mem 1GB, jit off, no parallel query,
		index builds with PostgreSQL's default max_parallel_maintenance_workers (2; contrib/bloom cannot use
		them, btree and bloomidx can; the median of $BUILD_ROUNDS builds (GIN: 1), each in a new connection) and once serially before them, autovacuum off, fsync off, synchronous_commit
		off, full_page_writes on, a CHECKPOINT before each build and each insert test. Each kind has its own
		identical copy of the table (VACUUM FREEZE, ANALYZE).

		Queries run with enable_seqscan = off; the planner picks the plan (bitmap or index scan, see
		*Plans*). A warm-up, then the median of $RUNS runs of EXPLAIN (ANALYZE, BUFFERS): *whole query* is the
		Execution Time, *index node* the time and shared buffers of the Bitmap Index Scan (or BitmapAnd, or
		Index [Only] Scan, whose time and buffers include the heap), *rows removed* those the heap scan drops
		at recheck or filter. n/a: the kind cannot answer the query through its index.
		False-positive rate: rows removed by recheck over the rows of the table, mean over $MISSES miss values
		(the k-th is -k or 'none-k'); predicted: what core/sizing.cpp computes for the length and bits the
		bloomidx index was built with (test/bench/fpr_formula).
		*As a new connection's first query*: the same EXPLAIN as the first statement of each of $FIRSTS new
		connections (median), after the measured runs: the index is in shared buffers, but a new backend
		page-faults on each buffer it touches for the first time.
		*Lookups under load*: pgbench, 2 clients, each transaction an equality lookup on two columns with
		values drawn from up to 10,000 rows of the table (sequential scans off).
		Ratios: bloomidx / contrib/bloom and bloomidx / GIN, lower is better except for rows and
		transactions per second.
		The machine is shared: timings vary by several per cent from run to run, more under a millisecond.

		![query time, index size and build time per index kind]($NAME.png)
	EOF
	for ds in a b; do
		echo
		q -c "SELECT format('## Data set %s, %s rows', upper(ds), to_char(nrows, 'FM999,999,999'))
		      FROM dataset WHERE ds = '$ds'"
		echo
		q -c "SELECT about FROM dataset WHERE ds = '$ds'"
		q -c "SELECT 'bloomidx (defaults) chose length ' || length || ' and bits per column ' || replace(bits, ',', ', ')
		             || '; contrib/bloom''s defaults are length 80 and 2 bits per column.'
		      FROM settings WHERE ds = '$ds' AND kind = 'bloomidx'"
		echo
		q -c "SELECT report('$ds')"
		echo
		echo "Plans (the node that used the index):"
		echo
		q -c "SELECT plans('$ds')"
	done
} >"$TMP/report.md"

q -c "SELECT chart(array_agg(ds), array_agg(101 + 10 * ord ORDER BY ord), array_agg(short ORDER BY ord))
      FROM query WHERE ds = 'a'" >"$TMP/a.dat"
q -c "SELECT chart(array_agg(ds), array_agg(101 + 10 * ord ORDER BY ord), array_agg(short ORDER BY ord))
      FROM query WHERE ds = 'b'" >"$TMP/b.dat"
q -c "SELECT chart('{a,b}', '{3,3}', array_agg(format('data set %s', upper(ds)) ORDER BY ds))
      FROM dataset" >"$TMP/sizes.dat"
q -c "SELECT chart('{a,b}', '{1,1}', array_agg(format('data set %s', upper(ds)) ORDER BY ds))
      FROM dataset" >"$TMP/builds.dat"
gnuplot -e "qa='$TMP/a.dat'; qb='$TMP/b.dat'; sizes='$TMP/sizes.dat'; builds='$TMP/builds.dat'" \
	-e "out='$OUT_DIR/$NAME.png'; heading='bloomidx benchmarks, SCALE=$SCALE: data sets $(q -c "SELECT string_agg(format('%s %s rows',
		upper(ds), to_char(nrows, 'FM999,999,999')), ', ' ORDER BY ds) FROM dataset")'" \
	"$BENCH/chart.gp"
mv "$TMP/report.md" "$OUT_DIR/$NAME.md"
log "bench: done in $MINUTES min: $OUT_DIR/$NAME.md and $NAME.png"
