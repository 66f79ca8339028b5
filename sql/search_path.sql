--
-- The extension script is safe against a hostile search_path: it names
-- every operator, function and type with its schema, so look-alikes that
-- come earlier in the path (or in the schema the extension goes into)
-- are never picked up; it never takes over an object that exists already;
-- and none of its functions is SECURITY DEFINER or trusts the caller's
-- search_path.  Runs first after the helpers: it drops and recreates the
-- extension, which drops every bloomidx index, and those the later tests
-- leave are verified after the run (test/run-tests.sh, regress_wal_check).
--

-- Look-alikes of what the script refers to: the hash functions of the
-- opclasses, returning a constant (every value would set the same bits),
-- and "=" operators that say everything is equal (an index with one of
-- them as its strategy would answer wrong, not only slowly), and a type
-- int8 that is an int4.
CREATE SCHEMA evil;
CREATE FUNCTION evil.hashint4extended(pg_catalog.int4, pg_catalog.int8)
RETURNS pg_catalog.int8 LANGUAGE sql IMMUTABLE AS 'SELECT 42::pg_catalog.int8';
CREATE FUNCTION evil.hashint8extended(pg_catalog.int8, pg_catalog.int8)
RETURNS pg_catalog.int8 LANGUAGE sql IMMUTABLE AS 'SELECT 42::pg_catalog.int8';
CREATE FUNCTION evil.hashtextextended(pg_catalog.text, pg_catalog.int8)
RETURNS pg_catalog.int8 LANGUAGE sql IMMUTABLE AS 'SELECT 42::pg_catalog.int8';
CREATE FUNCTION evil.hash_numeric_extended(pg_catalog.numeric, pg_catalog.int8)
RETURNS pg_catalog.int8 LANGUAGE sql IMMUTABLE AS 'SELECT 42::pg_catalog.int8';
CREATE FUNCTION evil.uuid_hash_extended(pg_catalog.uuid, pg_catalog.int8)
RETURNS pg_catalog.int8 LANGUAGE sql IMMUTABLE AS 'SELECT 42::pg_catalog.int8';
CREATE FUNCTION evil.int4_eq(pg_catalog.int4, pg_catalog.int4)
RETURNS pg_catalog.bool LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE FUNCTION evil.text_eq(pg_catalog.text, pg_catalog.text)
RETURNS pg_catalog.bool LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE FUNCTION evil.numeric_eq(pg_catalog.numeric, pg_catalog.numeric)
RETURNS pg_catalog.bool LANGUAGE sql IMMUTABLE AS 'SELECT true';
CREATE OPERATOR evil.= (LEFTARG = pg_catalog.int4, RIGHTARG = pg_catalog.int4,
                        FUNCTION = evil.int4_eq);
CREATE OPERATOR evil.= (LEFTARG = pg_catalog.text, RIGHTARG = pg_catalog.text,
                        FUNCTION = evil.text_eq);
CREATE OPERATOR evil.= (LEFTARG = pg_catalog.numeric, RIGHTARG = pg_catalog.numeric,
                        FUNCTION = evil.numeric_eq);
CREATE DOMAIN evil.int8 AS pg_catalog.int4;

-- A table to index later (made here, in public, under the usual path).
CREATE TABLE sp (id int4, a int4, b int8, c text, n numeric, u uuid);
INSERT INTO sp
SELECT i, i % 101, 10000000000 + i % 977, 'sp' || (i % 61),
       CASE WHEN i % 19 = 0 THEN NULL ELSE (i % 43) / 4.0 END,
       md5((i % 500)::text)::uuid
FROM generate_series(1, 20000) i;
ANALYZE sp;

SET search_path = evil, public, pg_catalog;

-- The look-alikes win for unqualified names in this session.
SELECT 1 = 2 AS "1 = 2", 'x'::text = 'y' AS "'x' = 'y'",
       hashint4extended(1, 0) AS hashint4extended,
       hashtextextended('x', 0) AS hashtextextended,
       pg_typeof(1::int8) <> 'bigint'::regtype AS "int8 is not bigint";

SET client_min_messages = warning;	-- quiet about what CASCADE drops
DROP EXTENSION bloomidx CASCADE;
RESET client_min_messages;

