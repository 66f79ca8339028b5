-- Tables and functions of the benchmark (test/bench/run.sh loads this file
-- first, then data_a.sql and data_b.sql).  Every figure lands in the table
-- result, which report() turns into the markdown table of one data set.
SET client_min_messages = warning;
CREATE EXTENSION bloom;
CREATE EXTENSION bloomidx;
CREATE EXTENSION btree_gin;

-- The index kinds, in the order of the report's columns.  Each kind has its
-- own identical copy of a data set's table, named <data set>_<kind>.
CREATE TABLE kind (ord int PRIMARY KEY, key text UNIQUE, title text);
INSERT INTO kind VALUES
    (1, 'bloomidx', 'bloomidx (defaults)'),
    (2, 'bloomidx_nofilter', 'bloomidx (no segment filters)'),
    (3, 'bloom', 'contrib/bloom (defaults)'),
    (4, 'btree_all', 'one btree, all columns'),
    (5, 'btree_each', 'one btree per column'),
    (6, 'gin', 'GIN (btree_gin), all columns');

-- A data set: its rows, the columns every kind indexes (contrib/bloom only
-- those it has an operator class for: int4 and text), and its description.
CREATE TABLE dataset (ds text PRIMARY KEY, nrows bigint, columns text[], bloom_columns text[],
                      about text, lookup_columns text[]);

-- pgbench's 2-column lookups (lookup.sql) draw each transaction's values
-- from lookup_<data set>: the lookup_columns of 10,000 rows of the table.
CREATE FUNCTION make_lookups(d text) RETURNS void LANGUAGE plpgsql AS $$
DECLARE c text[] := (SELECT lookup_columns FROM dataset WHERE ds = d);
BEGIN
    EXECUTE format('CREATE TABLE lookup_%s AS SELECT row_number() OVER () AS id, quote_literal(%I) AS x,
                           quote_literal(%I) AS y
                    FROM (SELECT * FROM %I WHERE %I IS NOT NULL AND %I IS NOT NULL LIMIT 10000) s',
                   d, c[1], c[2], d || '_bloomidx', c[1], c[2]);
    EXECUTE format('ALTER TABLE lookup_%s ADD PRIMARY KEY (id)', d);
END $$;

-- The queries of a data set: cond is the WHERE clause; shown, the condition
-- as the report prints it (default cond); short, the chart's name.  Misses
-- (values in no row) have instead miss, a format() of the WHERE clause whose
-- %1$s makes the k-th value (cond is its first), and miss_cols, the 1-based
-- positions of the queried columns in the index (for the predicted rate).
CREATE TABLE query (ds text, ord int, label text, short text, cond text, miss_cols text,
                    shown text, miss text, PRIMARY KEY (ds, ord));

-- One EXPLAIN (ANALYZE, BUFFERS) of one query on one kind's table; first:
-- the query was the first of a new connection (first_query()).
CREATE TABLE run (ds text, kind text, qord int, exec_ms float8, node_ms float8, buffers float8,
                  removed float8, nrows float8, node_type text, first bool DEFAULT false);

-- The report's cells: value NaN means the kind cannot answer through its
-- index (printed n/a); kind NULL with no value makes a heading row.
CREATE TABLE result (ds text, ord int, label text, kind text, value float8);

-- The length and bits per column each bloomidx kind was built with.
CREATE TABLE settings (ds text, kind text, length int, bits text);

-- Milliseconds and bytes of WAL one statement takes (the WAL insert
-- position before and after: exact, even before the commit is flushed).
CREATE FUNCTION timed(stmt text, OUT ms float8, OUT wal float8) LANGUAGE plpgsql AS $$
DECLARE t0 timestamptz := clock_timestamp(); lsn0 pg_lsn := pg_current_wal_insert_lsn();
BEGIN
    EXECUTE stmt;
    ms := extract(epoch FROM clock_timestamp() - t0) * 1000;
    wal := pg_wal_lsn_diff(pg_current_wal_insert_lsn(), lsn0);
END $$;

CREATE FUNCTION put(d text, o int, lbl text, k text, v float8) RETURNS void LANGUAGE sql AS $$
    INSERT INTO result VALUES (d, o, lbl, k, v)
$$;

