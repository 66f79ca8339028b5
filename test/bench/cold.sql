-- The cold section of the benchmarks (test/bench/cold.sh): the first query
-- after a server restart with the OS page cache dropped.  Functions only;
-- the script loads the tables, builds the indexes and restarts the server
-- before each call.  Uses scaling_index_node (scaling.sql).

-- One query's figures, run once, as it comes (no warm-up: the point is
-- the first read): the whole query and the index node (the Bitmap Index
-- Scan, the BitmapAnd over several, or an Index Scan) in ms, the index
-- node's shared buffers read from outside shared_buffers, and all of them.
CREATE FUNCTION cold_measure(query text,
                             OUT exec_ms float8, OUT node_ms float8, OUT node_read float8,
                             OUT node_buffers float8, OUT nrows float8) LANGUAGE plpgsql AS $$
DECLARE
    j json; n json;
BEGIN
    SET LOCAL enable_seqscan = off;
    EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || query INTO j;
    n := scaling_index_node(j);
    exec_ms := (j->0->>'Execution Time')::float8;
    node_ms := (n->>'Actual Total Time')::float8;
    node_read := (n->>'Shared Read Blocks')::float8;
    node_buffers := (n->>'Shared Hit Blocks')::float8 + node_read;
    nrows := (j->0->'Plan'->>'Actual Rows')::float8;
END $$;
