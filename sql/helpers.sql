--
-- Helpers shared by the regression tests (run first).
--
-- index_vs_seqscan(query) runs query twice: once forced through a bitmap
-- scan (and checks that the plan really uses a bloomidx index), once as a
-- sequential scan, and compares the two results row by row.
--
CREATE FUNCTION plan_of(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    line text;
    plan text := '';
BEGIN
    FOR line IN EXECUTE 'EXPLAIN (COSTS OFF) ' || query LOOP
        plan := plan || line || E'\n';
    END LOOP;
    RETURN plan;
END
$$;

CREATE FUNCTION rows_of(query text) RETURNS text[]
LANGUAGE plpgsql AS $$
DECLARE
    result text[];
BEGIN
    EXECUTE format('SELECT coalesce(array_agg(r::text ORDER BY r::text), ''{}'') FROM (%s) r', query)
        INTO result;
    RETURN result;
END
$$;

CREATE FUNCTION index_vs_seqscan(query text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    via_index text[];
    via_seqscan text[];
    plan text;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    PERFORM set_config('enable_indexscan', 'off', true);
    PERFORM set_config('enable_bitmapscan', 'on', true);
    plan := plan_of(query);
    IF plan NOT LIKE '%Bitmap Index Scan on%' THEN
        RETURN 'INDEX NOT USED: ' || plan;
    END IF;
    via_index := rows_of(query);

    PERFORM set_config('enable_seqscan', 'on', true);
    PERFORM set_config('enable_bitmapscan', 'off', true);
    plan := plan_of(query);
    IF plan LIKE '%Index%' THEN
        RETURN 'SEQSCAN NOT USED: ' || plan;
    END IF;
    via_seqscan := rows_of(query);

    PERFORM set_config('enable_bitmapscan', 'on', true);
    PERFORM set_config('enable_indexscan', 'on', true);
    IF via_index = via_seqscan THEN
        RETURN format('same %s rows', cardinality(via_index));
    END IF;
    RETURN format('DIFFERENT: %s rows through the index, %s by seqscan',
                  cardinality(via_index), cardinality(via_seqscan));
END
$$;

-- index_vs_seqscan on n queries made of the values of n random rows of
-- table tbl, whose columns are id, a int, b text and c int (b and c may be
-- NULL), indexed by bloomidx: equalities, IN lists and IS NULL on one to
-- three columns.  Returns how many queries ran and how many differed.
CREATE FUNCTION abc_check(tbl text, n int) RETURNS TABLE (queries bigint, differences bigint)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    cond text;
    b_eq text;
BEGIN
    queries := 0;
    differences := 0;
    FOR r IN EXECUTE format('SELECT row_number() OVER () AS k, a, b, c
                             FROM (SELECT a, b, c FROM %I ORDER BY random() LIMIT %s) s', tbl, n) LOOP
        b_eq := CASE WHEN r.b IS NULL THEN 'b IS NULL' ELSE format('b = %L', r.b) END;
        cond := CASE r.k % 8
            WHEN 0 THEN format('a = %s', r.a)
            WHEN 1 THEN format('%s AND c = %s', b_eq, coalesce(r.c, -1))
            WHEN 2 THEN format('a = %s AND b IS NULL', r.a)
            WHEN 3 THEN format('c IN (%s, %s, -1)', coalesce(r.c, 0), coalesce(r.c, 0) + 1)
            WHEN 4 THEN format('a IN (%s, %s) AND b IN (%L, ''v1'', ''w1'')', r.a, r.a + 7, r.b)
            WHEN 5 THEN format('c IS NULL AND a = %s', r.a)
            WHEN 6 THEN format('a IN (%s, %s) AND c IS NULL', r.a, r.a + 1)
            ELSE format('a = %s AND %s AND c = %s', r.a, b_eq, coalesce(r.c, 0)) END;
        queries := queries + 1;
        IF index_vs_seqscan(format('SELECT id FROM %I WHERE %s', tbl, cond)) NOT LIKE 'same %' THEN
            differences := differences + 1;
        END IF;
    END LOOP;
    RETURN NEXT;
END
$$;

-- The Bitmap Index Scan node of EXPLAIN (ANALYZE, BUFFERS) of query, run
-- with sequential scans off: its rows (before recheck) and buffers, and
-- under "Planning Blocks" the shared buffers planning touched (a bloomidx
-- cost estimate reads the index's metapage, as GIN's and BRIN's do).
CREATE FUNCTION bitmap_index_node(query text) RETURNS jsonb
LANGUAGE plpgsql AS $$
DECLARE
    plan jsonb;
    node jsonb;
BEGIN
    PERFORM set_config('enable_seqscan', 'off', true);
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || query INTO plan;
    node := plan->0->'Plan';
    WHILE node->>'Node Type' <> 'Bitmap Index Scan' LOOP
        node := node->'Plans'->0;
    END LOOP;
    RETURN node || jsonb_build_object('Planning Blocks',
        coalesce((plan->0->'Planning'->>'Shared Hit Blocks')::bigint, 0)
        + coalesce((plan->0->'Planning'->>'Shared Read Blocks')::bigint, 0));
END
$$;

-- The shared buffers the Bitmap Index Scan of query read.
CREATE FUNCTION index_buffers(query text) RETURNS int
LANGUAGE sql AS $$
    SELECT (node->>'Shared Hit Blocks')::int + (node->>'Shared Read Blocks')::int
    FROM bitmap_index_node(query) node
$$;

-- The rows the Bitmap Index Scan of query returned, before the recheck:
-- its matches and its false positives.
CREATE FUNCTION index_candidates(query text) RETURNS float8
LANGUAGE sql AS $$
    SELECT (bitmap_index_node(query)->>'Actual Rows')::float8
$$;

-- The false-positive rate of tbl's bloomidx index, measured: over
-- conditions that no row of tbl meets (checked), the mean fraction of its
-- rows that the index still returns.
CREATE FUNCTION miss_rate(tbl text, conds text[]) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    nrows float8;
    matches bigint;
    candidates float8 := 0;
    cond text;
BEGIN
    EXECUTE format('SELECT count(*), count(*) FILTER (WHERE %s) FROM %s',
                   array_to_string(conds, ' OR '), tbl)
        INTO nrows, matches;
    IF matches > 0 THEN
        RAISE EXCEPTION '% rows of % meet one of %: not misses', matches, tbl, conds;
    END IF;
    FOREACH cond IN ARRAY conds LOOP
        candidates := candidates + index_candidates(format('SELECT * FROM %s WHERE %s', tbl, cond));
    END LOOP;
    RETURN candidates / (nrows * cardinality(conds));
END
$$;

-- The tally of a randomized test: checks 'SELECT id FROM tbl WHERE cond'
-- with index_vs_seqscan and says 'different' (after a NOTICE naming the
-- condition), 'rows' or 'empty'.
CREATE FUNCTION random_query_outcome(tbl text, cond text) RETURNS text
LANGUAGE plpgsql AS $$
DECLARE
    outcome text := index_vs_seqscan(format('SELECT id FROM %s WHERE %s', tbl, cond));
BEGIN
    IF outcome NOT LIKE 'same %' THEN
        RAISE NOTICE 'query % gives %', cond, outcome;
        RETURN 'different';
    END IF;
    RETURN CASE WHEN outcome = 'same 0 rows' THEN 'empty' ELSE 'rows' END;
END
$$;

-- Waits (up to 30 s) until no transaction that began before this call is
-- still running outside this session where it could keep VACUUM from
-- removing the rows deleted so far: one in another database (autovacuum's
-- included), or any with an older snapshot in this one.  Tests that count
-- what VACUUM removed call it between their DELETE and their VACUUM.
CREATE FUNCTION wait_for_older_xacts() RETURNS void
LANGUAGE plpgsql AS $$
DECLARE
    horizon xid := (pg_snapshot_xmax(pg_current_snapshot())::text::bigint % 4294967296)::text::xid;
    deadline timestamptz := clock_timestamp() + interval '30 seconds';
    holders text;
BEGIN
    LOOP
        PERFORM pg_stat_clear_snapshot();
        SELECT string_agg(format('pid %s (%s, %s)', pid, datname, backend_type), ', ')
        INTO holders
        FROM pg_stat_activity
        WHERE pid <> pg_backend_pid()
          AND (datname IS DISTINCT FROM current_database() OR backend_type <> 'client backend')
          AND ((backend_xid IS NOT NULL AND age(backend_xid) > age(horizon))
               OR (datname = current_database() AND backend_xmin IS NOT NULL
                   AND age(backend_xmin) > age(horizon)));
        EXIT WHEN holders IS NULL;
        IF clock_timestamp() > deadline THEN
            RAISE NOTICE 'transactions older than the test''s still running after 30 s: %', holders;
            EXIT;
        END IF;
        PERFORM pg_sleep(0.01);
    END LOOP;
END
$$;
