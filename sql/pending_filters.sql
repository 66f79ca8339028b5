--
-- Pending filters (src/storage/pending_filters.cpp, format 17): the pending
-- pages that filled get slots in pending groups, 127 pages a group, and a
-- query reads a group's header and a region page a key, then only the
-- pages whose filters may hold its keys.  Queries through the index
-- against a sequential scan (equalities, IN lists, IS NULL) over four
-- groups' worth of pending pages, and after what drops the groups: a
-- VACUUM that removes rows, a seal; then the buffers a miss reads.
--
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.31);
CREATE TABLE pfl (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
CREATE FUNCTION pfl_fill(first int, last int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO pfl
    SELECT i, floor(random() * 2000),
           CASE WHEN random() < 0.05 THEN NULL ELSE 'v' || floor(random() * 300) END,
           CASE WHEN random() < 0.05 THEN NULL ELSE floor(random() * 40) END
    FROM generate_series(first, last) i
$$;
SELECT pfl_fill(1, 20000);
-- Long signatures, so that a pending page holds 99 rows.
CREATE INDEX pfl_bl ON pfl USING bloomidx (a, b, c) WITH (length = 512);
SELECT bloomidx_seal('pfl_bl') > 0 AS build_sealed;

-- 40,000 rows in statements of 4,000, and 200 of one row: about 400
-- pending pages, in four groups (no seal: fewer than a segment's rows).
SELECT count(*) AS statements FROM (SELECT pfl_fill(20001 + 4000 * s, 24000 + 4000 * s) FROM generate_series(0, 9) s) q;
SELECT count(*) AS statements FROM (SELECT pfl_fill(i, i) FROM generate_series(60001, 60200) i) q;
SELECT pending_pages > 3 * 127 AS four_groups_of_pages, segments > 0 AS segments
FROM bloomidx_index_info('pfl_bl');
SELECT * FROM abc_check('pfl', 400);

-- A miss reads each group's header and a region page a key, and the
-- pages before and after the groups' run, not 400 pages; a hit reads the
-- pages with its values too (each value of a is in 30 rows).
SELECT index_buffers($$SELECT * FROM pfl WHERE a = 99999 AND b = 'none'$$) < pending_pages / 16 AS miss_reads_few,
       index_buffers($$SELECT * FROM pfl WHERE a = 5000 AND c = 77$$) < pending_pages / 16 AS other_miss_reads_few
FROM bloomidx_index_info('pfl_bl');
SELECT index_buffers(format('SELECT * FROM pfl WHERE a = %s AND b = %L', a, b)) <
       (SELECT pending_pages / 8 FROM bloomidx_index_info('pfl_bl')) AS hit_reads_few
FROM pfl WHERE id = 50000;

-- Rows deleted and VACUUM: the groups go before pending pages get room
-- (and VACUUM seals what is pending); then rows into the room, and new
-- groups over the pages that fill after.
DELETE FROM pfl WHERE random() < 0.3;
SELECT wait_for_older_xacts();
VACUUM pfl;
SELECT pfl_fill(60201, 90000);
SELECT * FROM abc_check('pfl', 400);
SELECT pending_pages > 127 AS a_group_of_pages,
       index_buffers($$SELECT * FROM pfl WHERE a = 99999 AND b = 'none'$$) < pending_pages / 8 AS miss_reads_few
FROM bloomidx_index_info('pfl_bl');

-- A seal (bloomidx_seal) moves the pending head: the groups go with it.
SELECT bloomidx_seal('pfl_bl') > 0 AS sealed;
SELECT pfl_fill(90001, 110000);
SELECT * FROM abc_check('pfl', 300);
SELECT bloomidx_verify('pfl_bl');

-- An index without filters (segment_filter_rate = 0) keeps no filter keys
-- in its pending rows: no groups, every pending page read.
CREATE INDEX pfl_nf ON pfl USING bloomidx (a, b, c) WITH (segment_filter_rate = 0);
SELECT pfl_fill(110001, 130000);
DROP INDEX pfl_bl;
SELECT * FROM abc_check('pfl', 100);
SELECT index_buffers('SELECT * FROM pfl WHERE a = 99999 AND b = ''none''') >
       (SELECT pending_pages FROM bloomidx_index_info('pfl_nf')) AS reads_every_pending_page;
DROP TABLE pfl;
DROP FUNCTION pfl_fill(int, int);
