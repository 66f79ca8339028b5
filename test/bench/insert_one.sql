-- pgbench script (test/bench/run.sh): one row from the data set's generator.
INSERT INTO :tbl SELECT * FROM :gen(1);
