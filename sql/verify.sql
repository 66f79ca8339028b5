--
-- bloomidx_verify(index): passes on sound indexes of every shape, refuses
-- what it cannot check with an ERROR that says why, and finds a row whose
-- entry is missing.  (test/t/003_verify.pl corrupts pages on disk.)
--

-- The outcome of a verification, SQLSTATE included: 'ok' or the error.
CREATE FUNCTION verify_outcome(idx regclass) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bloomidx_verify(idx);
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;

-- Built, then inserts (NULLs too), deletes with and without VACUUM, updates.
CREATE TABLE tv (id int4, a int4, b int8, c text, d int4)
    WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO tv SELECT i, i % 97, i * 7919, 'v' || (i % 301),
                      CASE WHEN i % 11 = 0 THEN NULL ELSE i % 13 END
FROM generate_series(1, 5000) i;
CREATE INDEX tv_bl ON tv USING bloomidx (a, b, c, d);
SELECT bloomidx_verify('tv_bl');
INSERT INTO tv SELECT i, NULL, i, NULL, NULL FROM generate_series(5001, 5100) i;
INSERT INTO tv SELECT i, i % 97, i * 7919, 'w' || i, i % 5 FROM generate_series(5101, 8000) i;
SELECT verify_outcome('tv_bl');
DELETE FROM tv WHERE id % 3 = 0;
SELECT verify_outcome('tv_bl');		-- entries of dead rows are fine
VACUUM tv;
SELECT verify_outcome('tv_bl');
INSERT INTO tv SELECT i, i % 97, i, 'x' || i, 1 FROM generate_series(8001, 9000) i;
SELECT verify_outcome('tv_bl');		-- in the space VACUUM freed

-- HOT updates (no indexed column changes) keep the entry of the chain's root.
BEGIN;
UPDATE tv SET id = id + 100000 WHERE id % 7 = 1;
SELECT pg_stat_get_xact_tuples_hot_updated('tv'::regclass) > 0 AS some_hot_updates;
SELECT verify_outcome('tv_bl');		-- this transaction's own changes
COMMIT;
UPDATE tv SET a = a + 1000, c = c || '-u' WHERE id % 5 = 0;
SELECT verify_outcome('tv_bl');
VACUUM tv;
SELECT verify_outcome('tv_bl');

-- REPEATABLE READ: the transaction's snapshot.
BEGIN ISOLATION LEVEL REPEATABLE READ;
SELECT verify_outcome('tv_bl');
COMMIT;

-- Partial and expression indexes; an index built concurrently.
CREATE INDEX tv_partial ON tv USING bloomidx (a, c) WHERE d = 3;
CREATE INDEX tv_expr ON tv USING bloomidx (lower(c), (a + d), (b % 10));
CREATE INDEX CONCURRENTLY tv_conc ON tv USING bloomidx (d, b) WITH (length = 32, col1 = 2);
UPDATE tv SET d = 3 WHERE id % 17 = 0;
SELECT idx, verify_outcome(idx)
FROM unnest('{tv_partial, tv_expr, tv_conc}'::regclass[]) AS idx;

