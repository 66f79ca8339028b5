--
-- The statistics views count bloomidx scans as they count PostgreSQL's own
-- index access methods': every scan in idx_scan (an "unused index" query
-- must not tell users to drop a busy index), the TIDs it returns in
-- idx_tup_read, and every page it touches in idx_blks_hit + idx_blks_read
-- (pages pinned through a buffer hint included, so idx_blks_read is never
-- negative).
--
CREATE TABLE tstat (a int4, b int4) WITH (autovacuum_enabled = off);
-- Its rows pending, as inserted, and no filters (so no pending groups):
-- every scan reads every page.
CREATE INDEX tstat_bl ON tstat USING bloomidx (a, b) WITH (segment_filter_rate = 0);
INSERT INTO tstat SELECT i, i % 10 FROM generate_series(1, 20000) i;

CREATE FUNCTION tstat_counters(OUT scans bigint, OUT tuples bigint, OUT blks_read bigint,
                               OUT blks_hit bigint)
LANGUAGE sql AS $$
    SELECT s.idx_scan, s.idx_tup_read, io.idx_blks_read, io.idx_blks_hit
    FROM pg_stat_user_indexes s JOIN pg_statio_user_indexes io USING (indexrelid)
    WHERE indexrelid = 'tstat_bl'::regclass
$$;

-- A first round of the queries leaves every page cached and hinted, and
-- the catalogs planning needs cached too: planning then touches only the
-- index's metapage, which the cost estimate reads.  Every scan reads the
-- metapage (its directory) and, on this small table, every pending page.
CREATE TEMP TABLE stat_queries (q text);
INSERT INTO stat_queries VALUES ('SELECT * FROM tstat WHERE a = 5'),
                                ('SELECT * FROM tstat WHERE a = 5'),
                                ('SELECT * FROM tstat WHERE b = 3'),
                                ('SELECT * FROM tstat WHERE a IN (1, 2, 3) AND b = 1'),
                                ('SELECT * FROM tstat WHERE a IS NULL');
SELECT count(bitmap_index_node(q)) AS warm FROM stat_queries;
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE stat_before AS SELECT * FROM tstat_counters();

CREATE TEMP TABLE stat_scans AS SELECT q, bitmap_index_node(q) AS node FROM stat_queries;
SELECT pg_stat_force_next_flush();

SELECT a.scans - b.scans AS scans,
       a.tuples - b.tuples = (SELECT sum((node->>'Actual Rows')::numeric::bigint) FROM stat_scans)
           AS tup_read_is_tids_returned,
       a.blks_read >= 0 AS blks_read_not_negative,
       (a.blks_hit + a.blks_read) - (b.blks_hit + b.blks_read)
           = (SELECT sum((node->>'Shared Hit Blocks')::bigint + (node->>'Shared Read Blocks')::bigint
                         + (node->>'Planning Blocks')::bigint)
              FROM stat_scans) AS blks_are_pages_touched,
       (SELECT bool_and((node->>'Planning Blocks')::bigint >= 1) FROM stat_scans) AS planning_reads_metapage,
       (a.blks_hit + a.blks_read) - (b.blks_hit + b.blks_read)
           - (SELECT sum((node->>'Planning Blocks')::bigint) FROM stat_scans)
           = 5 * (pg_relation_size('tstat_bl') / current_setting('block_size')::int)
           AS each_page_once_a_scan
FROM tstat_counters() a, stat_before b;

-- EXPLAIN ANALYZE shows one index search per scan (PostgreSQL 18 on; no
-- earlier version shows the figure).
SELECT q, CASE WHEN current_setting('server_version_num')::int < 180000
               THEN node->>'Index Searches' IS NULL
               ELSE node->>'Index Searches' = '1' END AS one_search
FROM stat_scans;

-- A scan whose keys can match no row reads no page and, as btree's, is
-- not counted: not in idx_scan, not in Index Searches (0 on 18).  (Its
-- planning reads the metapage.)
SELECT pg_stat_force_next_flush();
CREATE TEMP TABLE stat_before_none AS SELECT * FROM tstat_counters();
CREATE TEMP TABLE stat_none AS
SELECT q, bitmap_index_node(q) AS node
FROM (VALUES ('SELECT * FROM tstat WHERE a = ANY (''{}'')'),
             ('SELECT * FROM tstat WHERE a = ANY (''{NULL}'')'),
             ('SELECT * FROM tstat WHERE b = 1 AND a = ANY (''{}'')')) AS v(q);
SELECT q, CASE WHEN current_setting('server_version_num')::int < 180000
               THEN node->>'Index Searches' IS NULL
               ELSE node->>'Index Searches' = '0' END AS no_search,
       (node->>'Actual Rows')::numeric = 0 AS no_rows,
       (node->>'Shared Hit Blocks')::int + (node->>'Shared Read Blocks')::int AS blks
FROM stat_none;
SELECT pg_stat_force_next_flush();
SELECT a.scans - b.scans AS scans,
       (a.blks_hit + a.blks_read) - (b.blks_hit + b.blks_read)
           <= (SELECT sum((node->>'Planning Blocks')::bigint) FROM stat_none) AS only_planning_blks
FROM tstat_counters() a, stat_before_none b;

-- pg_stat_io (16 on) counts the index pages a scan finds in shared buffers
-- as hits, however it reaches them (bloomidx pins the pages of a cached
-- index without a buffer table lookup): over five scans of a cached plan,
-- as many hits as pg_statio counts for the table and the index.  (The
-- counters are read through functions that touch no table, after a first
-- call has filled the caches, so the reading adds no hits of its own.)
CREATE FUNCTION io_hits() RETURNS bigint
LANGUAGE plpgsql AS $$
DECLARE
    hits bigint := 0;
BEGIN
    IF current_setting('server_version_num')::int >= 160000 THEN
        EXECUTE $q$SELECT sum(hits)::bigint FROM pg_stat_io
                   WHERE backend_type = 'client backend' AND object = 'relation'
                     AND context = 'normal'$q$ INTO hits;
    END IF;
    RETURN hits;
END
$$;
CREATE FUNCTION tstat_hits() RETURNS bigint
LANGUAGE sql AS $$
    SELECT pg_stat_get_blocks_hit('tstat'::regclass) + pg_stat_get_blocks_hit('tstat_bl'::regclass)
$$;
SET enable_seqscan = off;
SET plan_cache_mode = force_generic_plan;
PREPARE tstat_miss(int4) AS SELECT count(*) FROM tstat WHERE a = $1;
EXECUTE tstat_miss(-1);
SELECT io_hits() >= 0 AS warm, tstat_hits() > 0 AS warm;
SELECT pg_stat_force_next_flush();
SELECT io_hits() AS io_before, tstat_hits() AS tstat_before,
       pg_stat_get_blocks_hit('tstat_bl'::regclass) AS idx_before \gset
EXECUTE tstat_miss(-2);
EXECUTE tstat_miss(-3);
EXECUTE tstat_miss(-4);
EXECUTE tstat_miss(-5);
EXECUTE tstat_miss(-6);
SELECT pg_stat_force_next_flush();
SELECT pg_stat_get_blocks_hit('tstat_bl'::regclass) - :idx_before
           = 5 * (pg_relation_size('tstat_bl') / current_setting('block_size')::int)
           AS each_page_once_a_scan,
       current_setting('server_version_num')::int < 160000
           OR io_hits() - :io_before >= tstat_hits() - :tstat_before AS io_hits_counted;
DEALLOCATE tstat_miss;
RESET plan_cache_mode;
RESET enable_seqscan;
DROP FUNCTION io_hits();
DROP FUNCTION tstat_hits();
