--
-- Randomized check of every type bloomidx ships an operator class for:
-- one table with a column of each type (bpchar both as char(4) and
-- unbounded, text also under a nondeterministic collation: 31 columns),
-- two bloomidx indexes over them, and thousands of random queries on
-- random subsets of the columns, each answered through the index and by
-- a sequential scan (index_vs_seqscan);
-- the answers must be identical, before and after DELETE, UPDATE, VACUUM
-- and INSERT.  A query mixes equalities, IN lists and = ANY (ARRAY[...]),
-- IS NULL and IS NOT NULL.
--
-- Every column takes its values from a small pool (so that random queries
-- often find rows).  Each value of the pool has several spellings that are
-- equal by the column's "=" but are written, typed or stored differently:
-- -0 and 0 and NaN with either sign, float4 keys on a float8 column and the
-- other way round, int2/int4/int8 keys on every integer column, numeric
-- 1.0 and 1.00, char(n) with and without trailing spaces, '1 day' and
-- '24 hours', jsonb with its keys in another order, case and accents under
-- the nondeterministic collation, ...  Rows store a random spelling and
-- queries use a random spelling, so a hash that disagreed with "=" would
-- lose rows and show up as a difference.  Seeded, so a failure can be
-- replayed: a difference is printed with its query (RAISE NOTICE).
--
SELECT setseed(0.5151);

CREATE TYPE rt_color AS ENUM ('red', 'green', 'blue');
ALTER TYPE rt_color ADD VALUE 'yellow' BEFORE 'red';
ALTER TYPE rt_color ADD VALUE 'cyan' AFTER 'green';
CREATE COLLATION rt_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);

-- The pool: column number, name and type, then the values, one string
-- each, its spellings separated by ' | ' (the first is the canonical one).
CREATE TABLE rt_pool (c int, name text, typ text, grp int, idx int, spelling text, pos int);
INSERT INTO rt_pool
SELECT p.c, p.name, p.typ, g.grp, s.idx, trim(s.spelling),
       row_number() OVER (ORDER BY p.c, g.grp, s.idx)
