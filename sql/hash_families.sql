--
-- Hashing that agrees with equality across a whole operator family:
-- values equal under a type's "=" must set the same bits, whatever
-- PostgreSQL's hash function does with them, and a key of another type of
-- the family must set the bits an equal value of the column's type set.
--

-- char(n) under a nondeterministic collation: PostgreSQL 15's
-- hashbpcharextended keeps the trailing blanks there (its ICU path hashes
-- the whole padded value) although "=" ignores them.
CREATE COLLATION hf_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE bp (id int, c char(8) COLLATE hf_ci, a char(8)[] COLLATE hf_ci, v varchar(8) COLLATE hf_ci);
INSERT INTO bp
SELECT i, CASE WHEN i % 100 = 0 THEN 'abc' ELSE md5(i::text)::char(8) END,
       ARRAY[CASE WHEN i % 100 = 0 THEN 'abc' ELSE md5(i::text) END, 'x']::char(8)[],
       CASE WHEN i % 100 = 0 THEN 'abc' ELSE md5(i::text)::varchar(8) END
FROM generate_series(1, 10000) i;
CREATE INDEX bp_bl ON bp USING bloomidx (c, a, v);
SELECT 'abc'::char(8) = 'ABC  ' COLLATE hf_ci AS blank_and_case_insensitive;
SELECT q, index_vs_seqscan('SELECT id FROM bp WHERE ' || q)
FROM (VALUES ('c = ''abc'''), ('c = ''ABC'''), ('c = ''abc     '''), ('c = ''abc''::char(3)'),
             ('c = ANY (''{abc, AbC  , zzz}'')'), ('a = ''{abc,x}'''), ('a = ''{ABC  ,X}'''),
             ('a = ARRAY[''abc''::char(3), ''x'']'), ('v = ''ABC'''), ('c = ''abd''')) AS x(q);
-- The same through a sequential scan and the index, counted.
SET enable_seqscan = off;
SELECT count(*) AS through_index FROM bp WHERE c = 'abc';
RESET enable_seqscan;
SELECT count(*) AS by_seqscan FROM bp WHERE c = 'abc';

-- Arrays of a domain over char(n) too; but inside a composite or a range,
-- PostgreSQL's hash functions reach hashbpcharextended with the blanks: such
-- a column is refused, at CREATE INDEX, rather than answered wrongly.
CREATE DOMAIN hf_code AS char(8) COLLATE hf_ci;
CREATE TABLE bpn (id int, d hf_code[], r int);
INSERT INTO bpn SELECT i, ARRAY[CASE WHEN i % 50 = 0 THEN 'abc' ELSE md5(i::text) END]::hf_code[], i
FROM generate_series(1, 2000) i;
CREATE INDEX bpn_bl ON bpn USING bloomidx (d);
SELECT index_vs_seqscan('SELECT id FROM bpn WHERE d = ARRAY[''ABC  '']::hf_code[]');
CREATE TYPE hf_pair AS (c char(8) COLLATE hf_ci, n int);
CREATE TYPE hf_range AS RANGE (subtype = bpchar, collation = hf_ci);
ALTER TABLE bpn ADD COLUMN p hf_pair[], ADD COLUMN g hf_range[];
CREATE INDEX bpn_p ON bpn USING bloomidx (p);
CREATE INDEX bpn_g ON bpn USING bloomidx (r, g);
-- bloomidx_advise refuses such a column too, rather than advise a CREATE
-- INDEX that fails.
ANALYZE bpn;
SELECT create_index FROM bloomidx_advise('bpn', '{r, p}');
DROP TABLE bpn;
DROP TYPE hf_pair, hf_range;
DROP DOMAIN hf_code;

-- The array operator class takes every array type, also one whose
-- elements have no extended hash function (point[]): hash_array_extended
-- fails on the first array it hashes, so that an index built on an empty
-- table would make every INSERT fail.  CREATE INDEX refuses the type, and
-- so does bloomidx_advise.
CREATE TABLE hf_points (p point[]);
CREATE INDEX ON hf_points USING bloomidx (p);
INSERT INTO hf_points VALUES ('{"(1,2)"}');
ANALYZE hf_points;
SELECT create_index FROM bloomidx_advise('hf_points', '{p}');
DROP TABLE hf_points;

-- Under a deterministic collation char(n) hashes its bytes without the
-- trailing blanks: the same answers, and rows that differ only there match.
CREATE TABLE bpd (id int, c char(6) COLLATE "C", a char(6)[] COLLATE "C");
INSERT INTO bpd SELECT i, (i % 500)::text, ARRAY[(i % 500)::text, NULL] FROM generate_series(1, 5000) i;
CREATE INDEX bpd_bl ON bpd USING bloomidx (c, a);
SELECT q, index_vs_seqscan('SELECT id FROM bpd WHERE ' || q)
FROM (VALUES ('c = ''42'''), ('c = ''42    '''), ('c = ''42''::char(2)'), ('a = ''{42,NULL}'''),
             ('a = ARRAY[''42 ''::char(3), NULL]'), ('c = ''42x''')) AS x(q);

-- A cross-type member added to a shipped family: text = name, with name's
-- own hash function.  text under a deterministic collation takes a byte
-- path, name does not: the family no longer hashes alike through bytes.
-- (name's collation is "C": a text column of another one is not
-- comparable with a name through an index.)
CREATE TABLE hf_tn (id int, t text COLLATE "C");
INSERT INTO hf_tn SELECT i, 'v' || i FROM generate_series(1, 5000) i;
CREATE INDEX hf_tn_before ON hf_tn USING bloomidx (t);
ALTER OPERATOR FAMILY text_ops USING bloomidx ADD
    OPERATOR 1 = (text, name),
    FUNCTION 1 (name, name) hashnameextended(name, int8);
