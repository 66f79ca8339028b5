--
-- NULLs in indexed columns: rows with NULLs are indexed (a NULL sets bits
-- of its own), found by equalities on their other columns and by IS NULL,
-- never by "= NULL".
--
CREATE TABLE tn (id int4, a int4, b text, c int8);
INSERT INTO tn
SELECT i,
       CASE WHEN i % 3 = 0 THEN NULL ELSE i % 50 END,
       CASE WHEN i % 5 = 0 THEN NULL ELSE 'v' || (i % 40) END,
       CASE WHEN i % 7 = 0 THEN NULL ELSE i % 60 END
FROM generate_series(1, 10000) i;
INSERT INTO tn VALUES (0, NULL, NULL, NULL);
CREATE INDEX tn_bl ON tn USING bloomidx (a, b, c);

SELECT cols, index_vs_seqscan('SELECT id FROM tn WHERE ' || cols)
FROM (VALUES ('a = 1'), ('b = ''v1'''), ('c = 1'), ('a = 1 AND b = ''v1'''),
             ('a = 2 AND c = 2'), ('b = ''v3'' AND c = 3'),
             ('a = 4 AND b = ''v4'' AND c = 4')) AS q(cols);

-- IS NULL is an index condition, alone or with equalities; IS NOT NULL
-- tests no bits but stays correct.
SELECT cols, index_vs_seqscan('SELECT id FROM tn WHERE ' || cols)
FROM (VALUES ('a IS NULL'), ('b IS NULL'), ('a IS NULL AND b IS NULL AND c IS NULL'),
             ('a IS NULL AND c = 3'), ('b IS NULL AND a = 4'), ('c IS NULL AND b = ''v7'''),
             ('a IS NOT NULL AND b = ''v2'''), ('a IS NOT NULL AND b IS NULL'),
             ('a = 3 AND a IS NULL')) AS q(cols);
-- "= NULL" matches nothing, through the index too.
SET enable_seqscan = off;
SELECT count(*) FROM tn WHERE a = NULL::int4 AND b = 'v1';
RESET enable_seqscan;
