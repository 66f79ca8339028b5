-- Generated from README.md and doc/*.md by test/readme/readme_sql.pl:
-- do not edit; change the documents and run `make sql/readme.sql`.

-- README.md, bloomidx (hidden setup)
-- the examples (the README's, then doc/'s) run in a database of their own, and
-- indexes are built serially, so that their pages are the same on every run
SELECT current_database() AS regress_database \gset
CREATE DATABASE bloomidx_readme;
\c bloomidx_readme
SET max_parallel_maintenance_workers = 0;
-- floats to 9 digits: the last ones of a computed rate vary with libm
SET extra_float_digits = -6;
CREATE TABLE orders (order_id bigint, customer_id int4, region text, status text, sku text, qty int4);
INSERT INTO orders SELECT g, g % 5000, 'eu', 'new', 'X-' || g % 100, 1 FROM generate_series(1, 1000) g;

-- README.md, bloomidx, example 1
CREATE EXTENSION bloomidx;
CREATE INDEX ON orders USING bloomidx (customer_id, region, status, sku);
SELECT * FROM orders WHERE region = 'eu' AND sku = 'X-12';

-- README.md, bloomidx (hidden setup)
DROP TABLE orders; DROP EXTENSION bloomidx;

-- README.md, Quick start, example 1
CREATE EXTENSION bloomidx;
CREATE TABLE orders (order_id bigint, customer_id int4, region text, status text, sku text, qty int4);
INSERT INTO orders
SELECT g, 1 + (g * 7919) % 5000,
       (ARRAY['eu', 'us-east', 'us-west', 'apac'])[1 + g % 4],
       (ARRAY['new', 'paid', 'shipped', 'delivered', 'returned'])[1 + (g / 7) % 5],
       'X-' || (g * 31) % 2000,
       1 + g % 9
FROM generate_series(1, 30000) g;
ANALYZE orders;

-- What to build: bits per column from the statistics, and the statement.
SELECT create_index, bits, false_positive_rates
FROM bloomidx_advise('orders', '{customer_id, region, status, sku}');

-- README.md, Quick start, example 2
CREATE INDEX orders_bl ON orders USING bloomidx (customer_id, region, status, sku);

-- Any subset of the columns, in any order:
EXPLAIN (COSTS OFF) SELECT * FROM orders WHERE sku = 'X-12' AND region = 'apac';
SELECT order_id, customer_id FROM orders WHERE customer_id = 4242 AND status = 'paid';
SELECT count(*) FROM orders WHERE sku IN ('X-1', 'X-2', 'X-3') AND status = 'returned';

-- What is in it, and what a query on columns 2 and 4 will recheck:
SELECT segments, segment_rows, pending_rows FROM bloomidx_index_info('orders_bl');
SELECT bloomidx_false_positive_rate('orders_bl', '{2,4}');

-- README.md, Queries it answers, example 1
CREATE TABLE t (a int4, b int8, c text, d int4);
CREATE INDEX t_bl ON t USING bloomidx (a, b, c, d) WITH (false_positive_rate = 0.001);
SET enable_seqscan = off;   -- t is empty: a plan for when it is not
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE b = 42 AND c = 'x';
--  Bitmap Heap Scan on t
--    Recheck Cond: ((b = 42) AND (c = 'x'::text))
--    ->  Bitmap Index Scan on t_bl
--          Index Cond: ((b = 42) AND (c = 'x'::text))
RESET enable_seqscan;

-- README.md, The advisor, example 1
SELECT column_names, bits, false_positive_rates, advice
FROM bloomidx_advise('orders', '{customer_id, region, status, sku}', 0.001);
SELECT length, predicted_size, pg_size_pretty(predicted_size)
FROM bloomidx_advise('orders', '{customer_id, region, status, sku}');

-- README.md, Looking inside, example 1
SELECT * FROM bloomidx_index_info('orders_bl');

-- README.md, Looking inside, example 2
SELECT live_rows, dead_rows, segments, pending_rows, total_pages, slice_pages, tid_pages,
       signature_length, column_bits,
       round(fill::numeric, 3) AS fill, round(predicted_fill::numeric, 3) AS predicted_fill,
       round(fill_rates[1]::numeric / predicted_rates[1]::numeric, 2) AS column_1_drift
FROM bloomidx_stats('orders_bl');

-- README.md, Looking inside, example 3
SELECT page_kind, count(*) AS pages
FROM generate_series(0, pg_relation_size('orders_bl') / 8192 - 1) AS b,
     bloomidx_page_items('orders_bl', b::int4)
WHERE item IS NULL
GROUP BY page_kind ORDER BY min(b);
SELECT item, item_kind, detail FROM bloomidx_page_items('orders_bl', 0);

-- README.md, Looking inside, example 4
SELECT bloomidx_verify('orders_bl');

-- README.md, Following a build, example 1
SELECT pid, command, phase, blocks_done, blocks_total, tuples_done, tuples_total
FROM pg_stat_progress_create_index;

-- README.md, Following a build, example 2
SELECT n, pg_indexam_progress_phasename((SELECT oid FROM pg_am WHERE amname = 'bloomidx'), n)
FROM generate_series(1, 6) AS n;

-- README.md, What the index can do, example 1
SELECT p, pg_indexam_has_property((SELECT oid FROM pg_am WHERE amname = 'bloomidx'), p) AS am,
       pg_index_has_property('orders_bl', p) AS index,
       pg_index_column_has_property('orders_bl', 1, p) AS column_1
FROM unnest(ARRAY['can_order', 'can_unique', 'can_multi_col', 'can_exclude', 'can_include',
                  'bitmap_scan', 'index_scan', 'search_array', 'search_nulls', 'returnable']) AS p;

-- doc/adding-a-type.md, Adding a type, example 1
CREATE OPERATOR CLASS my_pg_lsn_ops
FOR TYPE pg_lsn USING bloomidx AS
    OPERATOR 1 = (pg_lsn, pg_lsn),
    FUNCTION 1 pg_lsn_hash_extended(pg_lsn, int8);
CREATE TABLE wal_marks (lsn pg_lsn, other_column int4);
CREATE INDEX ON wal_marks USING bloomidx (lsn my_pg_lsn_ops, other_column);

-- doc/adding-a-type.md, Adding a type, example 2
SELECT opc.opcname, p.amproc
FROM pg_opclass opc
JOIN pg_am am ON am.oid = opc.opcmethod AND am.amname = 'hash'
JOIN pg_amproc p ON p.amprocfamily = opc.opcfamily AND p.amprocnum = 2
                AND p.amproclefttype = opc.opcintype
WHERE opc.opcintype = 'pg_lsn'::regtype;

-- doc/scaling-out.md, Scaling out (hidden setup)
-- a shard and a coordinator, each a database of its own, and
-- the role app, which the example alters and the test drops: not run where
-- a role app exists (make installcheck may run against a real server)
SELECT NOT EXISTS (SELECT FROM pg_roles WHERE rolname = 'app') AS readme_app_is_free \gset
\if :readme_app_is_free
CREATE ROLE app;
CREATE DATABASE bloomidx_readme_shard;
CREATE DATABASE bloomidx_readme_coordinator;
\c bloomidx_readme_shard

-- doc/scaling-out.md, Scaling out, example 1
-- on each shard
CREATE EXTENSION bloomidx;
CREATE TABLE orders (order_id bigint, customer_id int4, region text, status text, sku text, qty int4);
CREATE INDEX ON orders USING bloomidx (customer_id, region, status, sku);
ALTER ROLE app SET cursor_tuple_fraction = 1;   -- the role postgres_fdw connects as (below)

-- doc/scaling-out.md, Scaling out (hidden setup)
\c bloomidx_readme_coordinator

-- doc/scaling-out.md, Scaling out, example 2
-- on the coordinator
CREATE EXTENSION postgres_fdw;
CREATE TABLE orders (order_id bigint, customer_id int4, region text, status text, sku text, qty int4)
    PARTITION BY HASH (customer_id);
CREATE SERVER shard0 FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host 'shard0.example', dbname 'shop', async_capable 'true', batch_size '1000');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard0 OPTIONS (user 'app', password '...');
CREATE FOREIGN TABLE orders_s0 PARTITION OF orders FOR VALUES WITH (MODULUS 2, REMAINDER 0)
    SERVER shard0 OPTIONS (table_name 'orders');
-- ... and shard1 likewise, REMAINDER 1

-- doc/scaling-out.md, Scaling out (hidden setup)
\c bloomidx_readme
DROP DATABASE bloomidx_readme_shard;
DROP DATABASE bloomidx_readme_coordinator;
DROP ROLE app;
\else
\echo 'not run: a role named app exists, which the sharding example would alter and drop'
\endif

-- doc/versions-and-upgrades.md, Extension versions, example 1
ALTER EXTENSION bloomidx UPDATE;
SELECT extversion FROM pg_extension WHERE extname = 'bloomidx';

-- README.md, bloomidx (hidden teardown)
-- after every example, of the README and of doc/
\c :regress_database
DROP DATABASE bloomidx_readme;
