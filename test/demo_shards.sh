#!/usr/bin/env bash
# bloomidx scaled out, with PostgreSQL's own machinery (doc/scaling-out.md):
#
#   bash test/demo_shards.sh        (or: make demo-shards)
#
# Starts five throwaway servers in one temp folder (as the postgres OS user
# when run as root, each on its own Unix socket):
#   single    one node with every order and a bloomidx index: the reference
#   replica   a hot standby of single, streaming its WAL
#   shard0/1  two shard servers, each with its share of the orders and its
#             own bloomidx index
#   coord     the coordinator: orders is hash-partitioned on customer_id
#             into two postgres_fdw foreign tables, one per shard
# loads the same orders into single and, through the coordinator, into the
# shards, then shows how queries are routed (EXPLAIN VERBOSE), each shard's
# own plan, that the three answer alike, and each query's time on one node,
# on the standby and on the two shards.  Stops and removes everything at
# the end.  About two minutes.
#
# Settings (environment):
#   BLOOMIDX_DEMO_PORT   first of five ports (default 5501)
#   BLOOMIDX_DEMO_ROWS   orders to load (default 1000000)
#   BLOOMIDX_DEMO_NO_BUILD=1  skip the build and install steps
#   BLOOMIDX_KEEP_CLUSTER=1   keep the temp folder

set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cluster.sh"
cd "$BLOOMIDX_REPO"

BASE_PORT="${BLOOMIDX_DEMO_PORT:-5501}"
[[ "$BASE_PORT" =~ ^[0-9]+$ ]] || die "BLOOMIDX_DEMO_PORT must be a number"
demo_prepare 1000000

DIR="$(make_pg_tmpdir bloomidx-shards)"
NODES=(single replica shard0 shard1 coord)
declare -A PORT
for i in "${!NODES[@]}"; do PORT[${NODES[$i]}]=$((BASE_PORT + i)); done

stop_all() {
	local n
	for n in coord shard1 shard0 replica single; do
		if [[ -f "$DIR/$n/postmaster.pid" ]]; then
			(cd "$DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$DIR/$n" -m fast -w -t 60 stop >/dev/null 2>&1) ||
				(cd "$DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$DIR/$n" -m immediate -w -t 30 stop >/dev/null 2>&1) ||
				true
		fi
	done
	if [[ "${BLOOMIDX_KEEP_CLUSTER:-}" == 1 ]]; then log "kept $DIR"; else rm -rf "$DIR"; fi
}
trap stop_all EXIT
trap 'exit 130' INT
trap 'exit 143' TERM

node_start() {
	(cd "$DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$DIR/$1" -l "$DIR/$1.log" -w -t 120 start >/dev/null) ||
		{ print_file "$DIR/$1.log" 50; die "$1 did not start"; }
}

# node_init NAME: initdb, the throwaway settings, start.
node_init() {
	(cd "$DIR" && as_pg "$PG_BINDIR/initdb" -D "$DIR/$1" -U "$(pg_os_user)" --auth=trust \
		--no-sync --encoding=UTF8 --locale=C >"$DIR/$1.initdb.log" 2>&1) ||
		{ print_file "$DIR/$1.initdb.log" 50; die "initdb of $1 failed"; }
	cluster_settings "${PORT[$1]}" "$DIR" | (cd "$DIR" && as_pg tee -a "$DIR/$1/postgresql.conf" >/dev/null)
	node_start "$1"
}

# on NODE [psql args]: psql on that node.
on() {
	local n="$1"
	shift
	"$PG_BINDIR/psql" -X -q -v ON_ERROR_STOP=1 -h "$DIR" -p "${PORT[$n]}" -U "$(pg_os_user)" -d postgres "$@"
}

banner() {
	echo
	echo "=== $* ==="
}

banner "five servers in $DIR"
for n in single shard0 shard1 coord; do
	node_init "$n"
	echo "$n: port ${PORT[$n]}"
done
# The standby: a base backup of single (streaming its WAL from then on).
(cd "$DIR" && as_pg "$PG_BINDIR/pg_basebackup" -h "$DIR" -p "${PORT[single]}" -U "$(pg_os_user)" \
	-D "$DIR/replica" -R -X stream -c fast) || die "pg_basebackup failed"
