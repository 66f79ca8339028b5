--
-- Values that are equal but spelled, or stored, differently.  A Bloom
-- index only finds a row if the query value hashes like the stored one, so
-- each test below stores one spelling and searches with another: if a
-- type's hash disagreed with its "=", the index would miss the row and
-- index_vs_seqscan would say DIFFERENT.  Each trap first shows that the
-- two spellings are equal, and, where it matters, that their bytes differ
-- (a hash of the bytes would then lose the row).
--

-- float: -0 = 0, and every NaN equals every other (even with the sign bit
-- set); float4 and float8 compare across types (one operator family).
SELECT '-0'::float8 = '0'::float8 AS zero_eq, float8send('-0') <> float8send('0') AS bytes_differ;
SELECT -'NaN'::float8 = 'NaN'::float8 AS nan_eq,
       float8send(-'NaN'::float8) <> float8send('NaN') AS bytes_differ;
SELECT -'NaN'::float4 = 'NaN'::float4 AS nan_eq,
       float4send(-'NaN'::float4) <> float4send('NaN') AS bytes_differ;
CREATE TABLE tfloat (id int4, f8 float8, f4 float4);
INSERT INTO tfloat VALUES (1, '-0', '-0'), (2, -'NaN'::float8, -'NaN'::float4), (3, 0.5, 0.5),
    (4, 1.5, 1.5), (5, 'Infinity', '-Infinity'), (6, 0.1, 0.1), (7, 0.1::float4, 1e-40);
CREATE INDEX tfloat_bl ON tfloat USING bloomidx (f8, f4);
INSERT INTO tfloat VALUES (11, '-0', '-0'), (12, -'NaN'::float8, -'NaN'::float4);
SELECT q, index_vs_seqscan('SELECT id FROM tfloat WHERE ' || q)
FROM (VALUES ('f8 = 0'), ('f8 = ''-0'''), ('f8 = ''NaN'''), ('f8 = -''NaN''::float8'),
             ('f4 = 0'), ('f4 = ''-0'''), ('f4 = ''NaN'''), ('f4 = -''NaN''::float4'),
             -- float8 column, float4 keys
             ('f8 = 0.5::float4'), ('f8 = 1.5::float4'), ('f8 = ''-0''::float4'),
             ('f8 = ''NaN''::float4'), ('f8 = ''Infinity''::float4'),
             ('f8 = 0.1::float4'),  -- row 7 holds exactly the float4 0.1, not the float8 0.1
             -- float4 column, float8 keys
             ('f4 = 0.5::float8'), ('f4 = 1.5::float8'), ('f4 = ''-0''::float8'),
             ('f4 = ''NaN''::float8'), ('f4 = ''-Infinity''::float8'),
             ('f4 = 1e-40::float8'), ('f4 = 0.1::float8'),  -- 0.1 as float8 is no float4
             ('f4 = (0.1::float4)::float8'),
             ('f8 = 0.5::float4 AND f4 = 0.5::float8'), ('f8 = ANY (''{0, NaN}''::float4[])'))
    AS x(q);

-- numeric: the scale does not count (1.0 = 1.00 = 1.000), nor do leading
-- or trailing zeros; NaN = NaN.
SELECT 1.0 = 1.00 AS eq, numeric_send(1.0) <> numeric_send(1.00) AS bytes_differ;
CREATE TABLE tnum (id int4, n numeric, n3 numeric(10, 3));
INSERT INTO tnum VALUES (1, 1.0, 1), (2, 1.00, 1.5), (3, 'NaN', 'NaN'), (4, 100, 0),
    (5, 0.000, 2.25), (6, -0.0, NULL);
