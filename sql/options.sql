--
-- Options: contrib/bloom's names, defaults and bounds; anything outside
-- them is an ERROR naming the option.
--
CREATE TABLE topt (a int4, b int4, c text);
INSERT INTO topt SELECT i % 20, i % 30, 'c' || (i % 40) FROM generate_series(1, 3000) i;

-- Bounds, at and past them.
CREATE INDEX ON topt USING bloomidx (a) WITH (length = 0);
CREATE INDEX ON topt USING bloomidx (a) WITH (length = 4097);
CREATE INDEX ON topt USING bloomidx (a) WITH (length = -5);
CREATE INDEX ON topt USING bloomidx (a) WITH (length = 'long');
CREATE INDEX ON topt USING bloomidx (a) WITH (col1 = 0);
CREATE INDEX ON topt USING bloomidx (a) WITH (col1 = 4096);
CREATE INDEX ON topt USING bloomidx (a) WITH (col33 = 2);
CREATE INDEX ON topt USING bloomidx (a) WITH (fillfactor = 50);
-- A column cannot set more distinct bits than the signature has.
CREATE INDEX ON topt USING bloomidx (a, b) WITH (length = 16, col2 = 17);

-- At the bounds it works.
CREATE INDEX topt_min ON topt USING bloomidx (a) WITH (length = 1, col1 = 1);
SELECT index_vs_seqscan('SELECT a FROM topt WHERE a = 3');
DROP INDEX topt_min;
CREATE INDEX topt_max ON topt USING bloomidx (a, b, c) WITH (length = 4096, col1 = 4095, col2 = 1, col3 = 2048);
SELECT index_vs_seqscan('SELECT a FROM topt WHERE a = 3 AND c = ''c3''');
DROP INDEX topt_max;
-- Odd lengths (not a multiple of 16): bits stay within the asked length.
CREATE INDEX topt_odd ON topt USING bloomidx (a, b, c) WITH (length = 17, col1 = 5, col2 = 5, col3 = 17);
SELECT index_vs_seqscan('SELECT a FROM topt WHERE b = 7 AND c = ''c7''');
DROP INDEX topt_odd;

-- contrib/bloom's defaults (80 bits, 2 per column): the same size as its index.
CREATE INDEX topt_contrib ON topt USING bloomidx (a, b, c) WITH (length = 80, col1 = 2, col2 = 2, col3 = 2);
SELECT pg_relation_size('topt_contrib') / current_setting('block_size')::int AS blocks;
DROP INDEX topt_contrib;

