--
-- The planner picks bloomidx when it is the faster plan and a sequential
-- scan when it is not.  contrib/bloom fails this: it costs every index page
-- at random_page_cost and ignores false positives, and on a million rows
-- picks a 69 ms sequential scan over a 3 ms bloom scan.
--
SELECT setseed(0.3);
CREATE TABLE tplan AS
SELECT (random() * 1000000)::int4 AS i1, (random() * 1000000)::int4 AS i2,
       (random() * 1000000)::int4 AS i3, (random() * 1000000)::int4 AS i4,
       (random() * 1000000)::int4 AS i5,
       CASE WHEN i % 20 = 0 THEN 'rare' ELSE 'common' END AS status
FROM generate_series(1, 500000) i;
CREATE INDEX tplan_bl ON tplan USING bloomidx (i1, i2, i3, i4, i5, status);
VACUUM ANALYZE tplan;
SET max_parallel_workers_per_gather = 0;

-- Selective: two columns, one row or none.  The index, by the planner's choice.
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE i2 = 4242 AND i5 = 777;
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE i3 = 31337;
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE i1 IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
SELECT index_vs_seqscan('SELECT * FROM tplan WHERE i2 = 4242 AND i5 = 777');

-- Not selective: 95% of the rows.  A sequential scan.
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE status = 'common';
-- 5% of the rows: on nearly every heap page, but a bitmap heap scan that
-- rechecks 5% of the tuples still beats a scan that filters all of them
-- (about 21 ms against 51 ms here), and the planner knows it.
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE status = 'rare';
-- With a selective column, the index again.
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE status = 'common' AND i4 = 99;

-- With parallel query on (PostgreSQL's default of 2 workers per gather).
-- An IN list costs one pass over the index, an element test a signature
-- and each element's false positives: ten values take the index (10 ms
-- here, against 66 ms for a sequential scan and more for a parallel
-- one), as does an ARRAY(SELECT ...) the planner expects ten rows from.
-- Expected to return 100,000 rows, or of a length nobody knows (a generic
-- plan's parameter, which the custom plans know), an array gets a
-- sequential scan: testing its elements would cost more than the table.
-- (Set, not reset: a server may be configured otherwise, as
-- test/valgrind.sh's is.)
SET max_parallel_workers_per_gather = 2;
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE i1 IN (1, 2, 3, 4, 5, 6, 7, 8, 9, 10);
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE i1 = ANY (ARRAY(SELECT generate_series(1, 10)));
-- Forty values too (12 ms here, against 120 ms for a parallel sequential
-- scan): each segment read tests only the elements its filters may hold,
-- and the rows sent to recheck are those of the segments read (before,
-- every element's chance rows in every segment, ten times too many, and a
-- sequential scan).
EXPLAIN (COSTS OFF) SELECT * FROM tplan
WHERE i1 = ANY ('{7919, 15838, 23757, 31676, 39595, 47514, 55433, 63352, 71271, 79190,
                  87109, 95028, 102947, 110866, 118785, 126704, 134623, 142542, 150461, 158380,
                  166299, 174218, 182137, 190056, 197975, 205894, 213813, 221732, 229651, 237570,
                  245489, 253408, 261327, 269246, 277165, 285084, 293003, 300922, 308841, 316760}');
EXPLAIN (COSTS OFF) SELECT * FROM tplan WHERE i1 = ANY (ARRAY(SELECT generate_series(1, 100000)));
PREPARE tplan_any(int4[]) AS SELECT * FROM tplan WHERE i1 = ANY ($1);
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE tplan_any('{1, 2}');
SET plan_cache_mode = force_custom_plan;
EXPLAIN (COSTS OFF) EXECUTE tplan_any('{1, 2}');
RESET plan_cache_mode;
DEALLOCATE tplan_any;