SELECT amvalidate(oid) FROM pg_opclass
WHERE opcname = 'text_ops' AND opcmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomidx');
-- Built before: its values went through the byte path, which a name key
-- cannot take, so the key tests no bits and the recheck decides.
SELECT index_vs_seqscan('SELECT id FROM hf_tn WHERE t = ''v42''::name');
SELECT (bitmap_index_node('SELECT id FROM hf_tn WHERE t = ''v42''::name')->>'Actual Rows')::numeric::int AS candidates;
-- Built after: every member's function, so the name key is selective.
CREATE INDEX hf_tn_after ON hf_tn USING bloomidx (t);
DROP INDEX hf_tn_before;
SELECT index_vs_seqscan('SELECT id FROM hf_tn WHERE t = ''v42''::name');
SELECT index_vs_seqscan('SELECT id FROM hf_tn WHERE t = ''v42''');
SELECT index_vs_seqscan('SELECT id FROM hf_tn WHERE t = ANY (ARRAY[''v7'', ''v4999'', ''nope'']::name[])');
SELECT (bitmap_index_node('SELECT id FROM hf_tn WHERE t = ''v42''::name')->>'Actual Rows')::numeric::int < 10 AS selective;
INSERT INTO hf_tn VALUES (5001, 'v5001');
SELECT index_vs_seqscan('SELECT id FROM hf_tn WHERE t = ''v5001''::name');
-- Under a nondeterministic collation, name's hash (its bytes) and text's
-- (ICU sort keys) disagree on values "=" finds equal: a name key then
-- tests no bits.
CREATE COLLATION hf_ci2 (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
CREATE TABLE hf_tci (id int, t text COLLATE hf_ci2);
INSERT INTO hf_tci SELECT i, 'v' || i FROM generate_series(1, 3000) i;
INSERT INTO hf_tci VALUES (0, 'ABC'), (-1, 'abc');
CREATE INDEX hf_tci_bl ON hf_tci USING bloomidx (t);
SELECT q, index_vs_seqscan('SELECT id FROM hf_tci WHERE ' || q)
FROM (VALUES ('t = ''abc''::name COLLATE hf_ci2'), ('t = ''V42''::name COLLATE hf_ci2'),
             ('t = ''V42''')) AS x(q);
DROP TABLE hf_tn, hf_tci;
DROP COLLATION hf_ci2;
ALTER OPERATOR FAMILY text_ops USING bloomidx DROP
    OPERATOR 1 (text, name),
    FUNCTION 1 (name, name);

-- A family amvalidate rejects still answers right: date = timestamp is in
-- no hash family (their hashes disagree: days against microseconds), so
-- such a key tests no bits.
ALTER OPERATOR FAMILY date_ops USING bloomidx ADD
    OPERATOR 1 = (date, timestamp),
    FUNCTION 1 (timestamp, timestamp) timestamp_hash_extended(timestamp, int8);
CREATE TABLE hf_td (id int, d date);
INSERT INTO hf_td SELECT i, '2020-01-01'::date + (i % 1000) FROM generate_series(1, 5000) i;
CREATE INDEX hf_td_bl ON hf_td USING bloomidx (d);
SELECT index_vs_seqscan('SELECT id FROM hf_td WHERE d = ''2020-01-05 00:00''::timestamp');
SELECT index_vs_seqscan('SELECT id FROM hf_td WHERE d = ''2020-01-05''');
DROP TABLE hf_td;
ALTER OPERATOR FAMILY date_ops USING bloomidx DROP
    OPERATOR 1 (date, timestamp),
    FUNCTION 1 (timestamp, timestamp);


-- Broken families are reported by amvalidate instead of answering wrongly:
-- a cross-type "=" whose other type has no hash function here, and a hash
-- function that is not the one PostgreSQL's hash family uses for "=".
CREATE OPERATOR FAMILY hf_int USING bloomidx;
CREATE OPERATOR CLASS hf_int4_ops FOR TYPE int4 USING bloomidx FAMILY hf_int AS
    OPERATOR 1 = (int4, int4),
    FUNCTION 1 hashint4extended(int4, int8);
ALTER OPERATOR FAMILY hf_int USING bloomidx ADD OPERATOR 1 = (int4, int8);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'hf_int4_ops';
ALTER OPERATOR FAMILY hf_int USING bloomidx ADD
    FUNCTION 1 (int8, int8) hashint8extended(int8, int8);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'hf_int4_ops';
CREATE FUNCTION hf_lower_hash(text, int8) RETURNS int8
LANGUAGE sql IMMUTABLE STRICT AS 'SELECT hashtextextended(lower($1), $2)';
CREATE OPERATOR CLASS hf_text_ops FOR TYPE text USING bloomidx AS
    OPERATOR 1 = (text, text),
    FUNCTION 1 hf_lower_hash(text, int8);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'hf_text_ops';
-- "<" is no equality any hash family knows.
CREATE OPERATOR CLASS hf_lt_ops FOR TYPE int2 USING bloomidx AS
    OPERATOR 1 < (int2, int2),
    FUNCTION 1 hashint2extended(int2, int8);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'hf_lt_ops';
DROP OPERATOR FAMILY hf_int USING bloomidx;
DROP OPERATOR CLASS hf_text_ops USING bloomidx;
DROP OPERATOR CLASS hf_lt_ops USING bloomidx;
DROP FUNCTION hf_lower_hash(text, int8);
DROP TABLE bp, bpd;
DROP COLLATION hf_ci;
