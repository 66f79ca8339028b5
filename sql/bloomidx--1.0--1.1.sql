-- bloomidx 1.0 -> 1.1: functions to look inside an index and to size one
-- before building it.  The on-disk format is unchanged: indexes built by
-- 1.0 keep answering after ALTER EXTENSION bloomidx UPDATE, and a fresh
-- CREATE EXTENSION installs 1.0 and then this script.
\echo Use "ALTER EXTENSION bloomidx UPDATE TO '1.1'" to load this file. \quit

-- bloomidx_advise(tab, columns, false_positive_rate): sizes a bloomidx
-- index on tab's columns from the statistics ANALYZE gathered, holding each
-- column to false_positive_rate or to a tenth of the share of the rows a
-- typical equality on it matches, whichever is higher; returns the CREATE
-- INDEX that builds it, the signature length, the predicted size in bytes,
-- and per column (in the order given) its bits, its predicted
-- false-positive rate and a word where an index serves it poorly
-- (src/functions/advise.cpp).  Needs SELECT on the columns, as pg_stats does.
CREATE FUNCTION bloomidx_advise(tab pg_catalog.regclass, columns pg_catalog.text[],
    false_positive_rate pg_catalog.float8 DEFAULT 0.001,
    OUT create_index pg_catalog.text, OUT length pg_catalog.int4,
    OUT predicted_size pg_catalog.int8, OUT column_names pg_catalog.text[],
    OUT bits pg_catalog.int4[], OUT false_positive_rates pg_catalog.float8[],
    OUT advice pg_catalog.text[])
AS 'MODULE_PATHNAME', 'bloomidx_advise'
LANGUAGE C STABLE;

-- bloomidx_stats(index): what the index holds, read page by page, as
-- pgstattuple's pgstatindex reads a btree (src/functions/stats.cpp): its live rows
-- (those a scan tests: segments' rows whose live bit is set, and every
-- pending row) and dead ones (segments' rows whose live bit VACUUM
-- cleared; the index learns of deletions only through VACUUM), its
-- segments and pending rows, its pages by kind (with the metapage they
-- add up to total_pages), its sizing (signature_length bits, column_bits
-- per column in index column order), and the measured fill of its live
-- rows' signatures (the mean fraction of their bits set) next to the fill
-- the sizing model expects, with each column's one-column false-positive
-- rate as the model predicts it (bloomidx_false_positive_rate) and as the
-- measured fill implies it: where they part, the rows are not what the
-- index was sized for.  Not STRICT: NULL is an error.
--
-- It reads every page of the index, as pgstatindex does; so, as
-- pgstattuple 1.5 does for pgstatindex, EXECUTE is revoked from PUBLIC
-- and granted to pg_stat_scan_tables (its members may run such scans),
-- and a superuser may grant it to others.
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
    OUT predicted_rates pg_catalog.float8[], OUT fill_rates pg_catalog.float8[])
AS 'MODULE_PATHNAME', 'bloomidx_stats'
LANGUAGE C;
REVOKE EXECUTE ON FUNCTION bloomidx_stats(pg_catalog.regclass) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bloomidx_stats(pg_catalog.regclass) TO pg_stat_scan_tables;

-- bloomidx_page_items(index, blkno): what block blkno of the index holds,
-- for debugging, as pageinspect's bt_page_items and gin_leafpage_items
-- show a page (src/functions/page_items.cpp): a first row for the page itself
-- (item NULL, item_kind 'page'), then one per item: its number on the
-- page (item), what it is (item_kind), and as it applies a heap TID, its
-- live bit, its bits (a signature, a slice, live bits, a filter block
-- row: the string's character i + 1 is bit i) and a pending row's filter
-- keys; detail says the rest in words.  Not STRICT: NULL is an error.
--
-- Raw pages bypass column privileges and row-level security (the
-- signatures of a column with few values are reversed by hashing each
-- value), which is why pageinspect is for superusers.  This is for
-- superusers and members of pg_read_server_files, who can read the
-- index's file with pg_read_binary_file anyway: checked in C, so that a
-- GRANT EXECUTE to anyone else does not open it; EXECUTE is also revoked
-- from PUBLIC and granted to pg_read_server_files, so that the catalog
-- says who may run it.
CREATE FUNCTION bloomidx_page_items(index pg_catalog.regclass, blkno pg_catalog.int4,
    OUT page_kind pg_catalog.text, OUT item pg_catalog.int4, OUT item_kind pg_catalog.text,
    OUT tid pg_catalog.tid, OUT live pg_catalog.bool, OUT bits pg_catalog.varbit,
    OUT keys pg_catalog.int8[], OUT detail pg_catalog.text)
RETURNS SETOF record
AS 'MODULE_PATHNAME', 'bloomidx_page_items'
LANGUAGE C;
REVOKE EXECUTE ON FUNCTION bloomidx_page_items(pg_catalog.regclass, pg_catalog.int4) FROM PUBLIC;
GRANT EXECUTE ON FUNCTION bloomidx_page_items(pg_catalog.regclass, pg_catalog.int4) TO pg_read_server_files;
