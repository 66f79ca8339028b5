--
-- Parallel CREATE INDEX: the leader and its workers each write segments
-- from their share of one parallel heap scan, and their last rows (less
-- than a segment each) as pending pages, which the leader joins into one
-- list, then seals them into segments but a short tail.  Every row must be
-- in the index (bloomidx_verify's heap check), the index must answer as a
-- sequential scan does, and every segment but one must be full.  Also:
-- CONCURRENTLY, REINDEX, expressions and predicates, and the broken HOT
-- chain a worker finds reaching pg_index.
--
-- Segments of 4,520 rows (10 pages of 452) instead of 65,024: on 40,000
-- rows each participant still writes full segments and leaves a remainder,
-- and the queries below, each against a sequential scan of the table, take
-- a seventh of the time they took on the 300,000 rows full segments need.
-- (Parallel workers take the leader's setting.)
SET bloomidx.segment_rows = 4520;
SET max_parallel_maintenance_workers = 2;
SET maintenance_work_mem = '256MB';
SELECT setseed(0.31);
CREATE TABLE par (id int, a int, b text, c int8)
WITH (parallel_workers = 2, autovacuum_enabled = off);
INSERT INTO par
SELECT i, floor(random() * 1000),
       CASE WHEN random() < 0.05 THEN NULL ELSE 'v' || floor(random() * 500) END,
       floor(random() * 100000)
FROM generate_series(1, 40000) i;
ANALYZE par;

-- DEBUG1 says how many workers started: both, or the test proves nothing.
-- (The event trigger is disabled while DEBUG1 shows: PostgreSQL logs each
-- invocation with its function's OID, which differs from run to run.)
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
SET client_min_messages = debug1;
CREATE INDEX par_bl ON par USING bloomidx (a, b, c) WITH (length = 96);
RESET client_min_messages;
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;

SELECT bloomidx_verify('par_bl');
-- Each participant's last filter group, partly filled, is the leader's to
-- write (filter_write.cpp): the segments the workers wrote share one
-- group, of which a query reads a region page a key, where it read one a
-- worker.  (The leader takes no part here: taking part, it writes most
-- segments before the workers start on this small table.  The leftovers
-- it seals after each have a group of one slot.)
SET parallel_leader_participation = off;
CREATE INDEX par_groups ON par USING bloomidx (a, b, c) WITH (length = 96);
RESET parallel_leader_participation;
SELECT count(*) FILTER (WHERE slots > 1) AS build_groups, sum(slots) > 2 AS several_segments
FROM (SELECT b, count(*) - 1 AS slots
      FROM generate_series(1, pg_relation_size('par_groups') / 8192 - 1) b,
           LATERAL bloomidx_page_items('par_groups', b::int) i
      WHERE i.page_kind = 'filter group' GROUP BY b) g;
SELECT bloomidx_verify('par_groups');
SELECT index_vs_seqscan('SELECT id FROM par WHERE a = 17 AND c = ' || (SELECT c FROM par WHERE a = 17 LIMIT 1));
DROP INDEX par_groups;
-- Every row counted once; the segments nearly full but one (each
-- participant's hold bloomidx.segment_rows rows; those sealed from the
-- participants' leftovers, whole pages, at least a page fewer; the last
-- one short), and the tail short.  A parallel build's participants each
-- end with a short segment where their leftovers fill more than a few
-- pages (packed slices: build.cpp's tail rule), so all but 3 are nearly
-- full there.  A serial build leaves pending at most
-- m / (n + 1) pages (n segments, at least 4); a parallel one seals by the
-- same rule, counting the n its participants wrote (at least all but 3:
-- three participants' leftovers, less than a segment each, seal into at
-- most 3), the rows spread over each participant's partly filled last
-- page (3 pages more).
SELECT reltuples AS index_tuples FROM pg_class WHERE relname = 'par_bl';
CREATE FUNCTION full_segments(index regclass, length int, parallel boolean)
RETURNS TABLE (rows bigint, full_segments boolean, short_tail boolean)
LANGUAGE sql AS $$
    SELECT segment_rows + pending_rows,
           segment_rows >= (segments - CASE WHEN parallel THEN 3 ELSE 1 END) * (s - 451)::int8,
           pending_pages <= CASE WHEN parallel THEN greatest(length / (segments - 2), 4) + 3
                                 ELSE greatest(length / (segments + 1), 4) END
    FROM bloomidx_index_info(index),
         CAST(current_setting('bloomidx.segment_rows') AS int) AS s
$$;
SELECT * FROM full_segments('par_bl', 96, true);

-- Queries on values taken from the table, each against a sequential scan.
SELECT * FROM abc_check('par', 120);

-- After writes, a REINDEX (parallel again) and a concurrent build.
DELETE FROM par WHERE id % 5 = 0;
INSERT INTO par SELECT i, floor(random() * 1000), 'w' || i % 77, i + 20000 FROM generate_series(40001, 43000) i;
REINDEX INDEX par_bl;
SELECT bloomidx_verify('par_bl');
SELECT reltuples AS index_tuples FROM pg_class WHERE relname = 'par_bl';
CREATE INDEX CONCURRENTLY par_bl_c ON par USING bloomidx (c, b);
SELECT bloomidx_verify('par_bl_c');
REINDEX INDEX CONCURRENTLY par_bl;
SELECT bloomidx_verify('par_bl');
SELECT * FROM abc_check('par', 80);
DROP INDEX par_bl_c;

-- Expressions and a predicate (parallel safe, so still parallel).
DROP INDEX par_bl;
CREATE INDEX par_bl_expr ON par USING bloomidx ((a % 10), lower(b)) WHERE c > 50000;
SELECT bloomidx_verify('par_bl_expr');
SELECT index_vs_seqscan('SELECT id FROM par WHERE a % 10 IN (3, 7) AND lower(b) IN (''v42'', ''v43'') AND c > 50000');
SELECT index_vs_seqscan('SELECT id FROM par WHERE lower(b) = ''w5'' AND c > 50000');
DROP INDEX par_bl_expr;

-- A HOT chain broken by an update of the indexed column, in the building
-- transaction (room on every page keeps the updates HOT): pg_index must
-- say so (indcheckxmin), whichever participant saw it.
CREATE TABLE par_hot (id int, b int)
WITH (parallel_workers = 2, fillfactor = 50, autovacuum_enabled = off);
INSERT INTO par_hot SELECT i, i FROM generate_series(1, 200000) i;
BEGIN;
UPDATE par_hot SET b = b + 1 WHERE id % 3 = 0;
CREATE INDEX par_hot_bl ON par_hot USING bloomidx (b);
COMMIT;
SELECT indcheckxmin FROM pg_index WHERE indexrelid = 'par_hot_bl'::regclass;
SELECT bloomidx_verify('par_hot_bl');
SELECT index_vs_seqscan('SELECT id FROM par_hot WHERE b = 3001');
SELECT index_vs_seqscan('SELECT id FROM par_hot WHERE b = 3000');

-- Without parallel_leader_participation the workers alone scan, as for
-- btree (DEBUG1 says so); the leader still merges their last pages.
SET parallel_leader_participation = off;
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
SET client_min_messages = debug1;
CREATE INDEX par_bl_workers ON par USING bloomidx (a, b, c) WITH (length = 96);
RESET client_min_messages;
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
RESET parallel_leader_participation;
SELECT bloomidx_verify('par_bl_workers');
SELECT (SELECT count(*) FROM par) = reltuples AS all_rows_indexed
FROM pg_class WHERE relname = 'par_bl_workers';
SELECT * FROM full_segments('par_bl_workers', 96, true);
SELECT * FROM abc_check('par', 40);
DROP INDEX par_bl_workers;

-- With no workers allowed, the same build is serial.
SET max_parallel_maintenance_workers = 0;
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
SET client_min_messages = debug1;
CREATE INDEX par_bl_serial ON par USING bloomidx (a, b, c) WITH (length = 96);
RESET client_min_messages;
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
SELECT bloomidx_verify('par_bl_serial');
SELECT * FROM full_segments('par_bl_serial', 96, false);
SELECT * FROM abc_check('par', 40);

-- The rule at both ends, serially: after 19 segments, 3,400 rows (10
-- pending pages, 9 as a segment: its 96 slices packed 18 a page) become a
-- 20th segment; 50 rows (a page) stay pending.
CREATE TABLE par_tail (a int) WITH (autovacuum_enabled = off);
INSERT INTO par_tail SELECT i FROM generate_series(1, 19 * 4520 + 3400) i;
CREATE INDEX par_tail_bl ON par_tail USING bloomidx (a) WITH (length = 96);
SELECT segments, segment_rows, pending_pages FROM bloomidx_index_info('par_tail_bl');
SELECT index_vs_seqscan('SELECT a FROM par_tail WHERE a = 88000');
DROP INDEX par_tail_bl;
DELETE FROM par_tail WHERE a > 19 * 4520 + 50;
-- (An older transaction elsewhere would keep the deleted rows in the build.)
SELECT wait_for_older_xacts();
CREATE INDEX par_tail_bl ON par_tail USING bloomidx (a) WITH (length = 96);
SELECT segments, segment_rows, pending_pages FROM bloomidx_index_info('par_tail_bl');
SELECT index_vs_seqscan('SELECT a FROM par_tail WHERE a = 85900');

RESET max_parallel_maintenance_workers;
RESET maintenance_work_mem;
RESET bloomidx.segment_rows;
DROP TABLE par, par_hot, par_tail;
