--
-- The same rows give the same index bytes on every PostgreSQL version.
--
-- pg_upgrade keeps index files as they are, so an index built on one
-- major version must read correctly on the next: every hash, every
-- position and every page layout must come out the same.  This test builds
-- indexes over a fixed data set of every shipped type (and arrays), by
-- CREATE INDEX and by INSERT, then after DELETE and VACUUM, and prints a
-- digest of each index's pages (metapage included), leaving out the two
-- fields that say nothing about the contents: the LSN (bytes 1-8) and the
-- checksum (bytes 9-10).  Its expected output is one file for all
-- versions: a version that hashed or laid out anything differently fails
-- here, naming the type.
--
-- Left out: enum (its hash is the value's OID, which differs between
-- clusters; pg_upgrade keeps those OIDs) and nondeterministic (ICU)
-- collations, whose sort keys change with the ICU library, so such an
-- index needs a REINDEX after ICU changes, as PostgreSQL says of its own
-- indexes (doc/versions-and-upgrades.md, "pg_upgrade").
--
CREATE EXTENSION pageinspect;
SET max_parallel_maintenance_workers = 0;	-- one page order
SET default_toast_compression = pglz;
SET TimeZone = 'UTC';
SET DateStyle = 'ISO, YMD';
SET IntervalStyle = 'postgres';
SET extra_float_digits = 1;

-- The digest of index idx: its pages in order, less LSN and checksum.
CREATE FUNCTION index_digest(idx regclass) RETURNS text
LANGUAGE sql AS $$
    SELECT format('%s pages, %s', count(*),
                  md5(string_agg(overlay(get_raw_page(idx::text, b::int)
                                         PLACING '\x00000000000000000000'::bytea FROM 1 FOR 10),
                                 ''::bytea ORDER BY b)))
    FROM generate_series(0, pg_relation_size(idx) / current_setting('block_size')::int - 1) AS b
$$;

-- 3,000 rows; some text long enough to be compressed; every 101 rows
-- (where i % 101 is small) each column takes its edge values in turn:
-- NaN, -0 and infinities, 1.0 and 1.00, empty strings and arrays, a
-- multidimensional array, a 63-byte name, and the like.  Autovacuum stays
-- away: it would change where the later rows go (the free space map).
CREATE TYPE ib_pair AS (a int4, b text);
CREATE TABLE ib (
    id int4, c_i2 int2, c_i4 int4, c_i8 int8, c_f4 float4, c_f8 float8, c_num numeric,
    c_bool bool, c_char "char", c_name name, c_text text, c_varchar varchar(40),
    c_bpchar char(12), c_bytea bytea, c_uuid uuid, c_date date, c_time time, c_timetz timetz,
    c_ts timestamp, c_tstz timestamptz, c_interval interval, c_oid oid, c_inet inet,
    c_cidr cidr, c_macaddr macaddr, c_macaddr8 macaddr8, c_jsonb jsonb, c_i4a int4[],
    c_texta text[], c_rangea int4range[], c_paira ib_pair[])
    WITH (autovacuum_enabled = off, toast.autovacuum_enabled = off);

-- Value i of a column: its edge values first (edge[i % 101 + 1] while
-- there is one), else the ordinary one.
CREATE FUNCTION ib_pick(i int, edge anyarray, ordinary anyelement) RETURNS anyelement
LANGUAGE sql IMMUTABLE AS $$
    SELECT CASE WHEN i % 101 < cardinality(edge) THEN edge[i % 101 + 1] ELSE ordinary END
$$;