-- 3 significant digits (2 for ratios) without trailing zeros; whole
-- numbers (not ratios) and numbers above 10^digits as whole numbers with
-- thousands separated; below 0.001 as 1.23e-05; NaN is n/a.
CREATE FUNCTION fmt(v float8, digits int DEFAULT 3) RETURNS text LANGUAGE sql AS $$
    SELECT CASE WHEN v IS NULL THEN '' WHEN v = 'NaN' THEN 'n/a' WHEN v = 0 THEN '0'
                WHEN abs(v) >= 10 ^ digits OR (v = round(v) AND digits >= 3)
                    THEN to_char(round(v), 'FM999,999,999,999')
                WHEN abs(v) < 0.001 THEN trim(to_char(v, '9.' || repeat('9', digits - 1) || 'EEEE'))
                ELSE trim_scale(round(v::numeric, (digits - 1 - floor(log(abs(v::numeric))))::int))::text END
$$;

CREATE FUNCTION ratio(a float8, b float8) RETURNS float8 LANGUAGE sql AS $$
    SELECT CASE WHEN a <> 'NaN' AND b <> 'NaN' AND b <> 0 THEN a / b END
$$;

-- The CREATE INDEX statements of one kind on its table.
CREATE FUNCTION index_ddl(d text, k text) RETURNS text[] LANGUAGE plpgsql AS $$
DECLARE ds dataset := (SELECT x FROM dataset x WHERE x.ds = d); tbl text := d || '_' || k;
BEGIN
    RETURN CASE k
        WHEN 'bloomidx' THEN ARRAY[format('CREATE INDEX ON %I USING bloomidx (%s)', tbl,
                                          array_to_string(ds.columns, ', '))]
        WHEN 'bloomidx_nofilter' THEN ARRAY[format('CREATE INDEX ON %I USING bloomidx (%s) WITH (segment_filter_rate = 0)',
                                                   tbl, array_to_string(ds.columns, ', '))]
        WHEN 'bloom' THEN ARRAY[format('CREATE INDEX ON %I USING bloom (%s)', tbl,
                                       array_to_string(ds.bloom_columns, ', '))]
        WHEN 'btree_all' THEN ARRAY[format('CREATE INDEX ON %I (%s)', tbl,
                                           array_to_string(ds.columns, ', '))]
        WHEN 'btree_each' THEN (SELECT array_agg(format('CREATE INDEX ON %I (%I)', tbl, c))
                                FROM unnest(ds.columns) c)
        WHEN 'gin' THEN ARRAY[format('CREATE INDEX ON %I USING gin (%s)', tbl,
                                     array_to_string(ds.columns, ', '))]
    END;
END $$;