FROM (VALUES
    (1, 'c_i2', 'int2', ARRAY[
        $$0 | 0::int8 | -0 | '0'::int2$$,
        $$1 | 1::int8 | '1' | +1$$,
        $$-1 | (-1)::int8 | '-1' | (-1)::int2$$,
        $$7 | 7::int8 | '7' | 7::int2$$,
        $$32767 | 32767::int8 | '32767'::int2$$,
        $$-32768 | (-32768)::int4 | '-32768'::int8 | '-32768'$$,
        $$300 | 300::int8 | 300::int2$$]),
    (2, 'c_i4', 'int4', ARRAY[
        $$0 | 0::int2 | 0::int8$$,
        $$42 | 42::int2 | '42'::int8 | '42'$$,
        $$70000 | 70000::int8 | '70000'$$,
        $$-2147483648 | (-2147483648)::int8 | '-2147483648'$$,
        $$2147483647 | 2147483647::int8 | '2147483647'::int4$$,
        $$-5 | (-5)::int2 | '-5'::int8$$,
        $$1000 | 1000::int2 | 1e3::int4$$]),
    (3, 'c_i8', 'int8', ARRAY[
        $$0 | 0::int2 | 0::int4 | '0'$$,
        $$4294967296 | '4294967296' | 4294967296::int8$$,
        $$-1 | (-1)::int2 | (-1)::int4 | '-1'$$,
        $$5 | 5::int2 | 5::int4 | '5'$$,
        $$9223372036854775807 | '9223372036854775807'$$,
        $$'-9223372036854775808' | (-9223372036854775808)::int8$$,
        $$2147483648 | '2147483648'::int8$$,
        $$65536 | 65536::int4$$]),
    (4, 'c_f4', 'float4', ARRAY[
        $$0 | '-0' | '-0'::float8 | 0::float8 | 0::int2 | '-0'::float4$$,
        $$'NaN' | -'NaN'::float4 | 'NaN'::float8 | -'NaN'::float8 | 'nan'::float4$$,
        $$0.5 | 0.5::float4 | '0.5'::float8 | '5e-1'$$,
        $$0.1::float4 | '0.1' | (0.1::float4)::float8 | 0.100000001490116119384765625$$,
        $$'Infinity' | 'inf' | 'Infinity'::float8 | '+Infinity'::float4$$,
        $$'-Infinity' | '-Infinity'::float8$$,
        $$'1e-40' | ('1e-40'::float4)::float8$$,
        $$-2.25 | -2.25::float8 | '-2.25e0'$$,
        $$3 | 3::int4 | 3::int8 | 3.0::float4$$]),
    (5, 'c_f8', 'float8', ARRAY[
        $$0 | '-0' | -0.0 | 0::float4 | '-0'::float4 | 0::int8$$,
        $$'NaN' | -'NaN'::float8 | 'NaN'::float4 | -'NaN'::float4$$,
        $$0.5 | 0.5::float4 | '5e-1' | 1::float8 / 2$$,
        $$0.1 | '0.1' | 1e-1$$,
        $$0.1::float4 | (0.1::float4)::float8 | 0.100000001490116119384765625$$,
        $$'Infinity' | 'Infinity'::float4 | 'inf'$$,
        $$-2.25 | -2.25::float4 | '-2.25'$$,
        $$1e300::float8 | '1e300' | 1e300::float8 * 1$$,
        $$7 | 7::int2 | 7::int4 | 7::int8 | 7.0 | 7::float4$$]),
    (6, 'c_num', 'numeric', ARRAY[
        $$1 | 1.0 | 1.00 | 1::int2 | 1::int8 | 001.000 | '1.0'$$,
        $$0 | 0.0 | -0.0 | 0.000 | '-0' | 0::int4$$,
        $$'NaN' | 'nan' | 'NaN'::numeric$$,
        $$100 | 1e2 | 100.00 | 1.00e2 | 100::int8$$,
        $$-2.5 | -2.50 | '-2.500'$$,
        $$0.1 | 0.10 | 1e-1 | '.1'$$,
        $$'Infinity' | 'inf'$$,
        $$123456789012345678901234567890 | 1.23456789012345678901234567890e29 | 123456789012345678901234567890.000$$,
        $$1.5 | 1.50000 | 3 / 2.0$$]),
    (7, 'c_bool', 'bool', ARRAY[
        $$true | 't'::bool | 'yes'::bool | 1::bool | 'on'::boolean$$,
        $$false | 'f'::bool | 'no'::bool | 0::bool | 'off'::boolean$$]),
    (8, 'c_char', '"char"', ARRAY[
        $$'a' | 'a'::"char" | 'abc'::"char"$$,
        $$'Z' | 'Zebra'::"char"$$,
        $$'' | ''::"char"$$,
        $$'~'$$,
        $$'x' | 'xy'::"char"$$]),
    (9, 'c_name', 'name', ARRAY[
        $$'alpha' | 'alpha'::name$$,
        $$'' | ''::name$$,
        $$repeat('n', 63)::name | repeat('n', 70)::name | repeat('n', 64)::name$$,
        $$'pg_catalog' | 'pg_catalog'::name$$,
        $$'Alpha'$$,
        $$'ünï' | 'ünï'::name$$]),
    (10, 'c_text', 'text', ARRAY[
        $$'k1' | 'k1'::text | 'k1'::varchar | 'k' || '1'$$,
        $$'' | ''::varchar$$,
        $$'K1'$$,
        $$'k1 '$$,
        $$'ünïcødé ✓'$$,
        $$repeat('long', 600) | repeat('long', 599) || 'long'$$,
        $$'a b' | 'a b'::varchar(3)$$]),
    (11, 'c_vc', 'varchar(12)', ARRAY[
        $$'abc' | 'abc'::text | 'abc'::varchar(3) | 'abc'::varchar$$,
        $$'abc ' | 'abc '::text$$,
        $$''$$,
        $$'ABC'$$,
        $$'xyz123456789'$$,
        $$'ü✓' | 'ü✓'::text$$]),
    (12, 'c_bp', 'char(4)', ARRAY[
        $$'ab' | 'ab  ' | 'ab'::char(2) | 'ab '::char(8) | 'ab      '$$,
        $$'' | '    ' | ''::char(1)$$,
        $$'abcd' | 'abcd'::bpchar$$,
        $$'AB'$$,
        $$' ab' | ' ab '$$,
        $$'ü✓' | 'ü✓  '$$]),
    (13, 'c_bytea', 'bytea', ARRAY[
        $$'\x' | ''::bytea$$,
        $$'\x00' | '\000'::bytea | decode('00', 'hex')$$,
        $$'\x0000'$$,
        $$'\xdeadbeef' | '\xDEADBEEF' | decode('3q2+7w==', 'base64')$$,
        $$'abc'::bytea | '\x616263'$$,
        $$decode(repeat('ab', 1500), 'hex') | ('\x' || repeat('ab', 1500))::bytea$$]),
    (14, 'c_uuid', 'uuid', ARRAY[
        $$'00000000-0000-0000-0000-000000000000' | '{00000000-0000-0000-0000-000000000000}'$$,
        $$'a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11' | 'A0EEBC99-9C0B-4EF8-BB6D-6BB9BD380A11' | 'a0eebc999c0b4ef8bb6d6bb9bd380a11' | '{a0eebc99-9c0b4ef8-bb6d6bb9-bd380a11}'$$,
        $$'ffffffff-ffff-ffff-ffff-ffffffffffff' | 'FFFFFFFF-FFFF-FFFF-FFFF-FFFFFFFFFFFF'$$,
        $$md5('1')::uuid | 'c4ca4238-a0b9-2382-0dcc-509a6f75849b'$$,
        $$md5('2')::uuid$$]),
    (15, 'c_date', 'date', ARRAY[
        $$'2000-01-01' | 'Jan 1 2000' | '2000-01-01'::date | date '2000-01-01' | '20000101'$$,
        $$'2000-01-02' | '2000-01-01'::date + 1$$,
        $$'infinity' | 'Infinity'::date$$,
        $$'-infinity'$$,
        $$'1970-01-01' | 'epoch'$$,
        $$'4713-01-01 BC'$$,
        $$'2024-02-29' | '2024-03-01'::date - 1$$]),
    (16, 'c_time', 'time', ARRAY[
        $$'00:00' | '00:00:00' | 'allballs' | '00:00:00.000000'$$,
        $$'24:00' | '24:00:00'$$,
        $$'12:34:56.789' | '12:34:56.789000'$$,
        $$'23:59:59.999999'$$,
        $$'12:00' | '12:00:00' | '12:00 PM'$$,
        $$'08:30' | '8:30 AM' | time '08:30:00'$$]),
    (17, 'c_timetz', 'timetz', ARRAY[
        $$'12:00+00' | '12:00:00+00:00'$$,
        $$'13:00+01' | '13:00:00+01'$$,
        $$'12:00+01'$$,
        $$'00:00+15:59' | '00:00:00+15:59:00'$$,
        $$'24:00-15:59'$$,
        $$'06:30:00.5-03:30' | '06:30:00.500-03:30'$$]),
    (18, 'c_ts', 'timestamp', ARRAY[
        $$'2000-01-01 00:00' | '2000-01-01' | '2000-01-01T00:00:00' | 'Jan 1 2000 00:00:00.000000' | '2000-01-01 00:00+05'$$,
        $$'2024-02-29 12:34:56.789012' | '2024-02-29T12:34:56.789012'$$,
        $$'infinity'$$,
        $$'-infinity'$$,
        $$'1999-12-31 23:59:59.999999'$$,
        $$'2000-01-01 12:00' | '2000-01-01 00:00'::timestamp + interval '12 hours'$$,
        $$'4714-11-24 00:00:00 BC'$$]),
    (19, 'c_tstz', 'timestamptz', ARRAY[
        $$'2020-01-01 00:00+00' | '2019-12-31 19:00-05' | '2020-01-01 05:30+05:30' | '2020-01-01T00:00:00Z'$$,
        $$'2020-01-01 00:00+01' | '2019-12-31 23:00+00'$$,
        $$'infinity'$$,
        $$'-infinity'$$,
        $$'2000-01-01 00:00:00.000001+00' | '2000-01-01 01:00:00.000001+01'$$,
        $$'1970-01-01 00:00+00' | 'epoch' | to_timestamp(0)$$]),
    (20, 'c_iv', 'interval', ARRAY[
        $$'1 day' | '24 hours' | '1440 minutes' | '86400 seconds' | '1 day'::interval$$,
        $$'1 mon' | '30 days' | '720 hours'$$,
        $$'1 year' | '12 mons' | '360 days'$$,
        $$'0' | '00:00:00' | '0 days' | '-0 seconds'$$,
        $$'-1 day +1 hour' | '-23 hours'$$,
        $$'1 day 1 hour' | '25 hours' | '1500 minutes'$$,
        $$'00:00:00.000001' | '1 microsecond'$$]),
    (21, 'c_oid', 'oid', ARRAY[
        $$0 | '0'::oid | 0::oid$$,
        $$4294967295 | '-1'::oid | '4294967295'$$,
        $$1 | '1' | 1::oid$$,
        $$2147483648 | '2147483648'::oid | '-2147483648'::oid$$,
        $$16384 | '16384'$$]),
    (22, 'c_inet', 'inet', ARRAY[
        $$'192.168.1.1' | '192.168.1.1/32' | '192.168.1.1'::cidr$$,
        $$'192.168.1.1/24'$$,
        $$'10.1.2.3/8'$$,
        $$'::1' | '0:0:0:0:0:0:0:1' | '::1/128'$$,
        $$'::ffff:192.168.1.1'$$,
        $$'0.0.0.0/0' | '0.0.0.0/0'::cidr$$,
        $$'2001:db8::1/64' | '2001:0db8:0000::1/64'$$]),
    (23, 'c_cidr', 'cidr', ARRAY[
        $$'10.0.0.0/8' | '10/8' | '10.0.0.0/8'::inet$$,
        $$'10.0.0.0/9'$$,
        $$'192.168.1.0/24' | '192.168.1/24' | '192.168.1.0/24'::inet$$,
        $$'::/0'$$,
        $$'2001:db8::/32' | '2001:0db8::/32'::inet$$,
        $$'0.0.0.0/0' | '0.0.0.0/0'::inet$$]),
    (24, 'c_mac', 'macaddr', ARRAY[
        $$'08:00:2b:01:02:03' | '08-00-2b-01-02-03' | '08002b:010203' | '0800.2b01.0203' | '08:00:2B:01:02:03' | '08002b010203'$$,
        $$'00:00:00:00:00:00'$$,
        $$'ff:ff:ff:ff:ff:ff' | 'FF-FF-FF-FF-FF-FF'$$,
        $$'08:00:2b:01:02:04'$$,
        $$'08:00:2b:01:02:05' | '08:00:2b:ff:fe:01:02:05'::macaddr8::macaddr$$]),
    (25, 'c_mac8', 'macaddr8', ARRAY[
        $$'08:00:2b:01:02:03:04:05' | '08-00-2b-01-02-03-04-05' | '08002b0102030405' | '0800.2b01.0203.0405'$$,
        $$'08:00:2b:ff:fe:01:02:03' | '08:00:2b:01:02:03'::macaddr::macaddr8 | '08:00:2b:01:02:03'$$,
        $$'00:00:00:00:00:00:00:00'$$,
        $$'ff:ff:ff:ff:ff:ff:ff:ff'$$,
        $$'08:00:2b:01:02:03:04:06'$$]),
    (26, 'c_jsonb', 'jsonb', ARRAY[
        $$'{"a": 1, "b": 2}' | '{"b":2,"a":1}' | '{ "a" : 1.0 , "b" : 2.00 }' | '{"a": 5, "b": 2, "a": 1}' | jsonb_build_object('b', 2, 'a', 1)$$,
        $$'{"a": 1}' | '{"a": 1.000}' | '{"a":1e0}'$$,
        $$'[1, 2]' | '[1.0, 2.0]' | '[ 1,2 ]'$$,
        $$'[2, 1]'$$,
        $$'null'$$,
        $$'{}' | '{ }'$$,
        $$'[]'$$,
        $$'"x"' | to_jsonb('x'::text)$$,
        $$'100' | '1e2' | '100.00'$$,
        $$'{"a": {"b": [1, null, "z"]}}' | '{"a":{"b":[1.0,null,"z"]}}'$$,
        $$to_jsonb(repeat('j', 3000)) | ('"' || repeat('j', 3000) || '"')::jsonb$$]),
    (27, 'c_enum', 'rt_color', ARRAY[
        $$'red' | 'red'::rt_color$$,
        $$'green'$$,
        $$'blue'$$,
        $$'yellow' | 'yellow'::rt_color$$,
        $$'cyan'$$]),
    (28, 'c_ci', 'text COLLATE rt_ci', ARRAY[
        $$'abc' | 'ABC' | 'Abc' | 'aBc'::text$$,
        $$'café' | 'CAFÉ' | U&'cafe\0301' | U&'CAFE\0301'$$,
        $$'abd'$$,
        $$'cafe'$$,
        $$''$$]),
    (29, 'c_ia', 'int4[]', ARRAY[
        $$'{1,2,3}' | ARRAY[1,2,3] | '{ 1 , 02, +3 }' | '{1,2,3}'::int4[]$$,
        $$'{}' | ARRAY[]::int4[]$$,
        $$'{3,2,1}'$$,
        $$'{NULL}' | ARRAY[NULL::int4]$$,
        $$'{1,NULL,3}' | ARRAY[1,NULL,3]$$,
        $$'{{1,2},{3,4}}' | ARRAY[[1,2],[3,4]]$$,
        $$'[0:2]={1,2,3}'$$,
        $$'{1,2}' | ARRAY[1, 2] | '{1,2}'::int2[]::int4[]$$]),
    (30, 'c_ta', 'text[]', ARRAY[
        $$'{a,b}' | ARRAY['a','b'] | '{"a","b"}' | '{ a , b }'$$,
        $$'{b,a}'$$,
        $$'{}' | ARRAY[]::text[]$$,
        $$'{""}' | ARRAY['']$$,
        $$'{NULL,a}' | ARRAY[NULL,'a']$$,
        $$'{"a b",c}' | ARRAY['a b', 'c']$$,
        $$'{"NULL"}' | ARRAY['NULL']$$,
        $$'{NULL}'$$]),
    (31, 'c_bpu', 'bpchar', ARRAY[
        $$'ab' | 'ab   ' | 'ab'::char(2) | 'ab '::char(8) | 'ab'::bpchar$$,
        $$'' | '  ' | ''::char(1)$$,
        $$'abc  ' | 'abc' | 'abc'::char(3)$$,
        $$' ab'$$,
        $$'AB '$$,
        $$(repeat('b', 1500) || '   ')::bpchar | repeat('b', 1500)::bpchar$$])
    ) AS p(c, name, typ, groups),
    unnest(p.groups) WITH ORDINALITY AS g(spellings, grp),
    string_to_table(g.spellings, ' | ') WITH ORDINALITY AS s(spelling, idx);

