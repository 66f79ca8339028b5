--
-- False positives, measured: for every shipped operator class and for
-- IS NULL, the share of rows the index returns for values that are not in
-- the table stays near what the sizing model predicts
-- (bloomidx_false_positive_rate, from src/core/sizing.cpp), and an index
-- built without options meets the default target of 0.001.  Wrong answers
-- are caught everywhere else; this catches the bugs that only waste work,
-- such as a hash that ignores part of a value (every text value below
-- shares a 22-byte prefix) or an IS NULL that tests no bits, which turn a
-- selective query into a recheck of the whole table.
--

-- The prediction, and what it refuses.
CREATE TABLE fp_args (a int4, b text, c int8);
CREATE INDEX fp_args_bl ON fp_args USING bloomidx (a, b, c) WITH (length = 64, col1 = 2, col2 = 3, col3 = 4);
SELECT bloomidx_false_positive_rate('fp_args_bl', '{2}') < bloomidx_false_positive_rate('fp_args_bl', '{1}') AS more_bits_fewer_false_positives,
       bloomidx_false_positive_rate('fp_args_bl', '{1,3}') < bloomidx_false_positive_rate('fp_args_bl', '{3}') AS more_columns_fewer_false_positives,
       bloomidx_false_positive_rate('fp_args_bl', '{1,1}') = bloomidx_false_positive_rate('fp_args_bl', '{1}') AS repeats_count_once,
       bloomidx_false_positive_rate('fp_args_bl', '{}') AS no_column_keeps_every_row;
SELECT bloomidx_false_positive_rate('fp_args_bl', '{0}');
SELECT bloomidx_false_positive_rate('fp_args_bl', '{4}');
SELECT bloomidx_false_positive_rate('fp_args_bl', '{1,NULL}');
SELECT bloomidx_false_positive_rate('fp_args_bl', '{{1},{2}}');
SELECT bloomidx_false_positive_rate('fp_args_bl', NULL);
SELECT bloomidx_false_positive_rate(NULL, '{1}');
SELECT bloomidx_false_positive_rate('fp_args', '{1}');
CREATE INDEX fp_args_btree ON fp_args (a);
SELECT bloomidx_false_positive_rate('fp_args_btree', '{1}');
CREATE TABLE fp_parted (a int4) PARTITION BY RANGE (a);
CREATE INDEX fp_parted_bl ON fp_parted USING bloomidx (a);
SELECT bloomidx_false_positive_rate('fp_parted_bl', '{1}');
SELECT bloomidx_false_positive_rate(0, '{1}');
DROP TABLE fp_args, fp_parted;

-- 'ok' when the measured rate is within a factor of 2 of the predicted
-- one, and the prediction expects enough false positives (50) over the
-- trials (rows times queries) that a factor of 2 is far outside chance
-- (at least 3.5 standard deviations); else the numbers.
CREATE FUNCTION rate_verdict(measured float8, predicted float8, trials float8) RETURNS text
LANGUAGE sql AS $$
    SELECT CASE
        WHEN predicted * trials < 50 THEN
            format('too few false positives expected (%s) to tell', round((predicted * trials)::numeric))
        WHEN measured BETWEEN predicted / 2 AND predicted * 2 THEN 'ok'
        ELSE format('measured %s, predicted %s', round(measured::numeric, 5), round(predicted::numeric, 5))
    END
$$;

-- check_miss_rate(tbl, typ, val, miss) makes tbl (v typ, w int4) with rows
-- (val, i) for i = 1..10000, val an SQL expression of i, and a bloomidx
-- index on (v, w) sized for about 2% of false positives; then compares
-- the rates measured for "v = miss" with i = 10001..10005 (val by
-- default) and for "v IS NULL" (no row is NULL) with the prediction for
-- column 1.  A second column, as in most bloomidx indexes, also keeps a
-- type with few values close to the model, which takes the values of a
-- row as independent; IS NULL is measured only where each row has a
-- value of its own (with 128 or 150 values, whether the NULL's bits fall on one
-- of theirs moves its rate by 40% at a time).
CREATE FUNCTION check_miss_rate(tbl text, typ text, val text, miss text DEFAULT NULL)
RETURNS TABLE (type text, equality text, is_null text)
LANGUAGE plpgsql AS $$
DECLARE
    nrows CONSTANT int := 10000;
    conds text[];
    predicted float8;
