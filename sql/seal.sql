--
-- Sealing pending rows into segments (src/storage/seal.cpp): by bloomidx_seal(),
-- by an insert once a segment's worth has gathered, and by VACUUM, with
-- deletes and more inserts in between.  After every step every query is
-- checked against a sequential scan and bloomidx_verify checks every row.
--
SET bloomidx.segment_rows = 1000;
SELECT setseed(0.17);
CREATE TABLE sl (id int, a int, b text, c int4) WITH (autovacuum_enabled = off);
INSERT INTO sl
SELECT i, floor(random() * 200), 'w' || floor(random() * 150),
       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 3000) END
FROM generate_series(1, 2500) i;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX sl_bl ON sl USING bloomidx (a, b, c);

-- Random queries against a sequential scan, and the index's rows against
-- the table's: every row exactly once, in a segment or a pending page.
CREATE FUNCTION sl_check(n int) RETURNS TABLE (queries bigint, differences bigint,
                                              every_row_once boolean, verified boolean)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bloomidx_verify('sl_bl');
    RETURN QUERY
    SELECT q.queries, q.differences,
           (SELECT live_rows + pending_rows = (SELECT count(*) FROM sl)
            FROM bloomidx_index_info('sl_bl')), true
    FROM abc_check('sl', n) q;
END
$$;
SELECT segments, pending_rows, generation FROM bloomidx_index_info('sl_bl');
SELECT * FROM sl_check(40);

-- Inserts: each time the pending list holds a segment's worth beyond its
-- last page, the inserting statement seals it.
INSERT INTO sl SELECT i, i % 200, 'w' || (i % 150), i FROM generate_series(2501, 9000) i;
SELECT segments > 3 AS inserts_sealed, pending_pages <= 2 AS little_pending,
       generation > 1 AS directory_changed
FROM bloomidx_index_info('sl_bl');
SELECT * FROM sl_check(40);

-- bloomidx_seal seals all but the last pending page, in segments of at
-- most bloomidx.segment_rows rows.  (Inserts under a larger setting leave
-- several pages pending.)
SET bloomidx.segment_rows = 65024;
INSERT INTO sl SELECT i, i % 200, 'w' || (i % 150), i FROM generate_series(9001, 12000) i;
SELECT pending_pages > 2 AS several_pending FROM bloomidx_index_info('sl_bl');
SET bloomidx.segment_rows = 1000;
SELECT segments AS segments_before FROM bloomidx_index_info('sl_bl') \gset
SELECT bloomidx_seal('sl_bl') > 0 AS sealed;
SELECT pending_pages, segments - :segments_before > 1 AS several_segments
FROM bloomidx_index_info('sl_bl');
SELECT bloomidx_seal('sl_bl') AS nothing_left;
SELECT * FROM sl_check(40);

-- Deletes: VACUUM clears live bits and compacts pending pages, inserts
-- reuse freed pending pages, and VACUUM seals what gathered.
DELETE FROM sl WHERE id % 4 = 0;
SELECT wait_for_older_xacts();
VACUUM sl;
SELECT live_rows < segment_rows AS rows_cleared FROM bloomidx_index_info('sl_bl');
SELECT * FROM sl_check(40);
INSERT INTO sl SELECT i, i % 200, 'w' || (i % 150), i FROM generate_series(13001, 16000) i;
DELETE FROM sl WHERE id > 13000 AND id % 5 = 0;
SELECT wait_for_older_xacts();
VACUUM sl;
SELECT * FROM sl_check(60);

-- In one transaction, rolled back: the sealed rows of aborted inserts are
-- dead, and VACUUM clears them.
BEGIN;
SET LOCAL bloomidx.segment_rows = 65024;
INSERT INTO sl SELECT i, i % 200, 'w' || (i % 150), i FROM generate_series(20001, 23000) i;
SET LOCAL bloomidx.segment_rows = 1000;
SELECT bloomidx_seal('sl_bl') > 0 AS sealed;
ROLLBACK;
VACUUM sl;
SELECT * FROM sl_check(40);