-- The table: id, a column per type, and g, the pool value of each column
-- (0 for NULL), so that queries can look for a row's values.
CREATE TABLE rt (id int4,
    c_i2 int2, c_i4 int4, c_i8 int8, c_f4 float4, c_f8 float8, c_num numeric, c_bool bool,
    c_char "char", c_name name, c_text text, c_vc varchar(12), c_bp char(4), c_bytea bytea,
    c_uuid uuid, c_date date, c_time time, c_timetz timetz, c_ts timestamp, c_tstz timestamptz,
    c_iv interval, c_oid oid, c_inet inet, c_cidr cidr, c_mac macaddr, c_mac8 macaddr8,
    c_jsonb jsonb, c_enum rt_color, c_ci text COLLATE rt_ci, c_ia int4[], c_ta text[],
    c_bpu bpchar, g int2[])
WITH (autovacuum_enabled = off);

-- The pool as arrays, for the functions below: value grp of column c has
-- gn[c * 100 + grp] spellings, from sp[gfirst[c * 100 + grp]] on.
CREATE FUNCTION rt_state(OUT names text[], OUT types text[], OUT ngroups int[],
                         OUT sp text[], OUT gfirst int[], OUT gn int[])
LANGUAGE plpgsql AS $$
DECLARE
    r record;