BEGIN
    EXECUTE format('CREATE TABLE %I (v %s, w int4)', tbl, typ);
    EXECUTE format('INSERT INTO %I SELECT (%s)::%s, i FROM generate_series(1, %s) i',
                   tbl, val, typ, nrows);
    EXECUTE format('CREATE INDEX %I ON %I USING bloomidx (v, w) WITH (length = 24, col1 = 2, col2 = 2, segment_filter_rate = 0)',
                   tbl || '_bl', tbl);
    EXECUTE format('SELECT array_agg(format(''v = %%L::%s'', (%s)::%s)) FROM generate_series(%s, %s) i',
                   typ, coalesce(miss, val), typ, nrows + 1, nrows + 5)
        INTO conds;
    predicted := bloomidx_false_positive_rate((tbl || '_bl')::regclass, '{1}');
    type := typ;
    equality := rate_verdict(miss_rate(tbl, conds), predicted, nrows * cardinality(conds));
    IF miss IS NULL THEN
        is_null := rate_verdict(miss_rate(tbl, '{v IS NULL}'), predicted, nrows);
    END IF;
    RETURN NEXT;
END
$$;

CREATE COLLATION fp_ci (provider = icu, locale = 'und-u-ks-level2', deterministic = false);
DO $$
BEGIN
    EXECUTE format('CREATE TYPE fp_label AS ENUM (%s)',
                   (SELECT string_agg(quote_literal('label ' || i), ', ') FROM generate_series(0, 299) i));
END
$$;

