--
-- Partitioned tables (doc/scaling-out.md): CREATE INDEX ... USING
-- bloomidx on a partitioned table makes one index per partition, a new
-- partition gets its own, ATTACH PARTITION takes a matching index the
-- table has already (and builds one where it has none that matches), and
-- partition pruning, at plan time and at run time, combines with the
-- partitions' bloomidx indexes.  Every answer equals a sequential scan's.
--
CREATE TABLE pt (id int, region text, status text, sku int, qty int)
PARTITION BY LIST (region);
-- No autovacuum on the partitions (the parent takes no such option): its
-- VACUUM could seal or merge mid-test and change the candidates shown.
CREATE TABLE pt_eu PARTITION OF pt FOR VALUES IN ('eu') WITH (autovacuum_enabled = off);
CREATE TABLE pt_us PARTITION OF pt FOR VALUES IN ('us') WITH (autovacuum_enabled = off);
INSERT INTO pt
SELECT i, (ARRAY['eu', 'us'])[1 + i % 2], (ARRAY['new', 'paid', 'sent'])[1 + i % 3],
       (i * 7919) % 5000, i % 10
FROM generate_series(1, 20000) i;
CREATE INDEX pt_bl ON pt USING bloomidx (status, sku, qty);
ANALYZE pt;

-- The index tree: the partitioned index, and one bloomidx index per
-- partition, attached to it.
CREATE FUNCTION index_tree(idx regclass)
RETURNS TABLE (index regclass, of_table regclass, am name, parent regclass, leaf boolean)
LANGUAGE sql AS $$
    SELECT t.relid, i.indrelid, a.amname, t.parentrelid, t.isleaf
    FROM pg_partition_tree(idx) t
    JOIN pg_index i ON i.indexrelid = t.relid
    JOIN pg_class c ON c.oid = t.relid
    JOIN pg_am a ON a.oid = c.relam
    ORDER BY t.level, t.relid::text
$$;
SELECT * FROM index_tree('pt_bl');

-- A new partition gets its own.
CREATE TABLE pt_ap PARTITION OF pt FOR VALUES IN ('ap') WITH (autovacuum_enabled = off);
INSERT INTO pt SELECT i, 'ap', 'paid', i % 5000, i % 10 FROM generate_series(20001, 21000) i;
SELECT * FROM index_tree('pt_bl');

-- ATTACH PARTITION takes the table's matching index: no second index.
-- PostgreSQL matches the access method, columns, operator families,
-- collations, expressions and predicate, not storage parameters (as for
-- every access method): an index of another length is taken too.
CREATE TABLE pt_sa (LIKE pt) WITH (autovacuum_enabled = off);
INSERT INTO pt_sa SELECT i, 'sa', 'sent', i % 5000, i % 10 FROM generate_series(21001, 22000) i;
CREATE INDEX pt_sa_own ON pt_sa USING bloomidx (status, sku, qty) WITH (length = 64);
ALTER TABLE pt ATTACH PARTITION pt_sa FOR VALUES IN ('sa');
SELECT * FROM index_tree('pt_bl');
SELECT count(*) AS indexes_of_pt_sa FROM pg_index WHERE indrelid = 'pt_sa'::regclass;
-- An index on other columns, or of another access method, does not match:
-- ATTACH builds a bloomidx index beside it.
CREATE TABLE pt_af (LIKE pt) WITH (autovacuum_enabled = off);
INSERT INTO pt_af SELECT i, 'af', 'new', i % 5000, i % 10 FROM generate_series(22001, 22500) i;
CREATE INDEX pt_af_sku ON pt_af USING bloomidx (sku);
CREATE INDEX pt_af_btree ON pt_af (status, sku, qty);
ALTER TABLE pt ATTACH PARTITION pt_af FOR VALUES IN ('af');
SELECT * FROM index_tree('pt_bl');
SELECT count(*) AS indexes_of_pt_af FROM pg_index WHERE indrelid = 'pt_af'::regclass;
DROP INDEX pt_af_sku, pt_af_btree;
-- A partition's index cannot be dropped alone; the partitioned one drops all.
DROP INDEX pt_eu_status_sku_qty_idx;
SELECT bloomidx_verify(relid) FROM pg_partition_tree('pt_bl') WHERE isleaf ORDER BY relid::text;

-- Pruning at plan time: a query on one region reads that partition's
-- index only.
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE region = 'eu' AND status = 'paid' AND sku = 17;
-- Without the partition key, every partition's index.
EXPLAIN (COSTS OFF) SELECT * FROM pt WHERE status = 'paid' AND sku = 17;
-- Pruning at run time (a generic plan, the region a parameter): the other
-- partitions' scans are removed when the plan starts (EXPLAIN starts it
-- too; without ANALYZE, whose output differs between versions).
SET plan_cache_mode = force_generic_plan;
PREPARE by_region (text, int) AS SELECT id FROM pt WHERE region = $1 AND sku = $2;
EXPLAIN (COSTS OFF) EXECUTE by_region('us', 2919);
DEALLOCATE by_region;
RESET plan_cache_mode;
RESET enable_seqscan;

-- Answers against a sequential scan, with and without the partition key.
SELECT q, index_vs_seqscan('SELECT id FROM pt WHERE ' || q)
FROM (VALUES ('region = ''us'' AND status = ''sent'' AND sku = 2919'),
             ('region = ''eu'' AND status = ''sent'' AND sku = 2919'),
             ('status = ''sent'' AND sku = 2919'), ('sku = 4999'), ('sku = 5000'),
             ('region = ''sa'' AND sku = 1003 AND qty = 3'), ('region IN (''ap'', ''af'') AND sku = 7'),
             ('status = ''sent'' AND qty = 1 AND sku IN (1, 11, 2011)'),
             ('region = ''us'' AND qty IS NULL')) AS t(q);

-- Rows moved between partitions by an UPDATE of the key are found in their
-- new partition's index; REINDEX of the partitioned index rebuilds each.
UPDATE pt SET region = 'us' WHERE region = 'eu' AND sku < 50;
SELECT index_vs_seqscan('SELECT id FROM pt WHERE region = ''us'' AND sku = 17');
SELECT index_vs_seqscan('SELECT id FROM pt WHERE region = ''eu'' AND sku = 17');
REINDEX INDEX pt_bl;
SELECT bloomidx_verify(relid) FROM pg_partition_tree('pt_bl') WHERE isleaf ORDER BY relid::text;
SELECT index_vs_seqscan('SELECT id FROM pt WHERE status = ''paid'' AND sku = 17');

-- Detached, a partition keeps its index, a standalone one.
ALTER TABLE pt DETACH PARTITION pt_ap;
SELECT * FROM index_tree('pt_bl');
SELECT indexrelid::regclass AS index_of_pt_ap FROM pg_index WHERE indrelid = 'pt_ap'::regclass;
SELECT index_vs_seqscan('SELECT id FROM pt_ap WHERE sku = 17');
DROP TABLE pt, pt_ap;
DROP FUNCTION index_tree(regclass);