-- A thinned page at the head of the pending list, before a full one, does
-- not stop the seals: with segments of one page's rows
-- (bloomidx.segment_rows below a page's), 100 rows left on the head page
-- and a full page behind it are more than a segment.  A seal takes both
-- (a segment of up to a page's rows more than asked) rather than stop at
-- the 100 rows, short of its threshold of half a segment, with the head
-- page marked as being sealed: then no seal ever got past it and the list
-- grew behind it for good.
SET bloomidx.segment_rows = 65024;
CREATE TABLE st (id int, a int) WITH (autovacuum_enabled = off);
CREATE INDEX st_bl ON st USING bloomidx (a);
INSERT INTO st SELECT i, i FROM generate_series(1, 3000) i;
SELECT (regexp_match(detail, 'capacity (\d+)'))[1]::int AS page_rows
FROM bloomidx_page_items('st_bl', 1) WHERE item_kind = 'page' \gset
DELETE FROM st WHERE id <= :page_rows AND id > 100;
SELECT wait_for_older_xacts();
VACUUM st;
SELECT count(*) AS head_rows, :page_rows > 200 AS less_than_half
FROM bloomidx_page_items('st_bl', 1) WHERE item_kind = 'row';
SET bloomidx.segment_rows = 64;
VACUUM st;
SELECT segments > 0 AS sealed, pending_pages <= 2 AS little_pending
FROM bloomidx_index_info('st_bl');
INSERT INTO st SELECT i, i FROM generate_series(3001, 13000) i;
SELECT segments > 10 AS inserts_sealed, pending_pages <= 2 AS little_pending
FROM bloomidx_index_info('st_bl');
SELECT index_vs_seqscan('SELECT id FROM st WHERE a = ' || v)
FROM (VALUES (50), (150), (700), (2000), (12000)) q(v);
SELECT bloomidx_verify('st_bl');
DROP TABLE st;
SET bloomidx.segment_rows = 1000;

-- Every pending page a seal takes is marked in WAL before the segment is
-- published (a crash in between must find it marked after recovery, and a
-- replica must see it so): each has two WAL records in the seal, one that
-- marks it, one that frees it.  (Without the first, only the crash tests
-- noticed.)
CREATE EXTENSION pg_walinspect;
SET bloomidx.segment_rows = 65024;
CREATE TABLE sw (id int, a int) WITH (autovacuum_enabled = off);
CREATE INDEX sw_bl ON sw USING bloomidx (a);
INSERT INTO sw SELECT i, i FROM generate_series(1, 3000) i;
CREATE TEMP TABLE sw_pending AS
SELECT b AS blkno FROM generate_series(1, pg_relation_size('sw_bl') / 8192 - 1) b,
     bloomidx_page_items('sw_bl', b::int) i
WHERE i.item_kind = 'page' AND i.page_kind = 'pending';
SELECT pg_current_wal_insert_lsn() AS before_seal \gset
SELECT bloomidx_seal('sw_bl') > 0 AS sealed;
SELECT pg_current_wal_insert_lsn() AS after_seal \gset
-- (A seal assigns no transaction id, so its commit flushes nothing: the
-- WAL writer flushes it soon.)
SELECT set_config('sw.after_seal', :'after_seal', false) IS NOT NULL AS noted;
DO $$ BEGIN
    FOR i IN 1 .. 600 LOOP
        EXIT WHEN pg_current_wal_flush_lsn() >= current_setting('sw.after_seal')::pg_lsn;
        PERFORM pg_sleep(0.05);
    END LOOP;
END $$;
SELECT count(*) AS pending_pages, count(*) FILTER (WHERE records = 2) AS marked_and_freed,
       count(*) FILTER (WHERE records = 0) AS untouched_tail
FROM (SELECT p.blkno,
             (SELECT count(*)
              FROM pg_get_wal_records_info(:'before_seal', :'after_seal') w,
                   regexp_matches(w.block_ref, 'rel \d+/\d+/(\d+) fork main blk (\d+)', 'g') m
              WHERE w.resource_manager = 'Generic'
                AND m[1]::oid = pg_relation_filenode('sw_bl') AND m[2]::bigint = p.blkno) AS records
      FROM sw_pending p) q;
DROP TABLE sw, sw_pending;
DROP EXTENSION pg_walinspect;
SET bloomidx.segment_rows = 1000;

-- An INSERT seals one segment for each pending page it links (or, when
-- segments are smaller than two pages, two pages' rows of them), however
-- many are due: a backlog (rows inserted under a larger setting) is
-- sealed a little at a time by the inserts that follow, not all by the
-- first of them, and VACUUM seals the rest.  Inserts alone drain it too:
-- each seals more than it adds.
SET bloomidx.segment_rows = 65024;
CREATE TABLE sb (id int, a int) WITH (autovacuum_enabled = off);
CREATE INDEX sb_bl ON sb USING bloomidx (a);
INSERT INTO sb SELECT i, i FROM generate_series(1, 6000) i;
SELECT pending_pages AS backlog_pages FROM bloomidx_index_info('sb_bl') \gset
SET bloomidx.segment_rows = 64;
INSERT INTO sb SELECT i, i FROM generate_series(6001, 6700) i;
SELECT :backlog_pages > 5 AS backlog, segments > 0 AS sealed_by_the_insert,
       pending_pages >= :backlog_pages / 2 AS backlog_left
FROM bloomidx_index_info('sb_bl');
SELECT pending_pages AS backlog_pages FROM bloomidx_index_info('sb_bl') \gset
INSERT INTO sb SELECT i, i FROM generate_series(6701, 9700) i;
SELECT pending_pages < :backlog_pages AS inserts_drain_it FROM bloomidx_index_info('sb_bl');
VACUUM sb;
SELECT segments >= :backlog_pages - 1 AS vacuum_sealed_the_rest, pending_pages <= 2 AS little_pending
FROM bloomidx_index_info('sb_bl');
SELECT index_vs_seqscan('SELECT id FROM sb WHERE a = ' || v)
FROM (VALUES (1), (3000), (6000), (6001), (6700), (9700)) q(v);
SELECT bloomidx_verify('sb_bl');
DROP TABLE sb;
SET bloomidx.segment_rows = 1000;

-- Errors: NULL, not a bloomidx index, not the owner, a partitioned index.
SELECT bloomidx_seal(NULL);
CREATE INDEX sl_btree ON sl (a);
SELECT bloomidx_seal('sl_btree');
CREATE ROLE sl_other;
GRANT SELECT ON sl TO sl_other;
SET ROLE sl_other;
SELECT bloomidx_seal('sl_bl');
RESET ROLE;
REVOKE SELECT ON sl FROM sl_other;
DROP ROLE sl_other;
CREATE TABLE sl_parted (a int) PARTITION BY RANGE (a);
CREATE INDEX sl_parted_bl ON sl_parted USING bloomidx (a);
SELECT bloomidx_seal('sl_parted_bl');
DROP TABLE sl_parted;
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
DROP TABLE sl;

-- The debugging settings of the seal protocol's tests (src/support/debug.cpp) take
-- a value only from SET in a session: set for a role, a database or the
-- server, a crash switch would reach every backend.
LOAD 'bloomidx';
ALTER ROLE CURRENT_USER SET bloomidx.debug_seal_stop = 2;
ALTER ROLE CURRENT_USER SET bloomidx.debug_pause_at = 'seal_marked';
SET bloomidx.debug_seal_stop = 4;
SET bloomidx.debug_seal_stop = 11;
RESET bloomidx.debug_seal_stop;

-- VACUUM seals what is pending beyond the tail (a page's rows or more), as GIN's VACUUM
-- flushes its pending list, where the index keeps filter keys and has 128
-- blocks or more: a query then reads no pending page but the tail (nor
-- that, once the segments hold a segment's worth of live rows).  (It
-- sealed only an eighth of a segment's rows or more, 8,128 here: 3,000
-- rows stayed pending, 17 pages every query read.)  The small segments it
-- leaves keep their rows' keys, and the next VACUUM merges them into one
-- with filters made from the keys; every answer stays a sequential scan's.
CREATE TABLE vf (a int, b int, c int, d int) WITH (autovacuum_enabled = off);
INSERT INTO vf SELECT i, i % 1000, i % 7, i % 13 FROM generate_series(1, 75000) i;
CREATE INDEX vf_bl ON vf USING bloomidx (a, b, c, d);
INSERT INTO vf SELECT i, i % 1000, i % 7, i % 13 FROM generate_series(75001, 78000) i;
SELECT pg_relation_size('vf_bl') / 8192 >= 128 AS large_enough;
SELECT pending_pages > 10 AS pending_before FROM bloomidx_index_info('vf_bl');
VACUUM vf;
SELECT pending_pages <= 1 AS flushed, filtered_segments = segments AS all_filtered
FROM bloomidx_index_info('vf_bl');
SELECT index_buffers('SELECT * FROM vf WHERE a = -1 AND b = -1') <= 8 AS miss_few_pages;
INSERT INTO vf SELECT i, i % 1000, i % 7, i % 13 FROM generate_series(78001, 81000) i;
DELETE FROM vf WHERE a % 10 = 0;
VACUUM vf;
SELECT pending_pages <= 1 AS flushed_again, filtered_segments = segments AS all_filtered_again
FROM bloomidx_index_info('vf_bl');
-- The build's last segment and the first VACUUM's merged (filters from
-- both sources' slots: the build's kept no keys), and the second VACUUM's,
-- which kept its keys: two small segments, both filtered.
SELECT count(*) FILTER (WHERE item_kind = 'segment entry'
                          AND (regexp_match(detail, 'rows (\d+),'))[1]::int <= 16256) AS small_segments
FROM bloomidx_page_items('vf_bl', 0);
SELECT key_pages > 0 AS keys_kept FROM bloomidx_stats('vf_bl');
SELECT bloomidx_verify('vf_bl');
SELECT q, index_vs_seqscan('SELECT * FROM vf WHERE ' || q)
FROM (VALUES ('a = 75501'), ('a = 79001 AND b = 1'), ('b = 501 AND c = 3'), ('a = 77001'),
             ('a IN (13, 76089, 80548) AND d = 0'), ('b = 999 AND d = 5')) AS t(q);
DROP TABLE vf;

-- One-row INSERTs append to the pending list's tail while it has room,
-- even when the free space map offers wholly free pages (the pages seals,
-- merges and VACUUM free): each such INSERT statement linked a free page
-- of its own as the new tail, so after a VACUUM, 2,000 one-row INSERTs
-- left 353 pending pages of 6 rows (every query read them all, and no
-- seal took them: too few rows).  Here 600 one-row statements after a
-- VACUUM that freed pages: they fill about 3 pages, not 600.
SET bloomidx.segment_rows = 2000;
CREATE TABLE sr (a int, b int, c int) WITH (autovacuum_enabled = off);
INSERT INTO sr SELECT i, i % 100, i % 7 FROM generate_series(1, 20000) i;
CREATE INDEX sr_bl ON sr USING bloomidx (a, b, c);
INSERT INTO sr SELECT i, i % 100, i % 7 FROM generate_series(20001, 40000) i;
VACUUM sr;
SELECT i.pending_pages <= 2 AS flushed, s.free_pages > 10 AS pages_freed
FROM bloomidx_index_info('sr_bl') i, bloomidx_stats('sr_bl') s;
DO $$ BEGIN FOR i IN 40001 .. 40600 LOOP INSERT INTO sr VALUES (i, i % 100, i % 7); END LOOP; END $$;
SELECT pending_pages <= 6 AS tail_filled FROM bloomidx_index_info('sr_bl');
SELECT q, index_vs_seqscan('SELECT * FROM sr WHERE ' || q)
FROM (VALUES ('a = 40300'), ('b = 7 AND c = 0'), ('a = 40599 AND b = 99')) AS t(q);
SELECT bloomidx_verify('sr_bl');
DROP TABLE sr;
RESET bloomidx.segment_rows;

-- A VACUUM after every few inserts leaves them pending, tail and all, in
-- an index of a segment's worth: sealing each handful as a small segment,
-- which the next VACUUM merged into new blocks, grew the index from 166
-- pages to 435 over 30 rounds of 5 rows.  (A serial build: a parallel
-- one leaves its participants' last rows pending, which with the rounds'
-- make a page's rows, rightly sealed, at a point that varies.)
SET max_parallel_maintenance_workers = 0;
CREATE TABLE tk (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO tk SELECT i, i % 1000, i % 777 FROM generate_series(1, 200000) i;
CREATE INDEX tk_bl ON tk USING bloomidx (a, b);
VACUUM tk;
SELECT pg_relation_size('tk_bl') / 8192 AS tk_before \gset
SELECT format('INSERT INTO tk SELECT i, i %% 1000, i %% 777 FROM generate_series(%s, %s) i',
              200001 + r * 5, 200005 + r * 5), 'VACUUM tk'
FROM generate_series(1, 30) r \gexec
SELECT pg_relation_size('tk_bl') / 8192 <= :tk_before + 2 AS no_growth, pending_rows
FROM bloomidx_index_info('tk_bl');
SELECT index_vs_seqscan('SELECT id FROM tk WHERE a = 6 AND b = ' || ((200006 + 5 * r) % 777))
FROM generate_series(0, 2) r;
DROP TABLE tk;

-- A trickle of rows, VACUUM after each batch of 600: VACUUM seals the
-- batch and merges it into the small segment the batches before made, a
-- few pages larger each time.  The sweep listed a free run for segments
-- only whole, within what it keeps free for pending pages (a segment's
-- worth of them), so the run the merges left, always longer, was never
-- listed, and each merge wrote past the index's end: 341 pages grew to
-- 1,999 over 30 rounds (4,472 over 70).  Now the run's first pages are
-- listed, where the merges go: the growth stops near the build, the
-- reserve kept for pending pages and one run, before the truncation gives
-- the end back (at most 938 pages over these 30 rounds, 1,143 over 90).
CREATE TABLE trk (i1 int, i2 int, i3 int, i4 int, i5 int, i6 int) WITH (autovacuum_enabled = off);
CREATE FUNCTION trk_rows(lo int, hi int) RETURNS SETOF trk LANGUAGE sql AS
$$ SELECT (g * 7919 % 1000003)::int, (g * 104729 % 1000033)::int, (g * 1299709 % 999983)::int,
          (g * 15485863 % 1000037)::int, (g * 32452843 % 999979)::int,
          (g * 49979687 % 1000039)::int
   FROM generate_series(lo::int8, hi::int8) g $$;
INSERT INTO trk SELECT * FROM trk_rows(1, 100000);
CREATE INDEX trk_bl ON trk USING bloomidx (i1, i2, i3, i4, i5, i6);
SELECT pg_relation_size('trk_bl') / 8192 AS trk_before \gset
CREATE TABLE trk_size (pages bigint);
SELECT format('INSERT INTO trk SELECT * FROM trk_rows(%s, %s)', 100001 + r * 600, 100600 + r * 600),
       'VACUUM trk', 'INSERT INTO trk_size SELECT pg_relation_size(''trk_bl'') / 8192'
FROM generate_series(0, 29) r \gexec
SELECT max(pages) <= 3.5 * :trk_before AS bounded, count(*) AS rounds FROM trk_size;
SELECT index_vs_seqscan(format('SELECT * FROM trk WHERE i2 = %s AND i5 = %s', i2, i5)),
       index_vs_seqscan(format('SELECT * FROM trk WHERE i4 = %s', i4))
FROM trk_rows(100000, 118000) WHERE i1 % 3001 = 0;
SELECT bloomidx_verify('trk_bl');
DROP FUNCTION trk_rows;
DROP TABLE trk, trk_size;
RESET max_parallel_maintenance_workers;
