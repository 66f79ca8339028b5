#!/usr/bin/env bash
# bloomidx demo:
#
#   bash test/demo.sh
#
# Installs what is missing, builds and installs the extension, starts a
# throwaway cluster (as the postgres OS user when run as root, in a temp
# folder, on its own socket), loads a million orders, creates a bloomidx index
# on four columns and shows EXPLAIN (ANALYZE, BUFFERS) of multi-column
# lookups, then compares sizes and plans with contrib/bloom and one btree per
# column.  Stops and removes the cluster at the end.  About a minute or two.
#
# Settings (environment):
#   BLOOMIDX_DEMO_PORT   port of the demo cluster (default 5492)
#   BLOOMIDX_DEMO_ROWS   rows to load (default 1000000)
#   BLOOMIDX_DEMO_NO_BUILD=1  skip the build and install steps
#   BLOOMIDX_KEEP_CLUSTER=1   keep the cluster's folder (see lib/cluster.sh)

set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cluster.sh"
cd "$BLOOMIDX_REPO"

DEMO_PORT="${BLOOMIDX_DEMO_PORT:-5492}"
START=$SECONDS
demo_prepare 1000000

cluster_trap
cluster_start "$DEMO_PORT" bloomidx-demo

q() { cluster_psql -q "$@"; }

banner() {
	echo
	echo "=== $* ==="
}

# explain_bloomidx SQL: EXPLAIN (ANALYZE, BUFFERS) of SQL; if the planner did
# not pick orders_bloomidx by itself, say so and show the plan with seqscans
# disabled.
explain_bloomidx() {
	local sql="$1" plan
	echo "$sql"
	plan="$(q -c "EXPLAIN (ANALYZE, BUFFERS) $sql")"
	if grep -q 'orders_bloomidx' <<<"$plan"; then
		echo "$plan"
	else
		echo "(the planner chose a plan without orders_bloomidx:)"
		echo "$plan"
		echo "(the same with enable_seqscan = off:)"
		q -c "SET enable_seqscan = off" -c "EXPLAIN (ANALYZE, BUFFERS) $sql"
	fi
}

banner "extensions"
q -c "CREATE EXTENSION bloomidx" -c "CREATE EXTENSION bloom"
q -c "SELECT extname, extversion FROM pg_extension WHERE extname IN ('bloomidx', 'bloom') ORDER BY 1"

banner "loading $ROWS orders"
q <<SQL
\timing on
CREATE TABLE orders (
    order_id    bigint GENERATED ALWAYS AS IDENTITY,
    customer_id int4   NOT NULL,
    region      text   NOT NULL,
    status      text   NOT NULL,
    sku         text   NOT NULL,
    qty         int8   NOT NULL,
    ordered_at  timestamptz NOT NULL
);
SELECT setseed(0.42) \g /dev/null
INSERT INTO orders (customer_id, region, status, sku, qty, ordered_at)
SELECT 1 + (random() * 49999)::int4,
       (ARRAY['eu-west', 'eu-north', 'eu-south', 'us-east', 'us-west', 'us-central',
              'ap-south', 'ap-east', 'ap-northeast', 'sa-east', 'af-south', 'me-central'])
           [1 + (random() * 11)::int],
       CASE WHEN r < 0.55 THEN 'delivered' WHEN r < 0.75 THEN 'shipped'
            WHEN r < 0.87 THEN 'pending'   WHEN r < 0.94 THEN 'cancelled'
            WHEN r < 0.98 THEN 'returned'  ELSE 'lost' END,
       'SKU-' || lpad((random() * 19999)::int::text, 5, '0'),
       1 + (random() ^ 3 * 49)::int8,
       timestamptz '2024-01-01' + random() * interval '365 days'
FROM (SELECT random() AS r FROM generate_series(1, $ROWS)) s;
SQL
q -c "SELECT count(*) AS orders, count(DISTINCT customer_id) AS customers, count(DISTINCT sku) AS skus FROM orders"
q -c "SELECT * FROM orders ORDER BY order_id LIMIT 5"

banner "bloomidx index on (customer_id, region, status, sku)"
q <<'SQL'
\timing on
CREATE INDEX orders_bloomidx ON orders USING bloomidx (customer_id, region, status, sku);
ANALYZE orders;
SQL

# Values that exist, picked from the data itself.
read -r CUST SKU REGION STATUS < <(q -At -F ' ' -c \
	"SELECT customer_id, sku, region, status FROM orders WHERE order_id = ($ROWS / 3)::bigint + 1")

banner "query 1: one customer's orders of one SKU (2 of the 4 columns)"
explain_bloomidx "SELECT * FROM orders WHERE customer_id = $CUST AND sku = '$SKU'"

banner "query 2: one customer, one region, one status (3 columns)"
explain_bloomidx "SELECT order_id, sku, qty FROM orders WHERE customer_id = $CUST AND region = '$REGION' AND status = '$STATUS'"

banner "query 3: returned orders of one SKU in one region (3 columns, none of them unique)"
explain_bloomidx "SELECT count(*), sum(qty) FROM orders WHERE sku = '$SKU' AND region = '$REGION' AND status = 'returned'"

banner "for comparison: contrib/bloom on the same columns, and one btree per column"
q <<'SQL'
\timing on
CREATE INDEX orders_bloom ON orders USING bloom (customer_id, region, status, sku);
CREATE INDEX orders_customer_btree ON orders (customer_id);
CREATE INDEX orders_region_btree ON orders (region);
CREATE INDEX orders_status_btree ON orders (status);
CREATE INDEX orders_sku_btree ON orders (sku);
ANALYZE orders;
SQL

banner "sizes"
q <<'SQL'
SELECT c.relname AS relation,
       coalesce(am.amname, 'table') AS kind,
       pg_size_pretty(pg_relation_size(c.oid)) AS size,
       round(100.0 * pg_relation_size(c.oid) / pg_relation_size('orders'), 1) AS "% of table"
FROM pg_class c LEFT JOIN pg_am am ON am.oid = c.relam AND c.relkind = 'i'
WHERE c.oid = 'orders'::regclass
   OR c.oid IN (SELECT indexrelid FROM pg_index WHERE indrelid = 'orders'::regclass)
ORDER BY c.relkind DESC, pg_relation_size(c.oid) DESC;
SELECT pg_size_pretty(sum(pg_relation_size(indexrelid))) AS "4 btrees together"
FROM pg_index WHERE indrelid = 'orders'::regclass
  AND indexrelid::regclass::text LIKE '%btree';
SQL

banner "query 1 with contrib/bloom only (in a rolled-back transaction)"
q -c "BEGIN" \
	-c "DROP INDEX orders_bloomidx, orders_customer_btree, orders_region_btree, orders_status_btree, orders_sku_btree" \
	-c "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM orders WHERE customer_id = $CUST AND sku = '$SKU'" \
	-c "ROLLBACK"

banner "query 1 with the btrees only (in a rolled-back transaction)"
q -c "BEGIN" \
	-c "DROP INDEX orders_bloomidx, orders_bloom" \
	-c "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM orders WHERE customer_id = $CUST AND sku = '$SKU'" \
	-c "ROLLBACK"

banner "query 1, planner's choice with every index present"
q -c "EXPLAIN (ANALYZE, BUFFERS) SELECT * FROM orders WHERE customer_id = $CUST AND sku = '$SKU'"

echo
log "demo done in $((SECONDS - START))s; stopping the cluster"