BEGIN
    SELECT array_agg(name ORDER BY c), array_agg(typ ORDER BY c), array_agg(n ORDER BY c)
        INTO names, types, ngroups
        FROM (SELECT c, min(name) AS name, min(typ) AS typ, max(grp) AS n
              FROM rt_pool GROUP BY c) x;
    sp := ARRAY(SELECT spelling FROM rt_pool ORDER BY pos);
    gfirst := array_fill(0, ARRAY[100 * (cardinality(names) + 1)]);
    gn := gfirst;
    FOR r IN SELECT c, grp, min(pos) AS first, count(*) AS n FROM rt_pool GROUP BY c, grp LOOP
        gfirst[r.c * 100 + r.grp] := r.first;
        gn[r.c * 100 + r.grp] := r.n;
    END LOOP;
END
$$;

-- A random spelling of value grp of column c.
CREATE FUNCTION rt_pick(sp text[], gfirst int[], gn int[], c int, grp int) RETURNS text
LANGUAGE sql AS $$
    SELECT sp[gfirst[c * 100 + grp] + floor(random() * gn[c * 100 + grp])::int]
$$;

-- "column = value"; for bool "column = ANY (ARRAY[value])", as the planner
-- turns "b = true" into "b", which PostgreSQL 15 takes as an index
-- condition for btree and hash only.
CREATE FUNCTION rt_eq(name text, typ text, val text) RETURNS text
LANGUAGE sql AS $$
    SELECT CASE WHEN typ = 'bool' THEN format('%s = ANY (ARRAY[%s])', name, val)
                ELSE format('%s = %s', name, val) END
