--
-- bloomidx_advise: sizing from the statistics, checked against the
-- false-positive rates the index it advises really has.
--
-- Every table is smaller than the rows ANALYZE samples at a statistics
-- target of 200 (60,000), so the statistics, and with them the advice,
-- are the same on every run.
SET default_statistics_target = 200;

-- The measured false-positive rate of an equality on column col of tbl:
-- for each query value (all the column's distinct values, NULL included,
-- or every k-th of them when there are more than 400), the rows the index
-- returns that do not hold the value, over the rows that do not hold it;
-- the mean over the values, each as likely to be asked as another (which
-- is what bloomidx_advise predicts).  Written "col = ANY (array)", which the planner gives
-- the index for a bool column too.
CREATE FUNCTION measured_rate(tbl text, col text) RETURNS float8
LANGUAGE plpgsql AS $$
DECLARE
    nrows float8;
    ndistinct bigint;
    typ text;
    v text;
    cond text;
    matches float8;
    rates float8 := 0;
    nvalues int := 0;
BEGIN
    SELECT format_type(atttypid, atttypmod) INTO typ
    FROM pg_attribute WHERE attrelid = tbl::regclass AND attname = col;
    EXECUTE format('SELECT count(*), count(DISTINCT %I) + (count(*) > count(%I))::int FROM %s',
                   col, col, tbl)
        INTO nrows, ndistinct;
    FOR v IN EXECUTE format('SELECT x FROM (SELECT x, row_number() OVER (ORDER BY x) AS r '
                            'FROM (SELECT DISTINCT %I::text AS x FROM %s) d) n '
                            'WHERE r %% %s = 0', col, tbl, greatest(1, ndistinct / 400)) LOOP
        cond := CASE WHEN v IS NULL THEN format('%I IS NULL', col)
                     ELSE format('%I = ANY (%L::%s[])', col, '{' || v || '}', typ) END;
        EXECUTE format('SELECT count(*) FROM %s WHERE %s', tbl, cond) INTO matches;
        rates := rates + (index_candidates(format('SELECT * FROM %s WHERE %s', tbl, cond))
                          - matches) / (nrows - matches);
        nvalues := nvalues + 1;
    END LOOP;
    RETURN rates / nvalues;
END
$$;

-- Advises on tbl's columns, builds the index it returns, and compares
-- each column's predicted rate with the measured one: 'within 25%' of
-- it, or both figures.
CREATE FUNCTION advice_check(tbl text, cols text[])
RETURNS TABLE (column_name text, bits int, advice text, verdict text)
LANGUAGE plpgsql AS $$
DECLARE
    a record;
BEGIN
    SELECT * INTO a FROM bloomidx_advise(tbl::regclass, cols);
    EXECUTE a.create_index;
    RETURN QUERY
    SELECT u.c, u.b, left(u.adv, 40),
           CASE WHEN abs(u.predicted - m.measured) <= 0.25 * m.measured THEN 'within 25%'
                ELSE format('predicted %s, measured %s', u.predicted, m.measured) END
    FROM unnest(a.column_names, a.bits, a.false_positive_rates, a.advice) AS u(c, b, predicted, adv)
    CROSS JOIN LATERAL (SELECT measured_rate(tbl, u.c) AS measured) m;
END
$$;

-- Skewed columns beside near-unique ones: an order id, a customer, a
-- status whose five values are far from equally common, a region whose
-- lower numbers are the common ones, and a product that is NULL in 30%
-- of the rows.
SELECT setseed(0.25);
CREATE TABLE adv_orders AS
SELECT g AS id,
       (g * 7919) % 20000 AS customer,
       (ARRAY['new', 'paid', 'shipped', 'done', 'void'])[
           CASE WHEN r < 0.5 THEN 1 WHEN r < 0.7 THEN 2 WHEN r < 0.85 THEN 3
                WHEN r < 0.95 THEN 4 ELSE 5 END] AS status,
       floor(30 * power(random(), 3))::int AS region,
       CASE WHEN random() < 0.3 THEN NULL ELSE floor(random() * 5000)::int END AS sku
FROM (SELECT g, random() AS r FROM generate_series(1, 60000) g) s;
ANALYZE adv_orders;
SELECT create_index, length
FROM bloomidx_advise('adv_orders', '{id, customer, status, region, sku}');
SELECT * FROM advice_check('adv_orders', '{id, customer, status, region, sku}');

