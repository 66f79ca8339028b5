-- Data set B, mixed types: text of about a million, ten thousand and twelve
-- distinct values, a six-value status (skewed), uuid, timestamptz (0.2 %
-- NULL) and int8; sku is 5 % NULL.  psql variable rows: how many.
-- contrib/bloom has operator classes for int4 and text only: it indexes
-- the four text columns, every other kind all seven.
CREATE FUNCTION gen_b(nrows bigint)
RETURNS TABLE (customer text, sku text, region text, status text, id uuid,
               created_at timestamptz, amount int8) LANGUAGE sql AS $$
    SELECT 'cust-' || (random() * 1000000)::int,
           CASE WHEN random() >= 0.05 THEN 'sku-' || (random() * 10000)::int END,
           (ARRAY['eu-west', 'eu-north', 'eu-south', 'us-east', 'us-west', 'us-central',
                  'ap-south', 'ap-east', 'ap-northeast', 'sa-east', 'af-south', 'me-central'])
               [1 + floor(random() * 12)::int],
           (ARRAY['new', 'paid', 'shipped', 'delivered', 'cancelled', 'returned'])
               [1 + floor(random() ^ 2 * 6)::int],
           gen_random_uuid(),
           CASE WHEN random() >= 0.002
                THEN timestamptz '2024-01-01 00:00:00+00' + floor(random() * 31536000) * interval '1 second' END,
           (random() * 1e12)::int8
    FROM generate_series(1, nrows)
$$;
INSERT INTO dataset VALUES ('b', :rows, '{customer, sku, region, status, id, created_at, amount}',
                            '{customer, sku, region, status}',
    'Data set B, mixed types: `customer` text (drawn from 1,000,000 values), `sku` text (from 10,000; 5 % NULL), `region` text (12 values), `status` text (6 values, skewed), `id` uuid, `created_at` timestamptz (0.2 % NULL), `amount` int8. contrib/bloom has operator classes for int4 and text only: it indexes the four text columns, every other kind all seven. '
    'At the same length, contrib/bloom keeps fewer false positives here, and its index is built from fewer values.',
    '{customer, sku}');

SELECT setseed(0.42);
CREATE TABLE b_bloomidx AS SELECT * FROM gen_b(:rows);

-- 1- to 3-column queries and the IN list on text columns (contrib/bloom
-- can answer them); then IS NULL, uuid, timestamptz and int8.
INSERT INTO query (ds, ord, label, short, cond, miss_cols, shown, miss)
SELECT 'b', q.* FROM (SELECT * FROM b_bloomidx WHERE sku IS NOT NULL AND created_at IS NOT NULL
                      LIMIT 1 OFFSET :rows / 3) r,
    (SELECT string_agg(quote_literal(customer), ', ') AS list
     FROM (SELECT customer FROM b_bloomidx LIMIT 10 OFFSET :rows / 2) s) l,
    LATERAL (VALUES
        (1, '1-column hit', '1-col hit', format('customer = %L', r.customer), NULL, NULL, NULL),
        (2, '2-column hit', '2-col hit', format('sku = %L AND region = %L', r.sku, r.region), NULL, NULL, NULL),
        (3, '3-column hit', '3-col hit', format('customer = %L AND region = %L AND status = %L',
                                                r.customer, r.region, r.status), NULL, NULL, NULL),
        (4, '1-column miss', '1-col miss', NULL, '1', NULL, 'customer = ''none-%1$s'''),
        (5, '2-column miss', '2-col miss', NULL, '2,3', NULL, 'sku = ''none-%1$s'' AND region = ''none-%1$s'''),
        (6, '3-column miss', '3-col miss', NULL, '1,3,4', NULL,
            'customer = ''none-%1$s'' AND region = ''none-%1$s'' AND status = ''none-%1$s'''),
        (7, 'IN list of 10 values', 'IN (10)', format('customer IN (%s)', l.list), NULL,
            'customer IN (10 values of customer)', NULL),
        (8, 'IS NULL', 'IS NULL', 'created_at IS NULL', NULL, NULL, NULL),
        (9, 'uuid hit', 'uuid', format('id = %L', r.id), NULL, NULL, NULL),
        (10, 'timestamptz and int8 hit', 'ts+int8', format('created_at = %L AND amount = %s',
                                                           r.created_at, r.amount), NULL, NULL, NULL)) q;