$$;

-- Inserts rows first..last: each column NULL one time in ten, else a random
-- value of its pool in a random spelling.
CREATE FUNCTION rt_fill(first int, last int) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    names text[]; types text[]; ngroups int[]; sp text[]; gfirst int[]; gn int[];
    rows text[] := '{}';
    vals text[];
    grps int[];
    grp int;
BEGIN
    SELECT * INTO names, types, ngroups, sp, gfirst, gn FROM rt_state();
    FOR i IN first..last LOOP
        vals := ARRAY[i::text];
        grps := '{}';
        FOR c IN 1..cardinality(names) LOOP
            grp := CASE WHEN random() < 0.1 THEN 0 ELSE 1 + floor(random() * ngroups[c]) END;
            vals := vals || CASE WHEN grp = 0 THEN 'NULL' ELSE rt_pick(sp, gfirst, gn, c, grp) END;
            grps := grps || grp;
        END LOOP;
        rows := rows || format('(%s, %L)', array_to_string(vals, ', '), grps);
    END LOOP;
    EXECUTE format('INSERT INTO rt (id, %s, g) VALUES %s',
                   array_to_string(names, ', '), array_to_string(rows, ', '));
END
$$;

-- Sets up to four random columns of about frac of the rows to other values
-- (or NULL), one UPDATE per row; returns the number of rows updated.
CREATE FUNCTION rt_update(frac float8) RETURNS int
LANGUAGE plpgsql AS $$
DECLARE
    names text[]; types text[]; ngroups int[]; sp text[]; gfirst int[]; gn int[];
    r record;
    sets text[];
    cols int[];
    grps int2[];
    c int;
    grp int;
    updated int := 0;
