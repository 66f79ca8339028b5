--
-- What a backend keeps from one scan to the next (directory_cache.cpp):
-- the directory pages' entries and the filter groups' header pages, for
-- one generation of the directory.  A repeated query reads fewer index
-- pages; a publish (a seal, VACUUM's merges) makes the next scan read
-- them again; a new file (REINDEX, TRUNCATE) starts its generations
-- again, and its scans must not take the old file's pages for its own.
-- Every query is checked against a sequential scan.
--
SET bloomidx.segment_rows = 256;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.3);
CREATE TABLE dcache (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
-- Few values a column: small filters.
INSERT INTO dcache
SELECT i, floor(random() * 40), 'v' || floor(random() * 40), floor(random() * 40)
FROM generate_series(1, 80000) i;
CREATE INDEX dcache_bl ON dcache USING bloomidx (a, b, c);
SELECT segments > 224 AS has_directory_pages, filtered_segments = segments AS all_filtered
FROM bloomidx_index_info('dcache_bl');

-- A new session keeps nothing: its first scan reads the directory pages
-- and the headers, the second only the rest.
\c
SET enable_seqscan = off;
SELECT setseed(0.4);
SELECT index_buffers('SELECT id FROM dcache WHERE a = -1 AND c = -1') AS first_scan \gset
SELECT index_buffers('SELECT id FROM dcache WHERE a = -1 AND c = -1') AS second_scan \gset
SELECT :first_scan > :second_scan AS fewer_pages_again,
       index_buffers('SELECT id FROM dcache WHERE a = -1 AND c = -1') = :second_scan AS same_third_time;
-- Without the cache (a setting for comparisons) every scan reads what the first did.
SET bloomidx.debug_no_directory_cache = on;
SELECT index_buffers('SELECT id FROM dcache WHERE a = -1 AND c = -1') = :first_scan AS as_the_first;
SELECT * FROM abc_check('dcache', 20);
RESET bloomidx.debug_no_directory_cache;
SELECT * FROM abc_check('dcache', 40);

-- A seal publishes: a new generation, read again, then kept again.
INSERT INTO dcache
SELECT i, floor(random() * 40), 'v' || floor(random() * 40), floor(random() * 40)
FROM generate_series(80001, 84000) i;
SELECT bloomidx_seal('dcache_bl') > 0 AS sealed;
SELECT index_buffers('SELECT id FROM dcache WHERE a = -1 AND c = -1') > :second_scan AS read_again;
SELECT * FROM abc_check('dcache', 24);
SELECT index_vs_seqscan('SELECT id FROM dcache WHERE id > 80000 AND a = ' || (SELECT a FROM dcache WHERE id = 83999));

-- VACUUM merges and gathers: another generation.
DELETE FROM dcache WHERE id % 3 <> 0 AND id < 60000;
SELECT wait_for_older_xacts();
VACUUM dcache;
SELECT * FROM abc_check('dcache', 24);

-- REINDEX gives the index a new file whose directory starts at the
-- generation the old one had after its build, with other groups (many
-- values a column now: larger filters): its scans must read its own
-- pages.  The old file's kept headers, taken for the new file's, would
-- probe the wrong block rows and miss rows.
SELECT index_buffers('SELECT id FROM dcache WHERE a = -1 AND c = -1') > 0 AS kept_before;
TRUNCATE dcache;
INSERT INTO dcache
SELECT i, floor(random() * 40), 'v' || floor(random() * 40), floor(random() * 40)
FROM generate_series(1, 80000) i;
REINDEX INDEX dcache_bl;
SELECT index_buffers('SELECT id FROM dcache WHERE a = -1 AND c = -1') > 0 AS kept_small;
SELECT generation AS small_generation FROM bloomidx_index_info('dcache_bl') \gset
UPDATE dcache SET a = floor(random() * 1000000), b = 'w' || floor(random() * 1000000),
                  c = floor(random() * 1000000);
REINDEX INDEX dcache_bl;
SELECT generation = :small_generation AS same_generation FROM bloomidx_index_info('dcache_bl');
SELECT * FROM abc_check('dcache', 60);
SELECT bloomidx_verify('dcache_bl');

-- Two indexes in one query, each with its own pages.
CREATE INDEX dcache_bl2 ON dcache USING bloomidx (c, a);
SELECT index_vs_seqscan(format('SELECT id FROM dcache WHERE (a = %s AND c = %s) OR (c = %s)',
                               a, c, c + 1))
FROM dcache WHERE id IN (17, 23456, 79999) ORDER BY id;
DROP TABLE dcache;
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
