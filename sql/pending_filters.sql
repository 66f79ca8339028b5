--
-- Pending filters (src/storage/pending_filters.cpp, format 17): the pending
-- pages that filled get slots in pending groups, 127 pages a group, and a
-- query reads a group's header and a region page a key, then only the
-- pages whose filters may hold its keys.  Queries through the index
-- against a sequential scan (equalities, IN lists, IS NULL) over four
-- groups' worth of pending pages, and after what drops the groups: a
-- VACUUM that removes rows, a seal; then the buffers a miss reads.
--
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.31);
CREATE TABLE pfl (id int, a int, b text, c int) WITH (autovacuum_enabled = off);
CREATE FUNCTION pfl_fill(first int, last int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO pfl
    SELECT i, floor(random() * 2000),
           CASE WHEN random() < 0.05 THEN NULL ELSE 'v' || floor(random() * 300) END,
           CASE WHEN random() < 0.05 THEN NULL ELSE floor(random() * 40) END
    FROM generate_series(first, last) i
$$;
SELECT pfl_fill(1, 20000);
-- Long signatures, so that a pending page holds 99 rows.
CREATE INDEX pfl_bl ON pfl USING bloomidx (a, b, c) WITH (length = 512);
SELECT bloomidx_seal('pfl_bl') > 0 AS build_sealed;

-- 40,000 rows in statements of 4,000, and 200 of one row: about 400
-- pending pages, in four groups (no seal: fewer than a segment's rows).
SELECT count(*) AS statements FROM (SELECT pfl_fill(20001 + 4000 * s, 24000 + 4000 * s) FROM generate_series(0, 9) s) q;
SELECT count(*) AS statements FROM (SELECT pfl_fill(i, i) FROM generate_series(60001, 60200) i) q;
SELECT pending_pages > 3 * 127 AS four_groups_of_pages, segments > 0 AS segments
FROM bloomidx_index_info('pfl_bl');
SELECT * FROM abc_check('pfl', 400);

-- A miss reads each group's header and a region page a key, and the
-- pages before and after the groups' run, not 400 pages; a hit reads the
-- pages with its values too (each value of a is in 30 rows).
SELECT index_buffers($$SELECT * FROM pfl WHERE a = 99999 AND b = 'none'$$) < pending_pages / 16 AS miss_reads_few,
       index_buffers($$SELECT * FROM pfl WHERE a = 5000 AND c = 77$$) < pending_pages / 16 AS other_miss_reads_few
FROM bloomidx_index_info('pfl_bl');
SELECT index_buffers(format('SELECT * FROM pfl WHERE a = %s AND b = %L', a, b)) <
       (SELECT pending_pages / 8 FROM bloomidx_index_info('pfl_bl')) AS hit_reads_few
FROM pfl WHERE id = 50000;

-- A backend keeps the pending groups' headers it read, with the pending
-- tail and page count it read them at (header_cache.cpp): in a new
-- session, the same miss again reads a page fewer a group (the four
-- pending groups' and the segments' one).  An insert that links tails
-- (and gives the pages that filled their slots) moves both, so the next
-- scan reads the pending groups' headers again (a kept header behind the
-- slots would have it walk their pages instead), and finds every row.
\c
SET max_parallel_maintenance_workers = 0;
SELECT index_buffers($$SELECT * FROM pfl WHERE a = 99998 AND b = 'none'$$) AS miss_first \gset
SELECT index_buffers($$SELECT * FROM pfl WHERE a = 99998 AND b = 'none'$$) AS miss_kept \gset
SELECT :miss_first - :miss_kept AS headers_kept;
SELECT setseed(0.32);
SELECT pfl_fill(200001, 202000);
SELECT index_buffers($$SELECT * FROM pfl WHERE a = 99998 AND b = 'none'$$) AS miss_after_insert \gset
SELECT * FROM abc_check('pfl', 100);
\c
SET max_parallel_maintenance_workers = 0;
SELECT setseed(0.33);
SELECT index_buffers($$SELECT * FROM pfl WHERE a = 99998 AND b = 'none'$$) AS miss_new_session \gset
SELECT index_buffers($$SELECT * FROM pfl WHERE a = 99998 AND b = 'none'$$) AS miss_new_kept \gset
SELECT :miss_new_session - :miss_new_kept AS headers_kept,
       :miss_after_insert - :miss_new_kept AS pending_headers_read_again;

-- bloomidx_page_items on the pending groups: the metapage names the first
-- group, each header its id, slots (the pending pages they were taken
-- for), region pages, next group and `after`; a region page is decoded
-- through its group's header.  What they say is checked against the pages
-- themselves: the chain reaches every group, the slots' pages are full
-- pending pages and a run of the list (each the next block of the one
-- before, each group's `after` the next block of its last slot's page),
-- and only taken slots have filter bits.
CREATE TEMP TABLE pfl_items AS
SELECT b AS blkno, p.*
FROM generate_series(0, (pg_relation_size('pfl_bl') / 8192)::int - 1) b,
     bloomidx_page_items('pfl_bl', b) p;
CREATE TEMP VIEW pfl_groups AS
SELECT blkno, substring(detail FROM '^pending group (\d+),')::int8 AS id,
       substring(detail FROM 'slots taken (\d+),')::int AS slots,
       substring(detail FROM 'slot capacity (\d+),')::int AS capacity,
       substring(detail FROM 'region pages (\d+),')::int AS region_pages,
       substring(detail FROM 'next group (\d+) ')::int AS next_block,
       substring(detail FROM 'next group \d+ \(id (\d+)\)')::int8 AS next_id,
       substring(detail FROM 'after (\d+),')::int AS after
FROM pfl_items WHERE page_kind = 'filter group' AND item IS NULL AND detail LIKE 'pending group %';
CREATE TEMP VIEW pfl_slots AS
SELECT g.id, g.blkno AS header, i.item AS slot,
       substring(i.detail FROM '^pending page (\d+)$')::int AS page,
       row_number() OVER (ORDER BY g.id, i.item) AS run
FROM pfl_groups g JOIN pfl_items i ON i.blkno = g.blkno AND i.item_kind = 'slot';
SELECT detail ~ ', pending group \d+ \(id \d+\)$' AS metapage_names_a_group
FROM pfl_items WHERE blkno = 0 AND item IS NULL;
WITH RECURSIVE chain AS (
    SELECT g.* FROM pfl_groups g, pfl_items m
    WHERE m.blkno = 0 AND m.item IS NULL
      AND g.blkno = substring(m.detail FROM 'pending group (\d+) \(id \d+\)$')::int
      AND g.id = substring(m.detail FROM 'pending group \d+ \(id (\d+)\)$')::int8
    UNION ALL
    SELECT g.* FROM chain c JOIN pfl_groups g ON g.blkno = c.next_block AND g.id = c.next_id)
SELECT count(*) = (SELECT count(*) FROM pfl_groups) AS every_group_on_the_chain,
       count(*) = ceil((SELECT count(*) FROM pfl_slots) / 127.0) AS groups_of_127_slots,
       count(*) FILTER (WHERE next_block IS NULL) AS last_groups,
       bool_and(slots = 127) FILTER (WHERE next_block IS NOT NULL) AS full_but_the_last,
       bool_and(capacity = 127) AS capacity_127,
       (SELECT count(*) FROM pfl_slots) BETWEEN pending_pages - 16 AND pending_pages - 1
           AS most_pending_pages_in_slots
FROM chain, bloomidx_index_info('pfl_bl') GROUP BY pending_pages;
SELECT bool_and(c.slot_items = g.slots) AS a_slot_item_a_slot,
       bool_and(c.region_items = g.region_pages) AS a_region_item_a_region_page
FROM pfl_groups g,
     LATERAL (SELECT count(*) FILTER (WHERE item_kind = 'slot') AS slot_items,
                     count(*) FILTER (WHERE item_kind = 'region page') AS region_items
              FROM pfl_items i WHERE i.blkno = g.blkno AND i.item IS NOT NULL) c;
SELECT count(*) = count(DISTINCT s.page) AS one_slot_a_page,
       bool_and(p.page_kind = 'pending') AS pending_pages,
       bool_and(substring(p.detail FROM '^rows (\d+),') = substring(p.detail FROM 'capacity (\d+),')) AS full_pages,
       bool_and(n.page IS NULL OR n.page = substring(p.detail FROM 'next block (\d+),')::int) AS a_run_of_the_list,
       bool_and(n.page IS NOT NULL OR g.after = substring(p.detail FROM 'next block (\d+),')::int)
           AS after_follows_the_last_slot
FROM pfl_slots s JOIN pfl_groups g ON g.blkno = s.header
JOIN pfl_items p ON p.blkno = s.page AND p.item IS NULL
LEFT JOIN pfl_slots n ON n.run = s.run + 1;
-- A region page through its group's header: up to eight block rows (the
-- blocks of 127 slots, 8 bytes each: a row of 1,016 bytes), bits in the
-- taken slots' only.
SELECT bool_and(f.page_kind = 'filter' AND f.detail LIKE format('pending group %s, region page %s, %%', g.id, r.item))
           AS decoded_through_its_header,
       bool_and(rows.n BETWEEN 1 AND 8) AND bool_or(rows.n = 8) AS eight_block_rows_a_page,
       bool_and(rows.bits_length = 127 * 64) AS rows_of_127_blocks,
       bool_and(rows.taken_bits > 0) AS taken_slots_have_bits,
       bool_and(rows.untaken_bits = 0) AS untaken_slots_have_none,
       bool_or(g.slots < 127) AS a_group_with_untaken_slots