BEGIN
    SELECT * INTO names, types, ngroups, sp, gfirst, gn FROM rt_state();
    FOR r IN SELECT id, g FROM rt ORDER BY id LOOP
        CONTINUE WHEN random() >= frac;
        grps := r.g;
        sets := '{}';
        cols := '{}';
        FOR k IN 1..1 + floor(random() * 4)::int LOOP
            c := 1 + floor(random() * cardinality(names));
            CONTINUE WHEN c = ANY (cols);
            cols := cols || c;
            grp := CASE WHEN random() < 0.1 THEN 0 ELSE 1 + floor(random() * ngroups[c]) END;
            sets := sets || format('%s = %s', names[c],
                                   CASE WHEN grp = 0 THEN 'NULL' ELSE rt_pick(sp, gfirst, gn, c, grp) END);
            grps[c] := grp;
        END LOOP;
        EXECUTE format('UPDATE rt SET %s, g = %L WHERE id = %s', array_to_string(sets, ', '), grps, r.id);
        updated := updated + 1;
    END LOOP;
    RETURN updated;
END
$$;

-- The pool is what it says: each spelling of a value equals it by the
-- column's "=", the values of a column differ from each other, and every
-- spelling, compared with its column, is an index condition.
CREATE FUNCTION rt_pool_check()
RETURNS TABLE (spellings int, not_equal int, values_equal int, not_index_conditions int)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    eq bool;
    plan text;
