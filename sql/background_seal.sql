--
-- Seals in background workers (src/seal_worker.cpp): an insert that finds
-- a segment's worth pending asks for a worker and goes on, and the worker
-- seals.  `make installcheck` runs with bloomidx.background_seal off (the
-- Makefile's PGOPTIONS), so that the other files' outputs do not hang on
-- when a worker runs; here it is on.  After every step every query is
-- checked against a sequential scan and bloomidx_verify checks every row.
--
SET bloomidx.background_seal = on;
SET bloomidx.segment_rows = 1000;
SELECT setseed(0.29);
CREATE TABLE bs (id int, a int, b text, c int4) WITH (autovacuum_enabled = off);
INSERT INTO bs SELECT i, floor(random() * 200), 'w' || floor(random() * 150), floor(random() * 3000)
FROM generate_series(1, 200) i;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX bs_bl ON bs USING bloomidx (a, b, c);

-- Waits, up to a minute, until no seal worker runs and at most
-- max_pending rows are pending (a worker asked for but not yet started is
-- not seen: what follows holds either way).
CREATE FUNCTION bs_settled(idx regclass, max_pending int) RETURNS boolean
LANGUAGE plpgsql AS $$
BEGIN
    FOR i IN 1..600 LOOP
        PERFORM pg_stat_clear_snapshot();
        IF NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'bloomidx seal')
           AND (SELECT pending_rows <= max_pending FROM bloomidx_index_info(idx)) THEN
            RETURN true;
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RETURN false;
END
$$;
CREATE FUNCTION bs_check(tbl text, idx regclass, n int) RETURNS TABLE (queries bigint, differences bigint,
                                                                     every_row_once boolean)
LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bloomidx_verify(idx);
    RETURN QUERY EXECUTE format(
        'SELECT q.queries, q.differences,
                (SELECT live_rows + pending_rows = (SELECT count(*) FROM %I) FROM bloomidx_index_info(%L))
         FROM abc_check(%L, %s) q', tbl, idx, tbl, n);
END
$$;

-- Past the threshold (a segment's rows but a page's) and short of where
-- the insert seals itself (a segment's worth more): the statement asks
-- for a worker (the DEBUG message) and leaves it the seal, one segment.
SET client_min_messages = debug1;
INSERT INTO bs SELECT i, floor(random() * 200), 'w' || floor(random() * 150), floor(random() * 3000)
FROM generate_series(201, 1400) i;
RESET client_min_messages;
SELECT bs_settled('bs_bl', 999) AS settled;
SELECT segments AS sealed_by_a_worker FROM bloomidx_index_info('bs_bl');
SELECT * FROM bs_check('bs', 'bs_bl', 40);

-- Many segments' worth in one statement: workers seal one after another,
-- and the insert itself where they fall a segment behind, so that what is
-- left pending is under the threshold and a segment's worth more (and the
-- tail page).
INSERT INTO bs SELECT i, floor(random() * 200), 'w' || floor(random() * 150), floor(random() * 3000)
FROM generate_series(1401, 20000) i;
SELECT * FROM bs_check('bs', 'bs_bl', 40);
SELECT bs_settled('bs_bl', 2 * 1000 + 400) AS settled;
SELECT segments >= 15 AS sealed FROM bloomidx_index_info('bs_bl');
SELECT * FROM bs_check('bs', 'bs_bl', 40);

-- Deletes and VACUUM between the inserts.  (A worker's transaction still
-- open, its snapshot older than the DELETE, would keep the deleted rows
-- from VACUUM and in the index's counts: a CI run under load saw it.)
DELETE FROM bs WHERE id % 3 = 0;
SELECT wait_for_older_xacts();
VACUUM bs;
INSERT INTO bs SELECT i, floor(random() * 200), 'w' || floor(random() * 150), floor(random() * 3000)
FROM generate_series(20001, 26000) i;
SELECT bs_settled('bs_bl', 2 * 1000 + 400) AS settled;
SELECT * FROM bs_check('bs', 'bs_bl', 40);

-- A table this transaction holds against an insert's lock (LOCK TABLE,
-- ALTER TABLE) would keep a worker waiting until the commit: the insert
-- asks for none and seals itself.
BEGIN;
LOCK TABLE bs IN SHARE MODE;
SELECT segments AS segments_before FROM bloomidx_index_info('bs_bl') \gset
SET client_min_messages = debug1;
INSERT INTO bs SELECT i, floor(random() * 200), 'w' || floor(random() * 150), floor(random() * 3000)
FROM generate_series(26001, 28500) i;
RESET client_min_messages;
SELECT segments > :segments_before AS sealed_in_the_insert FROM bloomidx_index_info('bs_bl');
COMMIT;

-- A file new in this transaction (TRUNCATE here; CREATE INDEX alike) is
-- one a worker cannot see until the commit: the insert seals it itself.
BEGIN;
TRUNCATE bs;
SET client_min_messages = debug1;
INSERT INTO bs SELECT i, floor(random() * 200), 'w' || floor(random() * 150), floor(random() * 3000)
FROM generate_series(1, 1400) i;
RESET client_min_messages;
SELECT segments AS sealed_in_the_insert FROM bloomidx_index_info('bs_bl');
COMMIT;
SELECT * FROM bs_check('bs', 'bs_bl', 40);

-- A temporary table's pages are its backend's alone: the insert seals them.
CREATE TEMP TABLE bs_temp (id int, a int, b text, c int4);
CREATE INDEX bs_temp_bl ON bs_temp USING bloomidx (a, b, c);
SET client_min_messages = debug1;
INSERT INTO bs_temp SELECT i, i % 200, 'w' || (i % 150), i FROM generate_series(1, 1400) i;
RESET client_min_messages;
SELECT segments AS sealed_in_the_insert FROM bloomidx_index_info('bs_temp_bl');
SELECT * FROM bs_check('bs_temp', 'bs_temp_bl', 40);
DROP TABLE bs_temp;

-- A table its owner, not a superuser, fills: a worker seals it.
CREATE ROLE bs_owner;
CREATE TABLE bs_owned (id int, a int, b text, c int4) WITH (autovacuum_enabled = off);
ALTER TABLE bs_owned OWNER TO bs_owner;
CREATE INDEX bs_owned_bl ON bs_owned USING bloomidx (a, b, c);
SET ROLE bs_owner;
INSERT INTO bs_owned SELECT i, i % 200, 'w' || (i % 150), i FROM generate_series(1, 1400) i;
RESET ROLE;
SELECT bs_settled('bs_owned_bl', 999) AS settled;
SELECT segments AS sealed_by_a_worker FROM bloomidx_index_info('bs_owned_bl');
SELECT * FROM bs_check('bs_owned', 'bs_owned_bl', 40);

-- An index dropped before or while its worker runs: the worker finds none,
-- or has the drop wait for its seal; the server carries on.
INSERT INTO bs_owned SELECT i, i % 200, 'w' || (i % 150), i FROM generate_series(1401, 2800) i;
DROP INDEX bs_owned_bl;
SELECT bs_settled('bs_bl', 2 * 1000 + 400) AS settled;
SELECT count(*) FROM bs_owned WHERE a = 7;

-- A seal drops the pending groups (their run must stay a run of the
-- list), and gives the full pages it leaves pending theirs again: before,
-- a query read those row by row until later inserts summarized them, 32
-- pages for every 4 (now every page) they linked (a worker's seal after 100,000 rows into
-- a table of 10 M left 190 pages that a miss read).  Long signatures (99
-- rows a page): 15,000 rows at the default segment size (no seal; the
-- inserts summarize their pages), then, with segments of 10,000 rows, a
-- one-page INSERT, after which one seal is due and about 50 full pages
-- are left: sealed by a worker, then (another table) by the INSERT
-- itself.  A one-page statement cannot summarize them on its own.
CREATE FUNCTION bs_groups_case(tbl text) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE format('CREATE TABLE %I (id int, a int, b text, c int4) WITH (autovacuum_enabled = off)', tbl);
    EXECUTE format('CREATE INDEX %I ON %I USING bloomidx (a, b, c) WITH (length = 512)', tbl || '_bl', tbl);
    SET LOCAL bloomidx.segment_rows = 65024;
    EXECUTE format('INSERT INTO %I SELECT i, floor(random() * 2000), ''w'' || floor(random() * 300), floor(random() * 40)
                    FROM generate_series(1, 15000) i', tbl);
    SET LOCAL bloomidx.segment_rows = 10000;
    EXECUTE format('INSERT INTO %I SELECT i, floor(random() * 2000), ''w'' || floor(random() * 300), floor(random() * 40)
                    FROM generate_series(15001, 15099) i', tbl);
END
$$;
-- Once no worker runs: the segments, whether about 50 pages are left, and
-- whether a miss reads fewer than a quarter of them.
CREATE FUNCTION bs_groups_state(tbl text) RETURNS TABLE (settled boolean, sealed int,
                                                         pages_left boolean, miss_reads_few boolean)
LANGUAGE plpgsql AS $$
BEGIN
    settled := bs_settled((tbl || '_bl')::regclass, 9000);
    SELECT i.segments, i.pending_pages > 40,
           index_buffers(format('SELECT * FROM %I WHERE a = 99999 AND b = ''none''', tbl)) <
             i.pending_pages / 4
    INTO sealed, pages_left, miss_reads_few
    FROM bloomidx_index_info((tbl || '_bl')::regclass) i;
    RETURN NEXT;
END
$$;
SELECT bs_groups_case('bs_worker');
SELECT * FROM bs_groups_state('bs_worker');
SELECT * FROM bs_check('bs_worker', 'bs_worker_bl', 40);
SET bloomidx.background_seal = off;
SELECT bs_groups_case('bs_insert');
SELECT * FROM bs_groups_state('bs_insert');
SELECT * FROM bs_check('bs_insert', 'bs_insert_bl', 40);
SET bloomidx.background_seal = on;
DROP TABLE bs_worker, bs_insert;
DROP FUNCTION bs_groups_case(text), bs_groups_state(text);

-- Off, the inserts seal in the statement, as before.
SET bloomidx.background_seal = off;
INSERT INTO bs SELECT i, floor(random() * 200), 'w' || floor(random() * 150), floor(random() * 3000)
FROM generate_series(1401, 2600) i;
SELECT segments AS sealed_in_the_insert FROM bloomidx_index_info('bs_bl');
SELECT * FROM bs_check('bs', 'bs_bl', 40);

DROP TABLE bs, bs_owned;
DROP ROLE bs_owner;
DROP FUNCTION bs_settled(regclass, int), bs_check(text, regclass, int);
RESET bloomidx.segment_rows;
RESET bloomidx.background_seal;
