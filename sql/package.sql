--
-- Packaging, as the server reads it: the settings of bloomidx.control,
-- the versions and the update path to the default one, and that the
-- extension is relocatable for real: ALTER EXTENSION bloomidx SET SCHEMA
-- moves every member object that has a schema, and the indexes built
-- before the move keep answering as a sequential scan does, new rows and
-- new indexes too.  (test/package/meta_check.pl checks META.json, the
-- control file, the Makefile and sql/ against each other.)
--

-- Superuser only, not trusted, relocatable, no schema of its own, no
-- other extension required; every version has the same settings.
SELECT version, installed, superuser, trusted, relocatable, schema, requires, comment
FROM pg_available_extension_versions WHERE name = 'bloomidx' ORDER BY version;
SELECT default_version, installed_version FROM pg_available_extensions WHERE name = 'bloomidx';

-- An install script, then update scripts, lead to the default version.
SELECT source, target, path FROM pg_extension_update_paths('bloomidx')
WHERE path IS NOT NULL ORDER BY source, target;

-- Where the extension is now (public, unless an earlier test moved it);
-- it goes back there at the end.
SELECT n.nspname AS home FROM pg_extension e
JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'bloomidx' \gset

CREATE TABLE pkg (id int, a int, b text, c int8);
INSERT INTO pkg
SELECT i, i % 101, 'pkg' || (i % 37), CASE WHEN i % 13 = 0 THEN NULL ELSE i % 59 END
FROM generate_series(1, 20000) i;
CREATE INDEX pkg_bl ON pkg USING bloomidx (a, b, c);
ANALYZE pkg;

CREATE SCHEMA bloomidx_moved;
ALTER EXTENSION bloomidx SET SCHEMA bloomidx_moved;

-- Every member object with a schema is in the new one; the access method
-- and the event trigger have none.
SELECT o.type, o.schema
FROM pg_depend d
JOIN pg_extension e ON e.oid = d.refobjid AND e.extname = 'bloomidx'
CROSS JOIN LATERAL pg_identify_object(d.classid, d.objid, d.objsubid) o
WHERE d.refclassid = 'pg_extension'::regclass AND d.deptype = 'e'
GROUP BY o.type, o.schema ORDER BY o.type, o.schema;

-- The index built before the move answers as a sequential scan does;
-- rows inserted after it are found; an index built after it takes the
-- default operator classes, wherever they are now.
SELECT q, index_vs_seqscan('SELECT id FROM pkg WHERE ' || q)
FROM (VALUES ('a = 5'), ('b = ''pkg7'' AND c = 12'), ('a IN (1, 2) AND c IS NULL')) AS v(q);
INSERT INTO pkg SELECT i, 5, 'pkg7', 12 FROM generate_series(20001, 20500) i;
SELECT q, index_vs_seqscan('SELECT id FROM pkg WHERE ' || q)
FROM (VALUES ('a = 5'), ('b = ''pkg7'' AND c = 12')) AS v(q);
CREATE TABLE pkg_after (id int, d date, u uuid);
INSERT INTO pkg_after
SELECT i, date '2024-01-01' + i % 400, md5((i % 300)::text)::uuid FROM generate_series(1, 5000) i;
CREATE INDEX pkg_after_bl ON pkg_after USING bloomidx (d, u);
ANALYZE pkg_after;
SELECT index_vs_seqscan('SELECT id FROM pkg_after WHERE d = date ''2024-02-01'' AND u = md5(''31'')::uuid');

-- The functions answer under their new schema, the event trigger still
-- checks options, and REINDEX rebuilds.
SELECT bloomidx_moved.bloomidx_verify('pkg_bl');
SELECT segment_rows + pending_rows AS entries FROM bloomidx_moved.bloomidx_index_info('pkg_bl');
ALTER INDEX pkg_bl SET (col4 = 2);
REINDEX INDEX pkg_bl;
SELECT bloomidx_moved.bloomidx_verify('pkg_bl');
SELECT index_vs_seqscan('SELECT id FROM pkg WHERE a = 5 AND b = ''pkg7''');

-- And back.
ALTER EXTENSION bloomidx SET SCHEMA :"home";
DROP SCHEMA bloomidx_moved;
SELECT n.nspname = :'home' AS back_home FROM pg_extension e
JOIN pg_namespace n ON n.oid = e.extnamespace WHERE e.extname = 'bloomidx';
DROP TABLE pkg_after;