-- Sizing by target false-positive rate.  DEBUG1 shows what was chosen.
CREATE INDEX ON topt USING bloomidx (a) WITH (false_positive_rate = 0);
CREATE INDEX ON topt USING bloomidx (a) WITH (false_positive_rate = 0.0000009);
CREATE INDEX ON topt USING bloomidx (a) WITH (false_positive_rate = 0.51);
CREATE INDEX ON topt USING bloomidx (a) WITH (false_positive_rate = 'often');
-- (The event trigger is disabled while DEBUG1 shows: PostgreSQL logs each
-- invocation with its function's OID, which differs from run to run.)
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
SET client_min_messages = debug1;
-- No options: at most 0.03% on any one column.
CREATE INDEX topt_def ON topt USING bloomidx (a, b, c);
SELECT reloptions FROM pg_class WHERE oid = 'topt_def'::regclass;
SELECT pg_relation_size('topt_def') / current_setting('block_size')::int AS blocks;
CREATE INDEX topt_r1 ON topt USING bloomidx (a, b, c) WITH (false_positive_rate = 0.01);
CREATE INDEX topt_r2 ON topt USING bloomidx (a, b, c) WITH (false_positive_rate = 0.000001);
CREATE INDEX topt_r3 ON topt USING bloomidx (a, b, c) WITH (false_positive_rate = 0.5);
-- Given options win; the rest is chosen around them.
CREATE INDEX topt_r4 ON topt USING bloomidx (a, b, c) WITH (length = 128);
CREATE INDEX topt_r5 ON topt USING bloomidx (a, b, c) WITH (col1 = 3, false_positive_rate = 0.01);
CREATE INDEX topt_r6 ON topt USING bloomidx (a, b, c) WITH (length = 64, col2 = 4, false_positive_rate = 0.05);
CREATE INDEX topt_r7 ON topt USING bloomidx (a, b, c) WITH (length = 64, col1 = 8, col2 = 8, col3 = 8, false_positive_rate = 0.05);
-- Impossible or contradictory combinations say why.
CREATE INDEX ON topt USING bloomidx (a, b, c) WITH (length = 16, false_positive_rate = 0.0001);
CREATE INDEX ON topt USING bloomidx (a, b, c) WITH (col1 = 1, false_positive_rate = 0.00001);
CREATE INDEX ON topt USING bloomidx (a, b, c) WITH (length = 80, col1 = 2, col2 = 2, col3 = 2, false_positive_rate = 0.001);
RESET client_min_messages;
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
SELECT index_vs_seqscan('SELECT a FROM topt WHERE a = 4 AND c = ''c4''');
-- The option blamed is one given, never a column left to be chosen (col2
-- here), and no message asks for more than 4096 bits.
CREATE INDEX ON topt USING bloomidx (a, b, c) WITH (false_positive_rate = 0.01, col1 = 4000);
CREATE INDEX ON topt USING bloomidx (a, b, c) WITH (false_positive_rate = 0.000001, length = 4096, col1 = 4000);
CREATE INDEX ON topt USING bloomidx (a, b, c) WITH (false_positive_rate = 0.00001, col2 = 1);
-- Without a rate, options far from the default target (a rate above 5%)
-- build with a WARNING: here every row passes.  contrib/bloom's own
-- sizing on six columns (1.84%) does not warn.
CREATE INDEX topt_poor ON topt USING bloomidx (a) WITH (length = 64, col1 = 64);
SELECT index_vs_seqscan('SELECT a FROM topt WHERE a = 4');
DROP INDEX topt_poor;
CREATE INDEX topt_contrib6 ON topt USING bloomidx (a, b, c, a, b, c)
    WITH (length = 80, col1 = 2, col2 = 2, col3 = 2, col4 = 2, col5 = 2, col6 = 2);
DROP INDEX topt_contrib6;
-- A colN past the index's columns: the build says which index.
CREATE INDEX topt_c32 ON topt USING bloomidx (a) WITH (col32 = 5);

-- Options are checked when given, not only when a build reads them: a
-- partitioned index rejects impossible ones at once, instead of failing
-- every PARTITION OF and ATTACH PARTITION later.
CREATE TABLE topt_part (a int4, b int4, c text) PARTITION BY RANGE (a);
CREATE INDEX ON topt_part USING bloomidx (a, b) WITH (length = 16, col1 = 17);
CREATE INDEX ON topt_part USING bloomidx (a, b) WITH (false_positive_rate = 0.0001, length = 8);
CREATE INDEX ON topt_part USING bloomidx (a, b) WITH (false_positive_rate = 0.01, col2 = 4000);
CREATE INDEX topt_part_bl ON topt_part USING bloomidx (a, b, c) WITH (length = 64, col1 = 6);
CREATE TABLE topt_part1 PARTITION OF topt_part FOR VALUES FROM (0) TO (10);
CREATE TABLE topt_part2 (LIKE topt_part);
INSERT INTO topt_part2 SELECT * FROM topt WHERE a >= 10;
ALTER TABLE topt_part ATTACH PARTITION topt_part2 FOR VALUES FROM (10) TO (20);
INSERT INTO topt_part SELECT * FROM topt WHERE a < 10;
SELECT c.relname, c.reloptions
FROM pg_inherits i JOIN pg_class c ON c.oid = i.inhrelid
WHERE i.inhparent = 'topt_part_bl'::regclass ORDER BY 1;
SELECT q, index_vs_seqscan('SELECT a, b FROM topt_part WHERE ' || q)
FROM (VALUES ('a = 3 AND b = 13'), ('b = 17'), ('c = ''c15''')) AS v(q);
-- What depends on the number of columns (one column could meet this rate
-- in 16 bits, two cannot) is checked by the partitions' builds, and the
-- error names the partition's index.
CREATE INDEX ON topt_part USING bloomidx (a, b) WITH (false_positive_rate = 0.0001, length = 16);
-- A colN past the columns: a partitioned index cannot know its columns
-- when amoptions checks its options, but its partitions' builds do, and
-- the event trigger that ends CREATE INDEX (ddl_check.cpp) also before any
-- partition exists.
CREATE INDEX topt_part_c3 ON topt_part USING bloomidx (a) WITH (col3 = 5);
CREATE TABLE topt_empty (a int4, b int4) PARTITION BY RANGE (a);
CREATE INDEX ON topt_empty USING bloomidx (a) WITH (col3 = 5);
CREATE INDEX ON topt_empty USING bloomidx (a, b) WITH (false_positive_rate = 0.0001, length = 32);
CREATE INDEX topt_empty_bl ON topt_empty USING bloomidx (a, b) WITH (col2 = 5);
CREATE TABLE topt_empty1 PARTITION OF topt_empty FOR VALUES FROM (0) TO (10);
DROP TABLE topt_empty;
-- CREATE SCHEMA can hold a CREATE INDEX: checked as well.
CREATE SCHEMA topt_s
    CREATE TABLE p (a int4, b int4) PARTITION BY RANGE (a)
    CREATE INDEX p_bl ON p USING bloomidx (a) WITH (col3 = 5);
SELECT count(*) FROM pg_namespace WHERE nspname = 'topt_s';
CREATE TABLE topt_part3 PARTITION OF topt_part FOR VALUES FROM (20) TO (30);
INSERT INTO topt_part VALUES (23, 1, 'x'), (23, 2, 'y'), (24, 1, 'z');
SELECT q, index_vs_seqscan('SELECT a, b FROM topt_part WHERE ' || q)
FROM (VALUES ('a = 23'), ('a = 3')) AS v(q);
DROP TABLE topt_part, topt_part2;

-- So does ALTER INDEX ... SET, for whatever does not depend on the
-- index's columns; the new options take effect at the next REINDEX.
CREATE INDEX topt_alter ON topt USING bloomidx (a, b) WITH (length = 64);
ALTER INDEX topt_alter SET (col2 = 65);
ALTER INDEX topt_alter SET (false_positive_rate = 0.000001, length = 16);
ALTER INDEX topt_alter SET (false_positive_rate = 0.00001, col1 = 1);
-- col3 needs the columns: the event trigger that ends the ALTER knows them
-- and refuses it (through ALTER TABLE too), so that no later REINDEX,
-- TRUNCATE or restore of a dump meets options no build can use.
ALTER INDEX topt_alter SET (col3 = 5);
ALTER TABLE topt_alter SET (col3 = 5);
ALTER INDEX topt_alter SET (false_positive_rate = 0.0001, length = 24);
SELECT reloptions FROM pg_class WHERE relname = 'topt_alter';
REINDEX INDEX topt_alter;
SELECT index_vs_seqscan('SELECT a FROM topt WHERE a = 4 AND b = 4');
DROP INDEX topt_alter;
-- A CREATE INDEX CONCURRENTLY with bad options leaves no invalid index.
CREATE INDEX CONCURRENTLY topt_cic ON topt USING bloomidx (a, b) WITH (length = 16, col1 = 17);
SELECT count(*) FROM pg_class WHERE relname = 'topt_cic';

-- Options stored where no check saw them (with the event trigger
-- disabled, ALTER INDEX takes a col7 for a 2-column index) never make a
-- later build fail: TRUNCATE, VACUUM FULL, REINDEX and a new partition
-- build the index with a WARNING that names it and what it ignores.
CREATE TABLE topt_keep (a int4, b int4);
INSERT INTO topt_keep SELECT i % 50, i % 7 FROM generate_series(1, 3000) i;
CREATE INDEX topt_keep_bl ON topt_keep USING bloomidx (a, b);
CREATE INDEX topt_keep_rate ON topt_keep USING bloomidx (a, b) WITH (length = 64);
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
ALTER INDEX topt_keep_bl SET (col7 = 3);
-- (One column could meet this rate in 16 bits, two cannot.)
ALTER INDEX topt_keep_rate SET (false_positive_rate = 0.0001, length = 16);
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
TRUNCATE topt_keep;
INSERT INTO topt_keep SELECT i % 50, i % 7 FROM generate_series(1, 3000) i;
VACUUM FULL topt_keep;
REINDEX INDEX topt_keep_bl;
REINDEX INDEX CONCURRENTLY topt_keep_rate;
-- Built as if the options ignored were not given: topt_keep_rate with the
-- 16 bits given, 2 per column, far above the rate it could not reach.
SELECT i::regclass, round(bloomidx_false_positive_rate(i, '{1}')::numeric, 5) AS col1_rate
FROM unnest('{topt_keep_bl, topt_keep_rate}'::regclass[]) AS i;
DROP INDEX topt_keep_rate;
SELECT q, index_vs_seqscan('SELECT a, b FROM topt_keep WHERE ' || q)
FROM (VALUES ('a = 3 AND b = 3'), ('b = 5'), ('a = 60')) AS v(q);
-- A CREATE INDEX still refuses them, with or without the event trigger.
CREATE INDEX ON topt_keep USING bloomidx (a, b) WITH (col7 = 3);
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
CREATE INDEX ON topt_keep USING bloomidx (a, b) WITH (col7 = 3);
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
-- The trigger fires under session_replication_role = replica too (enabled
-- ALWAYS): ALTER INDEX refuses them there, and so does a CREATE INDEX on
-- a partitioned table without partitions, which builds nothing.
SET session_replication_role = replica;
ALTER INDEX topt_keep_bl SET (col7 = 3);
CREATE TABLE topt_rp (a int4, b int4) PARTITION BY RANGE (a);
CREATE INDEX topt_rp_bl ON topt_rp USING bloomidx (a, b) WITH (col7 = 3);
RESET session_replication_role;
SELECT count(*) AS stored FROM pg_class WHERE relname = 'topt_rp_bl';
SELECT evtenabled FROM pg_event_trigger WHERE evtname = 'bloomidx_ddl_check';
DROP TABLE topt_rp;
-- Not when check_function_bodies is off, as pg_dump's scripts and
-- pg_restore set it: a restore must not lose an index (004_dump_restore.pl
-- restores such a dump with pg_restore -j 2).
SET check_function_bodies = off;
CREATE INDEX topt_keep_r1 ON topt_keep USING bloomidx (a, b) WITH (col7 = 3);
CREATE INDEX topt_keep_r2 ON topt_keep USING bloomidx (a, b) WITH (false_positive_rate = 0.0001, length = 16);
RESET check_function_bodies;
SELECT indexrelid::regclass, indisvalid FROM pg_index
WHERE indrelid = 'topt_keep'::regclass ORDER BY 1::text;
-- Builds that core runs from a stored definition take its options as
-- stored: ALTER TABLE's rebuild after a type change, CREATE TABLE ... LIKE
-- ... INCLUDING INDEXES.
ALTER TABLE topt_keep ALTER COLUMN b TYPE int8;
CREATE TABLE topt_like (LIKE topt_keep INCLUDING INDEXES);
SELECT q, index_vs_seqscan('SELECT a, b FROM topt_keep WHERE ' || q)
FROM (VALUES ('a = 3 AND b = 3'), ('b = 5')) AS v(q);
DROP TABLE topt_keep, topt_like;
-- So does a TRUNCATE in the transaction that created the index.
BEGIN;
CREATE TABLE topt_tx (a int4, b int4);
CREATE INDEX topt_tx_bl ON topt_tx USING bloomidx (a, b);
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
ALTER INDEX topt_tx_bl SET (col7 = 3);
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
TRUNCATE topt_tx;
COMMIT;
DROP TABLE topt_tx;
-- CREATE INDEX CONCURRENTLY refuses them in its build, which leaves an
-- invalid index, as any failure of it does.
CREATE TABLE topt_cc (a int4, b int4);
CREATE INDEX CONCURRENTLY topt_cc_bl ON topt_cc USING bloomidx (a, b) WITH (col7 = 3);
SELECT indexrelid::regclass, indisvalid FROM pg_index WHERE indrelid = 'topt_cc'::regclass;
DROP TABLE topt_cc;
-- A partitioned index given such options behind the event trigger's back
-- (before its partitions: a partition's build refuses them in the CREATE
-- INDEX of a new partitioned index): every partition added later ignores
-- them, by PARTITION OF or ATTACH PARTITION.
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
CREATE TABLE topt_kp (a int4, b int4) PARTITION BY RANGE (a);
CREATE INDEX topt_kp_bl ON topt_kp USING bloomidx (a, b) WITH (false_positive_rate = 0.0001, length = 16);
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
CREATE TABLE topt_kp1 PARTITION OF topt_kp FOR VALUES FROM (0) TO (25);
CREATE TABLE topt_kp2 (LIKE topt_kp);
ALTER TABLE topt_kp ATTACH PARTITION topt_kp2 FOR VALUES FROM (25) TO (50);
-- A partitioned partition and its own partition, in one transaction.
BEGIN;
CREATE TABLE topt_kp3 PARTITION OF topt_kp FOR VALUES FROM (50) TO (100) PARTITION BY RANGE (b);
CREATE TABLE topt_kp3a PARTITION OF topt_kp3 FOR VALUES FROM (0) TO (10);
COMMIT;
INSERT INTO topt_kp SELECT i % 50, i % 7 FROM generate_series(1, 3000) i;
INSERT INTO topt_kp SELECT 50 + i % 50, i % 7 FROM generate_series(1, 300) i;
SELECT q, index_vs_seqscan('SELECT a, b FROM topt_kp WHERE ' || q)
FROM (VALUES ('a = 3 AND b = 3'), ('a = 30 AND b = 2'), ('b = 5'), ('a = 53')) AS v(q);
DROP TABLE topt_kp;

-- Unsupported types and operators.
CREATE TABLE tbad (f money, p point, a int4);
CREATE INDEX ON tbad USING bloomidx (f);
CREATE INDEX ON tbad USING bloomidx (p);
CREATE INDEX ON tbad USING bloomidx (a int4_ops, f);
-- 33 columns are more than PostgreSQL allows in any index.
DO $$
BEGIN
    EXECUTE 'CREATE TABLE t33 (' ||
        (SELECT string_agg('c' || i || ' int4', ', ') FROM generate_series(1, 33) i) || ')';
    EXECUTE 'CREATE INDEX ON t33 USING bloomidx (' ||
        (SELECT string_agg('c' || i, ', ') FROM generate_series(1, 33) i) || ')';
END
$$;
-- 32 columns work.
CREATE TABLE t32 AS SELECT i AS c1, i % 2 AS c2, i % 3 AS c3, i % 4 AS c4, i % 5 AS c5,
    i % 6 AS c6, i % 7 AS c7, i % 8 AS c8, i % 9 AS c9, i % 10 AS c10, i % 11 AS c11,
    i % 12 AS c12, i % 13 AS c13, i % 14 AS c14, i % 15 AS c15, i % 16 AS c16,
    i % 17 AS c17, i % 18 AS c18, i % 19 AS c19, i % 20 AS c20, i % 21 AS c21,
    i % 22 AS c22, i % 23 AS c23, i % 24 AS c24, i % 25 AS c25, i % 26 AS c26,
    i % 27 AS c27, i % 28 AS c28, i % 29 AS c29, i % 30 AS c30, i % 31 AS c31,
    i % 32 AS c32
FROM generate_series(1, 2000) i;
CREATE INDEX t32_bl ON t32 USING bloomidx (c1, c2, c3, c4, c5, c6, c7, c8, c9, c10, c11,
    c12, c13, c14, c15, c16, c17, c18, c19, c20, c21, c22, c23, c24, c25, c26, c27, c28,
    c29, c30, c31, c32) WITH (length = 256, col32 = 7);
SELECT cols, index_vs_seqscan('SELECT c1 FROM t32 WHERE ' || cols)
FROM (VALUES ('c1 = 77'), ('c32 = 5'), ('c31 = 3 AND c32 = 4'), ('c2 = 1 AND c17 = 3 AND c29 = 5')) AS q(cols);
