--
-- What pg_indexam_has_property, pg_index_has_property and
-- pg_index_column_has_property say of bloomidx (PostgreSQL derives every
-- answer from the fields src/handler.cpp sets; bloomidx has no amproperty),
-- beside a btree index with an INCLUDE column, and that each claim holds:
-- = ANY and IS [NOT] NULL are index searches, on any column of a
-- multicolumn index; bitmap scans only, never an index or index-only scan;
-- no order, no unique index, no INCLUDE, no exclusion constraint, no
-- CLUSTER: each refused with PostgreSQL's own error.
--
CREATE TABLE tprop (id int4, a int4, b text, c int4[]) WITH (autovacuum_enabled = off);
INSERT INTO tprop
SELECT i, i % 100, CASE WHEN i % 7 = 0 THEN NULL ELSE 'b' || (i % 37) END,
       CASE WHEN i % 11 = 0 THEN NULL ELSE ARRAY[i % 5, i % 3] END
FROM generate_series(1, 5000) i;
CREATE INDEX tprop_bl ON tprop USING bloomidx (a, b, c);
CREATE INDEX tprop_bt ON tprop (a) INCLUDE (b);

-- Every property PostgreSQL knows, one in another case, one it does not
-- know, and NULL: of the access method, the index, and each column.
SELECT prop,
       pg_indexam_has_property(am.oid, prop) AS am,
       pg_indexam_has_property(bt.oid, prop) AS btree_am,
       pg_index_has_property('tprop_bl', prop) AS index,
       pg_index_has_property('tprop_bt', prop) AS btree_index,
       pg_index_column_has_property('tprop_bl', 1, prop) AS col_a,
       pg_index_column_has_property('tprop_bl', 2, prop) AS col_b,
       pg_index_column_has_property('tprop_bl', 3, prop) AS col_c,
       pg_index_column_has_property('tprop_bt', 1, prop) AS btree_a,
       pg_index_column_has_property('tprop_bt', 2, prop) AS btree_incl_b
FROM unnest(ARRAY['asc', 'desc', 'nulls_first', 'nulls_last', 'orderable', 'distance_orderable',
                  'returnable', 'search_array', 'search_nulls', 'clusterable', 'index_scan',
                  'bitmap_scan', 'backward_scan', 'can_order', 'can_unique', 'can_multi_col',
                  'can_exclude', 'can_include', 'Search_Array', 'no_such_property', NULL])
         WITH ORDINALITY AS p(prop, n),
     pg_am am, pg_am bt
WHERE am.amname = 'bloomidx' AND bt.amname = 'btree'
ORDER BY n;

-- Columns that are not the index's, and relations that are not indexes: NULL.
SELECT pg_index_column_has_property('tprop_bl', 0, 'search_array') AS column_0,
       pg_index_column_has_property('tprop_bl', 4, 'search_array') AS column_4,
       pg_index_column_has_property('tprop_bl', -1, 'search_array') AS column_minus_1,
       pg_index_column_has_property('tprop_bl', NULL, 'search_array') AS column_null,
       pg_index_has_property('tprop', 'bitmap_scan') AS a_table,
       pg_index_has_property(NULL, 'bitmap_scan') AS no_index,
       pg_indexam_has_property(0, 'can_multi_col') AS no_access_method;

-- An index of a partitioned table answers as its partitions' do.
CREATE TABLE tprop_parted (a int4, b text) PARTITION BY RANGE (a);
CREATE INDEX tprop_parted_bl ON tprop_parted USING bloomidx (a, b);
SELECT pg_index_has_property('tprop_parted_bl', 'bitmap_scan') AS bitmap_scan,
       pg_index_has_property('tprop_parted_bl', 'index_scan') AS index_scan,
       pg_index_column_has_property('tprop_parted_bl', 2, 'search_nulls') AS search_nulls;
DROP TABLE tprop_parted;

