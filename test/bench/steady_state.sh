#!/usr/bin/env bash
# The steady-state section of the benchmarks (issue 29): an index under a
# live workload beside the same index right after CREATE INDEX.  As root,
# like run.sh: installs what is missing, builds and installs bloomidx
# (BLOOMIDX_BENCH_NO_BUILD=1: the installed one), starts a throwaway
# cluster.
#
#   make bench-steady                              # 2 M rows, about 50 minutes here
#   STEADY_ROWS="2000000 10000000" STEADY_SECONDS=60 bash test/bench/steady_state.sh
#
# For each size in STEADY_ROWS and each kind (bloomidx, GIN through
# btree_gin with fastupdate, contrib/bloom; all on data set A's six
# columns, default settings), on the same rows:
#  1. CREATE INDEX;
#  2. INSERT 1 % more rows, no VACUUM;
#  3. 5 rounds of DELETE 10 % + INSERT as many + VACUUM;
#  4. REINDEX (what a fresh build of the churned table costs);
#  5. DELETE 99 % + VACUUM: the file's size beside a fresh build of what is left.
# After steps 1 to 4: the 2-column hit and miss (whole query, index node,
# its buffers; median of RUNS after a warm-up) and the index's size.
# Then, unless STEADY_SECONDS is 0, on a fresh table and index of each
# kind with autovacuum on: 2 pgbench clients running 2-column lookups for
# STEADY_SECONDS alone, then again while a third inserts 2,000 rows/s (20
# a statement): the lookups' p50 / p99 latency, the inserts' p99 and
# slowest execution and how many took over 50 ms.  STEADY_SETTING, one
# more server setting (STEADY_SETTING="bloomidx.background_seal = off":
# inserts that seal in the statement, as before workers).
# STEADY_ALSO_WITH, a setting under which bloomidx's hit and miss are
# measured again, beside ("bloomidx.debug_group_header_cache = off").  Writes
# test/bench/results/steady_state.md (BLOOMIDX_BENCH_OUT).  Asserts nothing.
set -euo pipefail
# shellcheck source=SCRIPTDIR/../lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/../lib/cluster.sh"
BENCH="$BLOOMIDX_REPO/test/bench"

STEADY_ROWS="${STEADY_ROWS:-2000000}"
STEADY_SECONDS="${STEADY_SECONDS:-300}"
STEADY_KINDS="${STEADY_KINDS:-bloomidx gin bloom}"
STEADY_ALSO_WITH="${STEADY_ALSO_WITH:-}"
RUNS="${RUNS:-5}"
PORT="${BLOOMIDX_BENCH_PORT:-5496}"
OUT_DIR="${BLOOMIDX_BENCH_OUT:-$BENCH/results}"
for n in $STEADY_ROWS; do
	[[ "$n" =~ ^[0-9]+$ && "$n" -ge 100 ]] || die "sizes must be whole numbers of 100 or more, not '$n'"
done
[[ "$RUNS" =~ ^[0-9]+$ && "$RUNS" -gt 0 ]] || die "RUNS must be a positive whole number, not '$RUNS'"
[[ "$STEADY_SECONDS" =~ ^[0-9]+$ ]] || die "STEADY_SECONDS must be a whole number, not '$STEADY_SECONDS'"
for kind in $STEADY_KINDS; do
	[[ "$kind" =~ ^(bloomidx|gin|bloom)$ ]] || die "unknown kind '$kind' (bloomidx, gin, bloom)"
done

bench_install

cluster_trap
CLUSTER_INITDB_FLAGS=--data-checksums cluster_start "$PORT" bloomidx-steady
q() { cluster_psql -qAt "$@"; }
bench_cluster_settings "autovacuum_naptime = '10s'" ${STEADY_SETTING:+"$STEADY_SETTING"}
q -c "CREATE EXTENSION bloomidx" -c "CREATE EXTENSION bloom" -c "CREATE EXTENSION btree_gin" \
	-f "$BENCH/scaling.sql" -f "$BENCH/steady_state.sql"

mkdir -p "$OUT_DIR"
OUT="$OUT_DIR/steady_state.md"
START=$SECONDS
TMP_OUT="$(mktemp)"
trap 'rm -f "$TMP_OUT"; cluster_stop' EXIT

ddl() {
	case "$1" in
	bloomidx) echo "CREATE INDEX a_idx ON a USING bloomidx (i1, i2, i3, i4, i5, i6)" ;;
	gin) echo "CREATE INDEX a_idx ON a USING gin (i1, i2, i3, i4, i5, i6)" ;;
	bloom) echo "CREATE INDEX a_idx ON a USING bloom (i1, i2, i3, i4, i5, i6)" ;;
	esac
}
size_mb() { q -c "SELECT round(pg_relation_size('$1') / 1048576.0, 2)"; }

