--
-- A full directory: an index holds at most 32,228 segments (about 2
-- billion rows at the default segment size).  Past that a build leaves
-- the rest of its rows pending, and no seal takes pending rows until
-- VACUUM merges segments.  What such a build, bloomidx_seal() and VACUUM
-- leave pending gets pending filters (a build gave them none, so every
-- query read every page row by row), and they warn (they said nothing).
-- bloomidx.debug_max_segments lowers the limit to 40 here, and
-- bloomidx.segment_rows makes 64-row segments: 2,560 rows fill it.
--
SET bloomidx.segment_rows = 64;
SET bloomidx.debug_max_segments = 40;
-- (A seal worker would not know the lowered limit.)
SET bloomidx.background_seal = off;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.5);
CREATE TABLE tfull WITH (autovacuum_enabled = off) AS
SELECT g AS id, (random() * 100000)::int4 AS a, (random() * 100000)::int4 AS b,
       (random() * 1000)::int4 AS c
FROM generate_series(1, 40000) g;
CREATE INDEX tfull_bl ON tfull USING bloomidx (a, b, c);
SELECT segments, pending_rows FROM bloomidx_stats('tfull_bl');

-- The pages the build left pending have filters: a 2-column miss reads a
-- few pages, not the whole list.
SELECT pending_pages > 30 AS many_pending FROM bloomidx_stats('tfull_bl');
SELECT index_buffers('SELECT * FROM tfull WHERE a = -1 AND b = -1')
       < (SELECT pending_pages / 4 FROM bloomidx_stats('tfull_bl')) AS miss_skips_pending;
SELECT index_vs_seqscan('SELECT * FROM tfull WHERE a = ' || a || ' AND b = ' || b) FROM tfull WHERE id = 30000;
SELECT index_vs_seqscan('SELECT * FROM tfull WHERE c = ' || c) FROM tfull WHERE id = 100;
SELECT index_vs_seqscan('SELECT * FROM tfull WHERE a IN (' || a || ', 7, 99) OR c = 5') FROM tfull WHERE id = 39000;

-- Rows inserted stay pending, without a word (an INSERT does not warn);
-- bloomidx_seal() seals nothing, and says why.
INSERT INTO tfull SELECT g, (random() * 100000)::int4, (random() * 100000)::int4, (random() * 1000)::int4
FROM generate_series(40001, 50000) g;
SELECT bloomidx_seal('tfull_bl');
SELECT segments, pending_rows FROM bloomidx_stats('tfull_bl');
SELECT index_vs_seqscan('SELECT * FROM tfull WHERE b = ' || b) FROM tfull WHERE id = 45000;

-- VACUUM with nothing to remove merges the small segments, which makes
-- room, and seals pending rows into it until the directory is full again:
-- it warns, and what it left pending has filters again (it dropped them
-- to seal).
VACUUM tfull;
SELECT segments, pending_rows < 47440 AS sealed_some FROM bloomidx_stats('tfull_bl');
SELECT index_buffers('SELECT * FROM tfull WHERE a = -1 AND b = -1')
       < (SELECT pending_pages / 4 FROM bloomidx_stats('tfull_bl')) AS miss_skips_pending;
SELECT index_vs_seqscan('SELECT * FROM tfull WHERE a = ' || a || ' AND c = ' || c) FROM tfull WHERE id = 47000;

-- A parallel build past the limit warns too (or a serial one, where no
-- worker is free).  Its pending pages have filters up to the next
-- participant's partly filled page, which inserts fill.
SET max_parallel_maintenance_workers = 2;
SET min_parallel_table_scan_size = 0;
\set VERBOSITY terse
REINDEX INDEX tfull_bl;
\set VERBOSITY default
SELECT segments, pending_pages > 30 AS many_pending FROM bloomidx_stats('tfull_bl');
SELECT index_vs_seqscan('SELECT * FROM tfull WHERE c = ' || c) FROM tfull WHERE id = 44444;
SELECT bloomidx_verify('tfull_bl');

RESET bloomidx.debug_max_segments;
RESET bloomidx.background_seal;
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
RESET min_parallel_table_scan_size;
DROP TABLE tfull;