(cd "$DIR" && as_pg sed -i "s/^port = .*/port = ${PORT[replica]}/" "$DIR/replica/postgresql.conf")
node_start replica
echo "replica: port ${PORT[replica]}, a hot standby of single"

SCHEMA="CREATE TABLE orders (order_id bigint, customer_id int4, region text, status text,
                             sku text, qty int4)"
INDEX="CREATE INDEX orders_bloomidx ON orders USING bloomidx (customer_id, region, status, sku)"
# median_ms(query, n): the median time of n runs of query, after one more.
MEDIAN="CREATE FUNCTION median_ms(q text, n int DEFAULT 21) RETURNS numeric LANGUAGE plpgsql AS \$f\$
DECLARE t timestamptz; ms float8[] := '{}';
BEGIN
    EXECUTE q;
    FOR i IN 1 .. n LOOP
        t := clock_timestamp();
        EXECUTE q;
        ms := ms || 1000 * extract(epoch FROM clock_timestamp() - t)::float8;
    END LOOP;
    RETURN round((SELECT percentile_cont(0.5) WITHIN GROUP (ORDER BY x) FROM unnest(ms) x)::numeric, 3);
END \$f\$"

banner "schema: the shards' tables, the coordinator's partitions on them"
# postgres_fdw reads a shard's rows through a cursor, which the shard plans
# to return its first tenth soonest (cursor_tuple_fraction = 0.1): a
# sequential scan starts at once where a bitmap scan reads its index
# first, so less selective queries (an IN list) would scan the table.
# The coordinator reads every row: plan for all of them.
for n in shard0 shard1; do
	on "$n" -c "CREATE EXTENSION bloomidx" -c "$SCHEMA" \
		-c "ALTER DATABASE postgres SET cursor_tuple_fraction = 1.0"
done
echo "shard0, shard1: $SCHEMA"
echo "shard0, shard1: ALTER DATABASE postgres SET cursor_tuple_fraction = 1.0"
on coord <<SQL
\\set ECHO queries
CREATE EXTENSION postgres_fdw;
$SCHEMA PARTITION BY HASH (customer_id);
CREATE SERVER shard0 FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '$DIR', port '${PORT[shard0]}', dbname 'postgres', async_capable 'true', batch_size '1000');
CREATE SERVER shard1 FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '$DIR', port '${PORT[shard1]}', dbname 'postgres', async_capable 'true', batch_size '1000');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard0;
CREATE USER MAPPING FOR CURRENT_USER SERVER shard1;
CREATE FOREIGN TABLE orders_s0 PARTITION OF orders FOR VALUES WITH (MODULUS 2, REMAINDER 0)
    SERVER shard0 OPTIONS (table_name 'orders');
CREATE FOREIGN TABLE orders_s1 PARTITION OF orders FOR VALUES WITH (MODULUS 2, REMAINDER 1)
    SERVER shard1 OPTIONS (table_name 'orders');
SQL
on coord -c "$MEDIAN"

banner "loading $ROWS orders: into single, and through the coordinator into the shards"
on single -c "CREATE EXTENSION bloomidx" -c "$SCHEMA" -c "$MEDIAN"
on coord <<SQL
SELECT setseed(0.42) \\g /dev/null
CREATE TABLE orders_load AS
SELECT i AS order_id, 1 + (random() * 49999)::int4 AS customer_id,
       (ARRAY['eu-west', 'eu-north', 'us-east', 'us-west', 'ap-south', 'sa-east'])[1 + floor(random() * 6)::int] AS region,
       (ARRAY['new', 'paid', 'shipped', 'delivered', 'cancelled', 'returned'])[1 + floor(random() ^ 2 * 6)::int] AS status,
       'sku-' || (random() * 20000)::int AS sku, 1 + (random() * 9)::int4 AS qty
