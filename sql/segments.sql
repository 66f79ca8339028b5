--
-- Sealed segments (src/storage/README.md): CREATE INDEX writes every segment's
-- worth of rows as one segment (bit slices, TIDs, live bits) and leaves
-- the rest as pending pages.  Segments are made small here
-- (bloomidx.segment_rows) so that a small table has many.  Every query is
-- checked against a sequential scan: with segments, pending rows, rows
-- VACUUM cleared from segments, serial and parallel builds.
--
SET bloomidx.segment_rows = 1000;
SELECT setseed(0.42);
CREATE TABLE seg (id int, a int, b text, c int8) WITH (autovacuum_enabled = off);
INSERT INTO seg
SELECT i, floor(random() * 300),
       CASE WHEN random() < 0.05 THEN NULL ELSE 'v' || floor(random() * 200) END,
       CASE WHEN random() < 0.02 THEN NULL ELSE floor(random() * 5000) END
FROM generate_series(1, 25300) i;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX seg_bl ON seg USING bloomidx (a, b, c);
-- 25 segments of 1,000 rows, 300 rows pending.
SELECT * FROM bloomidx_index_info('seg_bl');
SELECT bloomidx_verify('seg_bl');

-- Random queries of every kind, each against a sequential scan.
SELECT * FROM abc_check('seg', 140);

-- No bits to test (IS NOT NULL) and a list of 300 values (tested on page
-- copies, interrupts checked between elements): every live row still found.
SELECT index_vs_seqscan('SELECT id FROM seg WHERE b IS NOT NULL');
SELECT index_vs_seqscan('SELECT id FROM seg WHERE a = ANY (ARRAY(SELECT generate_series(0, 600, 2)))');
SELECT index_vs_seqscan('SELECT id FROM seg WHERE c = ANY (''{}''::int8[])');

-- A query reads its columns' slices of each segment, not every page: one
-- column's (the metapage, the pending page, and of each of 25 segments its
-- filters, its slice page (1,000 rows: its 48 slices packed on one), its
-- header and TID page where rows are left).
SELECT (node->>'Shared Hit Blocks')::int + (node->>'Shared Read Blocks')::int AS buffers,
       pg_relation_size('seg_bl') / 8192 AS index_pages
FROM bitmap_index_node('SELECT * FROM seg WHERE a = 17') node;

