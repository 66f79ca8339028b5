-- bloomidx 1.0: the access method and its operator classes.
-- Every name is schema-qualified, so a hostile search_path cannot redirect it.

\echo Use "CREATE EXTENSION bloomidx" to load this file. \quit

CREATE FUNCTION bloomidx_handler(pg_catalog.internal)
RETURNS pg_catalog.index_am_handler
AS 'MODULE_PATHNAME', 'bloomidx_handler'
LANGUAGE C STRICT;

CREATE ACCESS METHOD bloomidx TYPE INDEX HANDLER bloomidx_handler;
COMMENT ON ACCESS METHOD bloomidx IS 'Bloom signature index: equality on any subset of columns';

-- An operator class is the type's "=" as strategy 1 and, as support
-- function 1, a 64-bit hash (type, int8 seed) -> int8 that agrees with
-- that "=".  PostgreSQL's extended hash functions are exactly that, so any
-- type with a hash opclass gets a bloomidx opclass in a few lines.

-- The integers share one family, with cross-type "=", so that
-- int8col = 42 (an int4 literal) uses the index.  bloomidx hashes every
-- integer width as int64, so equal values agree across the family.
CREATE OPERATOR FAMILY integer_ops USING bloomidx;

CREATE OPERATOR CLASS int2_ops
DEFAULT FOR TYPE pg_catalog.int2 USING bloomidx FAMILY integer_ops AS
    OPERATOR 1 pg_catalog.= (pg_catalog.int2, pg_catalog.int2),
    FUNCTION 1 pg_catalog.hashint2extended(pg_catalog.int2, pg_catalog.int8);

CREATE OPERATOR CLASS int4_ops
DEFAULT FOR TYPE pg_catalog.int4 USING bloomidx FAMILY integer_ops AS
    OPERATOR 1 pg_catalog.= (pg_catalog.int4, pg_catalog.int4),
    FUNCTION 1 pg_catalog.hashint4extended(pg_catalog.int4, pg_catalog.int8);

CREATE OPERATOR CLASS int8_ops
DEFAULT FOR TYPE pg_catalog.int8 USING bloomidx FAMILY integer_ops AS
    OPERATOR 1 pg_catalog.= (pg_catalog.int8, pg_catalog.int8),
    FUNCTION 1 pg_catalog.hashint8extended(pg_catalog.int8, pg_catalog.int8);

ALTER OPERATOR FAMILY integer_ops USING bloomidx ADD
    OPERATOR 1 pg_catalog.= (pg_catalog.int2, pg_catalog.int4),
    OPERATOR 1 pg_catalog.= (pg_catalog.int2, pg_catalog.int8),
    OPERATOR 1 pg_catalog.= (pg_catalog.int4, pg_catalog.int2),
    OPERATOR 1 pg_catalog.= (pg_catalog.int4, pg_catalog.int8),
    OPERATOR 1 pg_catalog.= (pg_catalog.int8, pg_catalog.int2),
    OPERATOR 1 pg_catalog.= (pg_catalog.int8, pg_catalog.int4);

CREATE OPERATOR CLASS text_ops
DEFAULT FOR TYPE pg_catalog.text USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.text, pg_catalog.text),
    FUNCTION 1 pg_catalog.hashtextextended(pg_catalog.text, pg_catalog.int8);