-- bitmap_scan, not index_scan, not returnable: with sequential and bitmap
-- scans off, btree's index answers through an index-only scan; bloomidx's
-- through no index or index-only scan, whatever the cost (a disabled plan
-- is taken instead); with bitmap scans on, through a bitmap scan.
BEGIN;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_bitmapscan = off;
SELECT plan_of('SELECT a FROM tprop WHERE a = 3') ~ 'Index Only Scan using tprop_bt' AS btree_index_only_scan;
DROP INDEX tprop_bt;
SELECT plan_of('SELECT a FROM tprop WHERE a = 3') ~ 'Index (Only )?Scan using' AS index_or_index_only_scan;
SET LOCAL enable_bitmapscan = on;
SELECT plan_of('SELECT a FROM tprop WHERE a = 3') LIKE '%Bitmap Index Scan on tprop_bl%' AS bitmap_scan;
ROLLBACK;

-- From here on bloomidx is the table's only index.
DROP INDEX tprop_bt;

-- Whether query's plan, sequential scans off, has cond in an index condition.
CREATE FUNCTION index_key(query text, cond text) RETURNS bool
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    RETURN (SELECT coalesce(bool_or(strpos(line, cond) > 0), false)
            FROM regexp_split_to_table(plan_of(query), E'\n') AS line
            WHERE line LIKE '%Index Cond: %');
END
$$;

-- search_array: = ANY is a key of the index, and finds what a sequential
-- scan finds.  (An array column's IN list is equalities ORed: PostgreSQL
-- has no array of arrays to search with = ANY.)
SELECT q, index_key(q, cond), index_vs_seqscan(q)
FROM (VALUES ('a = ANY', 'SELECT id FROM tprop WHERE a = ANY (ARRAY[3, 5, 7])'),
             ('b = ANY', 'SELECT id FROM tprop WHERE b = ANY (ARRAY[''b1'', ''b2'', NULL])'),
             ('a = ANY', 'SELECT id FROM tprop WHERE a = ANY (''{}''::int4[])'),
             ('c = ', 'SELECT id FROM tprop WHERE c IN (''{1,2}'', ''{0,0}'')')) AS v(cond, q);

-- search_nulls: IS NULL and IS NOT NULL are keys too (IS NOT NULL tests no
-- bits: the recheck decides), on every column.
SELECT q, index_key(q, cond), index_vs_seqscan(q)
FROM (VALUES ('b IS NULL', 'SELECT id FROM tprop WHERE b IS NULL'),
             ('c IS NULL', 'SELECT id FROM tprop WHERE c IS NULL AND a = 22'),
             ('b IS NOT NULL', 'SELECT id FROM tprop WHERE b IS NOT NULL AND a = 3'),
             ('a IS NOT NULL', 'SELECT id FROM tprop WHERE a IS NOT NULL')) AS v(cond, q);

-- can_multi_col: one index on three columns, any of them alone a key.
SELECT index_vs_seqscan('SELECT id FROM tprop WHERE c = ''{1,2}''');
SELECT index_vs_seqscan('SELECT id FROM tprop WHERE b = ''b5'' AND c = ''{0,2}''');

-- can_unique, can_include, can_exclude, can_order (asc, desc, nulls_first,
-- nulls_last), clusterable: all false, each refused.
CREATE UNIQUE INDEX ON tprop USING bloomidx (a);
CREATE INDEX ON tprop USING bloomidx (a) INCLUDE (b);
ALTER TABLE tprop ADD EXCLUDE USING bloomidx (a WITH =);
CREATE INDEX ON tprop USING bloomidx (a DESC);
CREATE INDEX ON tprop USING bloomidx (a NULLS FIRST);
CLUSTER tprop USING tprop_bl;
ALTER TABLE tprop CLUSTER ON tprop_bl;
-- None of them left an index behind.
SELECT count(*) AS indexes FROM pg_index WHERE indrelid = 'tprop'::regclass;

DROP TABLE tprop;
DROP FUNCTION index_key(text, text);
