--
-- Sizing by target false-positive rate: an index built with
-- false_positive_rate = 0.01 keeps at most about 1% of the rows on a
-- single-column miss (measured: at most 0.012 on 200,000 rows).  Without
-- segment filters, which would skip most segments on a miss and hide the
-- signature's own rate (sql/segment_filters.sql has them).
--
CREATE TABLE tsz (a int4, b int8, c text, d int4);
INSERT INTO tsz
SELECT i, i * 7, 'value ' || i, i % 5000 FROM generate_series(1, 200000) i;
CREATE INDEX tsz_bl ON tsz USING bloomidx (a, b, c, d) WITH (false_positive_rate = 0.01, segment_filter_rate = 0);
ANALYZE tsz;

-- 60 values per column that are not in the table.
SELECT col, rate <= 0.012 AS rate_at_most_0_012, rate > 0.0005 AS not_oversized
FROM (SELECT col, miss_rate('tsz', array_agg(format('%s = %s', col, val))) AS rate
      FROM (VALUES ('a'), ('b'), ('c'), ('d')) AS c(col),
           LATERAL (SELECT CASE WHEN col = 'c' THEN quote_literal('absent ' || k)
                                ELSE (-k)::text END AS val
                    FROM generate_series(1, 60) k) v
      GROUP BY col) r
ORDER BY col;

-- And hits are all found.
SELECT cols, index_vs_seqscan('SELECT a FROM tsz WHERE ' || cols)
FROM (VALUES ('a = 777'), ('b = 7777'), ('c = ''value 99'''), ('d = 4999'), ('d = 17 AND a = 5017')) AS q(cols);