BEGIN
    spellings := 0; not_equal := 0; values_equal := 0; not_index_conditions := 0;
    FOR r IN SELECT p.c, p.name, p.typ, p.grp, p.spelling, f.spelling AS canon
             FROM rt_pool p JOIN rt_pool f ON (f.c, f.grp, f.idx) = (p.c, p.grp, 1)
             ORDER BY p.pos LOOP
        spellings := spellings + 1;
        EXECUTE format('SELECT (%s)::%s = %s', r.canon, r.typ, r.spelling) INTO eq;
        IF eq IS NOT TRUE THEN
            not_equal := not_equal + 1;
            RAISE NOTICE '%: % is not equal to %', r.name, r.spelling, r.canon;
        END IF;
        PERFORM set_config('enable_seqscan', 'off', true);
        plan := plan_of('SELECT id FROM rt WHERE ' || rt_eq(r.name, r.typ, r.spelling));
        PERFORM set_config('enable_seqscan', 'on', true);
        IF plan NOT LIKE '%Bitmap Index Scan on rt_bl%' THEN
            not_index_conditions := not_index_conditions + 1;
            RAISE NOTICE '%: % is no index condition: %', r.name, r.spelling, plan;
        END IF;
    END LOOP;
    FOR r IN SELECT a.name, a.typ, a.spelling AS x, b.spelling AS y
             FROM rt_pool a JOIN rt_pool b ON a.c = b.c AND a.grp < b.grp AND a.idx = 1 AND b.idx = 1
             ORDER BY a.pos, b.pos LOOP
        EXECUTE format('SELECT (%s)::%s = (%s)::%s', r.x, r.typ, r.y, r.typ) INTO eq;
        IF eq IS NOT FALSE THEN
            values_equal := values_equal + 1;
            RAISE NOTICE '%: % and % are equal', r.name, r.x, r.y;
        END IF;
    END LOOP;
    RETURN NEXT;
END
$$;

-- Runs n random queries, each through index_vs_seqscan.  A query has one
-- to six clauses on distinct random columns; each clause takes its value
-- from one random row three times in five (so that queries find rows),
-- else a random value of the pool, in a random spelling, as "=", as an
-- IN list or "= ANY (ARRAY[...])" of two to four values (sometimes with a
-- NULL among them), as IS NULL or IS NOT NULL.  Returns the number of
-- queries, of differences, of queries that found rows, and of columns that
-- were part of a query that found rows.
CREATE FUNCTION rt_check(n int)
RETURNS TABLE (queries int, differences int, with_rows int, columns_hit int)
LANGUAGE plpgsql AS $$
DECLARE
    names text[]; types text[]; ngroups int[]; sp text[]; gfirst int[]; gn int[];
    ids int[] := ARRAY(SELECT id FROM rt ORDER BY id);
    hit bool[];
    rowid int;
    rowg int2[];
    cols int[];
    ncols int;
    c int;
    grp int;
    from_row bool;
    kind float8;
    clause text;
    cond text;
    elems text[];
    shift int;
    outcome text;
