-- bloomidx 1.0: the access method and its operator classes.
-- Every name is schema-qualified, so a hostile search_path cannot redirect
-- it; the two that are not (the handler, the integer family) are this
-- script's own objects, just created in the extension's schema.

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

-- float4 and float8 share one family too: float8col = 1.5::float4 uses the
-- index.  hashfloat4extended widens to float8 before hashing, so equal
-- values of either width hash alike, and both map -0 to 0 and every NaN
-- to one hash (float "=" says -0 = 0 and NaN = NaN).
CREATE OPERATOR FAMILY float_ops USING bloomidx;

CREATE OPERATOR CLASS float4_ops
DEFAULT FOR TYPE pg_catalog.float4 USING bloomidx FAMILY float_ops AS
    OPERATOR 1 pg_catalog.= (pg_catalog.float4, pg_catalog.float4),
    FUNCTION 1 pg_catalog.hashfloat4extended(pg_catalog.float4, pg_catalog.int8);

CREATE OPERATOR CLASS float8_ops
DEFAULT FOR TYPE pg_catalog.float8 USING bloomidx FAMILY float_ops AS
    OPERATOR 1 pg_catalog.= (pg_catalog.float8, pg_catalog.float8),
    FUNCTION 1 pg_catalog.hashfloat8extended(pg_catalog.float8, pg_catalog.int8);

ALTER OPERATOR FAMILY float_ops USING bloomidx ADD
    OPERATOR 1 pg_catalog.= (pg_catalog.float4, pg_catalog.float8),
    OPERATOR 1 pg_catalog.= (pg_catalog.float8, pg_catalog.float4);

-- One family per type from here on.  bloomidx hashes the bytes itself
-- (no function call per value) where equal values always have equal
-- bytes; it recognises those types by their hash function (src/support/value_hash.cpp).
-- Every other type is hashed by its own extended hash function.  bool,
-- date, bytea and timestamptz use the function of a type with the same
-- representation, as PostgreSQL's hash opclasses do (hashcharextended,
-- hashint4extended, hashvarlenaextended, timestamp_hash_extended).

-- numeric: 1.0 = 1.00 and NaN = NaN; hash_numeric_extended ignores the scale.
CREATE OPERATOR CLASS numeric_ops
DEFAULT FOR TYPE pg_catalog.numeric USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.numeric, pg_catalog.numeric),
    FUNCTION 1 pg_catalog.hash_numeric_extended(pg_catalog.numeric, pg_catalog.int8);

CREATE OPERATOR CLASS bool_ops
DEFAULT FOR TYPE pg_catalog.bool USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.bool, pg_catalog.bool),
    FUNCTION 1 pg_catalog.hashcharextended(pg_catalog."char", pg_catalog.int8);

CREATE OPERATOR CLASS char_ops
DEFAULT FOR TYPE pg_catalog."char" USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog."char", pg_catalog."char"),
    FUNCTION 1 pg_catalog.hashcharextended(pg_catalog."char", pg_catalog.int8);

CREATE OPERATOR CLASS name_ops
DEFAULT FOR TYPE pg_catalog.name USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.name, pg_catalog.name),
    FUNCTION 1 pg_catalog.hashnameextended(pg_catalog.name, pg_catalog.int8);

-- text also serves varchar (binary-coercible to text, as for btree and
-- hash).  Under a deterministic collation bloomidx hashes the bytes; under
-- a nondeterministic one ('ABC' = 'abc'), hashtextextended with the
-- column's collation.
CREATE OPERATOR CLASS text_ops
DEFAULT FOR TYPE pg_catalog.text USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.text, pg_catalog.text),
    FUNCTION 1 pg_catalog.hashtextextended(pg_catalog.text, pg_catalog.int8);

-- bpchar: trailing spaces do not count ('ab'::char(5) = 'ab').
CREATE OPERATOR CLASS bpchar_ops
DEFAULT FOR TYPE pg_catalog.bpchar USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.bpchar, pg_catalog.bpchar),
    FUNCTION 1 pg_catalog.hashbpcharextended(pg_catalog.bpchar, pg_catalog.int8);

