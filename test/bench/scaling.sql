-- The scaling section of the benchmarks (test/bench/scaling.sh): how a
-- selective query's index cost grows with the table.  Functions only; the
-- script loads data set A at each size and calls them.

-- Data set A (data_a.sql): six int4 columns (random() * 1000000)::int
-- (the caller runs VACUUM FREEZE ANALYZE, which a function cannot).
CREATE FUNCTION scaling_load(tbl text, nrows bigint) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM setseed(0.42);
    EXECUTE format('CREATE TABLE %I AS SELECT (random() * 1000000)::int i1, (random() * 1000000)::int i2,
                    (random() * 1000000)::int i3, (random() * 1000000)::int i4,
                    (random() * 1000000)::int i5, (random() * 1000000)::int i6
                    FROM generate_series(1, %s)', tbl, nrows);
END $$;

-- The index node of an EXPLAIN (FORMAT JSON) plan: the first Bitmap Index
-- Scan, BitmapAnd over several, or Index Scan down its first children.
CREATE FUNCTION scaling_index_node(plan json) RETURNS json LANGUAGE plpgsql AS $$
DECLARE
    n json := plan->0->'Plan';
BEGIN
    WHILE n->>'Node Type' NOT IN ('Bitmap Index Scan', 'BitmapAnd', 'Index Scan', 'Index Only Scan')
          AND n->'Plans' IS NOT NULL LOOP
        n := n->'Plans'->0;
    END LOOP;
    RETURN n;
END $$;

-- One query's figures, the median of `runs` EXPLAIN (ANALYZE, BUFFERS)
-- after a warm-up: the whole query and the index node (the Bitmap Index
-- Scan, or the BitmapAnd over several) in ms, and the index node's
-- buffers.
CREATE FUNCTION scaling_measure(query text, runs int,
                                OUT exec_ms float8, OUT node_ms float8, OUT buffers float8,
                                OUT nrows float8) LANGUAGE plpgsql AS $$
DECLARE
    j json; n json; e float8[] := '{}'; t float8[] := '{}'; b float8[] := '{}';
BEGIN
    SET LOCAL enable_seqscan = off;
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || query INTO j;
    FOR i IN 1 .. runs LOOP
        EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || query INTO j;
        n := scaling_index_node(j);
        e := e || (j->0->>'Execution Time')::float8;
        t := t || (n->>'Actual Total Time')::float8;
        b := b || ((n->>'Shared Hit Blocks')::float8 + (n->>'Shared Read Blocks')::float8);
        nrows := (j->0->'Plan'->>'Actual Rows')::float8;
    END LOOP;
    SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) INTO exec_ms FROM unnest(e) x;
    SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) INTO node_ms FROM unnest(t) x;
    SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY x) INTO buffers FROM unnest(b) x;
END $$;

-- The queries of one table: a 2-column hit (a row at a third of the
-- table), a 2-column miss (values outside the data), the mean of 20 such
-- misses (each of other values: a segment that lets a miss's two values
-- through by chance, 1 in 1,600 at 2.5 % a column, reads its slices, and
-- one miss alone shows it or not), an IN list of 10
-- values of i2 (rows at half the table) and the 10 lookups of those values
-- one by one (their sums).
CREATE FUNCTION scaling_queries(tbl text, runs int)
RETURNS TABLE (query text, exec_ms float8, node_ms float8, buffers float8, nrows float8)
LANGUAGE plpgsql AS $$
DECLARE
    hit record; list text; v int; s record;
    sum_exec float8 := 0; sum_node float8 := 0; sum_buf float8 := 0; sum_rows float8 := 0;
    total bigint;
BEGIN
    EXECUTE format('SELECT count(*) FROM %I', tbl) INTO total;
    EXECUTE format('SELECT i2, i5 FROM %I LIMIT 1 OFFSET %s', tbl, total / 3) INTO hit;
    EXECUTE format('SELECT string_agg(i2::text, '', '') FROM (SELECT i2 FROM %I LIMIT 10 OFFSET %s) s',
                   tbl, total / 2) INTO list;
    query := '2-column hit';
    SELECT * INTO exec_ms, node_ms, buffers, nrows
    FROM scaling_measure(format('SELECT * FROM %I WHERE i2 = %s AND i5 = %s', tbl, hit.i2, hit.i5), runs);
    RETURN NEXT;
    query := '2-column miss';
    SELECT * INTO exec_ms, node_ms, buffers, nrows
    FROM scaling_measure(format('SELECT * FROM %I WHERE i2 = -1 AND i5 = -1', tbl), runs);
    RETURN NEXT;
    sum_exec := 0; sum_node := 0; sum_buf := 0;
    FOR v IN 1 .. 20 LOOP
        SELECT * INTO s
        FROM scaling_measure(format('SELECT * FROM %I WHERE i2 = %s AND i5 = %s', tbl, -v, -100 - v), runs);
        sum_exec := sum_exec + s.exec_ms;
        sum_node := sum_node + s.node_ms;
        sum_buf := sum_buf + s.buffers;
    END LOOP;
    query := '2-column misses, mean of 20';
    exec_ms := sum_exec / 20; node_ms := sum_node / 20; buffers := sum_buf / 20; nrows := 0;
    RETURN NEXT;
    sum_exec := 0; sum_node := 0; sum_buf := 0;
    query := 'IN list of 10 values';
    SELECT * INTO exec_ms, node_ms, buffers, nrows
    FROM scaling_measure(format('SELECT * FROM %I WHERE i2 IN (%s)', tbl, list), runs);
    RETURN NEXT;
    FOREACH v IN ARRAY string_to_array(list, ', ')::int[] LOOP
        SELECT * INTO s FROM scaling_measure(format('SELECT * FROM %I WHERE i2 = %s', tbl, v), runs);
        sum_exec := sum_exec + s.exec_ms;
        sum_node := sum_node + s.node_ms;
        sum_buf := sum_buf + s.buffers;
        sum_rows := sum_rows + s.nrows;
    END LOOP;
    query := 'its 10 values one by one (sum)';
    exec_ms := sum_exec; node_ms := sum_node; buffers := sum_buf; nrows := sum_rows;
    RETURN NEXT;
END $$;
