--
-- Every type with a shipped operator class: edge values (the type's
-- extremes, empty strings and arrays, NULLs, long values that are
-- TOASTed) are found through the index exactly as a sequential scan finds
-- them, and values that are not there are not.
--
-- check_type(type, hits, misses) makes a table (id, v type, k int4) with
-- a bloomidx index on (v, k).  Each hit (an SQL expression of the type) is
-- inserted once before the index is built and twice after, so that both
-- the build and the insert path hash it; a NULL goes in each time too.
-- Then index_vs_seqscan on "v = hit" for each hit, "v = miss" for each
-- miss, "v IN (every hit)" and "v IS NULL".
--
-- Long values are compressed with pglz, as before PostgreSQL 19 made lz4
-- the default, so that which of them are compressed is the same on every
-- version.
SET default_toast_compression = pglz;
--
CREATE FUNCTION check_type(typ text, hits text[], misses text[])
RETURNS TABLE (query text, result text)
LANGUAGE plpgsql AS $$
DECLARE
    tbl text := 'ty_' || trim(both '_' from
                    regexp_replace(replace(typ, '[]', '_array'), '[^a-z0-9]+', '_', 'g'));
    e text;
BEGIN
    EXECUTE format('CREATE TABLE %I (id serial, v %s, k int4 DEFAULT 1)', tbl, typ);
    FOR pass IN 1..3 LOOP
        FOREACH e IN ARRAY hits LOOP
            EXECUTE format('INSERT INTO %I (v) VALUES ((%s)::%s)', tbl, e, typ);
        END LOOP;
        IF pass < 3 THEN
            EXECUTE format('INSERT INTO %I (v) VALUES (NULL)', tbl);
        END IF;
        IF pass = 1 THEN
            EXECUTE format('CREATE INDEX ON %I USING bloomidx (v, k)', tbl);
        END IF;
    END LOOP;

    FOREACH e IN ARRAY hits || misses LOOP
        query := format('v = (%s)::%s', e, typ);
        result := index_vs_seqscan(format('SELECT id FROM %I WHERE %s', tbl, query));
        RETURN NEXT;
    END LOOP;
    query := format('v IN (%s)',
                    (SELECT string_agg(format('(%s)::%s', h, typ), ', ') FROM unnest(hits) h));
    result := index_vs_seqscan(format('SELECT id FROM %I WHERE %s', tbl, query));
    query := left(query, 60) || CASE WHEN length(query) > 60 THEN '...' ELSE '' END;
    RETURN NEXT;
    query := 'v IS NULL';
    result := index_vs_seqscan(format('SELECT id FROM %I WHERE %s', tbl, query));
    RETURN NEXT;
END
$$;

-- Long values, different enough that they are stored out of line.
CREATE FUNCTION long_hex(n int) RETURNS text
LANGUAGE sql IMMUTABLE AS $$
    SELECT string_agg(md5(i::text), '' ORDER BY i) FROM generate_series(1, n) i
$$;

-- Integers.
SELECT * FROM check_type('int2', ARRAY['-32768', '32767', '0', '-1', '1'],
                         ARRAY['2', '-32767']);
SELECT * FROM check_type('int4', ARRAY['-2147483648', '2147483647', '0', '42'],
                         ARRAY['43', '-2147483647']);
SELECT * FROM check_type('int8', ARRAY['-9223372036854775808', '9223372036854775807', '0', '4294967296'],
                         ARRAY['4294967297', '-1']);

-- Floating point: infinities, NaN, the largest and smallest (denormal) values.
SELECT * FROM check_type('float4', ARRAY['''-Infinity''', '''Infinity''', '''NaN''', '0',
                                         '3.4028235e38', '1.4e-45', '-1.5', '0.1'],
                         ARRAY['0.2', '2.8e-45', '-3.4028235e38']);
SELECT * FROM check_type('float8', ARRAY['''-Infinity''', '''Infinity''', '''NaN''', '0',
                                         '1.7976931348623157e308', '5e-324', '-1.5', '0.1'],
                         ARRAY['0.2', '1e-323', '-1.7976931348623157e308']);

-- numeric: NaN, infinities, extreme exponents, a long TOASTed value.
SELECT * FROM check_type('numeric', ARRAY['''NaN''', '''Infinity''', '''-Infinity''', '0', '-1.5',
                                          '1e-16383', '9e131071', '0.000000000000000000001',
                                          'translate(long_hex(1250), ''abcdef'', ''123456'')'],
                         ARRAY['1e-16382', '-1.6', 'translate(long_hex(1250), ''abcdef'', ''123457'')']);

SELECT * FROM check_type('"char"', ARRAY['''a''', '''Z''', '''''', '''~'''], ARRAY['''b''']);

-- name: empty, the longest (63 bytes).
SELECT * FROM check_type('name', ARRAY['''''', '''pg_catalog''', 'repeat(''n'', 63)'],
                         ARRAY['''Pg_catalog''', 'repeat(''n'', 62)']);