# stage ROWS KIND LABEL [SETTING]: one markdown row of the state now
# (SETTING: set first); for bloomidx, a second row under STEADY_ALSO_WITH.
stage() {
	local hit miss
	hit="$(q -F ' | ' -c "${4:+SET $4}" -c "SELECT round(exec_ms::numeric, 3), round(node_ms::numeric, 3), buffers::bigint
	                       FROM steady_queries($RUNS) WHERE query = 'hit'")"
	miss="$(q -F ' | ' -c "${4:+SET $4}" -c "SELECT round(exec_ms::numeric, 3), round(node_ms::numeric, 3), buffers::bigint
	                        FROM steady_queries($RUNS) WHERE query = 'miss'")"
	echo "| $1 | $2${4:+, $4} | $3 | $hit | $miss | $(size_mb a_idx) | $(q -c "SELECT steady_state_of('a_idx')") |"
	if [[ -z "${4:-}" && "$2" == bloomidx && -n "$STEADY_ALSO_WITH" ]]; then
		stage "$1" "$2" "$3" "$STEADY_ALSO_WITH"
	fi
}

{
	echo "# bloomidx benchmarks: steady state"
	echo
	echo "\`bash test/bench/steady_state.sh\` on $(date -u +%Y-%m-%d): $(nproc) cores, $(awk '/MemTotal/ { printf "%.0f GiB", $2 / 1048576 }' /proc/meminfo),"
	echo "PostgreSQL $(q -c 'SHOW server_version'), $BUILT at commit $COMMIT."
	echo "Data set A (six int4 columns \`(random() * 1000000)::int\`), each kind on all six, default settings"
	echo "(GIN through btree_gin, fastupdate on), shared_buffers 4GB, data checksums on. Hit: \`i2 = x AND"
	echo "i5 = y\` of a row the deletes never take; miss: values outside the data. Median of $RUNS runs of"
	echo "EXPLAIN (ANALYZE, BUFFERS) after a warm-up, sequential scans off: the whole query, the index"
	echo "node (Bitmap Index Scan) and its shared buffers. Every kind sees the same rows (seeded). Each state is"
	echo "measured once no bloomidx seal worker runs (\`steady_settle\`: the seal an INSERT left to one has ended)."
	echo
	echo "## Under churn"
	echo
	echo "| rows | index | state | hit (ms) | hit node (ms) | hit buffers | miss (ms) | miss node (ms) | miss buffers | size (MB) | segments, pending |"
	echo "|---:|---|---|---:|---:|---:|---:|---:|---:|---:|---|"
} >"$TMP_OUT"
SHRINK_ROWS=""
for rows in $STEADY_ROWS; do
	for kind in $STEADY_KINDS; do
		log "$kind on $rows rows: build"
		q -c "SELECT steady_load($rows)" -c "VACUUM FREEZE ANALYZE a" -c "$(ddl "$kind")"
		stage "$rows" "$kind" "after CREATE INDEX" >>"$TMP_OUT"
		log "$kind: INSERT 1 %"
		q -c "SELECT steady_insert($rows / 100, 0.11)" -c "SELECT steady_settle('a_idx')" >/dev/null
		stage "$rows" "$kind" "after INSERT of 1 % more rows" >>"$TMP_OUT"
		for round in 1 2 3 4 5; do
			log "$kind: churn round $round"
			n="$(q -c "SELECT steady_delete(0.1, 0.2$round)")"
			q -c "SELECT steady_insert($n, 0.3$round)" -c "VACUUM a"
		done
		q -c "SELECT steady_settle('a_idx')" >/dev/null
		stage "$rows" "$kind" "after 5 rounds of DELETE 10 % + INSERT + VACUUM" >>"$TMP_OUT"
		q -c "REINDEX INDEX a_idx"
		stage "$rows" "$kind" "then REINDEX" >>"$TMP_OUT"
		log "$kind: DELETE 99 %"
		q -c "SELECT steady_delete(0.99, 0.4)" -c "VACUUM a"
		left="$(q -c "SELECT count(*) FROM a")"
		after="$(size_mb a_idx)"
		q -c "$(ddl "$kind" | sed 's/a_idx/a_fresh/')"
		fresh="$(size_mb a_fresh)"
		SHRINK_ROWS+="| $rows | $kind | $left | $after | $fresh | $(awk -v a="$after" -v f="$fresh" 'BEGIN { printf "%.2f", (f > 0 ? a / f : 0) }') |"$'\n'
		q -c "DROP TABLE a"
	done
done
{
	echo
	echo "## After DELETE of 99 % and VACUUM"
	echo
	echo "| rows | index | rows left | size (MB) | fresh build of what is left (MB) | ratio |"
	echo "|---:|---|---:|---:|---:|---:|"
	printf '%s' "$SHRINK_ROWS"
} >>"$TMP_OUT"

