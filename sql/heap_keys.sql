--
-- Merges make their filters from their rows' keys, read from the table for
-- the sources that kept none (src/storage/heap_keys.cpp): a build's
-- segments and full ones keep no keys, and a merge of more than four of
-- them got no filters at all, a merge of fewer as many filter slots as
-- its sources.  Here through HOT chains, whose tuples the index's TIDs
-- reach through a redirect, and NULLs; an index with an expression keeps
-- ORing its sources' filters (VACUUM runs no user code).  Every answer is
-- checked against a sequential scan, and bloomidx_verify checks every row.
--
SET bloomidx.segment_rows = 2000;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.43);
CREATE TABLE hk (id int, a int, b text, c int, note text)
    WITH (autovacuum_enabled = off, fillfactor = 50);
INSERT INTO hk SELECT i, floor(random() * 500), 'V' || floor(random() * 300),
                      CASE WHEN random() < 0.02 THEN NULL ELSE floor(random() * 7000) END, 'x'
FROM generate_series(1, 40000) i;
CREATE INDEX hk_bl ON hk USING bloomidx (a, b, c);
SELECT segments, filtered_segments FROM bloomidx_index_info('hk_bl');
-- The rows that stay, updated HOT (no indexed column changes, room on the
-- page): the index's TID of each leads through a redirect now.
UPDATE hk SET note = 'y' WHERE id % 10 = 0;
SELECT pg_stat_force_next_flush();
SELECT n_tup_hot_upd > 3000 AS hot_updates FROM pg_stat_user_tables WHERE relname = 'hk';
-- Nine rows in ten deleted: VACUUM merges the 20 segments, 200 rows left
-- in each, ten at a time (as many as one segment holds).  Each merged
-- segment gets filters from its rows' keys (there were none: ten sources).
DELETE FROM hk WHERE id % 10 <> 0;
SELECT wait_for_older_xacts();
VACUUM hk;
SELECT segments, filtered_segments = segments AS all_filtered, live_rows = 4000 AS every_row
FROM bloomidx_index_info('hk_bl');
SELECT bloomidx_verify('hk_bl');
-- The filters hold every row's keys (misses come back below 1 % of the
-- rows) and spare a miss the slices.
SELECT miss_rate('hk', ARRAY['a = 501', 'b = ''V301'' AND c = 7001',
                             'a = 502 AND b = ''W''', 'c = -5']) < 0.01 AS few_false_positives,
       index_buffers('SELECT * FROM hk WHERE a = 503 AND c = 7002') <= 8 AS miss_few_pages;
-- Random lookups of rows that live, one to three columns and IN lists.
SELECT outcome, count(*) > 0 AS seen
FROM (SELECT random_query_outcome('hk', CASE k % 5
          WHEN 0 THEN format('a = %s', a)
          WHEN 1 THEN format('b = %L AND c = %s', b, coalesce(c, -1))
          WHEN 2 THEN format('a = %s AND b = %L', a, b)
          WHEN 3 THEN format('c IN (%s, %s) AND a IN (%s, 500)', coalesce(c, 0), coalesce(c, 0) + 1, a)
          ELSE format('a = %s AND b = %L AND c IS NOT DISTINCT FROM %s', a, b,
                      coalesce(c::text, 'NULL')) END) AS outcome
      FROM (SELECT row_number() OVER () AS k, a, b, c
            FROM (SELECT a, b, c FROM hk ORDER BY random() LIMIT 60) s) q) t
GROUP BY outcome ORDER BY outcome;
-- Inserted rows, sealed, then three in four deleted and merged: still
-- every row found.  A merged segment whose slices fit two pages gets no
-- filters (they would cost a query as many pages, and take two more):
-- the three sealed segments' 1,500 rows are one such; every larger one
-- has filters.
INSERT INTO hk SELECT i, floor(random() * 500), 'V' || floor(random() * 300),
                      floor(random() * 7000), 'z'
FROM generate_series(40001, 46000) i;
SELECT bloomidx_seal('hk_bl') > 0 AS sealed;
DELETE FROM hk WHERE id > 40000 AND id % 4 <> 0;
SELECT wait_for_older_xacts();
VACUUM hk;
SELECT count(*) FILTER (WHERE detail LIKE '%filter group none%') AS unfiltered,
       bool_and(detail NOT LIKE '%filter group none%')
           FILTER (WHERE (regexp_match(detail, 'rows (\d+),'))[1]::int > 1500) AS larger_filtered
FROM bloomidx_page_items('hk_bl', 0) WHERE item_kind = 'segment entry';
SELECT live_rows + pending_rows = (SELECT count(*) FROM hk) AS every_row_once
FROM bloomidx_index_info('hk_bl');
SELECT bloomidx_verify('hk_bl');
SELECT outcome, count(*) > 0 AS seen
FROM (SELECT random_query_outcome('hk', CASE k % 3
          WHEN 0 THEN format('a = %s', a)
          WHEN 1 THEN format('b = %L AND c = %s', b, coalesce(c, -1))
          ELSE format('a = %s AND c IN (%s, -1)', a, coalesce(c, 0)) END) AS outcome
      FROM (SELECT row_number() OVER () AS k, a, b, c
            FROM (SELECT a, b, c FROM hk ORDER BY random() LIMIT 60) s) q) t
GROUP BY outcome ORDER BY outcome;
DROP TABLE hk;

-- An index with an expression: its merges OR their sources' filters (ten
-- sources here: the merged segments keep none), and every answer stays
-- right.
CREATE TABLE hx (id int, a int, b text) WITH (autovacuum_enabled = off);
INSERT INTO hx SELECT i, floor(random() * 500), 'V' || floor(random() * 300)
FROM generate_series(1, 40000) i;
CREATE INDEX hx_bl ON hx USING bloomidx (a, lower(b));
DELETE FROM hx WHERE id % 10 <> 0;
SELECT wait_for_older_xacts();
VACUUM hx;
SELECT segments, filtered_segments, live_rows = 4000 AS every_row FROM bloomidx_index_info('hx_bl');
SELECT bloomidx_verify('hx_bl');
SELECT outcome, count(*) > 0 AS seen
FROM (SELECT random_query_outcome('hx', CASE k % 2
          WHEN 0 THEN format('a = %s', a)
          ELSE format('a = %s AND lower(b) = %L', a, lower(b)) END) AS outcome
      FROM (SELECT row_number() OVER () AS k, a, b
            FROM (SELECT a, b FROM hx ORDER BY random() LIMIT 30) s) q) t
GROUP BY outcome ORDER BY outcome;
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
DROP TABLE hx;