-- Strings: empty, multibyte, long (TOASTed).  varchar uses text's opclass.
SELECT * FROM check_type('text', ARRAY['''''', '''a''', '''hello world''', '''ünïcødé ✓''',
                                       'long_hex(200)'],
                         ARRAY['''A''', '''hello world ''', 'long_hex(200) || ''x''']);
SELECT * FROM check_type('varchar', ARRAY['''''', '''abc''', '''ünïcødé ✓''', 'long_hex(200)'],
                         ARRAY['''abc ''', '''ab''', 'long_hex(199)']);
SELECT * FROM check_type('varchar(3)', ARRAY['''''', '''abc''', '''ü✓''', '''a'''],
                         ARRAY['''ab''', '''b''']);
SELECT * FROM check_type('char(5)', ARRAY['''''', '''ab''', '''abcde''', '''ü✓'''],
                         ARRAY['''abc''', '''b''']);
SELECT * FROM check_type('bpchar', ARRAY['''''', '''ab''', 'long_hex(200)'],
                         ARRAY['''abc''', 'long_hex(200) || ''x''']);

-- bytea: empty, zero bytes of different lengths, long (TOASTed).
SELECT * FROM check_type('bytea', ARRAY['''\x''', '''\x00''', '''\x0000''', '''\xdeadbeef''',
                                        'decode(long_hex(400), ''hex'')'],
                         ARRAY['''\x000000''', '''\xdeadbeee''', 'decode(long_hex(399), ''hex'')']);

SELECT * FROM check_type('uuid', ARRAY['''00000000-0000-0000-0000-000000000000''',
                                       '''ffffffff-ffff-ffff-ffff-ffffffffffff''',
                                       '''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a11'''],
                         ARRAY['''00000000-0000-0000-0000-000000000001''',
                               '''a0eebc99-9c0b-4ef8-bb6d-6bb9bd380a12''']);

-- Date and time: the first and last representable values, infinities.
SELECT * FROM check_type('date', ARRAY['''4713-01-01 BC''', '''5874897-12-31''', '''infinity''',
                                       '''-infinity''', '''2000-01-01''', '''1970-01-01'''],
                         ARRAY['''2000-01-02''', '''4713-01-02 BC''']);
SELECT * FROM check_type('time', ARRAY['''00:00''', '''24:00''', '''23:59:59.999999''',
                                       '''12:34:56.789'''],
                         ARRAY['''12:34:56.788''', '''00:00:00.000001''']);
SELECT * FROM check_type('timetz', ARRAY['''00:00+15:59''', '''24:00-15:59''', '''12:00+00''',
                                         '''13:00+01'''],
                         ARRAY['''12:00+01''', '''11:00-01''']);
SELECT * FROM check_type('timestamp', ARRAY['''4714-11-24 00:00:00 BC''',
                                            '''294276-12-31 23:59:59.999999''', '''infinity''',
                                            '''-infinity''', '''2000-01-01 00:00''',
                                            '''2024-02-29 12:34:56.789012'''],
                         ARRAY['''2000-01-01 00:00:00.000001''', '''2024-02-29 12:34:56''']);
SELECT * FROM check_type('timestamptz', ARRAY['''4714-11-24 00:00:00+00 BC''',
                                              '''294276-12-31 23:59:59.999999+00''', '''infinity''',
                                              '''-infinity''', '''2000-01-01 00:00+00''',
                                              '''2024-02-29 12:34:56.789012+05:30'''],
                         ARRAY['''2000-01-01 00:00+01''', '''2024-02-29 12:34:56.789012+00''']);
SELECT * FROM check_type('interval', ARRAY['''-178000000 years''', '''178000000 years''', '''0''',
                                           '''1 day''', '''1 mon''', '''00:00:00.000001''',
                                           '''-1 day +1 hour'''],
                         ARRAY['''2 days''', '''1 year''', '''-00:00:00.000001''']);

SELECT * FROM check_type('oid', ARRAY['0', '4294967295', '1', '2147483648'],
                         ARRAY['2', '4294967294']);

-- Network and MAC addresses.  cidr uses inet's opclass.
SELECT * FROM check_type('inet', ARRAY['''0.0.0.0/0''', '''255.255.255.255''', '''192.168.1.1/24''',
                                       '''192.168.1.1''', '''::/0''',
                                       '''ffff:ffff:ffff:ffff:ffff:ffff:ffff:ffff''', '''::1'''],
                         ARRAY['''192.168.1.1/25''', '''::2''', '''::ffff:192.168.1.1''']);
SELECT * FROM check_type('cidr', ARRAY['''0.0.0.0/0''', '''10.0.0.0/8''', '''192.168.1.0/24''',
                                       '''::/0''', '''2001:db8::/32'''],
                         ARRAY['''10.0.0.0/9''', '''2001:db8::/33''']);
SELECT * FROM check_type('macaddr', ARRAY['''00:00:00:00:00:00''', '''ff:ff:ff:ff:ff:ff''',
                                          '''08:00:2b:01:02:03'''],
                         ARRAY['''08:00:2b:01:02:04''']);
