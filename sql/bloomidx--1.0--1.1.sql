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
-- (src/advise.cpp).  Needs SELECT on the columns, as pg_stats does.
CREATE FUNCTION bloomidx_advise(tab pg_catalog.regclass, columns pg_catalog.text[],
    false_positive_rate pg_catalog.float8 DEFAULT 0.001,
    OUT create_index pg_catalog.text, OUT length pg_catalog.int4,
    OUT predicted_size pg_catalog.int8, OUT column_names pg_catalog.text[],
    OUT bits pg_catalog.int4[], OUT false_positive_rates pg_catalog.float8[],
    OUT advice pg_catalog.text[])
AS 'MODULE_PATHNAME', 'bloomidx_advise'
LANGUAGE C STABLE;
