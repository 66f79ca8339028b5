--
-- Indexes on UNLOGGED and TEMP tables.
--
CREATE UNLOGGED TABLE tu (id int4, a int4, b text);
INSERT INTO tu SELECT i, i % 50, 'u' || (i % 33) FROM generate_series(1, 5000) i;
CREATE INDEX tu_bl ON tu USING bloomidx (a, b);
SELECT relpersistence FROM pg_class WHERE oid = 'tu_bl'::regclass;
INSERT INTO tu SELECT i, i % 50, 'w' || (i % 33) FROM generate_series(5001, 8000) i;
SELECT cols, index_vs_seqscan('SELECT id FROM tu WHERE ' || cols)
FROM (VALUES ('a = 1'), ('b = ''w1'''), ('a = 2 AND b = ''u2''')) AS q(cols);
DELETE FROM tu WHERE id < 3000;
VACUUM tu;
SELECT index_vs_seqscan('SELECT id FROM tu WHERE a = 1');

-- An UNLOGGED table created empty: the index starts from its init fork.
CREATE UNLOGGED TABLE tu2 (a int4);
CREATE INDEX tu2_bl ON tu2 USING bloomidx (a);
INSERT INTO tu2 SELECT generate_series(1, 1000);
SELECT index_vs_seqscan('SELECT a FROM tu2 WHERE a = 500');

CREATE TEMP TABLE ttemp (a int4, b int8);
INSERT INTO ttemp SELECT i % 10, i FROM generate_series(1, 3000) i;
CREATE INDEX ttemp_bl ON ttemp USING bloomidx (a, b);
INSERT INTO ttemp SELECT i % 10, i FROM generate_series(3001, 6000) i;
SELECT index_vs_seqscan('SELECT b FROM ttemp WHERE a = 3 AND b = 5003');