-- Every default operator class but bool_ops, whose two values leave none
-- to miss with.  Values share long prefixes; "char" and the enum, with few
-- values, fill the table with some and miss with others.
SELECT r.* FROM (VALUES
    ('fp_int2', 'int2', 'i', NULL),
    ('fp_int4', 'int4', 'i', NULL),
    ('fp_int8', 'int8', 'i::int8 << 32', NULL),
    ('fp_float4', 'float4', 'i / 8.0', NULL),
    ('fp_float8', 'float8', 'i / 1024.0', NULL),
    ('fp_numeric', 'numeric', '1000000 + i / 1000.0', NULL),
    ('fp_char', '"char"', '(-1 - i % 128)::int4', '(i % 128)::int4'),
    ('fp_name', 'name', '''customer-000000000000-'' || i', NULL),
    ('fp_text', 'text', '''customer-000000000000-'' || i', NULL),
    ('fp_text_ci', 'text COLLATE fp_ci', '''customer-000000000000-'' || i', NULL),
    ('fp_varchar', 'varchar', '''customer-000000000000-'' || i', NULL),
    ('fp_bpchar', 'char(30)', '''customer-000000000000-'' || i', NULL),
    ('fp_bytea', 'bytea', 'convert_to(''customer-000000000000-'' || i, ''UTF8'')', NULL),
    ('fp_uuid', 'uuid', 'md5(i::text)::uuid', NULL),
    ('fp_date', 'date', 'date ''2000-01-01'' + i', NULL),
    ('fp_time', 'time', 'time ''00:00'' + i * interval ''1 second''', NULL),
    ('fp_timetz', 'timetz', 'timetz ''00:00+02'' + i * interval ''1 second''', NULL),
    ('fp_timestamp', 'timestamp', 'timestamp ''2000-01-01'' + i * interval ''1 minute''', NULL),
    ('fp_timestamptz', 'timestamptz', 'timestamptz ''2000-01-01 00:00+00'' + i * interval ''1 minute''', NULL),
    ('fp_interval', 'interval', 'i * interval ''1 minute''', NULL),
    ('fp_oid', 'oid', 'i', NULL),
    ('fp_inet', 'inet', 'inet ''10.0.0.0'' + i', NULL),
    ('fp_cidr', 'cidr', 'set_masklen(inet ''10.0.0.0'' + i * 256, 24)', NULL),
    ('fp_macaddr', 'macaddr', 'lpad(to_hex(i), 12, ''0'')', NULL),
    ('fp_macaddr8', 'macaddr8', 'lpad(to_hex(i), 16, ''0'')', NULL),
    ('fp_jsonb', 'jsonb', 'jsonb_build_object(''customer'', i)', NULL),
    ('fp_enum', 'fp_label', '''label '' || i % 150', '''label '' || (150 + i % 150)'),
    ('fp_int4_array', 'int4[]', 'ARRAY[i, i + 1]', NULL),
    ('fp_text_array', 'text[]', 'ARRAY[''customer-000000000000-'' || i]', NULL)
) AS t(tbl, typ, val, miss)
CROSS JOIN LATERAL check_miss_rate(tbl, typ, val, miss) r;

-- The default sizing, no options, four columns: measured, it keeps at
-- most 0.0003 of the rows an equality on any one column does not match,
-- and is near the prediction, which itself is under that target without
-- wasting much (a signature twice too long would give far less).
CREATE TABLE fp_default (a int4, b int8, c text, d uuid);
INSERT INTO fp_default
SELECT i, i::int8 << 32, 'customer-000000000000-' || i, md5(i::text)::uuid
FROM generate_series(1, 60000) i;
-- In segments of 5,000 rows (the bit-sliced layout a query reads through
-- slices), all but the last few hundred rows; without segment filters,
-- which would skip most segments and hide the signatures' own rate (the
-- filters are measured below).
CREATE TABLE fp_filtered AS SELECT * FROM fp_default;
SET bloomidx.segment_rows = 5000;
CREATE INDEX fp_default_bl ON fp_default USING bloomidx (a, b, c, d) WITH (segment_filter_rate = 0);
CREATE INDEX fp_filtered_bl ON fp_filtered USING bloomidx (a, b, c, d);
RESET bloomidx.segment_rows;
SELECT segments >= 11 AND pending_rows < 5000 AS in_segments FROM bloomidx_index_info('fp_default_bl');
SELECT col, measured <= 0.0003 AS meets_0_0003,
       predicted <= 0.0003 AND predicted > 0.0001 AS predicted_near_0_0003,
       rate_verdict(measured, predicted, 60000 * nconds) AS near_prediction
FROM (SELECT col,
             miss_rate('fp_default', array_agg(cond)) AS measured,
             count(*) AS nconds,
             bloomidx_false_positive_rate('fp_default_bl', ARRAY[min(colno)]) AS predicted
      FROM (VALUES (1, 'a', '%s'), (2, 'b', '%s'), (3, 'c', '''customer-000000000000-%s'''),
                   (4, 'd', 'md5(''%s'')::uuid')) AS c(colno, col, miss),
           LATERAL (SELECT format('%s = ' || miss, col, k) AS cond
                    FROM generate_series(60001, 60010) k) q
      GROUP BY col) r
ORDER BY col;
-- IS NULL on each column (no row has a NULL).
SELECT rate_verdict(miss_rate('fp_default', '{a IS NULL, b IS NULL, c IS NULL, d IS NULL}'),
                    bloomidx_false_positive_rate('fp_default_bl', '{1}'), 60000 * 4) AS is_null;
-- With the default segment filters (segment_filter_rate 0.025) the same
-- misses read few segments: the rows they keep fall to a fifth of the
-- signatures' rate or less (about 2 % of it, as 2 % of the segments pass).
SELECT miss_rate('fp_filtered', array_agg(cond))
       <= 0.2 * bloomidx_false_positive_rate('fp_filtered_bl', '{1}') AS filters_skip_segments
FROM (VALUES ('a', '%s'), ('b', '%s'), ('c', '''customer-000000000000-%s'''),
             ('d', 'md5(''%s'')::uuid')) AS c(col, miss),
     LATERAL (SELECT format('%s = ' || miss, col, k) AS cond
              FROM generate_series(60001, 60010) k) q;

