--
-- Shrinking (src/storage/truncate.cpp, and merge.cpp's moves): after a
-- mass DELETE, VACUUM merges what is left, moves it to free blocks before
-- the free pages, and gives the free pages that then end the index back
-- to the file system.  Queries are checked against a sequential scan, and
-- bloomidx_verify checks every row.
--
SET bloomidx.segment_rows = 2000;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.31);
CREATE TABLE sh (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
INSERT INTO sh SELECT i, floor(random() * 300), 'v' || floor(random() * 200),
                      floor(random() * 5000)
FROM generate_series(1, 60000) i;
CREATE INDEX sh_bl ON sh USING bloomidx (a, b, c);
CREATE TABLE sh_size AS SELECT pg_relation_size('sh_bl') / 8192 AS built;

-- 90 % of the rows deleted: the segments merged, moved to the front, and
-- the file within twice a fresh build of what is left.
DELETE FROM sh WHERE random() < 0.9;
SELECT wait_for_older_xacts();
VACUUM sh;
SELECT * FROM abc_check('sh', 40);
SELECT bloomidx_verify('sh_bl');
CREATE INDEX sh_fresh ON sh USING bloomidx (a, b, c);
SELECT pg_relation_size('sh_bl') / 8192 < built / 4 AS shrank,
       pg_relation_size('sh_bl') <= 2 * pg_relation_size('sh_fresh') AS within_twice_fresh,
       live_rows + pending_rows = (SELECT count(*) FROM sh) AS every_row_once
FROM sh_size, bloomidx_index_info('sh_bl');
DROP INDEX sh_fresh;

-- 99 % gone: one merged segment of a few hundred rows is left (a fresh
-- build would keep them as pending rows), the file under a 25th of its build.
DELETE FROM sh WHERE random() < 0.9;
SELECT wait_for_older_xacts();
VACUUM sh;
SELECT * FROM abc_check('sh', 40);
SELECT bloomidx_verify('sh_bl');
SELECT pg_relation_size('sh_bl') / 8192 < built / 25 AS shrank, segments,
       live_rows + pending_rows = (SELECT count(*) FROM sh) AS every_row_once
FROM sh_size, bloomidx_index_info('sh_bl');

-- The shrunk index takes new rows (pending pages, then segments past its
-- new end) and finds them.
INSERT INTO sh SELECT i, floor(random() * 300), 'v' || floor(random() * 200),
                      floor(random() * 5000)
FROM generate_series(60001, 70000) i;
SELECT bloomidx_seal('sh_bl') > 0 AS sealed;
SELECT * FROM abc_check('sh', 40);
DELETE FROM sh WHERE id > 60000 AND id % 2 = 0;
SELECT wait_for_older_xacts();
VACUUM sh;
SELECT * FROM abc_check('sh', 40);
SELECT bloomidx_verify('sh_bl');
SELECT live_rows + pending_rows = (SELECT count(*) FROM sh) AS every_row_once
FROM bloomidx_index_info('sh_bl');
DROP TABLE sh, sh_size;

-- A table whose vacuum_truncate is off keeps its index's length too (it
-- is set to keep the lock's replay off standbys); set on, VACUUM truncates.
CREATE TABLE sn (id int, a int) WITH (autovacuum_enabled = off, vacuum_truncate = false);
INSERT INTO sn SELECT i, i % 97 FROM generate_series(1, 30000) i;
CREATE INDEX sn_bl ON sn USING bloomidx (a, id);
CREATE TABLE sn_size AS SELECT pg_relation_size('sn_bl') / 8192 AS built;
DELETE FROM sn WHERE id % 100 <> 0;
SELECT wait_for_older_xacts();
VACUUM sn;
SELECT pg_relation_size('sn_bl') / 8192 >= built AS kept_its_length FROM sn_size;
ALTER TABLE sn SET (vacuum_truncate = true);
VACUUM sn;
SELECT pg_relation_size('sn_bl') / 8192 < built / 4 AS truncated FROM sn_size;
SELECT index_vs_seqscan('SELECT id FROM sn WHERE a = ' || v) FROM (VALUES (0), (3), (96)) q(v);
DROP TABLE sn, sn_size;
