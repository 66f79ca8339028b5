--
-- Churn (src/storage/merge.cpp): round after round, rows deleted and as many
-- inserted.  VACUUM merges the segments that deletions left mostly dead
-- (or small), and the next segments reuse their pages, so the index stops
-- growing.  After each round, queries are checked against a sequential
-- scan; at the end bloomidx_verify checks every row.
--
SET bloomidx.segment_rows = 1000;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.23);
CREATE TABLE ch (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
INSERT INTO ch
SELECT i, floor(random() * 300), 'v' || floor(random() * 200),
       CASE WHEN random() < 0.03 THEN NULL ELSE floor(random() * 5000) END
FROM generate_series(1, 20000) i;
CREATE INDEX ch_bl ON ch USING bloomidx (a, b, c);
CREATE TABLE ch_size (round int, pages bigint, segments int, segment_rows bigint,
                      every_row_once boolean);
CREATE FUNCTION ch_record() RETURNS void LANGUAGE sql AS $$
    INSERT INTO ch_size
    SELECT (SELECT count(*) FROM ch_size), pg_relation_size('ch_bl') / 8192, segments, segment_rows,
           live_rows + pending_rows = (SELECT count(*) FROM ch)
    FROM bloomidx_index_info('ch_bl')
$$;
SELECT ch_record();

-- A round: 30 % of the rows deleted at random, as many inserted.
\set round 'DELETE FROM ch WHERE random() < 0.3; INSERT INTO ch SELECT i, floor(random() * 300), ''v'' || floor(random() * 200), floor(random() * 5000) FROM generate_series((SELECT max(id) FROM ch) + 1, (SELECT max(id) FROM ch) + 20000 - (SELECT count(*) FROM ch)) i; SELECT wait_for_older_xacts(); VACUUM ch; SELECT ch_record(); SELECT * FROM abc_check(''ch'', 24);'
:round
:round
:round
:round
:round
:round
:round
:round

-- The oldest rows deleted: their segments are removed whole.
DELETE FROM ch WHERE id <= 15000;
SELECT wait_for_older_xacts();
VACUUM ch;
SELECT ch_record();
SELECT * FROM abc_check('ch', 40);
INSERT INTO ch SELECT i, floor(random() * 300), 'v' || floor(random() * 200), floor(random() * 5000)
FROM generate_series((SELECT max(id) FROM ch) + 1, (SELECT max(id) FROM ch) + 20000 - (SELECT count(*) FROM ch)) i;
SELECT wait_for_older_xacts();
VACUUM ch;
SELECT ch_record();
SELECT * FROM abc_check('ch', 40);
SELECT bloomidx_verify('ch_bl');

-- Every round kept each live row once; the index stopped growing after the
-- first rounds (without merging, each round would add about 6 segments,
-- and the last round would end up 50 % bigger than the fourth): no later
-- round passes the largest of the first four by more than 15 % (a round's
-- size swings with what its VACUUM merged: 160 to 230 pages); it stayed
-- within 2.5 times its fresh build, and kept its segments about as many.
SELECT bool_and(every_row_once) AS every_row_once,
       max(pages) FILTER (WHERE round > 4) <= 1.15 * max(pages) FILTER (WHERE round BETWEEN 1 AND 4) AS stopped_growing,
       max(pages) < 2.5 * min(pages) FILTER (WHERE round = 0) AS bounded,
       max(segments) <= 2 * min(segments) FILTER (WHERE round = 0) AS segments_bounded
FROM ch_size;

-- Several merges in one VACUUM (each merge group's sources into a segment
-- of its own, one after another): two thirds of every segment's rows
-- deleted, VACUUM merges them about three at a time.  Every value of a,
-- through the index and by a sequential scan, and every row's entry.
SELECT segments AS segments_before FROM bloomidx_index_info('ch_bl') \gset
DELETE FROM ch WHERE id % 3 <> 0;
SELECT wait_for_older_xacts();
VACUUM ch;
SELECT :segments_before - segments >= 6 AS several_merges FROM bloomidx_index_info('ch_bl');
SELECT count(*) AS values_checked, count(*) FILTER (WHERE r NOT LIKE 'same%') AS differences
FROM (SELECT index_vs_seqscan('SELECT id FROM ch WHERE a = ' || v) r
      FROM generate_series(0, 299) v) q;
SELECT bloomidx_verify('ch_bl');
DROP TABLE ch, ch_size;
DROP FUNCTION ch_record();

-- The whole table deleted and loaded again, cycle after cycle, with many
-- small segments (more than 60, twice the free list's slots): each
-- segment is written in one extent of blocks, the extents of segments
-- written one after another join, and the next load takes them, so the
-- index stays at its first cycle's size.
SET bloomidx.segment_rows = 64;
CREATE TABLE fc (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
CREATE INDEX fc_bl ON fc USING bloomidx (a, b, c);
CREATE TABLE fc_size (cycle int, pages bigint, segments int);
\set cycle 'INSERT INTO fc SELECT g, g % 300, ''v'' || g % 100, (g * 7919) % 1000 FROM generate_series(1, 40000) g; SELECT * FROM abc_check(''fc'', 12); INSERT INTO fc_size SELECT (SELECT count(*) FROM fc_size), pg_relation_size(''fc_bl'') / 8192, segments FROM bloomidx_index_info(''fc_bl''); DELETE FROM fc; SELECT wait_for_older_xacts(); VACUUM fc;'
:cycle
:cycle
:cycle
:cycle
:cycle
SELECT bloomidx_verify('fc_bl');
SELECT min(segments) > 60 AS many_segments,
       max(pages) FILTER (WHERE cycle > 0) <= min(pages) FILTER (WHERE cycle = 0) + 2 AS no_growth
FROM fc_size;
DROP TABLE fc, fc_size;

-- Nearly all rows deleted, the table loaded again and sealed at once, cycle
-- after cycle: the load's pending pages come from the pages the last
-- cycle's pending pages left, which VACUUM's sweep leaves to the free space
-- map while the free list has blocks for the next segments (gathering them
-- onto the list grew the index by a load's pending pages every cycle).
SET bloomidx.segment_rows = 65024;
CREATE TABLE rc (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
INSERT INTO rc SELECT g, g % 300, 'v' || g % 211, g % 5003 FROM generate_series(1, 50000) g;
CREATE INDEX rc_bl ON rc USING bloomidx (a, b, c) WITH (false_positive_rate = 0.05);
CREATE TABLE rc_size (cycle int, pages bigint);
\set cycle 'DELETE FROM rc WHERE id % 1000 <> 0; SELECT wait_for_older_xacts(); VACUUM rc; INSERT INTO rc SELECT g, g % 300, ''v'' || g % 211, g % 5003 FROM generate_series(1, 50000) g WHERE g % 1000 <> 0; SELECT bloomidx_seal(''rc_bl'') >= 0 AS sealed; SELECT * FROM abc_check(''rc'', 8); INSERT INTO rc_size SELECT (SELECT count(*) FROM rc_size), pg_relation_size(''rc_bl'') / 8192;'
:cycle
:cycle
:cycle
:cycle
:cycle
:cycle
SELECT bloomidx_verify('rc_bl');
-- (Give or take a small segment: the rows each cycle keeps merge into a
-- segment of a few pages, packed, which may land past the others.)
SELECT max(pages) FILTER (WHERE cycle >= 2) <= min(pages) FILTER (WHERE cycle = 2) + 8 AS no_growth,
       live_rows + pending_rows = (SELECT count(*) FROM rc) AS every_row_once
FROM rc_size, bloomidx_index_info('rc_bl') GROUP BY live_rows, pending_rows;
DROP TABLE rc, rc_size;

-- The whole table deleted and loaded again with no VACUUM between, in
-- small segments: the load seals its segments while the deleted rows'
-- still stand, then VACUUM removes those, and their extents, more than
-- the free list has slots for, go to the free space map.  The sweep took
-- the list for blocks enough (four segments of this session's size: a
-- handful of small extents) and counted the gaps it joins to listed
-- extents against the slots left for runs, so it listed no run again,
-- and each load's segments went past the index's end: 505 pages grew by
-- about 540 a cycle (6,967 after 12; here 691 to 2,348 over 8 cycles).
-- The index now keeps about what a load and the rows it replaces take
-- (668 to 874 pages here).
SET bloomidx.segment_rows = 1000;
CREATE TABLE dl (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
INSERT INTO dl SELECT g, (g * 8) % 42, 'v' || (g * 15) % 79, (g * 22) % 116 FROM generate_series(1, 60000) g;
CREATE INDEX dl_bl ON dl USING bloomidx (a, b, c);
CREATE TABLE dl_size (cycle int, pages bigint);
SELECT 'DELETE FROM dl',
       'INSERT INTO dl SELECT g, (g * 8) % 42, ''v'' || (g * 15) % 79, (g * 22) % 116 FROM generate_series(1, 60000) g',
       'SELECT wait_for_older_xacts()', 'VACUUM dl',
       'INSERT INTO dl_size SELECT (SELECT count(*) FROM dl_size), pg_relation_size(''dl_bl'') / 8192'
FROM generate_series(1, 8) \gexec
SELECT * FROM abc_check('dl', 8);
SELECT bloomidx_verify('dl_bl');
SELECT max(pages) <= 1.5 * min(pages) FILTER (WHERE cycle = 0) AS no_growth FROM dl_size;
DROP TABLE dl, dl_size;
RESET bloomidx.segment_rows;
