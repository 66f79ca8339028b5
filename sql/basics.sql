--
-- The index is used for equality on any subset of its columns, and always
-- answers exactly what a sequential scan answers.
--
CREATE TABLE t (id int4, a int4, b int8, c text, d int2);
INSERT INTO t
SELECT i, i % 97, (i % 1013)::int8, 'text' || (i % 31), (i % 7)::int2
FROM generate_series(1, 20000) i;
CREATE INDEX t_bl ON t USING bloomidx (a, b, c, d) WITH (length = 96, col1 = 3, col3 = 4);
ANALYZE t;

SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM t WHERE b = 42 AND c = 'text11';
RESET enable_seqscan;

-- Every subset of the four columns, with hits.
SELECT cols, index_vs_seqscan('SELECT id FROM t WHERE ' || cols)
FROM (VALUES ('a = 5'), ('b = 42'), ('c = ''text3'''), ('d = 3'),
             ('a = 5 AND b = 5'), ('a = 5 AND c = ''text5'''), ('a = 6 AND d = 6'),
             ('b = 17 AND c = ''text17'''), ('b = 8 AND d = 1'), ('c = ''text4'' AND d = 4'),
             ('a = 9 AND b = 9 AND c = ''text9'''), ('a = 2 AND b = 2 AND d = 2'),
             ('a = 3 AND c = ''text3'' AND d = 3'), ('b = 10 AND c = ''text10'' AND d = 3'),
             ('a = 1 AND b = 1 AND c = ''text1'' AND d = 1')) AS q(cols);

-- Misses: values that are not there, and combinations that never occur.
SELECT cols, index_vs_seqscan('SELECT id FROM t WHERE ' || cols)
FROM (VALUES ('a = 1000'), ('b = -1'), ('c = ''nothing'''), ('c = '''''),
             ('a = 5 AND b = 6'), ('a = 1 AND b = 1 AND c = ''text1'' AND d = 2')) AS q(cols);

-- Cross-type integer equality uses the index (one operator family).
SELECT cols, index_vs_seqscan('SELECT id FROM t WHERE ' || cols)
FROM (VALUES ('b = 42'), ('b = 42::int2'), ('a = 5::int8'), ('a = 5::int2'),
             ('d = 3::int8'), ('d = 3'), ('b = 4000000000')) AS q(cols);

-- Equality with NULL matches nothing.
SELECT count(*) FROM t WHERE a = NULL;
SET enable_seqscan = off;
SELECT count(*) FROM t WHERE a = NULL AND b = 1;
RESET enable_seqscan;

-- Rows inserted after the build are found too.
INSERT INTO t
SELECT i, i % 89, (i % 1009)::int8, 'new' || (i % 13), (i % 5)::int2
FROM generate_series(20001, 30000) i;
SELECT cols, index_vs_seqscan('SELECT id FROM t WHERE ' || cols)
FROM (VALUES ('a = 88'), ('c = ''new3'''), ('a = 5 AND c = ''new5'''),
             ('b = 1008 AND d = 3')) AS q(cols);

-- Long (TOASTed) text values.
INSERT INTO t VALUES (40000, 1, 1, repeat('long', 5000), 1);
SELECT index_vs_seqscan('SELECT id FROM t WHERE c = repeat(''long'', 5000)');

-- Operators other than "=" do not use the index, and give right answers.
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM t WHERE a < 3;
RESET enable_seqscan;