CREATE OPERATOR CLASS bytea_ops
DEFAULT FOR TYPE pg_catalog.bytea USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.bytea, pg_catalog.bytea),
    FUNCTION 1 pg_catalog.hashvarlenaextended(pg_catalog.internal, pg_catalog.int8);

CREATE OPERATOR CLASS uuid_ops
DEFAULT FOR TYPE pg_catalog.uuid USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.uuid, pg_catalog.uuid),
    FUNCTION 1 pg_catalog.uuid_hash_extended(pg_catalog.uuid, pg_catalog.int8);

CREATE OPERATOR CLASS date_ops
DEFAULT FOR TYPE pg_catalog.date USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.date, pg_catalog.date),
    FUNCTION 1 pg_catalog.hashint4extended(pg_catalog.int4, pg_catalog.int8);

CREATE OPERATOR CLASS time_ops
DEFAULT FOR TYPE pg_catalog.time USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.time, pg_catalog.time),
    FUNCTION 1 pg_catalog.time_hash_extended(pg_catalog.time, pg_catalog.int8);

CREATE OPERATOR CLASS timetz_ops
DEFAULT FOR TYPE pg_catalog.timetz USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.timetz, pg_catalog.timetz),
    FUNCTION 1 pg_catalog.timetz_hash_extended(pg_catalog.timetz, pg_catalog.int8);

CREATE OPERATOR CLASS timestamp_ops
DEFAULT FOR TYPE pg_catalog.timestamp USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.timestamp, pg_catalog.timestamp),
    FUNCTION 1 pg_catalog.timestamp_hash_extended(pg_catalog.timestamp, pg_catalog.int8);

CREATE OPERATOR CLASS timestamptz_ops
DEFAULT FOR TYPE pg_catalog.timestamptz USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.timestamptz, pg_catalog.timestamptz),
    FUNCTION 1 pg_catalog.timestamp_hash_extended(pg_catalog.timestamp, pg_catalog.int8);

-- interval: '1 day' = '24 hours'; interval_hash_extended normalises.
CREATE OPERATOR CLASS interval_ops
DEFAULT FOR TYPE pg_catalog.interval USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.interval, pg_catalog.interval),
    FUNCTION 1 pg_catalog.interval_hash_extended(pg_catalog.interval, pg_catalog.int8);

CREATE OPERATOR CLASS oid_ops
DEFAULT FOR TYPE pg_catalog.oid USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.oid, pg_catalog.oid),
    FUNCTION 1 pg_catalog.hashoidextended(pg_catalog.oid, pg_catalog.int8);

-- inet also serves cidr (binary-coercible to inet, as for btree and hash).
CREATE OPERATOR CLASS inet_ops
DEFAULT FOR TYPE pg_catalog.inet USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.inet, pg_catalog.inet),
    FUNCTION 1 pg_catalog.hashinetextended(pg_catalog.inet, pg_catalog.int8);

CREATE OPERATOR CLASS macaddr_ops
DEFAULT FOR TYPE pg_catalog.macaddr USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.macaddr, pg_catalog.macaddr),
    FUNCTION 1 pg_catalog.hashmacaddrextended(pg_catalog.macaddr, pg_catalog.int8);

CREATE OPERATOR CLASS macaddr8_ops
DEFAULT FOR TYPE pg_catalog.macaddr8 USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.macaddr8, pg_catalog.macaddr8),
    FUNCTION 1 pg_catalog.hashmacaddr8extended(pg_catalog.macaddr8, pg_catalog.int8);

-- jsonb: key order and whitespace do not count; numbers compare as numeric.
CREATE OPERATOR CLASS jsonb_ops
DEFAULT FOR TYPE pg_catalog.jsonb USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.jsonb, pg_catalog.jsonb),
    FUNCTION 1 pg_catalog.jsonb_hash_extended(pg_catalog.jsonb, pg_catalog.int8);