-- A hostile search_path changes nothing: index expressions are evaluated
-- with pg_catalog first.  verify_norm() calls "lower" unqualified and is
-- inlined when a session first loads the index's expressions: in a new
-- session, with verify_evil.lower ahead of pg_catalog.lower on the path.
CREATE FUNCTION verify_norm(text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT lower($1) $$;
CREATE INDEX tv_norm ON tv USING bloomidx (verify_norm(c), a);
CREATE SCHEMA verify_evil;
CREATE FUNCTION verify_evil.lower(text) RETURNS text
LANGUAGE sql IMMUTABLE AS $$ SELECT 'evil' $$;
\c -
SET search_path = verify_evil, public, pg_catalog;
SELECT lower('ABC');
SELECT verify_outcome('tv_norm');
RESET search_path;
DROP SCHEMA verify_evil CASCADE;
DROP INDEX tv_norm;
DROP FUNCTION verify_norm(text);

-- Types hashed by their opclass's function (numeric, float NaN, jsonb, arrays).
CREATE TABLE tv_types (n numeric, f float8, t timestamptz, j jsonb, e text[], u uuid);
INSERT INTO tv_types
SELECT i / 7.0, CASE WHEN i % 50 = 0 THEN 'NaN' ELSE -i / 3.0 END,
       '2024-01-01'::timestamptz + i * interval '1 hour',
       jsonb_build_object('k', i % 9, 'z', i),
       ARRAY['a' || i % 4, NULL], md5(i::text)::uuid
FROM generate_series(1, 2000) i;
CREATE INDEX tv_types_bl ON tv_types USING bloomidx (n, f, t, j, e, u);
SELECT verify_outcome('tv_types_bl');

-- UNLOGGED, temporary, empty, emptied and truncated tables.
CREATE UNLOGGED TABLE tv_unlogged (a int4, b text);
CREATE INDEX tv_unlogged_bl ON tv_unlogged USING bloomidx (a, b);
SELECT verify_outcome('tv_unlogged_bl');
INSERT INTO tv_unlogged SELECT i % 10, 'u' || i FROM generate_series(1, 3000) i;
SELECT verify_outcome('tv_unlogged_bl');
CREATE TEMP TABLE tv_temp (a int4);
INSERT INTO tv_temp SELECT generate_series(1, 1000);
CREATE INDEX tv_temp_bl ON tv_temp USING bloomidx (a);
SELECT verify_outcome('tv_temp_bl');
CREATE TABLE tv_empty (a int4, b int4);
CREATE INDEX tv_empty_bl ON tv_empty USING bloomidx (a, b);
SELECT verify_outcome('tv_empty_bl');
INSERT INTO tv_empty SELECT i, i FROM generate_series(1, 3000) i;
DELETE FROM tv_empty;
VACUUM tv_empty;
SELECT verify_outcome('tv_empty_bl');
TRUNCATE tv_empty;
SELECT verify_outcome('tv_empty_bl');

-- What it refuses, and why.
CREATE INDEX tv_btree ON tv (a);
SELECT bloomidx_verify(NULL);
SELECT bloomidx_verify(0::regclass);
SELECT bloomidx_verify('tv');
SELECT bloomidx_verify('tv_btree');
SELECT arg, verify_outcome(arg)
FROM (VALUES (NULL::regclass), (0::regclass), ('tv'::regclass), ('tv_btree'::regclass),
             ('pg_class'::regclass), ('pg_class_oid_index'::regclass)) AS v(arg);

-- A partitioned index has no pages: each partition's index is verified.
CREATE TABLE tv_parted (a int4, b text) PARTITION BY RANGE (a);
CREATE TABLE tv_parted_1 PARTITION OF tv_parted FOR VALUES FROM (0) TO (100);
CREATE TABLE tv_parted_2 PARTITION OF tv_parted FOR VALUES FROM (100) TO (200)
    PARTITION BY LIST (b);
CREATE TABLE tv_parted_2x PARTITION OF tv_parted_2 DEFAULT;
CREATE INDEX tv_parted_bl ON tv_parted USING bloomidx (a, b);
INSERT INTO tv_parted SELECT i % 200, 'p' || i FROM generate_series(1, 4000) i;
SELECT bloomidx_verify('tv_parted_bl');
SELECT relid, verify_outcome(relid)
FROM pg_partition_tree('tv_parted_bl') WHERE isleaf ORDER BY relid::text;

-- The caller needs SELECT on the table; it is checked before any lock.
CREATE ROLE regress_bloomidx_verify;
SET ROLE regress_bloomidx_verify;
SELECT bloomidx_verify('tv_bl');
SELECT verify_outcome('tv_bl');
RESET ROLE;
GRANT SELECT ON tv TO regress_bloomidx_verify;
SET ROLE regress_bloomidx_verify;
SELECT verify_outcome('tv_bl');
RESET ROLE;
REVOKE SELECT ON tv FROM regress_bloomidx_verify;
-- A table owned by someone else: its index expressions run as its owner,
-- as they did at CREATE INDEX (verify_who() tells who runs it).
CREATE TABLE tv_owned (a int4, b text);
INSERT INTO tv_owned SELECT i, 'o' || i FROM generate_series(1, 500) i;
ALTER TABLE tv_owned OWNER TO regress_bloomidx_verify;
CREATE FUNCTION verify_who(int4) RETURNS int4 LANGUAGE sql IMMUTABLE
AS $$ SELECT CASE WHEN current_user = 'regress_bloomidx_verify' THEN $1 ELSE -$1 END $$;
CREATE INDEX tv_owned_bl ON tv_owned USING bloomidx (verify_who(a), upper(b));
SELECT verify_outcome('tv_owned_bl');
DROP TABLE tv_owned;
DROP FUNCTION verify_who(int4);
DROP ROLE regress_bloomidx_verify;

-- Runs stmt (an INSERT or UPDATE) while index idx is not ready for
-- inserts: the executor leaves the new rows' entries out.
CREATE FUNCTION without_entries(idx regclass, stmt text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    UPDATE pg_index SET indisready = false WHERE indexrelid = idx;
    EXECUTE stmt;
    UPDATE pg_index SET indisready = true WHERE indexrelid = idx;
END $$;
-- A row without its entry: while the index is not ready for inserts, the
-- executor leaves it out.  The table is fresh, so the row's TID is known.
CREATE TABLE tv_missing (id int4, a int4) WITH (autovacuum_enabled = off);
INSERT INTO tv_missing SELECT i, i % 10 FROM generate_series(1, 100) i;
CREATE INDEX tv_missing_bl ON tv_missing USING bloomidx (a);
SELECT verify_outcome('tv_missing_bl');
UPDATE pg_index SET indisready = false WHERE indexrelid = 'tv_missing_bl'::regclass;
SELECT bloomidx_verify('tv_missing_bl');
INSERT INTO tv_missing VALUES (101, 1), (102, 2);
UPDATE pg_index SET indisready = true WHERE indexrelid = 'tv_missing_bl'::regclass;
SELECT bloomidx_verify('tv_missing_bl');
SELECT verify_outcome('tv_missing_bl');
-- Deleted, the rows need no entry (dead, then vacuumed away).
DELETE FROM tv_missing WHERE id > 100;
SELECT verify_outcome('tv_missing_bl');
VACUUM tv_missing;
SELECT verify_outcome('tv_missing_bl');
-- Ready but not valid (a concurrent build that failed late): pages only.
INSERT INTO tv_missing VALUES (103, 3);
UPDATE pg_index SET indisvalid = false WHERE indexrelid = 'tv_missing_bl'::regclass;
SELECT bloomidx_verify('tv_missing_bl');
UPDATE pg_index SET indisvalid = true WHERE indexrelid = 'tv_missing_bl'::regclass;
SELECT verify_outcome('tv_missing_bl');
-- REINDEX repairs an index that lacks rows.  (Where the row went depends
-- on what the VACUUM above could free: its TID is not shown.)
SELECT without_entries('tv_missing_bl', $$INSERT INTO tv_missing VALUES (104, 4)$$);
SELECT regexp_replace(verify_outcome('tv_missing_bl'), '\(\d+,\d+\)', '(B,O)') AS outcome;
REINDEX INDEX tv_missing_bl;
SELECT verify_outcome('tv_missing_bl');

-- More entries than maintenance_work_mem holds (1MB: about 40,000 of a
-- 1-column index's): the table is checked in batches of heap blocks, every
-- index page read again for each, each batch's rows against its blocks'
-- entries (DEBUG1 counts them, and the room the entries took: the budget
-- and a pending page's rows at most; a NOTICE says beforehand how many
-- batches the directory's counts make, from 8 on).  Sound; then with a row
-- the index lacks at the table's end (the last batch), and one near its
-- start (the first).
CREATE TABLE tv_batches (id int4, a int4) WITH (autovacuum_enabled = off);
INSERT INTO tv_batches SELECT i, i % 1000 FROM generate_series(1, 250000) i;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX tv_batches_bl ON tv_batches USING bloomidx (a);
RESET max_parallel_maintenance_workers;
INSERT INTO tv_batches SELECT i, i % 1000 FROM generate_series(250001, 255000) i;	-- pending
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
SELECT bloomidx_verify('tv_batches_bl');
RESET client_min_messages;
SELECT without_entries('tv_batches_bl', $$INSERT INTO tv_batches VALUES (300001, 1)$$);
SELECT verify_outcome('tv_batches_bl');
DELETE FROM tv_batches WHERE id = 300001 OR id <= 1000;
VACUUM tv_batches;
SELECT verify_outcome('tv_batches_bl');
-- A row's new version, in the space VACUUM freed on its page (block 4 of
-- about 1,100: the first batch), without an entry of its own (the index,
-- not ready, still counts for HOT: not a heap-only tuple).
SELECT without_entries('tv_batches_bl', $$UPDATE tv_batches SET a = a + 1 WHERE id = 1001$$);
SELECT ctid < '(100,0)'::tid AS in_the_first_batch FROM tv_batches WHERE id = 1001;
SELECT regexp_replace(verify_outcome('tv_batches_bl'), '\(4,\d+\)', '(4,N)') AS outcome;
RESET maintenance_work_mem;
SELECT regexp_replace(verify_outcome('tv_batches_bl'), '\(4,\d+\)', '(4,N)') AS outcome;
DROP TABLE tv_batches;
-- Signatures of 4,096 bits (536 bytes an entry): 1MB holds fewer than the
-- 4,096 entries kept whatever the setting, which is what the room then is
-- (a segment of 29,985 rows took that room and more before: its rows were
-- put back together whole before the batch's were kept).
CREATE TABLE tv_wide (id int4, a int4) WITH (autovacuum_enabled = off);
INSERT INTO tv_wide SELECT i, i % 1000 FROM generate_series(1, 30000) i;
CREATE INDEX tv_wide_bl ON tv_wide USING bloomidx (a) WITH (length = 4096);
SELECT bloomidx_seal('tv_wide_bl');
SET maintenance_work_mem = '1MB';
SET client_min_messages = debug1;
SELECT bloomidx_verify('tv_wide_bl');
RESET client_min_messages;
SELECT without_entries('tv_wide_bl', $$INSERT INTO tv_wide VALUES (30001, 1)$$);
SELECT verify_outcome('tv_wide_bl');
RESET maintenance_work_mem;
DROP TABLE tv_wide;

-- Every bloomidx index the earlier tests left (of this database, other
-- sessions' temporary ones aside) is sound.
SELECT count(*) > 0 AS some_indexes,
       count(*) FILTER (WHERE outcome <> 'ok') AS failed,
       string_agg(i.indexrelid::regclass || ': ' || outcome, E'\n')
           FILTER (WHERE outcome <> 'ok') AS failures
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomidx'
CROSS JOIN LATERAL verify_outcome(i.indexrelid) AS outcome
WHERE c.relkind = 'i' AND (c.relpersistence <> 't' OR c.relnamespace = pg_my_temp_schema());

DROP TABLE tv, tv_types, tv_unlogged, tv_temp, tv_empty, tv_parted, tv_missing;
DROP FUNCTION verify_outcome(regclass);
DROP FUNCTION without_entries(regclass, text);
