-- bloomidx 1.1 -> 1.2: bloomidx_stats gains a last column, key_pages
-- (dropped and recreated below: a view that depends on it must be dropped
-- first, and EXECUTE granted beyond pg_stat_scan_tables granted again);
-- the library that ships with it writes on-disk format 19 (filter groups
-- of up to 1,016 segments in blocks of 8 bytes, so that a query reads one
-- filter page a key for all of them, where format 12 read one for 15; the
-- slices of small segments packed several a page; the filters of sealed
-- segments gathered into groups of many by VACUUM; small segments' filter
-- keys kept for their merges; filters over the pending pages; heap TIDs in
-- runs).  An index built in an older format is never read as
-- if it were current: every query, insert or VACUUM on it fails with
-- XX002 until REINDEX rebuilds it.  So that no one learns that from a
-- failed query, the update names each such index of this database in a
-- WARNING.  It reads each index's metapage (bloomidx_index_info), waiting
-- at most a second for a lock: an index it cannot check (locked, not
-- built yet, dropped meanwhile) is named in a WARNING that says so, and
-- never fails the update.
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.2'" to load this file. \quit

-- bloomidx_index_info(NULL) raises "needs an index, not NULL" as every
-- other function of the extension does (it was STRICT, and so returned a
-- row of NULLs).
ALTER FUNCTION bloomidx_index_info(pg_catalog.regclass) CALLED ON NULL INPUT;

-- The options check fires under session_replication_role = replica too:
-- skipped there, it let ALTER INDEX store options no build can use, and a
-- CREATE INDEX on a partitioned table without partitions (which builds
-- nothing) keep them silently, for every later partition to ignore.
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;

DO $$
DECLARE
    idx pg_catalog.regclass;
    name pg_catalog.text;
    lock_timeout_was pg_catalog.text := pg_catalog.current_setting('lock_timeout');
BEGIN
    PERFORM pg_catalog.set_config('lock_timeout', '1s', true);
    FOR idx, name IN
        SELECT c.oid::pg_catalog.regclass, pg_catalog.format('%I.%I', n.nspname, c.relname)
        FROM pg_catalog.pg_class c
             JOIN pg_catalog.pg_am a ON a.oid = c.relam
             JOIN pg_catalog.pg_namespace n ON n.oid = c.relnamespace
        WHERE a.amname = 'bloomidx' AND c.relkind = 'i'
          -- other sessions' temporary indexes cannot be read from here
          AND (c.relpersistence <> 't' OR c.relnamespace = pg_catalog.pg_my_temp_schema())
        ORDER BY c.oid
    LOOP
        BEGIN
            PERFORM bloomidx_index_info(idx);
        EXCEPTION
            WHEN index_corrupted THEN
                RAISE WARNING '%', SQLERRM
                    USING HINT = pg_catalog.format('REINDEX INDEX %s; rebuilds it in the current format.', name);
            WHEN OTHERS THEN
                RAISE WARNING 'index % could not be checked for an older on-disk format: %', name, SQLERRM
                    USING HINT = pg_catalog.format('Once its build has ended or its lock is released, SELECT format_version FROM bloomidx_index_info(%L) shows it: an index of an older format than this bloomidx reads needs REINDEX.', name);
        END;
    END LOOP;
    PERFORM pg_catalog.set_config('lock_timeout', lock_timeout_was, true);
END
$$;

-- bloomidx_stats counts the key pages of small segments too (format 16:
-- their rows' filter keys, src/core/page_layout.hpp), in a column of its
-- own, last, so that the columns before it keep their places.
DROP FUNCTION bloomidx_stats(pg_catalog.regclass);
CREATE FUNCTION bloomidx_stats(index pg_catalog.regclass,
    OUT live_rows pg_catalog.int8, OUT dead_rows pg_catalog.int8,
    OUT segments pg_catalog.int4, OUT pending_rows pg_catalog.int8,
    OUT total_pages pg_catalog.int8, OUT directory_pages pg_catalog.int8,
    OUT pending_pages pg_catalog.int8, OUT segment_header_pages pg_catalog.int8,
    OUT slice_pages pg_catalog.int8, OUT tid_pages pg_catalog.int8,
    OUT live_pages pg_catalog.int8, OUT filter_pages pg_catalog.int8,
    OUT free_pages pg_catalog.int8,
    OUT signature_length pg_catalog.int4, OUT column_bits pg_catalog.int4[],
    OUT fill pg_catalog.float8, OUT predicted_fill pg_catalog.float8,
    OUT predicted_rates pg_catalog.float8[], OUT fill_rates pg_catalog.float8[],
    OUT key_pages pg_catalog.int8)
AS 'MODULE_PATHNAME', 'bloomidx_stats'
LANGUAGE C;
REVOKE EXECUTE ON FUNCTION bloomidx_stats(pg_catalog.regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bloomidx_stats(pg_catalog.regclass) TO pg_stat_scan_tables;