CREATE INDEX tnum_bl ON tnum USING bloomidx (n, n3);
INSERT INTO tnum VALUES (11, 1.000, 1.0), (12, 1e2, -0.000);
SELECT q, index_vs_seqscan('SELECT id FROM tnum WHERE ' || q)
FROM (VALUES ('n = 1'), ('n = 1.0'), ('n = 1.00000'), ('n = 001.0'), ('n = ''NaN'''),
             ('n = 100'), ('n = 100.00'), ('n = 1e2'), ('n = 0'), ('n = 0.0000'), ('n = -0'),
             ('n3 = 1'), ('n3 = 1.0'), ('n3 = 1.50'), ('n3 = 2.250000'), ('n3 = 0'),
             ('n3 = ''NaN'''), ('n = 1 AND n3 = 1.0000'), ('n = ANY (''{1.0000, 100.0}'')'),
             ('n = 1.01'), ('n3 = 1.001')) AS x(q);

-- char(n): trailing spaces are not significant.
SELECT 'ab'::char(5) = 'ab   '::bpchar AS eq, octet_length('ab'::bpchar) AS short,
       octet_length('ab'::char(5)::bpchar) AS padded;
CREATE TABLE tchar (id int4, c5 char(5), c bpchar);
INSERT INTO tchar VALUES (1, 'ab', 'ab'), (2, 'ab   ', 'ab   '), (3, '', ''), (4, '   ', '   '),
    (5, 'abc', 'abc  ');
CREATE INDEX tchar_bl ON tchar USING bloomidx (c5, c);
INSERT INTO tchar VALUES (11, 'ab ', 'ab ');
SELECT q, index_vs_seqscan('SELECT id FROM tchar WHERE ' || q)
FROM (VALUES ('c5 = ''ab'''), ('c5 = ''ab   '''), ('c5 = ''ab         '''), ('c5 = ''ab''::char(2)'),
             ('c5 = ''ab ''::char(8)'), ('c5 = '''''), ('c5 = ''  '''), ('c5 = ''abc'''),
             ('c = ''ab'''), ('c = ''ab  '''), ('c = '''''), ('c = ''abc'''), ('c = ''abc ''::char(4)'),
             ('c5 = ''a'''), ('c = '' ab''')) AS x(q);

-- text under a nondeterministic ICU collation: case (level 2), and
-- canonically equivalent spellings (precomposed e-acute vs e + U+0301).
SELECT count(*) > 0 AS have_icu FROM pg_collation WHERE collprovider = 'i';
CREATE COLLATION ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
SELECT 'ABC' = 'abc' COLLATE ci AS case_eq, 'é' = U&'e\0301' COLLATE ci AS composed_eq,
       'é' = 'e' COLLATE ci AS accent_eq;
CREATE TABLE tci (id int4, t text COLLATE ci, tc text COLLATE "C", a text[] COLLATE ci);
INSERT INTO tci VALUES (1, 'ABC', 'ABC', '{ABC,x}'), (2, 'abc', 'abc', '{abc,X}'),
    (3, 'Abd', 'Abd', '{Abd}'), (4, 'café', 'café', '{café}'), (5, U&'cafe\0301', U&'cafe\0301', '{}');
CREATE INDEX tci_bl ON tci USING bloomidx (t, tc, a);
INSERT INTO tci VALUES (11, 'aBc', 'aBc', '{aBc,x}'), (12, 'CAFÉ', 'CAFÉ', '{CAFÉ}');
SELECT q, index_vs_seqscan('SELECT id FROM tci WHERE ' || q)
FROM (VALUES ('t = ''abc'''), ('t = ''ABC'''), ('t = ''abd'''), ('t = ''café'''),
             ('t = U&''cafe\0301'''), ('t = ''CAFE'''), ('t = ''abc'' AND tc = ''ABC'''),
             ('tc = ''abc'''), ('tc = ''café'''), ('t = ANY (''{ABC, CAFÉ}'')'),
             ('a = ''{abc,x}'''), ('a = ''{ABC,X}'''), ('a = ''{café}'''), ('a = ''{}''')) AS x(q);

-- interval: '1 day' = '24 hours', '1 mon' = '30 days' (compared normalised).
SELECT '1 day'::interval = '24 hours' AS eq,
       interval_send('1 day') <> interval_send('24 hours') AS bytes_differ;