-- The script creates its objects, it does not take them over: with a
-- function of the same name and arguments in its schema, it fails.
CREATE FUNCTION evil.bloomidx_verify(index pg_catalog.regclass)
RETURNS pg_catalog.void LANGUAGE sql AS '';
\set VERBOSITY terse
-- (terse: PostgreSQL 18 adds the script's statement and line as CONTEXT)
CREATE EXTENSION bloomidx;
\set VERBOSITY default
DROP FUNCTION evil.bloomidx_verify(pg_catalog.regclass);

-- The extension goes into the first schema of the path (it is relocatable):
-- the schema of the look-alikes, the worst place for it.
CREATE EXTENSION bloomidx;
SELECT e.extname, n.nspname AS schema, e.extrelocatable
FROM pg_catalog.pg_extension e
JOIN pg_catalog.pg_namespace n ON n.oid = e.extnamespace
WHERE e.extname = 'bloomidx';

-- Every operator of every bloomidx operator family, its function and its
-- operand types live in pg_catalog.
SELECT opn.nspname AS operator_schema, pn.nspname AS function_schema,
       count(*) AS operators,
       count(*) FILTER (WHERE lt.typnamespace <> 'pg_catalog'::pg_catalog.regnamespace
                           OR rt.typnamespace <> 'pg_catalog'::pg_catalog.regnamespace)
           AS operand_types_elsewhere,
       count(DISTINCT ao.amopfamily) AS families
FROM pg_catalog.pg_amop ao
JOIN pg_catalog.pg_am am ON am.oid = ao.amopmethod
JOIN pg_catalog.pg_operator o ON o.oid = ao.amopopr
JOIN pg_catalog.pg_namespace opn ON opn.oid = o.oprnamespace
JOIN pg_catalog.pg_proc p ON p.oid = o.oprcode
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
JOIN pg_catalog.pg_type lt ON lt.oid = ao.amoplefttype
JOIN pg_catalog.pg_type rt ON rt.oid = ao.amoprighttype
WHERE am.amname = 'bloomidx'
GROUP BY 1, 2;

-- Every support function, its argument and result types live in pg_catalog.
SELECT pn.nspname AS function_schema, count(*) AS support_functions,
       count(*) FILTER (WHERE EXISTS (
           SELECT FROM pg_catalog.unnest(p.proargtypes::pg_catalog.oid[] || p.prorettype) AS t(oid)
           JOIN pg_catalog.pg_type ty ON ty.oid = t.oid
           WHERE ty.typnamespace <> 'pg_catalog'::pg_catalog.regnamespace)) AS types_elsewhere,
       count(DISTINCT ap.amprocfamily) AS families
FROM pg_catalog.pg_amproc ap
JOIN pg_catalog.pg_opfamily f ON f.oid = ap.amprocfamily
JOIN pg_catalog.pg_am am ON am.oid = f.opfmethod
JOIN pg_catalog.pg_proc p ON p.oid = ap.amproc
JOIN pg_catalog.pg_namespace pn ON pn.oid = p.pronamespace
WHERE am.amname = 'bloomidx'
GROUP BY 1;

-- Nothing of the opclasses refers to anything in evil (zero rows).
SELECT 'operator' AS kind, ao.amopopr::pg_catalog.regoperator::pg_catalog.text AS object
FROM pg_catalog.pg_amop ao
JOIN pg_catalog.pg_am am ON am.oid = ao.amopmethod AND am.amname = 'bloomidx'
JOIN pg_catalog.pg_operator o ON o.oid = ao.amopopr
WHERE o.oprnamespace = 'evil'::pg_catalog.regnamespace
UNION ALL
SELECT 'support function', ap.amproc::pg_catalog.regprocedure::pg_catalog.text
FROM pg_catalog.pg_amproc ap
JOIN pg_catalog.pg_opfamily f ON f.oid = ap.amprocfamily
JOIN pg_catalog.pg_am am ON am.oid = f.opfmethod AND am.amname = 'bloomidx'
JOIN pg_catalog.pg_proc p ON p.oid = ap.amproc
WHERE p.pronamespace = 'evil'::pg_catalog.regnamespace
UNION ALL
SELECT 'opclass type', opc.opcintype::pg_catalog.regtype::pg_catalog.text
FROM pg_catalog.pg_opclass opc
JOIN pg_catalog.pg_am am ON am.oid = opc.opcmethod AND am.amname = 'bloomidx'
JOIN pg_catalog.pg_type ty ON ty.oid = opc.opcintype
WHERE ty.typnamespace <> 'pg_catalog'::pg_catalog.regnamespace;

-- The opclasses and families themselves are the extension's, in its schema;
-- its access method's handler is its own function.
SELECT 'opclass' AS kind, n.nspname AS schema, count(*) AS objects,
       count(*) FILTER (WHERE NOT EXISTS (
           SELECT FROM pg_catalog.pg_depend d
           WHERE d.classid = 'pg_catalog.pg_opclass'::pg_catalog.regclass AND d.objid = opc.oid
             AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
             AND d.deptype = 'e')) AS not_the_extensions
FROM pg_catalog.pg_opclass opc
JOIN pg_catalog.pg_am am ON am.oid = opc.opcmethod AND am.amname = 'bloomidx'
JOIN pg_catalog.pg_namespace n ON n.oid = opc.opcnamespace
GROUP BY 1, 2
UNION ALL
SELECT 'opfamily', n.nspname, count(*),
       count(*) FILTER (WHERE NOT EXISTS (
           SELECT FROM pg_catalog.pg_depend d
           WHERE d.classid = 'pg_catalog.pg_opfamily'::pg_catalog.regclass AND d.objid = f.oid
             AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
             AND d.deptype = 'e'))
FROM pg_catalog.pg_opfamily f
JOIN pg_catalog.pg_am am ON am.oid = f.opfmethod AND am.amname = 'bloomidx'
JOIN pg_catalog.pg_namespace n ON n.oid = f.opfnamespace
GROUP BY 1, 2
UNION ALL
SELECT 'handler ' || am.amhandler::pg_catalog.regprocedure::pg_catalog.text, n.nspname, 1,
       CASE WHEN pg_catalog.pg_describe_object(d.refclassid, d.refobjid, 0) = 'extension bloomidx'
            THEN 0 ELSE 1 END
FROM pg_catalog.pg_am am
JOIN pg_catalog.pg_proc p ON p.oid = am.amhandler
JOIN pg_catalog.pg_namespace n ON n.oid = p.pronamespace
LEFT JOIN pg_catalog.pg_depend d
       ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid
      AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
WHERE am.amname = 'bloomidx'
ORDER BY 1;

-- No object of the extension, nor an operator or function entry of its
-- families, depends on anything outside it but its own schema (zero rows):
-- a look-alike it had picked up would show here.  (Dependencies on
-- pg_catalog's built-in objects are not recorded.)
WITH members AS (
    SELECT d.classid, d.objid
    FROM pg_catalog.pg_depend d
    JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid
    WHERE d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass
      AND d.deptype = 'e' AND e.extname = 'bloomidx'
), parts AS (
    SELECT classid, objid FROM members
    UNION ALL
    SELECT 'pg_catalog.pg_amop'::pg_catalog.regclass, ao.oid
    FROM pg_catalog.pg_amop ao
    JOIN members m ON m.classid = 'pg_catalog.pg_opfamily'::pg_catalog.regclass
                  AND m.objid = ao.amopfamily
    UNION ALL
    SELECT 'pg_catalog.pg_amproc'::pg_catalog.regclass, ap.oid
    FROM pg_catalog.pg_amproc ap
    JOIN members m ON m.classid = 'pg_catalog.pg_opfamily'::pg_catalog.regclass
                  AND m.objid = ap.amprocfamily
)
SELECT pg_catalog.pg_describe_object(d.classid, d.objid, d.objsubid) AS object,
       pg_catalog.pg_describe_object(d.refclassid, d.refobjid, d.refobjsubid) AS depends_on
FROM pg_catalog.pg_depend d
JOIN parts p ON p.classid = d.classid AND p.objid = d.objid
WHERE NOT EXISTS (SELECT FROM members m
                  WHERE m.classid = d.refclassid AND m.objid = d.refobjid)
  AND NOT (d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass)
  AND NOT (d.refclassid = 'pg_catalog.pg_namespace'::pg_catalog.regclass
           AND d.refobjid = 'evil'::pg_catalog.regnamespace);

-- The extension's functions: C, not SECURITY DEFINER, no search_path of
-- their own to trust (bloomidx_verify runs index expressions with
-- search_path = pg_catalog, pg_temp; see verify.sql).
SELECT p.oid::pg_catalog.regprocedure AS function, l.lanname AS language,
       p.prosecdef AS security_definer, p.proconfig AS config
FROM pg_catalog.pg_depend d
JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
JOIN pg_catalog.pg_proc p ON p.oid = d.objid
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
  AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
ORDER BY p.oid::pg_catalog.regprocedure::pg_catalog.text;

-- None of them is SECURITY DEFINER, and none written in SQL or a PL
-- runs with the caller's search_path.
SELECT count(*) AS functions,
       count(*) FILTER (WHERE p.prosecdef) AS security_definer,
       count(*) FILTER (WHERE l.lanname NOT IN ('c', 'internal')
                          AND NOT EXISTS (SELECT FROM pg_catalog.unnest(p.proconfig) AS c(setting)
                                          WHERE c.setting LIKE 'search\_path=%'))
           AS trusting_search_path
FROM pg_catalog.pg_depend d
JOIN pg_catalog.pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
JOIN pg_catalog.pg_proc p ON p.oid = d.objid
JOIN pg_catalog.pg_language l ON l.oid = p.prolang
WHERE d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass
  AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e';

-- An index built and queried under this search_path.  Default opclasses,
-- and opclasses named unqualified (the extension's, in evil).
CREATE INDEX sp_bl ON public.sp USING bloomidx (a, b, c, n, u);
CREATE INDEX sp_named ON public.sp USING bloomidx (c text_ops, a int4_ops)
    WITH (false_positive_rate = 0.01);
SELECT i.indexrelid::pg_catalog.regclass AS index,
       pg_catalog.array_agg(opc.opcname || ' in ' || opcn.nspname ORDER BY k.n) AS opclasses
FROM pg_catalog.pg_index i
CROSS JOIN LATERAL pg_catalog.unnest(i.indclass::pg_catalog.oid[]) WITH ORDINALITY AS k(opc, n)
JOIN pg_catalog.pg_opclass opc ON opc.oid = k.opc
JOIN pg_catalog.pg_namespace opcn ON opcn.oid = opc.opcnamespace
WHERE i.indrelid = 'public.sp'::pg_catalog.regclass
GROUP BY 1 ORDER BY 1;

-- An unqualified "=" on int4 is evil's here, so it is no index condition
-- (and matches everything); pg_catalog's "=" uses the index.
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM public.sp WHERE a = 5;
EXPLAIN (COSTS OFF) SELECT id FROM public.sp WHERE a OPERATOR(pg_catalog.=) 5;
RESET enable_seqscan;

-- Answers equal a sequential scan's (public's helpers, called qualified).
SELECT q, public.index_vs_seqscan('SELECT id FROM public.sp WHERE ' || q)
FROM (VALUES ('a OPERATOR(pg_catalog.=) 5'),
             ('b OPERATOR(pg_catalog.=) 10000000042'),
             ('c OPERATOR(pg_catalog.=) ''sp7'''),
             ('n OPERATOR(pg_catalog.=) 2.5'),
             ('n OPERATOR(pg_catalog.=) 2.50 AND a OPERATOR(pg_catalog.=) 10'),
             ('u OPERATOR(pg_catalog.=) pg_catalog.md5(''7'')::pg_catalog.uuid'),
             ('a OPERATOR(pg_catalog.=) 3 AND c OPERATOR(pg_catalog.=) ''sp3'''),
             ('a OPERATOR(pg_catalog.=) 7 AND b OPERATOR(pg_catalog.=) 10000000007 AND c OPERATOR(pg_catalog.=) ''sp7'''),
             ('c OPERATOR(pg_catalog.=) ''nothing'''),
             ('n IS NULL AND a OPERATOR(pg_catalog.=) 19'),
             ('a OPERATOR(pg_catalog.=) ANY (ARRAY[1, 2, 1000])')) AS v(q);

-- The hash functions are the real ones: a lookup on one column keeps few
-- rows before recheck (with the look-alikes, every value would set the
-- same bits and every one of the 20000 rows would pass).
SELECT q, (public.bitmap_index_node('SELECT id FROM public.sp WHERE ' || q)
           ->> 'Actual Rows')::pg_catalog.numeric::pg_catalog.int4 OPERATOR(pg_catalog.<) 200 AS few_rows_before_recheck
FROM (VALUES ('c OPERATOR(pg_catalog.=) ''nothing'''),
             ('n OPERATOR(pg_catalog.=) 99.5'),
             ('a OPERATOR(pg_catalog.=) 1000'),
             ('b OPERATOR(pg_catalog.=) 1'),
             ('u OPERATOR(pg_catalog.=) pg_catalog.md5(''x'')::pg_catalog.uuid'),
             ('b OPERATOR(pg_catalog.=) 10000000042')) AS v(q);

-- Writes after the build, then the extension's own verification (the
-- unqualified name is the extension's function, in evil).
INSERT INTO public.sp
SELECT i, i % 101, 10000000000 + i % 977, 'sp' || (i % 61), NULL, NULL
FROM pg_catalog.generate_series(20001, 22000) i;
DELETE FROM public.sp WHERE id OPERATOR(pg_catalog.%) 7 OPERATOR(pg_catalog.=) 0;
VACUUM public.sp;
SELECT 'bloomidx_verify(regclass)'::pg_catalog.regprocedure::pg_catalog.oid
       OPERATOR(pg_catalog.=) p.oid AS resolves_to_the_extensions
FROM pg_catalog.pg_proc p
JOIN pg_catalog.pg_depend d ON d.classid = 'pg_catalog.pg_proc'::pg_catalog.regclass AND d.objid = p.oid
     AND d.refclassid = 'pg_catalog.pg_extension'::pg_catalog.regclass AND d.deptype = 'e'
WHERE p.proname = 'bloomidx_verify';
SELECT bloomidx_verify('public.sp_bl');
SELECT bloomidx_verify('public.sp_named');
SELECT q, public.index_vs_seqscan('SELECT id FROM public.sp WHERE ' || q)
FROM (VALUES ('a OPERATOR(pg_catalog.=) 5'),
             ('c OPERATOR(pg_catalog.=) ''sp7'' AND n IS NULL'),
             ('b OPERATOR(pg_catalog.=) 10000000976')) AS v(q);

-- The event trigger runs at the end of every user's CREATE INDEX and ALTER
-- under their search_path: it calls no operator a look-alike could stand
-- in for (one that hid every command would let impossible options be
-- stored; one that ran SQL would run it as whoever issued the DDL).
CREATE FUNCTION evil.oid_eq(pg_catalog.oid, pg_catalog.oid)
RETURNS pg_catalog.bool LANGUAGE sql IMMUTABLE AS 'SELECT false';
CREATE OPERATOR evil.= (LEFTARG = pg_catalog.oid, RIGHTARG = pg_catalog.oid,
                        FUNCTION = evil.oid_eq);
CREATE TABLE public.sp_ddl (a pg_catalog.int4, b pg_catalog.int4);
CREATE INDEX sp_ddl_bl ON public.sp_ddl USING bloomidx (a, b);
ALTER INDEX public.sp_ddl_bl SET (col5 = 2);
SELECT reloptions FROM pg_catalog.pg_class WHERE oid OPERATOR(pg_catalog.=) 'public.sp_ddl_bl'::pg_catalog.regclass;
DROP TABLE public.sp_ddl;

RESET search_path;

-- Back to the usual state: the extension in public, no look-alikes.
DROP TABLE sp;
DROP EXTENSION bloomidx;
DROP SCHEMA evil CASCADE;
CREATE EXTENSION bloomidx;
SELECT n.nspname AS schema FROM pg_extension e
JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'bloomidx';