SELECT * FROM check_type('macaddr8', ARRAY['''00:00:00:00:00:00:00:00''',
                                           '''ff:ff:ff:ff:ff:ff:ff:ff''',
                                           '''08:00:2b:01:02:03:04:05'''],
                         ARRAY['''08:00:2b:01:02:03:04:06''', '''08:00:2b:01:02:03''']);

-- jsonb: scalars, empty containers, nesting, a long (TOASTed) array.
SELECT * FROM check_type('jsonb', ARRAY['''null''', '''{}''', '''[]''', '''""''', '''0''', '''true''',
                                        '''{"a": {"b": [1, 2, null]}}''',
                                        'to_jsonb(ARRAY(SELECT md5(i::text) FROM generate_series(1, 300) i))'],
                         ARRAY['''{"a": {"b": [1, 2]}}''', '''[[]]''', '''"null"''', '''false''']);

-- An enum type (enum_ops serves every enum).
CREATE TYPE mood AS ENUM ('sad', 'ok', 'happy');
ALTER TYPE mood ADD VALUE 'meh' BEFORE 'ok';
SELECT * FROM check_type('mood', ARRAY['''sad''', '''happy''', '''meh'''], ARRAY['''ok''']);

-- Arrays (array_ops serves every array whose element type can be hashed):
-- empty, NULL elements, two dimensions, another lower bound, long.
SELECT * FROM check_type('int4[]', ARRAY['''{}''', '''{1,2,3}''', '''{NULL}''', '''{1,NULL,3}''',
                                         '''{{1,2},{3,4}}''', '''[0:2]={1,2,3}''',
                                         'ARRAY(SELECT hashint4(i) FROM generate_series(1, 3000) i)'],
                         ARRAY['''{3,2,1}''', '''{1,2}''', '''{{1,2}}''', '''{NULL,NULL}''',
                               'ARRAY(SELECT hashint4(i) FROM generate_series(1, 2999) i)']);
SELECT * FROM check_type('text[]', ARRAY['''{}''', '''{""}''', '''{a,b}''', '''{NULL,a}''',
                                         'ARRAY(SELECT md5(i::text) FROM generate_series(1, 300) i)'],
                         ARRAY['''{b,a}''', '''{a}''', '''{"",""}''']);

-- The long values above really are TOASTed: stored out of line (in the
-- table's TOAST relation) or compressed.
CREATE FUNCTION toasted(tbl regclass) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    out_of_line bool;
    compressed bool;
BEGIN
    SELECT pg_relation_size(reltoastrelid) > 0 INTO out_of_line FROM pg_class WHERE oid = tbl;
    EXECUTE format('SELECT bool_or(pg_column_compression(v) IS NOT NULL) FROM %s', tbl)
        INTO compressed;
    RETURN format('out of line: %s, compressed: %s', out_of_line, compressed);
END
$$;
SELECT t, toasted(t::regclass)
FROM unnest(ARRAY['ty_numeric', 'ty_text', 'ty_varchar', 'ty_bpchar', 'ty_bytea', 'ty_jsonb',
                  'ty_int4_array', 'ty_text_array']) t;

-- Every type in one index: each column has its own hash path and seed.
CREATE TABLE tall (id int4, i2 int2, i8 int8, f4 float4, f8 float8, n numeric, b bool,
                   t text, c char(4), by bytea, u uuid, d date, ts timestamptz,
                   iv interval, ip inet, j jsonb, m mood, a int4[]);
INSERT INTO tall
SELECT i, (i % 7)::int2, i % 11, (i % 13) / 2.0, (i % 17) / 4.0, (i % 19) / 10.0, i % 2 = 0,
       't' || i % 23, 'c' || i % 5, int4send(i % 29), md5((i % 31)::text)::uuid,
       '2000-01-01'::date + i % 37, '2000-01-01 00:00+00'::timestamptz + (i % 41) * interval '1 hour',
       (i % 43) * interval '1 minute', ('10.0.0.' || i % 47)::inet,
       jsonb_build_object('k', i % 53), (ARRAY['sad', 'meh', 'ok', 'happy'])[1 + i % 4]::mood,
       ARRAY[i % 59, i % 61]
FROM generate_series(1, 3000) i;
CREATE INDEX tall_bl ON tall USING bloomidx (i2, i8, f4, f8, n, b, t, c, by, u, d, ts, iv, ip, j, m, a);
SELECT cols, index_vs_seqscan('SELECT id FROM tall WHERE ' || cols)
FROM (VALUES ('i2 = 3 AND f4 = 2.5'), ('i8 = 5 AND f8 = 1.25 AND n = 0.7'),
             ('b = true AND t = ''t4'''), ('b = false AND c = ''c3'''),
             ('by = int4send(7) AND u = md5(''7'')::uuid'),
             ('d = ''2000-01-08'' AND ts = ''2000-01-01 07:00+00'''),
             ('iv = ''5 minutes'' AND ip = ''10.0.0.5'''),
             ('j = ''{"k": 9}'' AND m = ''ok'''), ('a = ''{10,10}'''),
             ('a = ''{10,10}'' AND m = ''meh'' AND i2 = 3'),
             ('j = ''{"k": 9}'' AND m = ''sad''')) AS q(cols);