-- A segment stops reading slices once no row is left, and reads no header
-- when it has no row to decode: a and c hold each value in every segment,
-- never in one row, so a query for both reads fewer than the 10 slices of
-- its two columns a segment (about 7), against a sequential scan.
CREATE TABLE seg_pair (id int, a int, c int) WITH (autovacuum_enabled = off);
INSERT INTO seg_pair SELECT i, i % 100, (i + 1) % 100 FROM generate_series(1, 10000) i;
CREATE INDEX seg_pair_bl ON seg_pair USING bloomidx (a, c)
WITH (length = 64, col1 = 5, col2 = 5, segment_filter_rate = 0);
SELECT index_vs_seqscan('SELECT id FROM seg_pair WHERE a = 1 AND c = 1'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE a = 1 AND c = 2');
SELECT segments, index_buffers('SELECT * FROM seg_pair WHERE a = 1 AND c = 1') < segments * 8
       AS fewer_than_every_slice
FROM bloomidx_index_info('seg_pair_bl');
-- Nor its live page when some of its rows are dead: the live bits are read
-- only for rows the slices leave, so the miss reads the same pages as
-- before the DELETE (it read a header and a live page more in each
-- segment).  Dead rows stay out in every path: equalities, IN lists in one
-- pass and element by element (over 64 slices), no bits tested.
SELECT index_buffers('SELECT * FROM seg_pair WHERE a = 1 AND c = 1') AS pair_miss_live \gset
DELETE FROM seg_pair WHERE id % 10 IN (0, 1);
SELECT wait_for_older_xacts();
VACUUM seg_pair;
SELECT segments, live_rows = 8000 AS rows_dead_in_every_segment
FROM bloomidx_index_info('seg_pair_bl');
SELECT index_buffers('SELECT * FROM seg_pair WHERE a = 1 AND c = 1') = :pair_miss_live
       AS same_pages_with_dead_rows;
SELECT index_vs_seqscan('SELECT id FROM seg_pair WHERE a = 1 AND c = 1'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE a = 1 AND c = 2'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE a = 12 AND c = 13'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE a = 20'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE a = 25'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE c IN (1, 2, 3)'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE c = ANY (ARRAY(SELECT generate_series(0, 40, 2)))'),
       index_vs_seqscan('SELECT id FROM seg_pair WHERE a IS NOT NULL');
DROP TABLE seg_pair;

-- Inserted rows go to pending pages (sealed once a segment's worth gathered);
-- deleted rows' live bits are cleared.
INSERT INTO seg SELECT i, i % 300, 'v' || (i % 200), i FROM generate_series(30001, 32000) i;
DELETE FROM seg WHERE id % 3 = 0;
SELECT wait_for_older_xacts();
VACUUM seg;
SELECT segments, segment_rows, live_rows < segment_rows AS rows_cleared,
       live_rows + pending_rows = (SELECT count(*) FROM seg) AS every_live_row_once
FROM bloomidx_index_info('seg_bl');
SELECT bloomidx_verify('seg_bl');
SELECT * FROM abc_check('seg', 140);
-- A second VACUUM finds nothing more to clear.
VACUUM seg;
SELECT live_rows + pending_rows = (SELECT count(*) FROM seg) AS every_live_row_once
FROM bloomidx_index_info('seg_bl');

-- A parallel build writes segments in every participant.
SET max_parallel_maintenance_workers = 2;
ALTER TABLE seg SET (parallel_workers = 2);
CREATE INDEX seg_par ON seg USING bloomidx (a, b, c);
SELECT segments >= 10 AS segments, segment_rows <= segments * 1000::int8 AS segments_within_bounds,
       segment_rows + pending_rows = (SELECT count(*) FROM seg) AS every_row_once
FROM bloomidx_index_info('seg_par');
SELECT bloomidx_verify('seg_par');
DROP INDEX seg_bl;
SELECT * FROM abc_check('seg', 70);

-- More segments than the metapage holds (224): the rest of the directory on
-- a directory page (sql/directory_pages.sql tests them further).  Each row
-- keeps its own signature (a build once left the bits of earlier rows in
-- the slots it reused, so that nearly every pending row matched any value).
SET bloomidx.segment_rows = 64;
SET max_parallel_maintenance_workers = 0;
CREATE TABLE seg_many WITH (autovacuum_enabled = off) AS SELECT i AS id, i AS a FROM generate_series(1, 20000) i;
CREATE INDEX seg_many_bl ON seg_many USING bloomidx (a);
SELECT segments, pending_rows FROM bloomidx_index_info('seg_many_bl');
SELECT index_candidates('SELECT * FROM seg_many WHERE a = 19999') < 10 AS few_candidates,
       index_vs_seqscan('SELECT id FROM seg_many WHERE a = 19999');
SELECT bloomidx_verify('seg_many_bl');
DROP TABLE seg_many;
SET bloomidx.segment_rows = 1000;

-- An empty table and a table of exactly one segment.
CREATE TABLE seg_small (a int) WITH (autovacuum_enabled = off);
CREATE INDEX seg_small_bl ON seg_small USING bloomidx (a);
SELECT * FROM bloomidx_index_info('seg_small_bl');
INSERT INTO seg_small SELECT i FROM generate_series(1, 1000) i;
REINDEX INDEX seg_small_bl;
SELECT * FROM bloomidx_index_info('seg_small_bl');
SELECT index_vs_seqscan('SELECT a FROM seg_small WHERE a = 500');
SELECT index_vs_seqscan('SELECT a FROM seg_small WHERE a IN (1, 1000, 1001)');

-- Packed slices (format 14): 1,000 rows take 2 of a slice page's 127
-- lines, so 63 slices share a page.  Format 13 gave each slice a page,
-- a layout readers still meet (bloomidx.debug_unpacked_slices writes it):
-- here one index holds segments of both layouts, merged into each other,
-- and answers as a sequential scan.
CREATE TABLE seg_mix (id int, a int, b text) WITH (autovacuum_enabled = off);
INSERT INTO seg_mix SELECT i, i % 97, 'b' || i % 13 FROM generate_series(1, 5000) i;
SET bloomidx.debug_unpacked_slices = 1;
CREATE INDEX seg_mix_bl ON seg_mix USING bloomidx (a, b);
RESET bloomidx.debug_unpacked_slices;
INSERT INTO seg_mix SELECT i, i % 97, 'b' || i % 13 FROM generate_series(5001, 10000) i;
SELECT bloomidx_seal('seg_mix_bl') >= 0 AS sealed;
CREATE FUNCTION seg_layouts(idx regclass) RETURNS TABLE (slices_a_page int, segments bigint)
LANGUAGE sql AS $$
    SELECT substring(h.detail FROM 'slices a page (\d+)')::int, count(*)
    FROM bloomidx_page_items(idx, 0) m,
         LATERAL bloomidx_page_items(idx, substring(m.detail FROM 'header block (\d+)')::int) h
    WHERE m.item_kind = 'segment entry' AND h.item IS NULL
    GROUP BY 1 ORDER BY 1
$$;
SELECT * FROM seg_layouts('seg_mix_bl');
CREATE FUNCTION seg_mix_check() RETURNS TABLE (queries bigint, differences bigint)
LANGUAGE sql AS $$
    SELECT count(*), count(*) FILTER (WHERE r NOT LIKE 'same%')
    FROM (SELECT index_vs_seqscan(q) r
          FROM generate_series(0, 99) v,
               LATERAL (VALUES (format('SELECT id FROM seg_mix WHERE a = %s', v)),
                               (format('SELECT id FROM seg_mix WHERE a = %s AND b = ''b%s''', v, v % 13)),
                               (format('SELECT id FROM seg_mix WHERE a IN (%s, %s) AND b = ''b%s''',
                                       v, v + 40, v % 17))) AS t(q)) x
$$;
SELECT * FROM seg_mix_check();
SELECT bloomidx_verify('seg_mix_bl');
-- Two thirds deleted: VACUUM merges segments of both layouts into packed ones.
DELETE FROM seg_mix WHERE id % 3 <> 0;
SELECT wait_for_older_xacts();
VACUUM seg_mix;
SELECT * FROM seg_layouts('seg_mix_bl');
SELECT * FROM seg_mix_check();
SELECT bloomidx_verify('seg_mix_bl');
DROP TABLE seg_mix;
DROP FUNCTION seg_layouts(regclass), seg_mix_check();

-- bloomidx.segment_rows is a superuser setting within its bounds.
SET bloomidx.segment_rows = 63;
SET bloomidx.segment_rows = 65025;
CREATE ROLE seg_user;
SET ROLE seg_user;
SET bloomidx.segment_rows = 2000;
RESET ROLE;
DROP ROLE seg_user;
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
DROP TABLE seg, seg_small;