# percentile P of pgbench transaction logs (latency minus schedule lag, in ms).
percentile() {
	local p="$1"
	shift
	cat "$@" | awk '{ print ($3 - ($7 == "" ? 0 : $7)) / 1000 }' | sort -n |
		awk -v p="$p" '{ v[NR] = $1 } END { if (NR == 0) { print "-"; exit } i = int(NR * p + 0.999999); if (i < 1) i = 1; printf "%.2f", v[i] }'
}
# how many statements of pgbench transaction logs took over MS ms (latency minus schedule lag).
over() {
	local ms="$1"
	shift
	cat "$@" | awk -v ms="$ms" '{ if (($3 - ($7 == "" ? 0 : $7)) / 1000 > ms) n++ } END { print n + 0 }'
}

if [[ "$STEADY_SECONDS" -gt 0 ]]; then
	rows="$(tr ' ' '\n' <<<"$STEADY_ROWS" | sort -n | head -1)"
	WORK="$(make_pg_tmpdir bloomidx-pgbench)"
	cat >"$WORK/lookup.sql" <<'EOF'
\set v2 random(0, 1000000)
\set v5 random(0, 1000000)
SELECT * FROM a WHERE i2 = :v2 AND i5 = :v5;
EOF
	cat >"$WORK/insert.sql" <<'EOF'
INSERT INTO a SELECT (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int,
                     (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int
FROM generate_series(1, 20);
EOF
	chmod 644 "$WORK"/*.sql
	{
		echo
		echo "## Lookups while a writer inserts"
		echo
		echo "$rows rows, a fresh index, autovacuum on (naptime 10 s). 2 pgbench clients run 2-column lookups"
		echo "(random values, so nearly all misses) for $STEADY_SECONDS s with no writer, then again while a third"
		echo "client inserts 2,000 rows/s (\`--rate 100\`, 20 rows a statement). Latencies in ms; the writer's"
		echo "are its statements' execution times (pgbench's latency minus its schedule lag)."
		echo
		echo "| index | lookups alone p50 / p99 | with the writer p50 / p99 | p99 ratio | inserts p99 | slowest insert | inserts over 50 ms | inserts |"
		echo "|---|---:|---:|---:|---:|---:|---:|---:|"
	} >>"$TMP_OUT"
	q -c "ALTER SYSTEM SET autovacuum = on" -c "SELECT pg_reload_conf()" >/dev/null
	for kind in $STEADY_KINDS; do
		log "$kind: pgbench on $rows rows, ${STEADY_SECONDS} s alone, then with a writer"
		q -c "SELECT steady_load($rows)" -c "VACUUM FREEZE ANALYZE a" -c "$(ddl "$kind")"
		rm -f "$WORK"/alone* "$WORK"/read* "$WORK"/write*
		(cd "$WORK" && PGOPTIONS="-c enable_seqscan=off" as_pg "$PG_BINDIR/pgbench" -n -c 2 -j 2 \
			-T "$STEADY_SECONDS" -f lookup.sql -l --log-prefix=alone >/dev/null 2>"$WORK/alone.err") ||
			die "pgbench failed: $(cat "$WORK/alone.err")"
		(cd "$WORK" && as_pg "$PG_BINDIR/pgbench" -n -c 1 -j 1 -T "$STEADY_SECONDS" --rate 100 \
			-f insert.sql -l --log-prefix=write >/dev/null 2>"$WORK/write.err") &
		writer=$!
		(cd "$WORK" && PGOPTIONS="-c enable_seqscan=off" as_pg "$PG_BINDIR/pgbench" -n -c 2 -j 2 \
			-T "$STEADY_SECONDS" -f lookup.sql -l --log-prefix=read >/dev/null 2>"$WORK/read.err") ||
			die "pgbench failed: $(cat "$WORK/read.err")"
		wait "$writer" || die "pgbench (writer) failed: $(cat "$WORK/write.err")"
		a99="$(percentile 0.99 "$WORK"/alone.*)"
		r99="$(percentile 0.99 "$WORK"/read.*)"
		echo "| $kind | $(percentile 0.5 "$WORK"/alone.*) / $a99 | $(percentile 0.5 "$WORK"/read.*) / $r99 |" \
			"$(awk -v a="$a99" -v r="$r99" 'BEGIN { printf "%.2f", (a > 0 ? r / a : 0) }') |" \
			"$(percentile 0.99 "$WORK"/write.*) | $(percentile 1 "$WORK"/write.*) | $(over 50 "$WORK"/write.*) |" \
			"$(cat "$WORK"/write.* | wc -l) |" >>"$TMP_OUT"
		q -c "DROP TABLE a"
	done
	q -c "ALTER SYSTEM SET autovacuum = off" -c "SELECT pg_reload_conf()" >/dev/null
fi
echo >>"$TMP_OUT"
echo "The run took $(((SECONDS - START) / 60)) minutes." >>"$TMP_OUT"
mv "$TMP_OUT" "$OUT"
log "wrote $OUT"
cat "$OUT"
