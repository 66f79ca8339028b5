--
-- CREATE INDEX's progress: pg_stat_progress_create_index shows a bloomidx
-- build's steps as "building index: <name>" (src/bloomidx.h, BuildPhase),
-- numbered on from PostgreSQL's "initializing" (1) as btree's are; every
-- other number has no name.  test/t/012_progress.pl watches builds go
-- through them.
--
SELECT oid AS bloomidx_am FROM pg_am WHERE amname = 'bloomidx' \gset
SELECT n, pg_indexam_progress_phasename(:bloomidx_am, n) AS name
FROM unnest(ARRAY[-2147483648, -1, 0, 1, 2, 3, 4, 5, 6, 7, 100, 2147483647]) AS n;

-- A NULL number, or an access method that is not one: no name.
SELECT pg_indexam_progress_phasename(:bloomidx_am, NULL) AS null_number,
       pg_indexam_progress_phasename(0, 2) AS no_access_method;

-- Beside btree's (numbered alike) and hash's (which names none).
SELECT amname, n, pg_indexam_progress_phasename(oid, n) AS name
FROM pg_am, generate_series(1, 5) AS n
WHERE amname IN ('bloomidx', 'btree', 'hash')
ORDER BY amname, n;
