--
-- Randomized check of the one promise: thousands of random equality
-- queries on random subsets of six columns (with NULLs, four types),
-- each answered through the index and by a sequential scan; the answers
-- must be identical, before and after DELETE, UPDATE, VACUUM and INSERT.
-- The signature is short (64 bits), so many rows are false positives the
-- recheck must drop.  Seeded, so a failure can be replayed.
--
SELECT setseed(0.2016);
CREATE TABLE rnd (id int4, i1 int4, i2 int8, t1 text, i3 int2, t2 text, i4 int4)
WITH (autovacuum_enabled = off);

CREATE FUNCTION rnd_value(col int) RETURNS text
LANGUAGE sql AS $$
    SELECT CASE col
        WHEN 1 THEN (floor(random() * 60))::int4::text
        WHEN 2 THEN (floor(random() * 2000) - 1000)::int8::text
        WHEN 3 THEN quote_literal('k' || floor(random() * 40))
        WHEN 4 THEN (floor(random() * 12))::int2::text
        WHEN 5 THEN quote_literal(md5(floor(random() * 500)::text))
        ELSE (floor(random() * 6))::int4::text
    END
$$;

CREATE FUNCTION rnd_fill(first int, last int) RETURNS void
LANGUAGE sql AS $$
    INSERT INTO rnd
    SELECT i,
           CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 60) END,
           CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 2000) - 1000 END,
           CASE WHEN random() < 0.1 THEN NULL ELSE 'k' || floor(random() * 40) END,
           CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 12) END,
           CASE WHEN random() < 0.1 THEN NULL ELSE md5(floor(random() * 500)::text) END,
           CASE WHEN random() < 0.1 THEN NULL ELSE floor(random() * 6) END
    FROM generate_series(first, last) i
$$;

-- Runs n random queries; half take their values from an existing row.
CREATE FUNCTION rnd_check(n int) RETURNS TABLE (queries int, differences int, with_rows int)
LANGUAGE plpgsql AS $$
DECLARE
    names text[] := ARRAY['i1', 'i2', 't1', 'i3', 't2', 'i4'];
    total int := (SELECT count(*) FROM rnd);
    rowvals text[];
    cond text;
    val text;
    outcome text;
BEGIN
    queries := 0; differences := 0; with_rows := 0;
    FOR q IN 1..n LOOP
        SELECT ARRAY[i1::text, i2::text, quote_literal(t1), i3::text, quote_literal(t2), i4::text]
            INTO rowvals FROM rnd OFFSET floor(random() * total) LIMIT 1;
        cond := NULL;
        WHILE cond IS NULL LOOP
            FOR c IN 1..6 LOOP
                CONTINUE WHEN random() < 0.6;
                val := CASE WHEN random() < 0.5 THEN rowvals[c] END;
                val := coalesce(val, rnd_value(c));
                cond := coalesce(cond || ' AND ', '') || names[c] || ' = ' || val;
            END LOOP;
        END LOOP;
        outcome := random_query_outcome('rnd', cond);
        queries := queries + 1;
        differences := differences + (outcome = 'different')::int;
        with_rows := with_rows + (outcome = 'rows')::int;
    END LOOP;
    RETURN NEXT;
END
$$;

SELECT rnd_fill(1, 8000);
CREATE INDEX rnd_bl ON rnd USING bloomidx (i1, i2, t1, i3, t2, i4)
    WITH (length = 64, col1 = 2, col2 = 3, col3 = 2, col4 = 1, col5 = 4, col6 = 1);
ANALYZE rnd;

SELECT 'after build' AS phase, queries, differences, with_rows > queries / 4 AS enough_hits
FROM rnd_check(800);

DELETE FROM rnd WHERE random() < 0.2;
UPDATE rnd SET i1 = floor(random() * 60), t1 = 'k' || floor(random() * 40) WHERE random() < 0.2;
SELECT 'after delete and update' AS phase, queries, differences, with_rows > queries / 4 AS enough_hits
FROM rnd_check(700);

VACUUM rnd;
SELECT 'after vacuum' AS phase, queries, differences, with_rows > queries / 4 AS enough_hits
FROM rnd_check(700);

SELECT rnd_fill(8001, 12000);
SELECT 'after insert into freed space' AS phase, queries, differences, with_rows > queries / 4 AS enough_hits
FROM rnd_check(800);

-- Over directory pages: rebuilt in segments of 64 rows, more than the 224
-- the metapage lists (the rest on directory pages), then rows deleted,
-- VACUUM merging, and rows inserted and sealed.
SELECT rnd_fill(12001, 20000);
SET bloomidx.segment_rows = 64;
REINDEX INDEX rnd_bl;
SELECT segments > 224 AS directory_pages FROM bloomidx_index_info('rnd_bl');
SELECT 'over directory pages' AS phase, queries, differences, with_rows > queries / 4 AS enough_hits
FROM rnd_check(600);
DELETE FROM rnd WHERE random() < 0.6;
SELECT wait_for_older_xacts();
VACUUM rnd;
SELECT rnd_fill(20001, 24000);
SELECT 'over directory pages, after merges and seals' AS phase, queries, differences,
       with_rows > queries / 4 AS enough_hits
FROM rnd_check(600);
-- VACUUM seals what is pending, the list's last page too, in an index
-- whose segments hold a segment's worth of live rows or more.
SELECT pending_rows > 0 AS some_pending FROM bloomidx_index_info('rnd_bl');
SELECT wait_for_older_xacts();
VACUUM rnd;
SELECT pending_rows = 0 AS none_pending FROM bloomidx_index_info('rnd_bl');
SELECT 'over directory pages, after VACUUM sealed the tail' AS phase, queries, differences,
       with_rows > queries / 4 AS enough_hits
FROM rnd_check(400);
SELECT bloomidx_verify('rnd_bl');
RESET bloomidx.segment_rows;