-- Every enum type, and every array whose element type has a hash function
-- (hash_array_extended hashes each element with its type's own hash).
CREATE OPERATOR CLASS enum_ops
DEFAULT FOR TYPE pg_catalog.anyenum USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.anyenum, pg_catalog.anyenum),
    FUNCTION 1 pg_catalog.hashenumextended(pg_catalog.anyenum, pg_catalog.int8);

CREATE OPERATOR CLASS array_ops
DEFAULT FOR TYPE pg_catalog.anyarray USING bloomidx AS
    OPERATOR 1 pg_catalog.= (pg_catalog.anyarray, pg_catalog.anyarray),
    FUNCTION 1 pg_catalog.hash_array_extended(pg_catalog.anyarray, pg_catalog.int8);

-- bloomidx_verify(index): checks a bloomidx index's metapage and every
-- page, and that every row the table shows has its entry; raises the first
-- problem it finds (src/functions/verify.cpp).  Not STRICT: NULL is an error, not a
-- silent NULL.  Runs with the caller's rights, who needs SELECT on the table.
CREATE FUNCTION bloomidx_verify(index pg_catalog.regclass)
RETURNS pg_catalog.void
AS 'MODULE_PATHNAME', 'bloomidx_verify'
LANGUAGE C;

-- bloomidx_false_positive_rate(index, columns): the fraction of the rows
-- that match none of its values which a query testing those columns
-- (numbered from 1) still gets from the index, as the sizing model
-- predicts for the index as built (src/functions/false_positive_rate.cpp).  Not STRICT: NULL is
-- an error.
CREATE FUNCTION bloomidx_false_positive_rate(index pg_catalog.regclass, columns pg_catalog.int4[])
RETURNS pg_catalog.float8
AS 'MODULE_PATHNAME', 'bloomidx_false_positive_rate'
LANGUAGE C STABLE;

-- bloomidx_index_info(index): what the metapage tells of the index: its
-- on-disk format version, its sealed segments (how many, their rows, those
-- VACUUM has not cleared), its pending pages and their rows, how many
-- times its directory changed, and how many segments have filters, which
-- a query asks before their slices (src/functions/index_info.cpp).  Sizes only, so no
-- privilege is needed, as for pg_relation_size.
CREATE FUNCTION bloomidx_index_info(index pg_catalog.regclass,
    OUT format_version pg_catalog.int4, OUT segments pg_catalog.int4,
    OUT segment_rows pg_catalog.int8, OUT live_rows pg_catalog.int8,
    OUT pending_pages pg_catalog.int4, OUT pending_rows pg_catalog.int8,
    OUT generation pg_catalog.int8, OUT filtered_segments pg_catalog.int4)
AS 'MODULE_PATHNAME', 'bloomidx_index_info'
LANGUAGE C STRICT;

-- bloomidx_seal(index): seals the index's pending rows (all but those of
-- the last pending page) into segments, as gin_clean_pending_list does
-- for GIN's pending list; returns how many rows it sealed (src/functions/seal.cpp).
-- Inserts and VACUUM seal on their own once a segment's worth has
-- gathered.  Needs to own the table.
CREATE FUNCTION bloomidx_seal(index pg_catalog.regclass)
RETURNS pg_catalog.int8
AS 'MODULE_PATHNAME', 'bloomidx_seal'
LANGUAGE C;

-- bloomidx_ddl_check(): at the end of CREATE INDEX, ALTER INDEX, ALTER TABLE
-- and CREATE SCHEMA (which may create indexes), checks the options of every
-- bloomidx index the command made or altered against its number of
-- columns, which the options' own check cannot know (src/functions/ddl_check.cpp):
-- options no build could use are refused there, not by every later
-- REINDEX, TRUNCATE or restore of a dump.
CREATE FUNCTION bloomidx_ddl_check()
RETURNS pg_catalog.event_trigger
AS 'MODULE_PATHNAME', 'bloomidx_ddl_check'
LANGUAGE C;

CREATE EVENT TRIGGER bloomidx_ddl_check ON ddl_command_end
WHEN TAG IN ('CREATE INDEX', 'ALTER INDEX', 'ALTER TABLE', 'CREATE SCHEMA')
EXECUTE FUNCTION bloomidx_ddl_check();