FROM pfl_groups g
JOIN pfl_items r ON r.blkno = g.blkno AND r.item_kind = 'region page'
JOIN pfl_items f ON f.blkno = substring(r.detail FROM '^block (\d+)$')::int AND f.item IS NULL,
LATERAL (SELECT count(*) AS n, min(length(b.bits)) AS bits_length,
                sum(bit_count(substring(b.bits FROM 1 FOR g.slots * 64))) AS taken_bits,
                sum(bit_count(substring(b.bits FROM g.slots * 64 + 1))) AS untaken_bits
         FROM pfl_items b WHERE b.blkno = f.blkno AND b.item_kind = 'block row') rows;
-- bloomidx_verify checks the groups too (their chain, run and filters).
SELECT bloomidx_verify('pfl_bl');
DROP VIEW pfl_slots, pfl_groups;
DROP TABLE pfl_items;

-- Rows deleted and VACUUM: the groups go before pending pages get room
-- (and VACUUM seals what is pending); then rows into the room, and new
-- groups over the pages that fill after.
DELETE FROM pfl WHERE random() < 0.3;
SELECT wait_for_older_xacts();
VACUUM pfl;
SELECT pfl_fill(60201, 90000);
SELECT * FROM abc_check('pfl', 400);
SELECT pending_pages > 127 AS a_group_of_pages,
       index_buffers($$SELECT * FROM pfl WHERE a = 99999 AND b = 'none'$$) < pending_pages / 8 AS miss_reads_few
