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
SET bloomidx.debug_group_header_cache = off;
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') = :first_scan AS as_the_first;
SELECT * FROM abc_check('hc', 20);
RESET bloomidx.debug_group_header_cache;
SELECT * FROM abc_check('hc', 40);

-- A seal publishes: a new generation, whose headers are read again.
INSERT INTO hc
SELECT i, floor(random() * 40), 'v' || floor(random() * 40), floor(random() * 40)
FROM generate_series(80001, 84000) i;
SELECT bloomidx_seal('hc_bl') > 0 AS sealed;
SELECT index_buffers('SELECT id FROM hc WHERE a = -1 AND c = -1') > :second_scan AS read_again;
SELECT * FROM abc_check('hc', 24);
SELECT index_vs_seqscan('SELECT id FROM hc WHERE id > 80000 AND a = ' || (SELECT a FROM hc WHERE id = 83999));

-- VACUUM merges and gathers: another generation.  It also changes the
-- live counts of the directory pages' entries in place, within a
-- generation: those pages are read by every scan (the wide rows deleted
-- here end the table, which VACUUM then truncates: a scan that took the
-- old counts would return TIDs past its end, an error).
ALTER TABLE hc ALTER b SET STORAGE PLAIN;
INSERT INTO hc SELECT i, 5000 + i, repeat('w', 2000), 6000 + i FROM generate_series(84001, 84100) i;
INSERT INTO hc SELECT i, 1, 'v1', 1 FROM generate_series(84101, 85100) i;
SELECT bloomidx_seal('hc_bl') > 0 AS sealed;
SELECT index_vs_seqscan('SELECT id FROM hc WHERE a = 5050 AND c = 6050');
DELETE FROM hc WHERE id > 84000 OR (id % 3 <> 0 AND id < 60000);
SELECT pg_relation_size('hc') AS heap_bytes \gset
SELECT wait_for_older_xacts();
VACUUM hc;
SELECT pg_relation_size('hc') < :heap_bytes AS heap_truncated;
SELECT index_vs_seqscan('SELECT id FROM hc WHERE a = 5050 AND c = 6050');
SELECT * FROM abc_check('hc', 24);

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
-- index keeps its file, and its generations start again.
SET bloomidx.background_seal = off;
BEGIN;
CREATE TABLE hc_new (id int, a int, b text, c int);
CREATE INDEX hc_new_bl ON hc_new USING bloomidx (a, b, c);
INSERT INTO hc_new SELECT i, i % 5, 'v' || i % 3, i % 7 FROM generate_series(1, 2000) i;
SELECT bloomidx_seal('hc_new_bl') > 0 AS sealed;
SELECT relfilenode AS new_file, (SELECT generation FROM bloomidx_index_info('hc_new_bl')) AS new_generation
FROM pg_class WHERE relname = 'hc_new_bl' \gset
SELECT index_vs_seqscan('SELECT id FROM hc_new WHERE a = 3 AND c = 2');
TRUNCATE hc_new;
INSERT INTO hc_new SELECT i, i * 7919 % 100003, 'w' || i, i * 31 % 99991 FROM generate_series(1, 2000) i;
SELECT bloomidx_seal('hc_new_bl') > 0 AS sealed;
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
SELECT bloomidx_seal('hc_tmp_bl') > 0 AS sealed;
SELECT index_vs_seqscan('SELECT id FROM hc_tmp WHERE a = 3 AND c = 2');
COMMIT;
BEGIN;
INSERT INTO hc_tmp SELECT i, i * 7919 % 100003, 'w' || i, i * 31 % 99991 FROM generate_series(1, 2000) i;
SELECT bloomidx_seal('hc_tmp_bl') > 0 AS sealed;
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
