--
-- Key pages (format 16, src/core/page_layout.hpp): a small segment that a
-- seal or a merge writes (a quarter of a segment's rows or fewer) keeps
-- its rows' filter keys, and a merge of such segments makes the merged
-- segment's filters from them, however many it merges, where ORing its
-- sources' filters kept none past four (storage/README.md, *Steady
-- state*).  Queries are checked against a sequential scan; bloomidx_verify
-- checks every kept key against its tuple's values, so a key that a merge
-- carried to the wrong row is caught.
--
SET bloomidx.segment_rows = 20000;
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.41);
CREATE TABLE kp (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
INSERT INTO kp SELECT i, floor(random() * 300), 'v' || floor(random() * 200),
                      floor(random() * 5000)
FROM generate_series(1, 40000) i;
CREATE INDEX kp_bl ON kp USING bloomidx (a, b, c);
SELECT key_pages AS built_with_no_key_pages FROM bloomidx_stats('kp_bl');
CREATE FUNCTION kp_round(n int) RETURNS void LANGUAGE plpgsql AS $$
BEGIN
    FOR r IN 1 .. n LOOP
        INSERT INTO kp SELECT i, floor(random() * 300), 'v' || floor(random() * 200),
                              floor(random() * 5000)
        FROM generate_series((SELECT max(id) + 1 FROM kp), (SELECT max(id) + 2000 FROM kp)) i;
        PERFORM bloomidx_seal('kp_bl');
    END LOOP;
END $$;
-- The index's state: its segments, whether each has filters, its key
-- pages (bloomidx_stats', and as bloomidx_page_items shows them), every
-- row checked (bloomidx_verify) and 40 queries against a sequential scan.
CREATE FUNCTION kp_state()
RETURNS TABLE (segments int, every_one_filtered bool, key_pages bigint,
               items_agree bool, verified bool, differences bigint)
LANGUAGE sql AS $$
    SELECT i.segments, i.filtered_segments = i.segments, s.key_pages,
           s.key_pages = (SELECT count(*)
                          FROM generate_series(1, (pg_relation_size('kp_bl') / 8192 - 1)::int) b
                          WHERE EXISTS (SELECT FROM bloomidx_page_items('kp_bl', b)
                                        WHERE page_kind = 'keys')),
           (SELECT bloomidx_verify('kp_bl')::text = ''), (SELECT differences FROM abc_check('kp', 40))
    FROM bloomidx_index_info('kp_bl') i, bloomidx_stats('kp_bl') s $$;

-- Eight seals of 2,000 rows: eight segments with key pages (three each).
SELECT kp_round(8);
SELECT * FROM kp_state();

-- VACUUM merges the eight into one segment of 16,000 rows, its filters
-- made from their keys (one slot; merging filters, it made two segments
-- of four slots each, which never merged again), too large to keep keys.
SELECT wait_for_older_xacts();
VACUUM kp;
SELECT * FROM kp_state();
-- Its filters, made from the keys, still reject: values no row holds
-- return almost no rows (the false-positive rate, measured) and a miss
-- reads few index pages.
SELECT miss_rate('kp', ARRAY['a = 1000', 'b = ''w7''', 'c = 77777', 'a = 301 AND c = 5001']) < 0.01
           AS few_false_positives,
       index_buffers('SELECT * FROM kp WHERE a = 1000') <= 8 AS miss_reads_few_pages;

-- Most of eight more small segments' rows deleted: merged, their live
-- rows (a few hundred) keep their keys, each carried to its own row
-- (bloomidx_verify compares each with its tuple's values).
SELECT kp_round(8);
DELETE FROM kp WHERE id > 56000 AND random() < 0.95;
SELECT wait_for_older_xacts();
VACUUM kp;
SELECT * FROM kp_state();
SELECT index_vs_seqscan('SELECT id FROM kp WHERE a = ' || a || ' AND b = ' || quote_literal(b))
FROM kp WHERE id > 56000 ORDER BY id LIMIT 5;

-- A merge of keyed segments with one that kept no keys (a seal of 6,000
-- rows, over a quarter of a segment, most of them then deleted): its
-- filters come from their filters, and it keeps no keys, which only
-- some of its rows came with (so no key page goes with the wrong row:
-- bloomidx_verify).
INSERT INTO kp SELECT i, floor(random() * 300), 'v' || floor(random() * 200),
                      floor(random() * 5000)
FROM generate_series(100001, 106000) i;
SELECT bloomidx_seal('kp_bl') AS sealed_without_keys;
SELECT kp_round(2);
SELECT * FROM kp_state();
DELETE FROM kp WHERE id BETWEEN 100001 AND 106000 AND random() < 0.95;
SELECT wait_for_older_xacts();
VACUUM kp;
SELECT * FROM kp_state();

-- A keyed segment moved alone: every row but a last small seal's deleted,
-- VACUUM frees the rest and moves that segment, the last in the file,
-- into the free pages before it (merge.cpp, move_last_segments); it
-- keeps its keys, and the file shrinks.
SELECT kp_round(1);
DELETE FROM kp WHERE id < (SELECT max(id) - 1999 FROM kp);
CREATE FUNCTION kp_last_key_page() RETURNS int LANGUAGE sql AS $$
    SELECT max(b) FROM generate_series(1, (pg_relation_size('kp_bl') / 8192 - 1)::int) b
    WHERE EXISTS (SELECT FROM bloomidx_page_items('kp_bl', b) WHERE page_kind = 'keys') $$;
SELECT pg_relation_size('kp_bl') / 8192 AS pages_before, kp_last_key_page() AS keys_before \gset
SELECT :keys_before * 2 > :pages_before AS in_the_second_half;
SELECT wait_for_older_xacts();
VACUUM kp;
SELECT * FROM kp_state();
SELECT kp_last_key_page() < :keys_before / 4 AS moved,
       pg_relation_size('kp_bl') / 8192 < :pages_before / 4 AS shrank;

DROP TABLE kp;
DROP FUNCTION kp_round(int), kp_state(), kp_last_key_page();

-- A wide index (20 columns: 101 rows' keys a page) keeps the keys of a
-- seal of about 16,000 rows on over 128 key pages (kMaxKeyPages was 128,
-- and such an index kept none), and they check against the rows.
RESET bloomidx.segment_rows;
CREATE TABLE kw AS
SELECT i AS id, (i * 7) % 1000 AS c1, (i * 11) % 997 AS c2, (i * 13) % 991 AS c3, (i * 17) % 983 AS c4,
       (i * 19) % 977 AS c5, (i * 23) % 971 AS c6, (i * 29) % 967 AS c7, (i * 31) % 953 AS c8,
       (i * 37) % 947 AS c9, (i * 41) % 941 AS c10, (i * 43) % 937 AS c11, (i * 47) % 929 AS c12,
       (i * 53) % 919 AS c13, (i * 59) % 911 AS c14, (i * 61) % 907 AS c15, (i * 67) % 887 AS c16,
       (i * 71) % 883 AS c17, (i * 73) % 881 AS c18, (i * 79) % 877 AS c19, (i * 83) % 863 AS c20
FROM generate_series(1, 1000) i;
ALTER TABLE kw SET (autovacuum_enabled = off);
CREATE INDEX kw_bl ON kw USING bloomidx (c1, c2, c3, c4, c5, c6, c7, c8, c9, c10,
                                         c11, c12, c13, c14, c15, c16, c17, c18, c19, c20);
INSERT INTO kw SELECT i, (i * 7) % 1000, (i * 11) % 997, (i * 13) % 991, (i * 17) % 983,
       (i * 19) % 977, (i * 23) % 971, (i * 29) % 967, (i * 31) % 953, (i * 37) % 947,
       (i * 41) % 941, (i * 43) % 937, (i * 47) % 929, (i * 53) % 919, (i * 59) % 911,
       (i * 61) % 907, (i * 67) % 887, (i * 71) % 883, (i * 73) % 881, (i * 79) % 877, (i * 83) % 863
FROM generate_series(1001, 17000) i;
SELECT bloomidx_seal('kw_bl') BETWEEN 15000 AND 16256 AS sealed_a_quarter_segment;
SELECT key_pages > 128 AS over_128_key_pages FROM bloomidx_stats('kw_bl');
SELECT bloomidx_verify('kw_bl')::text = '' AS verified;
SET enable_seqscan = off;
SELECT count(*) AS found FROM kw WHERE c5 = (16001 * 19) % 977 AND c20 = (16001 * 83) % 863 AND id = 16001;
RESET enable_seqscan;
SELECT index_vs_seqscan('SELECT id FROM kw WHERE c3 = ' || c3 || ' AND c18 = ' || c18)
FROM kw WHERE id IN (5, 12000, 16999);
DROP TABLE kw;