FROM bloomidx_index_info('pfl_bl');

-- A seal (bloomidx_seal) moves the pending head: the groups go with it.
SELECT bloomidx_seal('pfl_bl') > 0 AS sealed;
SELECT pfl_fill(90001, 110000);
SELECT * FROM abc_check('pfl', 300);
SELECT bloomidx_verify('pfl_bl');

-- In an index of 16 groups' pages or more, the run starts at 8 pending
-- pages, not twice a group's (44 for six int4 columns): 25 pages after a
-- seal are not walked row by row by every query (pending_run_due).
CREATE TABLE pfl_big (i1 int, i2 int, i3 int, i4 int, i5 int, i6 int) WITH (autovacuum_enabled = off);
INSERT INTO pfl_big SELECT (random() * 1000000)::int, (random() * 1000000)::int,
       (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int,
       (random() * 1000000)::int FROM generate_series(1, 140000);
CREATE INDEX pfl_big_bl ON pfl_big USING bloomidx (i1, i2, i3, i4, i5, i6);
SELECT bloomidx_seal('pfl_big_bl') >= 0 AS sealed;
INSERT INTO pfl_big SELECT (random() * 1000000)::int, (random() * 1000000)::int,
       (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int,
       (random() * 1000000)::int FROM generate_series(1, 4600);
SELECT pg_relation_size('pfl_big_bl') / 8192 >= 16 * 22 AS big_index,
       pending_pages BETWEEN 20 AND 43 AS fewer_than_twice_a_group,
       index_buffers($$SELECT * FROM pfl_big WHERE i2 = -1 AND i5 = -1$$) < pending_pages / 2 AS miss_reads_few
FROM bloomidx_index_info('pfl_big_bl');
-- Rows of the build, of the seal and pending, through the index as by a
-- sequential scan (2-column and 1-column lookups, a 3-element IN list).
SELECT count(*) AS queries,
       count(*) FILTER (WHERE index_vs_seqscan(q) NOT LIKE 'same %') AS differences
FROM (SELECT format('SELECT * FROM pfl_big WHERE i2 = %s AND i5 = %s', i2, i5) AS q
      FROM (SELECT * FROM pfl_big ORDER BY random() LIMIT 40) r
      UNION ALL
      SELECT format('SELECT * FROM pfl_big WHERE i3 = %s', i3)
      FROM (SELECT * FROM pfl_big ORDER BY random() LIMIT 20) r
      UNION ALL
      SELECT format('SELECT * FROM pfl_big WHERE i1 IN (%s, %s, -1) AND i6 = %s', i1, i1 + 1, i6)
      FROM (SELECT * FROM pfl_big ORDER BY random() LIMIT 20) r) q;
DROP TABLE pfl_big;

-- Issue 29's measure, small: the mean index buffers of 100 2-column misses
-- right after a build of 300,000 rows of data set A and after 1 % more
-- rows (no VACUUM), no more than twice (every filled page summarized, at
-- twice the segments' bits a key; summarizing every fourth page at their
-- bits, as before, read 2.5 times as much on 2 M rows).
SELECT setseed(0.35);
CREATE TABLE pfm (i1 int, i2 int, i3 int, i4 int, i5 int, i6 int) WITH (autovacuum_enabled = off);
CREATE FUNCTION pfm_fill(n int) RETURNS void LANGUAGE sql AS $$
    INSERT INTO pfm
    SELECT (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int,
           (random() * 1000000)::int, (random() * 1000000)::int, (random() * 1000000)::int
    FROM generate_series(1, n) $$;
CREATE FUNCTION pfm_miss() RETURNS float8 LANGUAGE sql AS $$
    SELECT avg(index_buffers(format('SELECT * FROM pfm WHERE i2 = %s AND i5 = %s', -v, -7 * v)))
    FROM generate_series(1, 100) v $$;
SELECT pfm_fill(300000);
CREATE INDEX pfm_bl ON pfm USING bloomidx (i1, i2, i3, i4, i5, i6);
SELECT pfm_miss() AS miss_built \gset
SELECT pfm_fill(3000);
SELECT pfm_miss() AS miss_after \gset
SELECT pending_rows AS pending, :miss_after <= 2 * :miss_built AS within_twice_the_build
FROM bloomidx_index_info('pfm_bl');
SELECT count(*) AS queries,
       count(*) FILTER (WHERE index_vs_seqscan(q) NOT LIKE 'same %') AS differences
FROM (SELECT format('SELECT * FROM pfm WHERE i2 = %s AND i5 = %s', i2, i5) AS q
      FROM (SELECT * FROM pfm ORDER BY random() LIMIT 30) r) q;
DROP TABLE pfm;
DROP FUNCTION pfm_fill(int), pfm_miss();

-- An index without filters (segment_filter_rate = 0) keeps no filter keys
-- in its pending rows: no groups, every pending page read.
CREATE INDEX pfl_nf ON pfl USING bloomidx (a, b, c) WITH (segment_filter_rate = 0);
SELECT pfl_fill(110001, 130000);
DROP INDEX pfl_bl;
SELECT * FROM abc_check('pfl', 100);
SELECT index_buffers('SELECT * FROM pfl WHERE a = 99999 AND b = ''none''') >
       (SELECT pending_pages FROM bloomidx_index_info('pfl_nf')) AS reads_every_pending_page;
DROP TABLE pfl;
DROP FUNCTION pfl_fill(int, int);
