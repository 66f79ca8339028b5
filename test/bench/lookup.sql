-- pgbench script (test/bench/run.sh): a 2-column equality lookup whose
-- values (quoted literals) come from a random row of the lookup table
-- (nkeys rows: up to 10,000, fewer in a small data set with NULLs).
\set id random(1, :nkeys)
SELECT x, y FROM :keys WHERE id = :id \gset
SELECT * FROM :tbl WHERE :c1 = :x AND :c2 = :y;
