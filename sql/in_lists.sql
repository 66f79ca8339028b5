--
-- Huge IN lists answer right within bounded memory: the distinct elements
-- are kept (equal values give equal masks), each mask sized by the
-- signature; a list whose distinct elements do not fit in work_mem tests
-- no bits, and the recheck decides.  Building the masks can be cancelled.
-- (Each mask used to take 664 bytes: 2 million elements asked for 1.3 GB
-- and failed, and a timeout waited for seconds of mask building.)
--
CREATE TABLE tin (id int4, a int4, b int4) WITH (autovacuum_enabled = off);
INSERT INTO tin SELECT i, i, i % 7 FROM generate_series(1, 1989) i;
INSERT INTO tin VALUES (2001, -1, 1), (2002, -2, 2), (2003, NULL, 3);
CREATE INDEX tin_bl ON tin USING bloomidx (a, b);
ANALYZE tin;

-- 2 million elements, 1990 distinct values: they fit even in 128 kB of
-- work_mem.  100,000 distinct values fit in the default 4 MB, not in 128 kB
-- (the DEBUG1 lines).
CREATE TABLE in_conds (cond text);
INSERT INTO in_conds
VALUES ('a = ANY (ARRAY(SELECT i % 1990 FROM generate_series(1, 2000000) i))'),
       ('a = ANY (ARRAY(SELECT i % 100000 FROM generate_series(1, 200000) i))'),
       ('a = ANY (ARRAY(SELECT i % 100000 FROM generate_series(1, 200000) i)) AND b = 3'),
       ('a = ANY (ARRAY(SELECT NULLIF(i % 100000, 7) FROM generate_series(1, 200000) i))');
SET jit = off;
SET client_min_messages = debug1;
SET work_mem = '128kB';
SELECT cond, index_vs_seqscan('SELECT id FROM tin WHERE ' || cond) FROM in_conds;
SET work_mem = '4MB';
SELECT cond, index_vs_seqscan('SELECT id FROM tin WHERE ' || cond) FROM in_conds;
RESET client_min_messages;
RESET work_mem;
RESET jit;

-- What work_mem holds of a list is all the query keeps of each element:
-- its mask and its slice positions (2 bytes a bit).  At 2,000 bits a
-- value, 20,000 distinct elements take about 11 MB of masks and 80 MB of
-- positions: not tested in 32 MB (the positions used to be left out of
-- the count, and such a list took 3 times work_mem).
CREATE TABLE tin_wide (id int4, a int4);
INSERT INTO tin_wide SELECT i, i FROM generate_series(1, 2000) i;
CREATE INDEX tin_wide_bl ON tin_wide USING bloomidx (a) WITH (length = 4096, col1 = 2000);
SET jit = off;
SET client_min_messages = debug1;
SET work_mem = '32MB';
SELECT index_vs_seqscan('SELECT id FROM tin_wide WHERE a = ANY (ARRAY(SELECT generate_series(1990, 21989)))');
SET work_mem = '128MB';
SELECT index_vs_seqscan('SELECT id FROM tin_wide WHERE a = ANY (ARRAY(SELECT generate_series(1990, 21989)))');
RESET client_min_messages;
RESET work_mem;
RESET jit;
DROP TABLE tin_wide;

-- A timeout lands while a huge list is read, its masks built or tested
-- (every element of 1.5 million, in 1 GB of work_mem), not seconds later.
SET enable_seqscan = off;
SET work_mem = '1GB';
SET statement_timeout = '1s';
DO $$
DECLARE
    started timestamptz := clock_timestamp();
BEGIN
    PERFORM count(*) FROM tin WHERE a = ANY (ARRAY(SELECT generate_series(10001, 1510000)));
    RAISE NOTICE 'not canceled';
EXCEPTION WHEN query_canceled THEN
    RAISE NOTICE 'canceled within 3 s of the timeout: %', clock_timestamp() - started < interval '4 s';
END
$$;
RESET statement_timeout;
RESET work_mem;
RESET enable_seqscan;