FROM generate_series(1, $ROWS) i;
\\timing on
INSERT INTO orders SELECT * FROM orders_load;
SQL
on coord -c "COPY orders_load TO STDOUT" | on single -c "COPY orders FROM STDIN"
on coord -c "DROP TABLE orders_load"
for n in single shard0 shard1; do
	echo "$n: $(on "$n" -At -c "SELECT count(*) FROM orders") orders; $INDEX"
	on "$n" -c "$INDEX" -c "VACUUM ANALYZE orders"
done
on single -c "CHECKPOINT"
on single -At -c "SELECT pg_current_wal_lsn()" >"$DIR/lsn"
deadline=$((SECONDS + 300))
until [[ "$(on replica -At -c "SELECT pg_last_wal_replay_lsn() >= '$(cat "$DIR/lsn")'")" == t ]]; do
	((SECONDS < deadline)) || { print_file "$DIR/replica.log" 50; die "the standby did not catch up in 300 s"; }
	sleep 0.2
done
echo "replica: replayed single's WAL ($(on replica -At -c "SELECT count(*) FROM orders") orders, its index built by replay)"

# Queries: the values of an existing order, so that each finds rows.
row="$(on single -At -F' ' -c \
	"SELECT customer_id, region, status, sku FROM orders ORDER BY order_id LIMIT 1 OFFSET $((ROWS / 3))")"
[[ -n "$row" ]] || die "no order to take query values from (BLOOMIDX_DEMO_ROWS=$ROWS)"
read -r CUST REGION STATUS SKU <<<"$row"
QUERIES=(
	"customer_id = $CUST AND status = '$STATUS'"
	"region = '$REGION' AND sku = '$SKU'"
	"status = '$STATUS' AND sku = '$SKU' AND region = '$REGION'"
	"sku = '$SKU'"
	"region = 'nowhere' AND sku = '$SKU'"
	"sku IN ('$SKU', 'sku-1', 'sku-2', 'sku-3')"
)

banner "routing: what the coordinator sends where (EXPLAIN VERBOSE)"
echo "-- customer_id, the partition key, in the query: one shard"
on coord -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM orders WHERE ${QUERIES[0]}"
echo "-- no customer_id: both shards, at once (Async Foreign Scan), each with the conditions (Remote SQL)"
on coord -c "EXPLAIN (VERBOSE, COSTS OFF) SELECT * FROM orders WHERE ${QUERIES[1]}"
echo "-- and what a shard does with the Remote SQL: its bloomidx index"
on shard0 -c "EXPLAIN (ANALYZE, BUFFERS, COSTS OFF) SELECT * FROM public.orders WHERE ((region = '$REGION'::text)) AND ((sku = '$SKU'::text))"

banner "answers: the same rows on one node, the standby and the shards"
printf '%-64s %10s %10s %10s\n' "query" single replica shards
for qy in "${QUERIES[@]}"; do
	sql="SELECT count(*) || ' ' || left(md5(coalesce(string_agg(order_id::text, ',' ORDER BY order_id), '')), 6) FROM orders WHERE $qy"
	a1="$(on single -At -c "$sql")"
	a2="$(on replica -At -c "$sql")"
	a3="$(on coord -At -c "$sql")"
	printf '%-64s %10s %10s %10s\n' "${qy:0:64}" "$a1" "$a2" "$a3"
	[[ -n "$a1" && "$a1" == "$a2" && "$a1" == "$a3" ]] || die "the answers differ: $qy"
done
echo "(rows and the first characters of an md5 of their ids)"

banner "time of each query, ms (median of 21 runs, each after a first): one node, its standby, two shards"
printf '%-64s %10s %10s %10s\n' "query" single replica shards
for qy in "${QUERIES[@]}"; do
	sql="SELECT median_ms(\$q\$SELECT * FROM orders WHERE $qy\$q\$)"
	printf '%-64s %10s %10s %10s\n' "${qy:0:64}" "$(on single -At -c "$sql")" \
		"$(on replica -At -c "$sql")" "$(on coord -At -c "$sql")"
done
echo "(the shards' time includes the coordinator's round trips to them over postgres_fdw)"

banner "each index's scans (pg_stat_user_indexes.idx_scan)"
for n in single shard0 shard1; do
	echo "$n: $(on "$n" -At -c "SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 'orders_bloomidx'")"
done
