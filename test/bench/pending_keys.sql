-- What keeping filter keys in pending rows costs (README, *Segment
-- filters*): with them (the default) a seal builds its segment's filters
-- from the rows it takes; without them (segment_filter_rate = 0, the same
-- code otherwise) pending rows are as before and sealed segments have no
-- filters.  Against contrib/bloom's INSERT, and against the alternative of
-- reading the rows back from the table at the seal (a TID scan of the
-- sealed rows, before any hashing).  Data set A's six int4 columns.
--
--   psql -X -v rows=60000 -v rounds=5 -f test/bench/pending_keys.sql
--
-- rows: inserted per round, under a segment's worth (65,024) so that no
-- seal runs inside the INSERT; each round starts from an empty table.
-- Prints one line per figure: the median over the rounds.
\set ON_ERROR_STOP on
SET client_min_messages = warning;
CREATE EXTENSION IF NOT EXISTS bloomidx;
CREATE EXTENSION IF NOT EXISTS bloom;
DROP TABLE IF EXISTS pk_src, pk_figures;
CREATE TABLE pk_src AS
SELECT (random() * 1000000)::int i1, (random() * 1000000)::int i2, (random() * 1000000)::int i3,
       (random() * 1000000)::int i4, (random() * 1000000)::int i5, (random() * 1000000)::int i6
FROM generate_series(1, :rows);
CREATE TABLE pk_figures (kind text, figure text, round int, value float8);

CREATE OR REPLACE FUNCTION pk_ms(sql text) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp();
BEGIN
    EXECUTE sql;
    RETURN extract(epoch FROM clock_timestamp() - t0) * 1000;
END $$;

-- The mean of n runs of sql, after one to warm up.
CREATE OR REPLACE FUNCTION pk_mean_ms(sql text, n int) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE total float8 := 0;
BEGIN
    PERFORM pk_ms(sql);
    FOR i IN 1 .. n LOOP
        total := total + pk_ms(sql);
    END LOOP;
    RETURN total / n;
END $$;

-- One round of one kind: INSERT into an empty table, the pending list's
-- pages, a 2-column miss over it (mean of 20), the seal, the miss again.
CREATE OR REPLACE FUNCTION pk_round(kind text, round int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    idx text := CASE kind
        WHEN 'bloomidx' THEN 'USING bloomidx (i1, i2, i3, i4, i5, i6)'
        WHEN 'bloomidx, no filter keys' THEN 'USING bloomidx (i1, i2, i3, i4, i5, i6) WITH (segment_filter_rate = 0)'
        ELSE 'USING bloom (i1, i2, i3, i4, i5, i6)' END;
    miss text := 'SELECT count(*) FROM pk_t WHERE i2 = -1 AND i5 = -1';
BEGIN
    DROP TABLE IF EXISTS pk_t;
    CREATE TABLE pk_t (LIKE pk_src) WITH (autovacuum_enabled = off);
    EXECUTE 'CREATE INDEX pk_t_idx ON pk_t ' || idx;
    INSERT INTO pk_figures VALUES (kind, 'INSERT (ms)', round, pk_ms('INSERT INTO pk_t SELECT * FROM pk_src'));
    INSERT INTO pk_figures VALUES (kind, 'index pages', round, pg_relation_size('pk_t_idx') / 8192);
    SET LOCAL enable_seqscan = off;
    INSERT INTO pk_figures VALUES (kind, '2-column miss, rows pending (ms)', round, pk_mean_ms(miss, 20));
    IF kind <> 'contrib/bloom' THEN
        INSERT INTO pk_figures VALUES (kind, 'seal (ms)', round,
                                       pk_ms('SELECT bloomidx_seal(''pk_t_idx'')'));
        INSERT INTO pk_figures VALUES (kind, '2-column miss, rows sealed (ms)', round,
                                       pk_mean_ms(miss, 20));
    END IF;
    IF kind = 'bloomidx, no filter keys' THEN
        -- The alternative: the seal reads its rows back (heap order, by TID).
        INSERT INTO pk_figures VALUES ('read back at seal', 'TID scan of the rows (ms)', round,
            pk_ms('SELECT count(*) FROM pk_t WHERE ctid = ANY (ARRAY(SELECT ctid FROM pk_t))'));
    END IF;
END $$;

SELECT pk_round(k, r)
FROM generate_series(1, :rounds) r,
     unnest(ARRAY['contrib/bloom', 'bloomidx, no filter keys', 'bloomidx']) k;

SELECT figure, kind,
       round((percentile_disc(0.5) WITHIN GROUP (ORDER BY value))::numeric, 3) AS median
FROM pk_figures GROUP BY figure, kind ORDER BY figure, kind;
SELECT round((SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY value) FROM pk_figures
              WHERE kind = 'contrib/bloom' AND figure = 'INSERT (ms)')::numeric /
             (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY value) FROM pk_figures
              WHERE kind = 'bloomidx' AND figure = 'INSERT (ms)')::numeric, 2)
       AS "bloomidx INSERT rows/s over contrib/bloom's";
DROP TABLE IF EXISTS pk_t, pk_src, pk_figures;
DROP FUNCTION pk_round(text, int);
DROP FUNCTION pk_mean_ms(text, int);
DROP FUNCTION pk_ms(text);