CREATE FUNCTION ib_rows(first int, last int) RETURNS SETOF ib
LANGUAGE sql AS $$
    SELECT i,
           ib_pick(i, '{0,32767,-32768}'::int2[], ((i * 37) % 30000 - 15000)::int2),
           ib_pick(i, '{0,2147483647,-2147483648}'::int4[],
                   ((i::int8 * 2654435) % 2000000000 - 1000000000)::int4),
           ib_pick(i, '{0,9223372036854775807,-9223372036854775808}'::int8[],
                   i::int8 * 1234567890123 - (i % 5) * 2000000000000000000),
           ib_pick(i, '{NaN,-0,0,Infinity,-Infinity,1e-45}'::float4[],
                   ((i * 0.37) * (CASE WHEN i % 3 = 0 THEN -1 ELSE 1 END))::float4),
           ib_pick(i, '{NaN,-0,0,Infinity,-Infinity,5e-324}'::float8[], i * 1.0e-3 + i::float8 ^ 3),
           ib_pick(i, '{NaN,1.0,1.00,-0,Infinity,-Infinity,1e-1000}'::numeric[],
                   (i * 10007)::numeric / 97 - 50),
           i % 3 = 0,
           ib_pick(i, ARRAY[''::"char", '\377'::"char"], chr(33 + i % 90)::"char"),
           ib_pick(i, ARRAY[''::name, repeat('n', 63)::name], ('name_' || i * 31)::name),
           ib_pick(i, '{"", " ", "text 5"}'::text[],
                   CASE WHEN i % 250 = 0 THEN repeat(md5(i::text), 200) ELSE 'text ' || i END),
           ib_pick(i, '{"", "vc1 "}'::varchar[], ('vc' || (i % 500))::varchar),
           ib_pick(i, '{"", " ", "c1  "}'::char(12)[], ('c' || (i % 700))::char(12)),
           ib_pick(i, '{"\\x", "\\x00"}'::bytea[], decode(md5('b' || i), 'hex')),
           ib_pick(i, '{00000000-0000-0000-0000-000000000000}'::uuid[], md5('u' || i)::uuid),
           ib_pick(i, '{infinity,-infinity,4713-01-01BC}'::date[], date '2000-01-01' + i * 3),
           ib_pick(i, '{00:00,24:00}'::time[], time '00:00:00' + i * interval '17 seconds'),
           ib_pick(i, '{00:00+00,12:00+14,12:00-15:59}'::timetz[],
                   (time '00:00:00' + i * interval '13 seconds')::timetz),
           ib_pick(i, '{infinity,-infinity}'::timestamp[],
                   timestamp '1999-12-31 00:00:00' + i * interval '1 hour 7 minutes'),
           ib_pick(i, '{infinity,-infinity,2020-02-29 12:00+05}'::timestamptz[],
                   timestamptz '2020-02-29 12:00:00+00' - i * interval '3 days 5 seconds'),
           ib_pick(i, '{0,1 day,24 hours,1 mon,30 days}'::interval[],
                   make_interval(months => i % 14, days => i % 40, secs => i * 1.5)),
           ib_pick(i, '{0,4294967295}'::oid[], (i * 7919)::oid),
           ib_pick(i, '{::1,0.0.0.0/0,10.0.0.1/8}'::inet[],
                   ('10.' || i / 65536 || '.' || (i / 256) % 256 || '.' || i % 256)::inet),
           ib_pick(i, '{0.0.0.0/0,::/0}'::cidr[], ('192.168.' || i % 256 || '.0/24')::cidr),
           ib_pick(i, '{00:00:00:00:00:00,ff:ff:ff:ff:ff:ff}'::macaddr[],
                   ('08:00:2b:' || lpad(to_hex(i % 256), 2, '0') || ':'
                    || lpad(to_hex(i / 256 % 256), 2, '0') || ':01')::macaddr),
           ib_pick(i, '{00:00:00:00:00:00:00:00}'::macaddr8[],
                   ('08:00:2b:ff:fe:' || lpad(to_hex(i % 256), 2, '0') || ':'
                    || lpad(to_hex(i / 256), 2, '0') || ':02')::macaddr8),
           ib_pick(i, ARRAY['{}', '[]', 'null', '{"b": 1, "a": 2}', '1.0', '""']::jsonb[],
                   jsonb_build_object('k', i % 50, 'v', 'x' || i,
                                      'a', jsonb_build_array(i, i % 2 = 0, NULL))),
           CASE i % 101 WHEN 0 THEN '{}' WHEN 1 THEN '{{1,2},{3,4}}' WHEN 2 THEN '[0:1]={1,2}'
                        ELSE ARRAY[i, i % 10, NULL, -i] END,
           CASE i % 101 WHEN 0 THEN '{}' WHEN 1 THEN '{""}' ELSE ARRAY['t' || i % 30, NULL, 'u' || i] END,
           CASE i % 101 WHEN 0 THEN '{}' WHEN 1 THEN '{empty}'
                        ELSE ARRAY[int4range(i, i + 10), int4range(NULL, i)] END,
           CASE i % 101 WHEN 0 THEN '{}' WHEN 1 THEN '{"(,)"}'
                        ELSE ARRAY[ROW(i, 'p' || i % 7)::ib_pair, ROW(NULL, 'q')::ib_pair] END
    FROM generate_series(first, last) AS i