CREATE TABLE tiv (id int4, iv interval);
INSERT INTO tiv VALUES (1, '1 day'), (2, '24 hours'), (3, '1 mon'), (4, '-1 day'),
    (5, '1 day 1 hour'), (6, '1 year');
CREATE INDEX tiv_bl ON tiv USING bloomidx (iv);
INSERT INTO tiv VALUES (11, '1440 minutes'), (12, '30 days');
SELECT q, index_vs_seqscan('SELECT id FROM tiv WHERE ' || q)
FROM (VALUES ('iv = ''1 day'''), ('iv = ''24 hours'''), ('iv = ''86400 seconds'''),
             ('iv = ''30 days'''), ('iv = ''720 hours'''), ('iv = ''1 mon'''),
             ('iv = ''-24 hours'''), ('iv = ''25 hours'''), ('iv = ''360 days'''),
             ('iv = ''12 mons'''), ('iv = ''23 hours''')) AS x(q);

-- Integers across types, in every direction, at the edges of each width.
CREATE TABLE tint (id int4, i2 int2, i4 int4, i8 int8);
INSERT INTO tint VALUES (1, -32768, -32768, -32768), (2, 32767, 2147483647, 2147483647),
    (3, 0, 0, 0), (4, -1, -1, -1), (5, 7, 70000, 4294967296), (6, 1, -2147483648, -2147483648);
CREATE INDEX tint_bl ON tint USING bloomidx (i2, i4, i8);
INSERT INTO tint VALUES (11, -32768, -32768, -32768), (12, -1, -1, -1);
SELECT q, index_vs_seqscan('SELECT id FROM tint WHERE ' || q)
FROM (VALUES ('i2 = (-32768)::int4'), ('i2 = (-32768)::int8'), ('i2 = 32767::int8'),
             ('i2 = (-1)::int8'), ('i2 = 7::int4'), ('i2 = 70000::int4'), ('i2 = 4294967296::int8'),
             ('i4 = (-32768)::int2'), ('i4 = (-1)::int2'), ('i4 = 70000::int8'),
             ('i4 = 2147483647::int8'), ('i4 = (-2147483648)::int8'), ('i4 = 4294967296::int8'),
             ('i8 = (-32768)::int2'), ('i8 = (-1)::int2'), ('i8 = 2147483647::int4'),
             ('i8 = (-2147483648)::int4'), ('i8 = 4294967296'),
             ('i2 = (-1)::int8 AND i4 = (-1)::int2 AND i8 = (-1)::int4'),
             ('i8 = ANY (''{-32768, 0}''::int2[])'), ('i2 = ANY (''{-1, 70000}''::int4[])')) AS x(q);

-- jsonb: key order, whitespace and duplicate keys do not count (jsonb
-- stores them normalised), nor does the scale of a number (which it
-- stores as written: those bytes differ).
SELECT '{"a":1, "b":2}'::jsonb = '{"b":2,"a":1}' AS order_eq,
       '{"a": 1.0}'::jsonb = '{"a": 1}' AS scale_eq,
       jsonb_send('{"a": 1.0}') <> jsonb_send('{"a": 1}') AS bytes_differ;
CREATE TABLE tjson (id int4, j jsonb);
INSERT INTO tjson VALUES (1, '{"a":1, "b":2}'), (2, '{"a": 1.0}'), (3, '[1.50, {"x": 2.000}]'),
    (4, '{"a": {"b": 1}, "a": {"b": 2}}'), (5, '1e2');
CREATE INDEX tjson_bl ON tjson USING bloomidx (j);
INSERT INTO tjson VALUES (11, '{ "b" : 2 , "a" : 1 }'), (12, '100.0');
SELECT q, index_vs_seqscan('SELECT id FROM tjson WHERE ' || q)
FROM (VALUES ('j = ''{"b":2,"a":1}'''), ('j = ''{"a":1,"b":2.0}'''), ('j = ''{"a": 1}'''),
             ('j = ''{"a": 1.000}'''), ('j = ''[1.5, {"x": 2}]'''), ('j = ''{"a": {"b": 2}}'''),
             ('j = ''100'''), ('j = ''1.00e2'''), ('j = ''{"a":1,"b":3}'''), ('j = ''[{"x": 2}, 1.5]''')) AS x(q);

