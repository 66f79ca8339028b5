--
-- The statistics views count bloomidx scans as they count PostgreSQL's own
-- index access methods': every scan in idx_scan (an "unused index" query
-- must not tell users to drop a busy index), the TIDs it returns in
-- idx_tup_read, and every page it touches in idx_blks_hit + idx_blks_read
-- (pages pinned through a buffer hint included, so idx_blks_read is never
-- negative).
--
CREATE TABLE tstat (a int4, b int4) WITH (autovacuum_enabled = off);
INSERT INTO tstat SELECT i, i % 10 FROM generate_series(1, 20000) i;
CREATE INDEX tstat_bl ON tstat USING bloomidx (a, b);

CREATE FUNCTION tstat_counters(OUT scans bigint, OUT tuples bigint, OUT blks_read bigint,
                               OUT blks_hit bigint)
LANGUAGE sql AS $$
    SELECT s.idx_scan, s.idx_tup_read, io.idx_blks_read, io.idx_blks_hit
    FROM pg_stat_user_indexes s JOIN pg_statio_user_indexes io USING (indexrelid)
    WHERE indexrelid = 'tstat_bl'::regclass
$$;

-- A first scan reads the metapage and leaves every page cached and hinted.
SELECT bitmap_index_node('SELECT * FROM tstat WHERE a = 1') IS NOT NULL AS warm;
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE stat_before AS SELECT * FROM tstat_counters();

CREATE TEMP TABLE stat_scans AS
SELECT q, bitmap_index_node(q) AS node
FROM (VALUES ('SELECT * FROM tstat WHERE a = 5'),
             ('SELECT * FROM tstat WHERE a = 5'),
             ('SELECT * FROM tstat WHERE b = 3'),
             ('SELECT * FROM tstat WHERE a IN (1, 2, 3) AND b = 1'),
             ('SELECT * FROM tstat WHERE a IS NULL')) AS v(q);
SELECT pg_stat_force_next_flush();

SELECT a.scans - b.scans AS scans,
       a.tuples - b.tuples = (SELECT sum((node->>'Actual Rows')::numeric::bigint) FROM stat_scans)
           AS tup_read_is_tids_returned,
       a.blks_read >= 0 AS blks_read_not_negative,
       (a.blks_hit + a.blks_read) - (b.blks_hit + b.blks_read)
           = (SELECT sum((node->>'Shared Hit Blocks')::bigint + (node->>'Shared Read Blocks')::bigint)
              FROM stat_scans) AS blks_are_pages_touched,
       (a.blks_hit + a.blks_read) - (b.blks_hit + b.blks_read)
           = 5 * (pg_relation_size('tstat_bl') / current_setting('block_size')::int - 1)
           AS each_data_page_once_a_scan
FROM tstat_counters() a, stat_before b;
