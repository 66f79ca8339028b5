-- The steady-state section of the benchmarks (test/bench/steady_state.sh,
-- issue 29): what an index costs once the table has lived a while, beside
-- what it cost right after CREATE INDEX.  Functions only; the script calls
-- them for each kind of index in turn, on the same rows (every step seeds
-- random() first).  Uses scaling_load and scaling_measure (scaling.sql).

-- The hit's values: those of the row at a third of the table, which the
-- deletes below never take, so that the hit stays a hit.
CREATE TABLE steady_hit (i2 int, i5 int);

CREATE FUNCTION steady_load(nrows bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    DROP TABLE IF EXISTS a;
    PERFORM scaling_load('a', nrows);
    DELETE FROM steady_hit;
    EXECUTE format('INSERT INTO steady_hit SELECT i2, i5 FROM a LIMIT 1 OFFSET %s', nrows / 3);
END $$;

-- Inserts n new rows of data set A.
CREATE FUNCTION steady_insert(n bigint, seed float8) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setseed(seed);
    INSERT INTO a SELECT (random() * 1000000)::int, (random() * 1000000)::int,
                         (random() * 1000000)::int, (random() * 1000000)::int,
                         (random() * 1000000)::int, (random() * 1000000)::int
                  FROM generate_series(1, n);
END $$;

-- Deletes a fraction of the rows (never the hit's) and returns how many.
CREATE FUNCTION steady_delete(fraction float8, seed float8) RETURNS bigint LANGUAGE plpgsql AS $$
DECLARE
    n bigint;
    hit record;
BEGIN
    SELECT * INTO hit FROM steady_hit;
    PERFORM setseed(seed);
    DELETE FROM a WHERE random() < fraction AND NOT (i2 = hit.i2 AND i5 = hit.i5);
    GET DIAGNOSTICS n = ROW_COUNT;
    RETURN n;
END $$;

-- Waits, up to 60 s, until no background seal worker runs and, for a
-- bloomidx index, fewer than a segment's worth of rows (65,024) are
-- pending: bloomidx's INSERT leaves a segment's worth to a worker and goes
-- on, and a worker shows in pg_stat_activity only once it has started.
-- Returns the seconds waited (a WARNING if it gave up): the state measured
-- next is the one the table settles in, as GIN's is after its pending
-- list's flush.
CREATE FUNCTION steady_settle(idx regclass) RETURNS float8 LANGUAGE plpgsql AS $$
DECLARE
    t0 timestamptz := clock_timestamp();
    is_bloomidx boolean;
BEGIN
    SELECT m.amname = 'bloomidx' INTO is_bloomidx
    FROM pg_class c JOIN pg_am m ON m.oid = c.relam WHERE c.oid = idx;
    FOR i IN 1..600 LOOP
        PERFORM pg_stat_clear_snapshot();
        IF NOT EXISTS (SELECT FROM pg_stat_activity WHERE backend_type = 'bloomidx seal')
           AND (NOT is_bloomidx OR (SELECT pending_rows < 65024 FROM bloomidx_index_info(idx))) THEN
            RETURN extract(epoch FROM clock_timestamp() - t0);
        END IF;
        PERFORM pg_sleep(0.1);
    END LOOP;
    RAISE WARNING 'steady_settle: index "%" did not settle in 60 s', idx;
    RETURN extract(epoch FROM clock_timestamp() - t0);
END $$;

-- The 2-column hit and miss of data set A now: whole query and index node
-- (ms), the index node's buffers.
CREATE FUNCTION steady_queries(runs int)
RETURNS TABLE (query text, exec_ms float8, node_ms float8, buffers float8, nrows float8)
LANGUAGE plpgsql AS $$
DECLARE
    hit record;
BEGIN
    SELECT * INTO hit FROM steady_hit;
    query := 'hit';
    SELECT * INTO exec_ms, node_ms, buffers, nrows
    FROM scaling_measure(format('SELECT * FROM a WHERE i2 = %s AND i5 = %s', hit.i2, hit.i5), runs);
    RETURN NEXT;
    query := 'miss';
    SELECT * INTO exec_ms, node_ms, buffers, nrows
    FROM scaling_measure('SELECT * FROM a WHERE i2 = -1 AND i5 = -1', runs);
    RETURN NEXT;
END $$;

-- What a bloomidx index holds now, as "segments (filtered), pending rows";
-- empty for other kinds.
CREATE FUNCTION steady_state_of(idx regclass) RETURNS text LANGUAGE plpgsql AS $$
DECLARE
    am name;
    info record;
BEGIN
    SELECT amname INTO am FROM pg_class c JOIN pg_am m ON m.oid = c.relam WHERE c.oid = idx;
    IF am <> 'bloomidx' THEN
        RETURN '';
    END IF;
    SELECT * INTO info FROM bloomidx_index_info(idx);
    RETURN format('%s (%s filtered), %s pending rows', info.segments, info.filtered_segments,
                  info.pending_rows);
END $$;
