--
-- Memory stays flat over a large INSERT ... SELECT: each row's hashing
-- runs in a context reset after the row (numeric's hash function detoasts
-- its argument, about 32 bytes a row that would otherwise pile up in the
-- statement's context until it ends).  A probe in the SELECT list samples
-- the backend's memory (pg_backend_memory_contexts) while the statement
-- runs.
--
CREATE TABLE mem_samples (at_row int, used bigint);
CREATE FUNCTION mem_probe(i int) RETURNS int LANGUAGE plpgsql AS $$
BEGIN
    IF i % 50000 = 0 THEN
        INSERT INTO mem_samples SELECT i, sum(used_bytes) FROM pg_backend_memory_contexts;
    END IF;
    RETURN i;
END
$$;
CREATE TABLE mem_t (id int, n numeric, t text, a int4[]);
CREATE INDEX mem_bl ON mem_t USING bloomidx (n, t, a);
INSERT INTO mem_t
SELECT mem_probe(i), (i % 1000)::numeric / 7, 'row ' || (i % 5000), ARRAY[i % 10, i % 7]
FROM generate_series(1, 300000) i;
-- Growth between the first and the last sample (250,000 rows apart).
SELECT count(*) AS samples,
       (max(used) FILTER (WHERE at_row = 300000) - max(used) FILTER (WHERE at_row = 50000))
           < 1024 * 1024 AS flat_within_1mb
FROM mem_samples;
SELECT index_vs_seqscan('SELECT id FROM mem_t WHERE n = 3::numeric / 7 AND t = ''row 3''');
DROP TABLE mem_t, mem_samples;
DROP FUNCTION mem_probe(int);
