--
-- IN lists and = ANY are answered in one pass over the index, each
-- element's signature tested on its own; NULL elements and empty arrays
-- behave as in SQL.
--
-- (The index is made first: its rows, fewer than a segment's worth, stay
-- pending, as inserted.)
CREATE TABLE ts (id int4, a int4, b text, c int8);
CREATE INDEX ts_bl ON ts USING bloomidx (a, b, c);
INSERT INTO ts
SELECT i, CASE WHEN i % 10 = 0 THEN NULL ELSE i % 100 END, 'v' || (i % 37), i % 1000
FROM generate_series(1, 30000) i;
ANALYZE ts;

SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT * FROM ts WHERE a IN (1, 2, 3) AND b = 'v3';
RESET enable_seqscan;

SELECT cols, index_vs_seqscan('SELECT id FROM ts WHERE ' || cols)
FROM (VALUES ('a IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 11)'),
             ('a IN (1, 2, 3) AND b = ''v3'''),
             ('a = ANY (''{4, 5}'') AND b = ANY (''{v4, v5, v6}'')'),
             ('a = ANY (''{4, 5}'') AND c = ANY (''{4, 5, 105}'') AND b = ''v31'''),
             ('a IN (7)'),
             ('a IN (7, 7, 7)'),
             ('a = ANY (''{NULL, 5}''::int4[])'),
             ('a = ANY (''{NULL}''::int4[])'),
             ('a = ANY (''{}''::int4[])'),
             ('a = ANY (''{}''::int4[]) AND b = ''v1'''),
             ('a IN (-1, -2, 1000)'),
             ('c = ANY (''{5, 6}''::int4[])'),
             ('c = ANY (''{5, 6}''::int2[]) AND a = ANY (''{5, 6}''::int8[])'),
             ('b = ANY (ARRAY[''v1'', NULL, ''v2''])'),
             ('a IS NULL AND c IN (10, 20, 30)'),
             ('a IN (1, 2) AND a IN (2, 3)')) AS q(cols);

-- One pass over the index for the whole list: the buffers read for an IN
-- list of ten values are those of one value.
SELECT index_buffers('SELECT * FROM ts WHERE a IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 11)')
     = index_buffers('SELECT * FROM ts WHERE a = 1') AS one_pass,
       index_buffers('SELECT * FROM ts WHERE a = 1')
     > (SELECT pending_pages FROM bloomidx_index_info('ts_bl'))
       AS reads_metapage_and_every_pending_page;