-- Only low-cardinality columns, so that rows repeat: whether a value's
-- bits overlap those of the few values beside it decides its rate.
SELECT setseed(0.5);
CREATE TABLE adv_lowcard AS
SELECT random() < 0.8 AS paid,
       (ARRAY['new', 'paid', 'shipped', 'done', 'void'])[1 + floor(5 * power(random(), 2))::int] AS status,
       1 + floor(12 * random())::int AS month,
       'state-' || floor(50 * power(random(), 2))::int AS state,
       floor(300 * power(random(), 4))::int AS product
FROM generate_series(1, 60000);
ANALYZE adv_lowcard;
SELECT * FROM advice_check('adv_lowcard', '{paid, status, month, state, product}');

-- A lower rate asked for: more bits, a longer signature, a larger index.
SELECT a.length < b.length AS longer, a.predicted_size < b.predicted_size AS larger,
       (SELECT bool_and(x < y) FROM unnest(a.bits, b.bits) u(x, y)
        WHERE u.x > 1) AS more_bits
FROM bloomidx_advise('adv_orders', '{id, customer}') a,
     bloomidx_advise('adv_orders', '{id, customer}', 0.00001) b;

-- The predicted size against the size of the index it advises: within
-- 3 %, as the README says.  (A model of a serial build whose TIDs take
-- bloomidx::kTypicalTidBytes a row: on the quick start's table at 30,000,
-- 300,000 and 3 M rows the built index came within 0.04 % of it; here,
-- where a unique column's values are all in the one segment, within 1 %.)
SELECT pg_relation_size('adv_orders_id_customer_status_region_sku_idx')::numeric
       / predicted_size BETWEEN 0.97 AND 1.03 AS within_3_percent
FROM bloomidx_advise('adv_orders', '{id, customer, status, region, sku}');

-- Bad input.
SELECT * FROM bloomidx_advise(NULL, '{id}');
SELECT * FROM bloomidx_advise('adv_orders', NULL);
SELECT * FROM bloomidx_advise('adv_orders', '{id}', NULL);
SELECT * FROM bloomidx_advise('adv_orders', '{}');
SELECT * FROM bloomidx_advise('adv_orders', '{id, NULL}');
SELECT * FROM bloomidx_advise('adv_orders', '{{id}, {sku}}');
SELECT * FROM bloomidx_advise('adv_orders', '{id, id}');
SELECT * FROM bloomidx_advise('adv_orders', '{nope}');
SELECT * FROM bloomidx_advise('adv_orders', '{ctid}');
SELECT * FROM bloomidx_advise('adv_orders', '{id}', 0);
SELECT * FROM bloomidx_advise('adv_orders', '{id}', 0.6);
SELECT * FROM bloomidx_advise('adv_orders', '{id}', 'NaN');
SELECT * FROM bloomidx_advise('adv_orders', array_fill('id'::text, ARRAY[33]));
SELECT * FROM bloomidx_advise('adv_orders_id_customer_status_region_sku_idx', '{id}');
CREATE SEQUENCE adv_seq;
SELECT * FROM bloomidx_advise('adv_seq', '{last_value}');
CREATE VIEW adv_view AS SELECT * FROM adv_orders;
SELECT * FROM bloomidx_advise('adv_view', '{id}');
SELECT * FROM bloomidx_advise(0, '{id}');
CREATE TABLE adv_point (p point, t text);
INSERT INTO adv_point VALUES (point(1, 2), 'a');
ANALYZE adv_point;
SELECT * FROM bloomidx_advise('adv_point', '{t, p}');
-- Statistics are needed: a table never analyzed, or a column just added.
CREATE TABLE adv_fresh (a int);
INSERT INTO adv_fresh VALUES (1);
SELECT * FROM bloomidx_advise('adv_fresh', '{a}');
ALTER TABLE adv_point ADD COLUMN n int;
SELECT * FROM bloomidx_advise('adv_point', '{t, n}');

-- An empty table analyzed has no statistics either, and says why.
CREATE TABLE adv_empty (a int);
ANALYZE adv_empty;
SELECT * FROM bloomidx_advise('adv_empty', '{a}');
-- Statistics from before a TRUNCATE tell of rows that are gone: the row
-- count is unknown until the table is analyzed again.
CREATE TABLE adv_emptied AS SELECT g AS id FROM generate_series(1, 1000) g;
ANALYZE adv_emptied;
TRUNCATE adv_emptied;
SELECT * FROM bloomidx_advise('adv_emptied', '{id}');
ANALYZE adv_emptied;
SELECT * FROM bloomidx_advise('adv_emptied', '{id}');
-- A column of one value.
CREATE TABLE adv_one AS SELECT 7 AS a, g AS b FROM generate_series(1, 2000) g;
ANALYZE adv_one;
SELECT bits, advice[1] FROM bloomidx_advise('adv_one', '{a, b}');

-- Long work is cancellable: 32 columns at the lowest rate.
DO $$
BEGIN
    EXECUTE (SELECT 'CREATE TABLE adv_wide AS SELECT '
                    || string_agg(format('floor(100 * power(random(), 3))::int AS c%s', i), ', ')
                    || ' FROM generate_series(1, 3000)'
             FROM generate_series(1, 32) i);
END
$$;
ANALYZE adv_wide;
SET statement_timeout = '50ms';
SELECT length FROM bloomidx_advise('adv_wide', (SELECT array_agg('c' || i) FROM generate_series(1, 32) i), 0.000001);
RESET statement_timeout;

-- A partitioned table: the statistics of the whole tree.
CREATE TABLE adv_parted (k int, v text) PARTITION BY RANGE (k);
CREATE TABLE adv_parted_1 PARTITION OF adv_parted FOR VALUES FROM (0) TO (500);
CREATE TABLE adv_parted_2 PARTITION OF adv_parted FOR VALUES FROM (500) TO (1000);
INSERT INTO adv_parted SELECT g % 1000, 'v' || (g % 7) FROM generate_series(1, 5000) g;
SELECT * FROM bloomidx_advise('adv_parted', '{k, v}');
ANALYZE adv_parted;
SELECT create_index, bits FROM bloomidx_advise('adv_parted', '{k, v}');
-- Its predicted size is that of an index per partition.
INSERT INTO adv_parted SELECT g % 1000, 'v' || (g % 7) FROM generate_series(1, 135000) g;
ANALYZE adv_parted;
SELECT create_index FROM bloomidx_advise('adv_parted', '{k, v}') \gexec
SELECT sum(pg_relation_size(i.indexrelid)) BETWEEN 0.75 * a.predicted_size AND 1.25 * a.predicted_size
       AS size_as_predicted
FROM pg_partition_tree('adv_parted') p
JOIN pg_index i ON i.indrelid = p.relid,
     bloomidx_advise('adv_parted', '{k, v}') a
WHERE p.isleaf
GROUP BY a.predicted_size;

-- Privileges: the statistics tell of the values, so SELECT on each
-- column is needed, as for pg_stats.
CREATE ROLE regress_adv_reader;
GRANT SELECT (status, region) ON adv_orders TO regress_adv_reader;
SET ROLE regress_adv_reader;
SELECT bits FROM bloomidx_advise('adv_orders', '{status, region}');
SELECT bits FROM bloomidx_advise('adv_orders', '{status, sku}');
RESET ROLE;
-- Nor, as pg_stats, on a table whose row-level security applies: its
-- statistics tell of the rows the policy hides.  Its owner, to whom it
-- does not apply, still may.
GRANT SELECT ON adv_lowcard TO regress_adv_reader;
ALTER TABLE adv_lowcard ENABLE ROW LEVEL SECURITY;
CREATE POLICY adv_paid ON adv_lowcard USING (paid);
SET ROLE regress_adv_reader;
SELECT count(*) FROM pg_stats WHERE tablename = 'adv_lowcard';
SELECT bits FROM bloomidx_advise('adv_lowcard', '{status}');
RESET ROLE;
SELECT bits FROM bloomidx_advise('adv_lowcard', '{status}');
DROP POLICY adv_paid ON adv_lowcard;
ALTER TABLE adv_lowcard DISABLE ROW LEVEL SECURITY;
REVOKE ALL ON adv_orders, adv_lowcard FROM regress_adv_reader;
DROP ROLE regress_adv_reader;

DROP VIEW adv_view;
DROP TABLE adv_orders, adv_lowcard, adv_point, adv_fresh, adv_parted, adv_empty, adv_emptied, adv_one, adv_wide;
DROP SEQUENCE adv_seq;
DROP FUNCTION advice_check(text, text[]);
DROP FUNCTION measured_rate(text, text);
RESET default_statistics_target;