BEGIN
    SELECT * INTO names, types, ngroups, sp, gfirst, gn FROM rt_state();
    hit := array_fill(false, ARRAY[cardinality(names)]);
    queries := 0; differences := 0; with_rows := 0;
    FOR q IN 1..n LOOP
        rowid := ids[1 + floor(random() * cardinality(ids))::int];
        SELECT g INTO STRICT rowg FROM rt WHERE id = rowid;
        ncols := 1 + floor(random() * 6);
        cols := '{}';
        WHILE cardinality(cols) < ncols LOOP
            c := 1 + floor(random() * cardinality(names));
            IF NOT c = ANY (cols) THEN
                cols := cols || c;
            END IF;
        END LOOP;
        cond := NULL;
        FOREACH c IN ARRAY cols LOOP
            from_row := random() < 0.6;
            grp := CASE WHEN from_row THEN rowg[c] ELSE 1 + floor(random() * ngroups[c]) END;
            kind := random();
            IF kind < 0.15 THEN
                IF (from_row AND grp = 0) OR (NOT from_row AND random() < 0.5) THEN
                    clause := names[c] || ' IS NULL';
                ELSE
                    clause := names[c] || ' IS NOT NULL';
                END IF;
            ELSIF grp = 0 THEN
                clause := names[c] || ' IS NULL';
            ELSIF kind < 0.6 THEN
                clause := rt_eq(names[c], types[c], rt_pick(sp, gfirst, gn, c, grp));
            ELSE
                elems := ARRAY[rt_pick(sp, gfirst, gn, c, grp)];
                FOR i IN 2..2 + floor(random() * 3)::int LOOP
                    -- (an IN list of arrays becomes ORs, where a NULL would
                    -- keep the index from serving the clause)
                    IF random() < 0.1 AND types[c] NOT LIKE '%[]' THEN
                        elems := elems || 'NULL'::text;
                    ELSE
                        elems := elems || rt_pick(sp, gfirst, gn, c, 1 + floor(random() * ngroups[c])::int);
                    END IF;
                END LOOP;
                shift := floor(random() * cardinality(elems));
                elems := elems[shift + 1:] || elems[:shift];
                IF types[c] LIKE '%[]' OR random() < 0.6 THEN
                    clause := format('%s IN (%s)', names[c], array_to_string(elems, ', '));
                ELSE
                    -- ARRAY[...] needs typed elements: cast bare literals.
                    clause := format('%s = ANY (ARRAY[%s])', names[c],
                        (SELECT string_agg(CASE WHEN x ~ '^''([^'']|'''')*''$'
                                                THEN format('(%s)::%s', x, types[c]) ELSE x END,
                                           ', ' ORDER BY o)
                         FROM unnest(elems) WITH ORDINALITY AS u(x, o)));
                END IF;
            END IF;
            cond := coalesce(cond || ' AND ', '') || clause;
        END LOOP;
        outcome := random_query_outcome('rt', cond);
        queries := queries + 1;
        differences := differences + (outcome = 'different')::int;
        IF outcome = 'rows' THEN
            with_rows := with_rows + 1;
            FOREACH c IN ARRAY cols LOOP
                hit[c] := true;
            END LOOP;
        END IF;
    END LOOP;
    columns_hit := (SELECT count(*) FROM unnest(hit) h WHERE h);
    RETURN NEXT;
END
$$;

-- Rows that are NULL in every column, then random rows; two indexes: one
-- over 16 columns with a short signature (5% false positives on one
-- column, so the recheck drops many rows), one over the other 15 with the
-- default sizing.  The last 1,000 rows go in through the insert path.
INSERT INTO rt (id, g) SELECT i, array_fill(0, ARRAY[31]) FROM generate_series(-9, 0) i;
SELECT rt_fill(1, 5000);
CREATE INDEX rt_bl1 ON rt USING bloomidx (c_i2, c_i4, c_i8, c_f4, c_f8, c_num, c_bool, c_char,
    c_name, c_text, c_vc, c_bp, c_bytea, c_uuid, c_date, c_time)
    WITH (false_positive_rate = 0.05);
CREATE INDEX rt_bl2 ON rt USING bloomidx (c_timetz, c_ts, c_tstz, c_iv, c_oid, c_inet, c_cidr,
    c_mac, c_mac8, c_jsonb, c_enum, c_ci, c_ia, c_ta, c_bpu);
SELECT rt_fill(5001, 6000);
ANALYZE rt;

SELECT * FROM rt_pool_check();

SELECT 'after build and insert' AS phase, queries, differences,
       with_rows > queries / 2 AS enough_hits, columns_hit = 31 AS every_column_hit
FROM rt_check(600);

-- (random() over the rows in id order, whatever their order on disk)
DELETE FROM rt WHERE id IN (SELECT id FROM (SELECT id FROM rt ORDER BY id) s WHERE random() < 0.15);
SELECT rt_update(0.2) > 500 AS rows_updated;
SELECT 'after delete and update' AS phase, queries, differences,
       with_rows > queries / 2 AS enough_hits, columns_hit = 31 AS every_column_hit
FROM rt_check(500);

-- After VACUUM, and after updates of no indexed column, which are HOT
-- where the page has room (VACUUM made some): the index keeps pointing at
-- the root of each chain.
VACUUM rt;
UPDATE rt SET g = g WHERE id % 5 = 0;
SELECT 'after vacuum and HOT update' AS phase, queries, differences,
       with_rows > queries / 2 AS enough_hits, columns_hit = 31 AS every_column_hit
FROM rt_check(500);

SELECT rt_fill(6001, 8000);
SELECT 'after insert into freed space' AS phase, queries, differences,
       with_rows > queries / 2 AS enough_hits, columns_hit = 31 AS every_column_hit
FROM rt_check(600);
