-- pgbench script (test/bench/run.sh): a 2-column equality lookup whose
-- values (quoted literals) come from a random row of the lookup table.
\set id random(1, 10000)
SELECT x, y FROM :keys WHERE id = :id \gset
SELECT * FROM :tbl WHERE :c1 = :x AND :c2 = :y;