$$;

-- The rows, staged: every 17th value of each column NULL (other rows for
-- each column).  Table ib itself only ever gets INSERTs, so its rows sit
-- at the same TIDs on every version.
CREATE TEMP TABLE ib_staged AS SELECT * FROM ib_rows(1, 3000);
DO $$
DECLARE
    col record;
BEGIN
    FOR col IN SELECT attname, attnum FROM pg_attribute
               WHERE attrelid = 'ib'::regclass AND attnum > 1 ORDER BY attnum LOOP
        EXECUTE format('UPDATE ib_staged SET %I = NULL WHERE id %% 17 = %s', col.attname, col.attnum % 17);
    END LOOP;
END
$$;

-- Rows 1-2000 before the indexes are built (CREATE INDEX hashes them),
-- 2001-3000 after (INSERT does).
INSERT INTO ib SELECT * FROM ib_staged WHERE id <= 2000 ORDER BY id;

-- One index per column, and two over many columns (defaults and options).
DO $$
DECLARE
    col record;
BEGIN
    FOR col IN SELECT attname FROM pg_attribute
               WHERE attrelid = 'ib'::regclass AND attnum > 1 ORDER BY attnum LOOP
        EXECUTE format('CREATE INDEX %I ON ib USING bloomidx (%I)', 'ib_' || col.attname, col.attname);
    END LOOP;
END
$$;
CREATE INDEX ib_many ON ib USING bloomidx
    (c_i4, c_i8, c_f8, c_num, c_text, c_bpchar, c_uuid, c_tstz, c_jsonb, c_i4a);
CREATE INDEX ib_sized ON ib USING bloomidx (c_i2, c_bool, c_name, c_bytea, c_date, c_inet)
    WITH (length = 40, col1 = 3, col2 = 1, col3 = 5, col4 = 7, col5 = 2, col6 = 4);

INSERT INTO ib SELECT * FROM ib_staged WHERE id > 2000 ORDER BY id;

-- The index answers as a sequential scan does (so the digests below are of
-- working indexes).
SELECT index_vs_seqscan('SELECT id FROM ib WHERE c_text = ''text 2999'' AND c_i4a = ARRAY[2999, 9, NULL, -2999]');
SELECT index_vs_seqscan('SELECT id FROM ib WHERE c_tstz = timestamptz ''2020-02-29 12:00:00+00'' - 2345 * interval ''3 days 5 seconds''');

-- Where the rows are (the digests hold their TIDs): were this to change,
-- the heap would have moved them, not the index format changed.
SELECT count(*) AS rows, md5(string_agg(ctid::text, ',' ORDER BY id)) AS heap_tids FROM ib;

SELECT c.relname AS index, index_digest(c.oid) AS built_and_inserted
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'ib'::regclass ORDER BY c.relname;

-- VACUUM's removals.
DELETE FROM ib WHERE id % 7 = 3 OR id BETWEEN 1200 AND 1500;
SELECT wait_for_older_xacts();
VACUUM (INDEX_CLEANUP ON) ib;
SELECT c.relname AS index, index_digest(c.oid) AS after_vacuum
FROM pg_index i JOIN pg_class c ON c.oid = i.indexrelid
WHERE i.indrelid = 'ib'::regclass AND c.relname IN ('ib_many', 'ib_sized', 'ib_c_text', 'ib_c_i4')
ORDER BY c.relname;

-- The init fork of an unlogged index (its metapage).
CREATE UNLOGGED TABLE ibu (a int4, b text);
CREATE INDEX ibu_bl ON ibu USING bloomidx (a, b) WITH (length = 48, col1 = 3, col2 = 5);
SELECT md5(overlay(get_raw_page('ibu_bl', 'init', 0)
                   PLACING '\x00000000000000000000'::bytea FROM 1 FOR 10)) AS init_fork;

DROP FUNCTION ib_rows(int, int);
DROP FUNCTION ib_pick(int, anyarray, anyelement);
DROP TABLE ib, ib_staged, ibu;
DROP TYPE ib_pair;
DROP FUNCTION index_digest(regclass);
DROP EXTENSION pageinspect;
