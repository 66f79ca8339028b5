-- bloomidx 1.1 -> 1.2: no new SQL objects; the library that ships with it
-- writes on-disk format 13 (filter groups of up to 127 segments, so that
-- a query reads one filter page a key for 127 segments, where format 12
-- read one for 15).  An index built in an older format is never read as
-- if it were current: every query, insert or VACUUM on it fails with
-- XX002 until REINDEX rebuilds it.  So that no one learns that from a
-- failed query, the update names each such index in this database.
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.2'" to load this file. \quit

DO $$
DECLARE
    idx pg_catalog.regclass;
BEGIN
    FOR idx IN
        SELECT c.oid::pg_catalog.regclass
        FROM pg_catalog.pg_class c JOIN pg_catalog.pg_am a ON a.oid = c.relam
        WHERE a.amname = 'bloomidx' AND c.relkind = 'i'
        ORDER BY c.oid
    LOOP
        BEGIN
            PERFORM bloomidx_index_info(idx);
        EXCEPTION WHEN index_corrupted THEN
            RAISE WARNING '%', SQLERRM
                USING HINT = pg_catalog.format('REINDEX INDEX %s; rebuilds it in the current format.', idx);
        END;
    END LOOP;
END
$$;
