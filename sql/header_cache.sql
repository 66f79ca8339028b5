--
-- What a backend keeps from one scan to the next (header_cache.cpp): the
-- filter groups' header pages, for one generation of the directory.  A
-- repeated query reads fewer index pages; a publish (a seal, VACUUM's
-- merges) makes the next scan read them again; a file built again (REINDEX,
-- or a TRUNCATE that empties it in place) starts its generations again
-- with other groups, and its scans must not take the old groups' headers
-- for its own, which would probe the wrong block rows and miss rows.
-- Every query is checked against a sequential scan.
--
SET bloomidx.segment_rows = 256;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.3);
CREATE TABLE hc (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
-- Few values a column: small filters.
INSERT INTO hc
SELECT i, floor(random() * 40), 'v' || floor(random() * 40), floor(random() * 40)
FROM generate_series(1, 80000) i;
CREATE INDEX hc_bl ON hc USING bloomidx (a, b, c);
SELECT segments > 224 AS has_directory_pages, filtered_segments = segments AS all_filtered
FROM bloomidx_index_info('hc_bl');

-- A new session keeps nothing: its first scan reads the groups' headers,
-- the next ones only the rest; with the cache off (a setting for
-- comparisons) every scan reads what the first did.
\c
SET enable_seqscan = off;
SELECT setseed(0.4);
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') AS first_scan \gset
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') AS second_scan \gset
SELECT :first_scan > :second_scan AS fewer_pages_again,
       index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') = :second_scan AS same_third_time;
-- The buffer hints the backend keeps for the index (support/page.cpp)
-- follow the pages its scans read, not the index's size: a table of 64
-- slots (1 kB) at first, grown as scans overwrite its hints, where a hint
-- for every block of the index took 12 bytes a block (19 kB), beside the
-- rest of the relcache's memory for the index.
SELECT total_bytes < pg_relation_size('hc_bl') / 8192 * 12 AS hints_follow_reads
FROM pg_backend_memory_contexts WHERE name = 'index info' AND ident = 'hc_bl';
SET bloomidx.debug_group_header_cache = off;
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') = :first_scan AS as_the_first;
SELECT * FROM abc_check('hc', 20);
RESET bloomidx.debug_group_header_cache;
SELECT * FROM abc_check('hc', 40);

-- A seal publishes: a new generation, whose headers are read again, then
-- kept again.
INSERT INTO hc
SELECT i, floor(random() * 40), 'v' || floor(random() * 40), floor(random() * 40)
FROM generate_series(80001, 84000) i;
SELECT bloomidx_seal('hc_bl') > 0 AS sealed;
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') AS sealed_first \gset
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') < :sealed_first AS kept_again;
SET bloomidx.debug_group_header_cache = off;
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') = :sealed_first AS read_again_off;
RESET bloomidx.debug_group_header_cache;
SELECT * FROM abc_check('hc', 24);
SELECT index_vs_seqscan('SELECT id FROM hc WHERE id > 80000 AND a = ' || (SELECT a FROM hc WHERE id = 83999));

-- VACUUM merges and gathers: another generation.
DELETE FROM hc WHERE id % 3 <> 0 AND id < 60000;
SELECT wait_for_older_xacts();
VACUUM hc;
SELECT * FROM abc_check('hc', 24);

-- The directory pages' entries (past 224) are kept too, for a generation.
-- VACUUM lowers their live counts in place, so it moves the generation on
-- after a pass that lowered one (vacuum.cpp): a scan that took an old
-- count would skip the segment's live page and return its deleted rows'
-- TIDs, here past the end of the table VACUUM truncated (an XX002 error
-- from another session's scan; the generation moves by that one alone
-- here, no merge publishing).  240 segments; the
-- last 120 rows are wide and end the table.  First an index of them
-- without filters, so that a query reads no group header: a warm one
-- reads its directory page fewer, and nothing else.
SET bloomidx.segment_rows = 256;
CREATE TABLE hc_live (id int, a int, c int, pad text) WITH (autovacuum_enabled = off);
ALTER TABLE hc_live ALTER pad SET STORAGE PLAIN;
INSERT INTO hc_live SELECT i, i % 1000, i % 777, NULL FROM generate_series(1, 256 * 240 - 120) i;
INSERT INTO hc_live SELECT i, 5000 + i, 6000 + i, repeat('p', 2000)
FROM generate_series(256 * 240 - 119, 256 * 240) i;
CREATE INDEX hc_live_off ON hc_live USING bloomidx (a, c) WITH (segment_filter_rate = 0);
SELECT index_buffers('SELECT id FROM hc_live WHERE a = 17 AND c = 17') AS live_first \gset
SELECT index_buffers('SELECT id FROM hc_live WHERE a = 17 AND c = 17') AS live_warm \gset
-- The planner sums the kept entries too (cost.cpp): it reads the metapage
-- alone, where it read the directory page too.
CREATE FUNCTION planning_buffers(query text) RETURNS int LANGUAGE plpgsql AS $$
DECLARE
    j json;
BEGIN
    EXECUTE 'EXPLAIN (BUFFERS, FORMAT JSON) ' || query INTO j;
    RETURN coalesce((j->0->'Planning'->>'Shared Hit Blocks')::int, 0) +
           coalesce((j->0->'Planning'->>'Shared Read Blocks')::int, 0);
END $$;
SELECT planning_buffers('SELECT id FROM hc_live WHERE a = 17 AND c = 17') AS planning_kept \gset
SET bloomidx.debug_group_header_cache = off;
SELECT :live_first - :live_warm AS directory_pages_kept,
       index_buffers('SELECT id FROM hc_live WHERE a = 17 AND c = 17') = :live_first AS read_again_off,
       planning_buffers('SELECT id FROM hc_live WHERE a = 17 AND c = 17') - :planning_kept
       AS planner_pages_kept;
RESET bloomidx.debug_group_header_cache;
DROP INDEX hc_live_off;
CREATE INDEX hc_live_bl ON hc_live USING bloomidx (a, c);
SELECT segments, generation AS live_generation FROM bloomidx_index_info('hc_live_bl') \gset
SELECT :segments > 224 AS has_directory_pages;
SELECT index_vs_seqscan(format('SELECT id FROM hc_live WHERE a = %s AND c = %s', 5000 + 61400, 6000 + 61400));
SELECT index_vs_seqscan(format('SELECT id FROM hc_live WHERE a = %s AND c = %s', 5000 + 61400, 6000 + 61400));
SELECT pg_relation_size('hc_live') AS heap_bytes \gset
DELETE FROM hc_live WHERE id > 256 * 240 - 120;
SELECT wait_for_older_xacts();
VACUUM hc_live;
SELECT pg_relation_size('hc_live') < :heap_bytes AS heap_truncated,
       generation - :live_generation AS generations_moved
FROM bloomidx_index_info('hc_live_bl');
SELECT index_vs_seqscan(format('SELECT id FROM hc_live WHERE a = %s AND c = %s', 5000 + 61400, 6000 + 61400));
SELECT index_vs_seqscan('SELECT id FROM hc_live WHERE a = 17 AND c = 17');
DROP TABLE hc_live;
DROP FUNCTION planning_buffers(text);

-- REINDEX gives the index a new file whose directory starts at the
-- generation the old one had after its build, with other groups (many
-- values a column now: larger filters).
TRUNCATE hc;
INSERT INTO hc
SELECT i, floor(random() * 40), 'v' || floor(random() * 40), floor(random() * 40)
FROM generate_series(1, 80000) i;
REINDEX INDEX hc_bl;
SELECT index_vs_seqscan('SELECT id FROM hc WHERE a = 7 AND c = 8');
SELECT generation AS small_generation FROM bloomidx_index_info('hc_bl') \gset
UPDATE hc SET a = floor(random() * 1000000), b = 'w' || floor(random() * 1000000),
              c = floor(random() * 1000000);
REINDEX INDEX hc_bl;
SELECT generation = :small_generation AS same_generation FROM bloomidx_index_info('hc_bl');
SELECT * FROM abc_check('hc', 60);
SELECT bloomidx_verify('hc_bl');

-- A table new in the transaction is emptied in place by TRUNCATE: the
-- index keeps its file, and its generations start again.  (Two things
-- forget the index's headers here, its build and its relcache
-- invalidation; this fails with neither.)
SET bloomidx.background_seal = off;
BEGIN;
CREATE TABLE hc_new (id int, a int, b text, c int);
CREATE INDEX hc_new_bl ON hc_new USING bloomidx (a, b, c);
INSERT INTO hc_new SELECT i, i % 5, 'v' || i % 3, i % 7 FROM generate_series(1, 2000) i;
SELECT bloomidx_seal('hc_new_bl') AS sealed_rows \gset
SELECT relfilenode AS new_file, (SELECT generation FROM bloomidx_index_info('hc_new_bl')) AS new_generation
FROM pg_class WHERE relname = 'hc_new_bl' \gset
SELECT index_vs_seqscan('SELECT id FROM hc_new WHERE a = 3 AND c = 2');
TRUNCATE hc_new;
INSERT INTO hc_new SELECT i, i * 7919 % 100003, 'w' || i, i * 31 % 99991 FROM generate_series(1, 2000) i;
SELECT bloomidx_seal('hc_new_bl') AS sealed_rows \gset
SELECT relfilenode = :new_file AS same_file,
       (SELECT generation FROM bloomidx_index_info('hc_new_bl')) = :new_generation AS same_generation
FROM pg_class WHERE relname = 'hc_new_bl';
SELECT * FROM abc_check('hc_new', 30);
ROLLBACK;

-- A temporary table ON COMMIT DELETE ROWS: each commit empties its
-- index's file in place.
CREATE TEMP TABLE hc_tmp (id int, a int, b text, c int) ON COMMIT DELETE ROWS;
CREATE INDEX hc_tmp_bl ON hc_tmp USING bloomidx (a, b, c);
BEGIN;
INSERT INTO hc_tmp SELECT i, i % 5, 'v' || i % 3, i % 7 FROM generate_series(1, 2000) i;
SELECT bloomidx_seal('hc_tmp_bl') AS sealed_rows \gset
SELECT index_vs_seqscan('SELECT id FROM hc_tmp WHERE a = 3 AND c = 2');
COMMIT;
BEGIN;
INSERT INTO hc_tmp SELECT i, i * 7919 % 100003, 'w' || i, i * 31 % 99991 FROM generate_series(1, 2000) i;
SELECT bloomidx_seal('hc_tmp_bl') AS sealed_rows \gset
SELECT * FROM abc_check('hc_tmp', 30);
COMMIT;
RESET bloomidx.background_seal;

-- Two indexes in one query, each with its own headers.
CREATE INDEX hc_bl2 ON hc USING bloomidx (c, a);
SELECT index_vs_seqscan(format('SELECT id FROM hc WHERE (a = %s AND c = %s) OR (c = %s)',
                               a, c, c + 1))
FROM hc WHERE id IN (17, 23456, 79999) ORDER BY id;
DROP TABLE hc;
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