-- Arrays: equal when their elements are equal by the element type's "="
-- (numeric scale, -0.0, NaN, trailing spaces of char(n)).
SELECT '{1.0}'::numeric[] = '{1.00}'::numeric[] AS eq,
       array_send('{1.0}'::numeric[]) <> array_send('{1.00}'::numeric[]) AS bytes_differ;
CREATE TABLE tarr (id int4, i int4[], n numeric[], f float8[], c char(3)[], t text[]);
INSERT INTO tarr VALUES (1, '{1,2,3}', '{1.0, 2.50}', '{-0, NaN}', '{a, b}', '{x,y}'),
    (2, '{}', '{}', '{}', '{}', '{}'), (3, '{NULL,1}', '{NaN, NULL}', '{1.5}', '{"a  "}', '{""}');
CREATE INDEX tarr_bl ON tarr USING bloomidx (i, n, f, c, t);
INSERT INTO tarr VALUES (11, ARRAY[1,2,3], '{1, 2.5}', ARRAY[0, -'NaN'::float8], '{"a ", "b  "}', ARRAY['x','y']);
SELECT q, index_vs_seqscan('SELECT id FROM tarr WHERE ' || q)
FROM (VALUES ('i = ''{1,2,3}'''), ('i = ARRAY[1,2,3]'), ('i = ''{ 1 , 02, +3 }'''), ('i = ''{3,2,1}'''),
             ('i = ''{}'''), ('i = ''{NULL,1}'''), ('n = ''{1.000, 2.5}'''), ('n = ''{1, 2.5000}'''),
             ('n = ''{NaN,NULL}'''), ('f = ''{0, NaN}'''), ('f = ''{-0, -NaN}''::float8[]'),
             ('f = ARRAY[-0.0::float8, ''NaN'']'), ('c = ''{a,b}'''), ('c = ''{"a  ", "b "}'''),
             ('c = ''{a}'''), ('t = ''{x,y}'''), ('t = ''{x,y,""}''')) AS x(q);

-- Enums: values added later, with OIDs out of sort order.
CREATE TYPE size AS ENUM ('small', 'large');
ALTER TYPE size ADD VALUE 'medium' AFTER 'small';
ALTER TYPE size ADD VALUE 'tiny' BEFORE 'small';
CREATE TABLE tenum (id int4, s size, ss size[]);
INSERT INTO tenum VALUES (1, 'small', '{small}'), (2, 'large', '{large,tiny}'), (3, 'medium', '{}');
CREATE INDEX tenum_bl ON tenum USING bloomidx (s, ss);
INSERT INTO tenum VALUES (11, 'tiny', '{tiny}'), (12, 'medium', '{medium,small}');
SELECT q, index_vs_seqscan('SELECT id FROM tenum WHERE ' || q)
FROM (VALUES ('s = ''small'''), ('s = ''medium'''), ('s = ''tiny'''), ('s = ''large''::size'),
             ('s = ANY (''{tiny,large}'')'), ('ss = ''{large,tiny}'''), ('ss = ''{medium,small}'''),
             ('ss = ''{tiny,large}'''), ('s = ''medium'' AND ss = ''{}''')) AS x(q);

