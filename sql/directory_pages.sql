--
-- Directory pages (core/page_layout.hpp): past the metapage's 224 entries,
-- the segment directory goes on directory pages, which each publish that
-- changes them writes copy-on-write (directory_pages.cpp).  Segments of 64
-- rows make over 700 segments of 50,000 rows here: 224 entries in the
-- metapage and three directory pages.  Every query is checked against a
-- sequential scan.
--
SET bloomidx.segment_rows = 64;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.5);
CREATE TABLE dp (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
INSERT INTO dp
SELECT i, floor(random() * 300), 'v' || floor(random() * 200),
       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 5000) END
FROM generate_series(1, 50000) i;
CREATE INDEX dp_bl ON dp USING bloomidx (a, b, c) WITH (false_positive_rate = 0.05);
SELECT segments, segments > 224 + 2 * 254 AS three_directory_pages, pending_rows
FROM bloomidx_index_info('dp_bl');
SELECT bloomidx_verify('dp_bl');
SELECT * FROM abc_check('dp', 40);
-- The first rows and the last: entries in the metapage, on the last page.
SELECT index_vs_seqscan('SELECT id FROM dp WHERE a = ' || (SELECT a FROM dp WHERE id = 3));
SELECT index_vs_seqscan('SELECT id FROM dp WHERE c = ' || (SELECT c FROM dp WHERE id = 49990));

-- Inserts sealed: each seal's publish writes the last directory page again.
INSERT INTO dp
SELECT i, floor(random() * 300), 'v' || floor(random() * 200), floor(random() * 5000)
FROM generate_series(50001, 56000) i;
SELECT bloomidx_seal('dp_bl');
SELECT segments - 781 AS sealed_segments,
       live_rows + pending_rows = (SELECT count(*) FROM dp) AS every_row_once
FROM bloomidx_index_info('dp_bl');
SELECT bloomidx_verify('dp_bl');
SELECT * FROM abc_check('dp', 24);

-- Deletions in the middle: VACUUM merges segments whose entries are in the
-- metapage and on every directory page, and the entries after them move.
DELETE FROM dp WHERE id BETWEEN 5000 AND 40000 AND id % 4 <> 0;
SELECT wait_for_older_xacts();
VACUUM dp;
SELECT segments < 700 AS merged, live_rows + pending_rows = (SELECT count(*) FROM dp) AS every_row_once
FROM bloomidx_index_info('dp_bl');
SELECT bloomidx_verify('dp_bl');
SELECT * FROM abc_check('dp', 40);

-- Most rows deleted: back under 224 segments, no directory page left; the
-- freed pages are reused, so loading the rows again grows the index little.
CREATE TABLE dp_size AS SELECT pg_relation_size('dp_bl') / 8192 AS pages;
DELETE FROM dp WHERE id > 5000;
SELECT wait_for_older_xacts();
VACUUM dp;
SELECT segments <= 224 AS inline_only, live_rows + pending_rows = (SELECT count(*) FROM dp) AS every_row_once
FROM bloomidx_index_info('dp_bl');
SELECT bloomidx_verify('dp_bl');
SELECT * FROM abc_check('dp', 24);
INSERT INTO dp
SELECT i, floor(random() * 300), 'v' || floor(random() * 200), floor(random() * 5000)
FROM generate_series(60001, 100000) i;
SELECT live_rows + pending_rows = (SELECT count(*) FROM dp) AS every_row_once
FROM bloomidx_index_info('dp_bl');
SELECT pg_relation_size('dp_bl') / 8192 <= 1.05 * pages AS reused FROM dp_size;
SELECT bloomidx_verify('dp_bl');
SELECT * FROM abc_check('dp', 40);

-- A parallel build (of segments of 64 rows again): the participants'
-- entries joined, past the metapage.
SET max_parallel_maintenance_workers = 2;
ALTER TABLE dp SET (parallel_workers = 2);
REINDEX INDEX dp_bl;
SELECT segments > 224 + 254 AS two_directory_pages, pending_rows < 3 * 64 AS few_pending
FROM bloomidx_index_info('dp_bl');
SELECT bloomidx_verify('dp_bl');
SELECT * FROM abc_check('dp', 40);
-- Scans of two indexes in one query, and scans again for each outer row
-- of a join: each takes the backend's scan scratch in turn
-- (support/scratch.cpp), an index of a few segments, then one of
-- hundreds, whose scan grows the scratch (a new session's, empty) under
-- the first's.
RESET bloomidx.segment_rows;
CREATE INDEX dp_c ON dp USING bloomidx (c);
\c
CREATE TABLE dq AS SELECT id, a, c FROM dp WHERE id % 997 = 0;
SET enable_seqscan = off;
SET enable_indexscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM dp WHERE c = 1234 OR a = 7;
SELECT index_vs_seqscan('SELECT id FROM dp WHERE c = ' || c || ' OR a = ' || a)
FROM dq ORDER BY id LIMIT 5;
SET enable_hashjoin = off;
SET enable_mergejoin = off;
SET enable_material = off;
-- (The plan's text, not EXPLAIN: PostgreSQL 18 marks the disabled Seq Scan.)
SELECT plan_of('SELECT dq.id, dp.id FROM dq JOIN dp ON dp.c = dq.c OR dp.a = dq.a')
       LIKE '%Nested Loop%Bitmap Index Scan on dp_c%Bitmap Index Scan on dp_bl%' AS nested_bitmap_or;
CREATE TABLE dq_index AS SELECT dq.id AS qid, dp.id FROM dq JOIN dp ON dp.c = dq.c OR dp.a = dq.a;
RESET enable_seqscan;
RESET enable_indexscan;
RESET enable_hashjoin;
RESET enable_mergejoin;
RESET enable_material;
SET enable_bitmapscan = off;
CREATE TABLE dq_seq AS SELECT dq.id AS qid, dp.id FROM dq JOIN dp ON dp.c = dq.c OR dp.a = dq.a;
RESET enable_bitmapscan;
SELECT (SELECT count(*) FROM dq_seq) > 1000 AS many_rows,
       (SELECT count(*) FROM (TABLE dq_index EXCEPT ALL TABLE dq_seq) d) AS only_via_index,
       (SELECT count(*) FROM (TABLE dq_seq EXCEPT ALL TABLE dq_index) d) AS only_via_seqscan;
-- The scratch is one context of the backend's, of bounded size.
SELECT count(*) AS scratch_contexts, sum(total_bytes) < 4 * 1024 * 1024 AS bounded
FROM pg_backend_memory_contexts WHERE name = 'bloomidx scan scratch';
DROP TABLE dp, dp_size, dq, dq_index, dq_seq;
