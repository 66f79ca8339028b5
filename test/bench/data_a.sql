-- Data set A, as in PostgreSQL's bloom documentation: six int4 columns
-- (random() * 1000000)::int, no NULLs.  psql variable rows: how many.
-- Queries use i2, i3 and i5, not i1: the btree on all columns leads with i1.
CREATE FUNCTION gen_a(nrows bigint)
RETURNS TABLE (i1 int4, i2 int4, i3 int4, i4 int4, i5 int4, i6 int4) LANGUAGE sql AS $$
    SELECT (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int,
           (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int
    FROM generate_series(1, nrows)
$$;
INSERT INTO dataset VALUES ('a', :rows, '{i1, i2, i3, i4, i5, i6}', '{i1, i2, i3, i4, i5, i6}',
    'Data set A, as in PostgreSQL''s bloom documentation: six int4 columns `(random() * 1000000)::int`, no NULLs.',
    '{i2, i5}');

SELECT setseed(0.42);
CREATE TABLE a_bloomidx AS SELECT * FROM gen_a(:rows);

-- Hits take their values from rows of the table; misses use values outside
-- 0 .. 1000000, so every row a miss's index scan returns is a false positive.
INSERT INTO query (ds, ord, label, short, cond, miss_cols, shown, miss)
SELECT 'a', q.* FROM (SELECT * FROM a_bloomidx LIMIT 1 OFFSET :rows / 3) r,
    (SELECT string_agg(i2::text, ', ') AS list FROM (SELECT i2 FROM a_bloomidx LIMIT 10 OFFSET :rows / 2) s) l,
    LATERAL (VALUES
        (1, '1-column hit', '1-col hit', format('i2 = %s', r.i2), NULL, NULL, NULL),
        (2, '2-column hit', '2-col hit', format('i2 = %s AND i5 = %s', r.i2, r.i5), NULL, NULL, NULL),
        (3, '3-column hit', '3-col hit', format('i2 = %s AND i3 = %s AND i5 = %s', r.i2, r.i3, r.i5), NULL, NULL, NULL),
        (4, '1-column miss', '1-col miss', NULL, '2', NULL, 'i2 = -%1$s'),
        (5, '2-column miss', '2-col miss', NULL, '2,5', NULL, 'i2 = -%1$s AND i5 = -%1$s'),
        (6, '3-column miss', '3-col miss', NULL, '2,3,5', NULL, 'i2 = -%1$s AND i3 = -%1$s AND i5 = -%1$s'),
        (7, 'IN list of 10 values', 'IN (10)', format('i2 IN (%s)', l.list), NULL, 'i2 IN (10 values of i2)', NULL),
        (8, 'IS NULL', 'IS NULL', 'i2 IS NULL', NULL, NULL, NULL)) q;