-- inet and cidr: a cidr column (inet's opclass) searched with inet values
-- and the other way round; the netmask is part of the value.
SELECT '10.0.0.0/8'::cidr = '10.0.0.0/8'::inet AS eq, '10.1.2.3/8'::inet = '10.0.0.0/8'::inet AS masked_eq;
CREATE TABLE tnet (id int4, c cidr, i inet);
INSERT INTO tnet VALUES (1, '10.0.0.0/8', '10.0.0.0/8'), (2, '10.1.0.0/16', '10.1.2.3/8'),
    (3, '::/0', '::1'), (4, '192.168.0.0/24', '192.168.0.1'), (5, '0.0.0.0/0', '0.0.0.0/0');
CREATE INDEX tnet_bl ON tnet USING bloomidx (c, i);
INSERT INTO tnet VALUES (11, '10.0.0.0/8', '10.1.2.3/8'), (12, '::/0', '::ffff:192.168.0.1');
SELECT q, index_vs_seqscan('SELECT id FROM tnet WHERE ' || q)
FROM (VALUES ('c = ''10.0.0.0/8'''), ('c = ''10.0.0.0/8''::inet'), ('c = ''10.0.0.0/8''::cidr'),
             ('c = ''10.1.0.0/16''::inet'), ('c = ''10.0.0.0/9''::inet'), ('c = ''::/0''::inet'),
             ('i = ''10.0.0.0/8''::cidr'), ('i = ''10.1.2.3/8'''), ('i = ''10.1.2.3'''),
             ('i = ''192.168.0.1'''), ('i = ''::ffff:192.168.0.1'''), ('i = ''0.0.0.0/0''::cidr'))
    AS x(q);

-- varchar and text: a varchar column uses text's opclass; its values are
-- found with text, varchar(n) or untyped keys.  Trailing spaces count.
CREATE TABLE tvc (id int4, v varchar(10), t text);
INSERT INTO tvc VALUES (1, 'abc', 'abc'), (2, 'abc ', 'abc '), (3, '', ''), (4, 'ABC', 'ABC');
CREATE INDEX tvc_bl ON tvc USING bloomidx (v, t);
INSERT INTO tvc VALUES (11, 'abc'::text, 'abc'::varchar(3));
SELECT q, index_vs_seqscan('SELECT id FROM tvc WHERE ' || q)
FROM (VALUES ('v = ''abc'''), ('v = ''abc''::text'), ('v = ''abc''::varchar(3)'), ('v = ''abc''::varchar'),
             ('v = ''abc '''), ('v = '''''), ('t = ''abc''::varchar(10)'), ('t = ''abc ''::varchar'),
             ('v = ANY (''{abc, ABC}''::text[])'), ('v = ANY (ARRAY[''abc'', '''']::varchar[])'))
    AS x(q);

-- name: values longer than 63 bytes are cut to 63, on insert and in keys.
SELECT repeat('x', 70)::name = repeat('x', 64)::name AS eq;
CREATE TABLE tname (id int4, nm name);
INSERT INTO tname VALUES (1, repeat('x', 70)), (2, 'pg_class'), (3, '');
CREATE INDEX tname_bl ON tname USING bloomidx (nm);
SELECT q, index_vs_seqscan('SELECT id FROM tname WHERE ' || q)
FROM (VALUES ('nm = repeat(''x'', 63)::name'), ('nm = repeat(''x'', 100)::name'),
             ('nm = ''pg_class'''), ('nm = '''''), ('nm = repeat(''x'', 62)::name')) AS x(q);

-- timestamptz: one instant, written in different time zones.
SELECT '2020-01-01 00:00+00'::timestamptz = '2019-12-31 19:00-05' AS eq;
CREATE TABLE tts (id int4, ts timestamptz, tz timetz);
INSERT INTO tts VALUES (1, '2020-01-01 00:00+00', '12:00+00'), (2, '2020-01-01 01:00+01', '13:00+01');
CREATE INDEX tts_bl ON tts USING bloomidx (ts, tz);
SELECT q, index_vs_seqscan('SELECT id FROM tts WHERE ' || q)
FROM (VALUES ('ts = ''2019-12-31 19:00-05'''), ('ts = ''2020-01-01 05:30+05:30'''),
             ('tz = ''12:00+00'''), ('tz = ''13:00+01'''), ('tz = ''11:00-01''')) AS x(q);