-- A kind's builds, each in a connection of its own (as a CREATE INDEX
-- usually runs: a backend that has not touched the table's buffers yet
-- pays for mapping them, and a parallel build's workers always do), after
-- a checkpoint: build_one serially once, max_parallel_maintenance_workers =
-- 0, then in parallel (`rounds` times; GIN once) with the cluster's setting
-- (PostgreSQL's default, up to 2 workers), each dropping the index(es)
-- before it; build_summary records the serial time, the median of the
-- parallel ones (a build's time varied by a quarter from one to the next
-- on this machine), and the size and WAL of the last.
CREATE TABLE build_time (ds text, kind text, parallel bool, ms float8, wal float8,
                         at timestamptz DEFAULT clock_timestamp());

CREATE FUNCTION build_one(d text, k text, parallel bool) RETURNS void LANGUAGE plpgsql AS $$
DECLARE stmt text; t record; ms float8 := 0; wal float8 := 0; idx regclass;
BEGIN
    FOR idx IN SELECT indexrelid::regclass FROM pg_index WHERE indrelid = (d || '_' || k)::regclass LOOP
        EXECUTE format('DROP INDEX %s', idx);
    END LOOP;
    IF NOT parallel THEN
        PERFORM set_config('max_parallel_maintenance_workers', '0', true);
    END IF;
    CHECKPOINT;
    FOREACH stmt IN ARRAY index_ddl(d, k) LOOP
        t := timed(stmt);
        ms := ms + t.ms;
        wal := wal + t.wal;
    END LOOP;
    INSERT INTO build_time (ds, kind, parallel, ms, wal) VALUES (d, k, parallel, ms, wal);
END $$;

CREATE FUNCTION build_summary(d text, k text, rounds int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM put(d, 0, '**Build**', NULL, NULL);
    PERFORM put(d, 1, format('CREATE INDEX (ms), max_parallel_maintenance_workers = %s (PostgreSQL''s default), median of %s builds (GIN: 1)',
                             current_setting('max_parallel_maintenance_workers'), rounds), k,
                (SELECT percentile_disc(0.5) WITHIN GROUP (ORDER BY ms) FROM build_time
                 WHERE ds = d AND kind = k AND parallel));
    PERFORM put(d, 2, '... serially, max_parallel_maintenance_workers = 0 (ms)', k,
                (SELECT ms FROM build_time WHERE ds = d AND kind = k AND NOT parallel));
    PERFORM put(d, 3, 'index size (MB)', k,
                (SELECT sum(pg_relation_size(indexrelid)) / 1048576.0 FROM pg_index
                 WHERE indrelid = (d || '_' || k)::regclass));
    PERFORM put(d, 4, 'WAL written by CREATE INDEX (MB)', k,
                (SELECT wal FROM build_time WHERE ds = d AND kind = k AND parallel ORDER BY at DESC LIMIT 1) / 1048576.0);
END $$;

-- EXPLAIN (ANALYZE, FORMAT JSON) of SELECT * FROM kind k's table of data
-- set d WHERE cond, with sequential scans off.
CREATE FUNCTION explain(d text, k text, cond text, timing bool) RETURNS json LANGUAGE plpgsql AS $$
DECLARE plan json;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    EXECUTE format('EXPLAIN (ANALYZE, BUFFERS, TIMING %s, FORMAT JSON) SELECT * FROM %I WHERE %s',
                   timing::text, d || '_' || k, cond) INTO plan;
    RETURN plan;
END $$;

-- From the top of a plan down to the node that used the index (Bitmap
-- Index Scan, BitmapAnd/Or, Index [Only] Scan; or the leaf), the rows
-- removed by recheck or filter on the way.  node_type: the node's type,
-- NULL for a Seq Scan (no index could answer the query).
CREATE FUNCTION index_node(plan json, OUT node json, OUT node_type text, OUT removed float8)
LANGUAGE plpgsql AS $$
BEGIN
    node := plan->0->'Plan';
    removed := 0;
    LOOP
        removed := removed + coalesce((node->>'Rows Removed by Index Recheck')::float8, 0)
                           + coalesce((node->>'Rows Removed by Filter')::float8, 0);
        EXIT WHEN node->>'Node Type' IN ('Bitmap Index Scan', 'BitmapAnd', 'BitmapOr',
                                         'Index Scan', 'Index Only Scan')
               OR node->'Plans' IS NULL;
        node := node->'Plans'->0;
    END LOOP;
    node_type := nullif(node->>'Node Type', 'Seq Scan');
END $$;

-- Each query of data set d on kind k's table: a warm-up, then `runs` runs,
-- each a row of run (the index node's time and buffers, the rows removed).
CREATE FUNCTION measure(d text, k text, runs int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE q query; plan json; n record;
BEGIN
    UPDATE query SET cond = format(miss, 1) WHERE ds = d AND cond IS NULL;
    FOR q IN SELECT * FROM query WHERE ds = d ORDER BY ord LOOP
        PERFORM explain(d, k, q.cond, true);
        FOR i IN 1 .. runs LOOP
            plan := explain(d, k, q.cond, true);
            n := index_node(plan);
            PERFORM record_run(d, k, q.ord, plan, false);
        END LOOP;
    END LOOP;
END $$;

CREATE FUNCTION record_run(d text, k text, qord int, plan json, first bool) RETURNS void
LANGUAGE plpgsql AS $$
DECLARE n record := index_node(plan);
BEGIN
    INSERT INTO run VALUES (d, k, qord, (plan->0->>'Execution Time')::float8,
        (n.node->>'Actual Total Time')::float8 * (n.node->>'Actual Loops')::float8,
        (n.node->>'Shared Hit Blocks')::float8 + (n.node->>'Shared Read Blocks')::float8,
        n.removed, (plan->0->'Plan'->>'Actual Rows')::float8, n.node_type, first);
END $$;

-- Query qord of data set d on kind k's table as the first query of this
-- connection (run.sh calls it in a new connection each time): a backend
-- touches each shared buffer for the first time then, and page-faults.
CREATE FUNCTION first_query(d text, k text, qord int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    PERFORM record_run(d, k, qord,
                       explain(d, k, (SELECT cond FROM query WHERE ds = d AND ord = qord), true), true);
END $$;

-- The false-positive rate of kind k on each miss of data set d: the rows
-- removed by recheck over the table's rows, mean over the first n values.
CREATE FUNCTION false_positives(d text, k text, n int) RETURNS void LANGUAGE sql AS $$
    SELECT put(d, 900, '**False-positive rate** (rows removed by recheck / rows of the table)', NULL, NULL);
    SELECT put(d, 900 + 2 * q.ord - 1, format('%s, measured (%%, mean of %s values)', q.label, n), k,
               100 * (SELECT sum(CASE WHEN x.node_type IS NULL THEN 'NaN' ELSE x.removed END)
                      FROM generate_series(1, n) i,
                           LATERAL index_node(explain(d, k, format(q.miss, i), false)) x)
                   / n / (SELECT nrows FROM dataset WHERE ds = d))
    FROM query q WHERE q.ds = d AND q.miss IS NOT NULL;
$$;

-- The write tests' figures, a row per round: each kind runs once per round,
-- in an order that rotates, and the result is the median of the rounds
-- (one run each was too noisy here: the same binary's INSERT time moved by
-- half between two runs).
CREATE TABLE writes (ds text, kind text, round int, ord int, value float8);

-- INSERT of n rows from the data set's generator, after a checkpoint (so
-- the WAL holds the full-page images of every page first touched).
CREATE FUNCTION insert_rows(d text, k text, n bigint, r int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE t record;
BEGIN
    CHECKPOINT;
    t := timed(format('INSERT INTO %I SELECT * FROM gen_%s(%s)', d || '_' || k, d, n));
    INSERT INTO writes VALUES (d, k, r, 951, t.ms), (d, k, r, 952, n / t.ms * 1000),
                              (d, k, r, 953, t.wal / 1048576.0);
END $$;

-- The medians of the write rounds of data set d into result.
CREATE FUNCTION summarize_writes(d text, n bigint, rounds int, secs int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO result
    SELECT d, 950, '**Writes** (median of ' || rounds || ' rounds, the kinds in turn)', NULL, NULL
    UNION ALL
    SELECT d, w.ord, CASE w.ord WHEN 951 THEN format('INSERT of %s rows (ms)', to_char(n, 'FM999,999,999'))
                                WHEN 952 THEN '... rows per second'
                                WHEN 953 THEN '... WAL written (MB)'
                                WHEN 954 THEN format('pgbench, 1-row INSERTs, 2 clients, %s s (transactions/s)', secs)
                                WHEN 955 THEN '... WAL per INSERT (bytes)' END,
           w.kind, percentile_cont(0.5) WITHIN GROUP (ORDER BY w.value)
    FROM writes w WHERE w.ds = d GROUP BY w.ord, w.kind;
$$;

-- The medians of the runs of data set d into result, a group of rows per
-- query.
CREATE FUNCTION summarize(d text) RETURNS void LANGUAGE sql AS $$
    WITH m AS (
        SELECT q.ord, q.label, coalesce(q.shown, q.cond) AS shown, r.kind, bool_or(r.node_type IS NULL) AS na,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.exec_ms) FILTER (WHERE NOT r.first) AS exec_ms,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.exec_ms) FILTER (WHERE r.first) AS first_ms,
               count(*) FILTER (WHERE r.first) AS firsts,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.node_ms) FILTER (WHERE NOT r.first) AS node_ms,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.buffers) FILTER (WHERE NOT r.first) AS buffers,
               percentile_cont(0.5) WITHIN GROUP (ORDER BY r.removed) FILTER (WHERE NOT r.first) AS removed,
               max(r.nrows) AS nrows, count(*) FILTER (WHERE NOT r.first) AS runs
        FROM run r JOIN query q ON q.ds = r.ds AND q.ord = r.qord
        WHERE r.ds = d GROUP BY 1, 2, 3, 4
    )
    INSERT INTO result
    SELECT d, 100 + 10 * ord, format('**%s**: `%s` (%s %s)', label, shown, fmt(max(nrows)),
                                     CASE WHEN max(nrows) = 1 THEN 'row' ELSE 'rows' END), NULL, NULL
    FROM m GROUP BY ord, label, shown
    UNION ALL
    SELECT d, 100 + 10 * ord + x.o, x.lbl, kind, CASE WHEN na THEN 'NaN' ELSE x.v END
    FROM m, LATERAL (VALUES (1, format('whole query (ms, median of %s)', runs), exec_ms),
                            (2, format('... as a new connection''s first query (ms, median of %s)', firsts), first_ms),
                            (3, 'index node (ms)', node_ms),
                            (4, 'index buffers', buffers),
                            (5, 'rows removed by recheck or filter', removed)) x(o, lbl, v)
    WHERE x.v IS NOT NULL OR x.o <> 2
$$;

-- The markdown table of data set d: a row per measure, a column per kind,
-- and bloomidx / contrib/bloom for the two bloomidx kinds.
CREATE FUNCTION report(d text) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT '| measure | ' || string_agg(title, ' | ' ORDER BY ord)
           || ' | bloomidx / contrib | bloomidx (no filters) / contrib | bloomidx / GIN |'
    FROM kind
    UNION ALL
    SELECT '|---|' || repeat('---:|', (SELECT count(*)::int + 3 FROM kind))
    UNION ALL
    (SELECT format('| %s | %s | %s | %s | %s |', label,
                   string_agg(fmt(v), ' | ' ORDER BY kord),
                   fmt(ratio(max(v) FILTER (WHERE k = 'bloomidx'), max(v) FILTER (WHERE k = 'bloom')), 2),
                   fmt(ratio(max(v) FILTER (WHERE k = 'bloomidx_nofilter'), max(v) FILTER (WHERE k = 'bloom')), 2),
                   fmt(ratio(max(v) FILTER (WHERE k = 'bloomidx'), max(v) FILTER (WHERE k = 'gin')), 2))
     FROM (SELECT r.ord, r.label, kind.ord AS kord, kind.key AS k,
                  (SELECT value FROM result x
                   WHERE x.ds = d AND x.ord = r.ord AND x.kind = kind.key) AS v
           FROM (SELECT DISTINCT ord, label FROM result WHERE ds = d) r CROSS JOIN kind) c
     GROUP BY ord, label ORDER BY ord)
$$;

-- The plan node that answered each query, per kind.
CREATE FUNCTION plans(d text) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT '| query | ' || string_agg(title, ' | ' ORDER BY ord) || ' |' FROM kind
    UNION ALL
    SELECT '|---|' || repeat('---|', (SELECT count(*)::int FROM kind))
    UNION ALL
    (SELECT format('| %s | %s |', q.label,
                   string_agg(coalesce((SELECT max(node_type) FROM run r
                                        WHERE r.ds = d AND r.qord = q.ord AND r.kind = kind.key),
                                       'n/a (sequential scan)'), ' | ' ORDER BY kind.ord))
     FROM query q CROSS JOIN kind WHERE q.ds = d GROUP BY q.ord, q.label ORDER BY q.ord)
$$;

-- gnuplot input: a row per (data set, result row) pair, named by label,
-- with a column per kind; n/a and missing values are '?'.
CREATE FUNCTION chart(dss text[], ords int[], labels text[]) RETURNS SETOF text LANGUAGE sql AS $$
    SELECT 'x ' || string_agg(format('"%s"', title), ' ' ORDER BY ord) FROM kind
    UNION ALL
    (SELECT format('"%s" %s', labels[i], string_agg(coalesce(
                (SELECT nullif(value, 'NaN')::text FROM result x
                 WHERE x.ds = dss[i] AND x.ord = ords[i] AND x.kind = kind.key), '?'), ' ' ORDER BY kind.ord))
     FROM generate_subscripts(labels, 1) i CROSS JOIN kind GROUP BY i ORDER BY i)
$$;
