-- Segment filters (src/storage/README.md, *Segment filters*): CREATE INDEX
-- writes, per group of up to 127 segments, a filter per column; a seal, a
-- group of one segment from the filter keys its pending rows kept; a
-- merge, a group of the merged segment from its sources' filters.  A scan
-- asks them first and reads the slices of the segments that pass only.  Every
-- answer equals a sequential scan's, for equalities, IN lists (short, and
-- longer than the 64 elements filters are asked for), IS NULL and mixes,
-- on columns of every cardinality; and the filters cut the index pages a
-- selective query reads.
CREATE TABLE sf (id int, u int, k int, s text, n int) WITH (autovacuum_enabled = off);
-- u unique, k 1,000 values, s 6 values, n NULL in 1 row of 50.  No
-- autovacuum: its VACUUM, at the default segment size, would merge these
-- 500-row segments whenever it came.
INSERT INTO sf
SELECT i, i * 7 + 3, (i * 7919) % 1000, (ARRAY['new','paid','sent','done','lost','back'])[1 + i % 6],
       CASE WHEN i % 50 = 0 THEN NULL ELSE i % 300 END
FROM generate_series(1, 40000) i;
CREATE TABLE sf_off WITH (autovacuum_enabled = off) AS SELECT * FROM sf;
-- 500-row segments: 80 of them, in groups of 63 and 17 (sizes whose
-- rows fill their pages: group_slots_packed).
SET bloomidx.segment_rows = 500;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX sf_bl ON sf USING bloomidx (u, k, s, n);
CREATE INDEX sf_off_bl ON sf_off USING bloomidx (u, k, s, n) WITH (segment_filter_rate = 0);
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
SELECT segments, pending_rows FROM bloomidx_index_info('sf_bl');
-- The filters' pages: about a third more than without.
SELECT pg_relation_size('sf_bl') > pg_relation_size('sf_off_bl') AS larger,
       pg_relation_size('sf_bl') < 1.6 * pg_relation_size('sf_off_bl') AS not_much;

-- Answers: hits and misses on each column and combinations.
SELECT q, index_vs_seqscan('SELECT id FROM sf WHERE ' || q)
FROM (VALUES ('u = 703'), ('u = 704'), ('u = 280003'), ('k = 17'), ('k = 1000'),
             ('s = ''paid'''), ('s = ''gone'''), ('n IS NULL'), ('n = 299'), ('n = 300'),
             ('u = 703 AND k = 100'), ('u = 703 AND k = 800'), ('k = 5 AND s = ''sent'''),
             ('u IN (10, 703, 7003, 70003)'), ('k IN (1, 2, 1001)'), ('s IN (''x'', ''y'')'),
             ('u = ANY (ARRAY(SELECT i * 7 + 3 FROM generate_series(1, 200) i))'),
             ('u IS NULL'), ('n IS NULL AND k = 0'),
             -- cross-type keys hash as the column's values do
             ('u = 703::int8'), ('k = 17::int2'), ('u IN (703::int8, 7003::int8)')) AS t(q);
-- Randomized: 300 queries of one to four keys on distinct columns (the
-- planner of PostgreSQL 17 and later sees through "k = 1 AND k = 2"),
-- values hit or miss: n queries on table tab's first ncols of u, k, s, n.
CREATE FUNCTION filter_random(tab text, n int, ncols int)
RETURNS TABLE (queries bigint, differences bigint) LANGUAGE sql AS $$
SELECT count(*), count(*) FILTER (WHERE r NOT LIKE 'same%')
FROM (SELECT index_vs_seqscan('SELECT id FROM ' || tab || ' WHERE ' ||
                              string_agg(cond, ' AND ' ORDER BY c)) AS r
      FROM (SELECT g, c, CASE c
                           WHEN 0 THEN CASE WHEN random() < 0.7
                                            THEN format('u = %s', (random() * 300000)::int)
                                            ELSE format('u IN (%s, %s)', (random() * 300000)::int,
                                                        (random() * 300000)::int) END
                           WHEN 1 THEN format('k = %s', (random() * 1100)::int)
                           WHEN 2 THEN format('s = %L', (ARRAY['new','paid','x'])[1 + (random() * 2)::int])
                           ELSE format('n = %s', (random() * 320)::int) END AS cond
            FROM generate_series(1, n) g, generate_series(0, ncols - 1) c
            WHERE c = g % ncols OR random() < 0.4) q
      GROUP BY g) r
$$;
SELECT setseed(0.12);
SELECT * FROM filter_random('sf', 300, 4);
-- The same with IN lists of 1 to 70 elements (past 64, two words of a
-- segment's element mask), hits and misses, alone, beside another
-- list or an equality: a segment tests only the elements its filters may
-- hold (src/storage/README.md, "IN lists, element by element"), here in
-- the build's groups, later in sealed and merged ones (and lists of up to
-- 400 elements there).
CREATE FUNCTION in_list_random(tab text, n int, longest int DEFAULT 70)
RETURNS TABLE (queries bigint, differences bigint) LANGUAGE sql AS $$
SELECT count(*), count(*) FILTER (WHERE r NOT LIKE 'same%')
FROM (SELECT index_vs_seqscan(format('SELECT id FROM %s WHERE u IN (%s)', tab,
                                     (SELECT string_agg(CASE WHEN random() < 0.5
                                                             THEN ((random() * 30000)::int * 7 + 3)::text
                                                             ELSE (random() * 300000)::int::text END, ', ')
                                      FROM generate_series(1, 1 + (random() * random() * (longest - 1))::int + 0 * g)))
                              || CASE WHEN g % 3 = 0
                                      THEN format(' AND k IN (%s, %s, %s)', (random() * 1000)::int,
                                                  (random() * 1000)::int, (random() * 1100)::int)
                                      WHEN g % 3 = 1 THEN format(' AND s = %L', (ARRAY['new','paid','x'])[1 + (random() * 2)::int])
                                      ELSE '' END) AS r
      FROM generate_series(1, n) g) q
$$;
SELECT setseed(0.13);
SELECT * FROM in_list_random('sf', 150);
-- Twenty values of one segment and twenty misses: more slices than one
-- pass takes, so the elements are tested one by one, those the filters
-- rule out skipped; and 40 lists on a 1-bit column, each with one value
-- the filters pass, which one pass would take (it holds 32 lists).
SELECT index_vs_seqscan(format('SELECT id FROM sf WHERE u IN (%s)',
                               string_agg(v::text, ', ')))
FROM (SELECT i * 7 + 3 AS v FROM generate_series(1001, 1020) i
      UNION ALL SELECT 5000000 + i FROM generate_series(1, 20) i) v;
CREATE TABLE sf_lists (id int, u int) WITH (autovacuum_enabled = off);
INSERT INTO sf_lists SELECT i, i * 7 + 3 FROM generate_series(1, 20000) i;
SET bloomidx.segment_rows = 1000;
CREATE INDEX sf_lists_bl ON sf_lists USING bloomidx (u) WITH (length = 64, col1 = 1);
RESET bloomidx.segment_rows;
SELECT index_vs_seqscan(format('SELECT id FROM sf_lists WHERE %s',
                               string_agg(format('u IN (703, %s)', 1000000 + j), ' AND ')))
FROM generate_series(1, 40) j;
DROP TABLE sf_lists;

-- A miss on the unique column reads a few filter pages and the pending
-- ones, where the index without filters reads every segment's slices.
SELECT ((f->>'Shared Hit Blocks')::int + (f->>'Shared Read Blocks')::int) * 5
       < (o->>'Shared Hit Blocks')::int + (o->>'Shared Read Blocks')::int AS far_fewer_buffers
FROM bitmap_index_node('SELECT * FROM sf WHERE u = 280003') f,
     bitmap_index_node('SELECT * FROM sf_off WHERE u = 280003') o;

-- A value every segment holds: its filters are asked in the first group
-- (63 segments: a header and a region page), then not at all, and the
-- query reads at most 4 pages more than without filters.  Keys are asked
-- in column order: beside a later key the filters rule out (n = 300, no
-- row), the common one costs at most 4 pages more than the later key
-- alone, and the other still skips every segment.  The answers stay a
-- sequential scan's.
SELECT index_buffers('SELECT * FROM sf WHERE s = ''paid''')
       <= index_buffers('SELECT * FROM sf_off WHERE s = ''paid''') + 4 AS common_value_few_pages,
       index_buffers('SELECT * FROM sf WHERE s = ''paid'' AND n = 300')
       <= index_buffers('SELECT * FROM sf WHERE n = 300') + 4 AS common_value_dropped,
       index_buffers('SELECT * FROM sf WHERE s = ''paid'' AND n = 300') * 5
       < index_buffers('SELECT * FROM sf_off WHERE s = ''paid'' AND n = 300') AS miss_beside_common;
SELECT q, index_vs_seqscan('SELECT id FROM sf WHERE ' || q)
FROM (VALUES ('s = ''paid'''), ('s = ''paid'' AND k = 17'), ('s = ''lost'' AND u = 703'),
             ('s = ''paid'' AND n = 300'), ('s IN (''paid'', ''lost'') AND u IN (703, 7003)')) AS t(q);

-- Inserts, deletes, seals and VACUUM's merges, and every answer stays
-- right.  Two thirds of the first 40 segments' rows deleted: VACUUM merges
-- them, mostly dead, as many as one segment holds; the other 40, all live
-- but small enough to merge at the default segment size, merge so too.
-- Each merged segment gets filters made from its rows' keys, read from
-- the table where its sources kept none (heap_keys.cpp; before, a merge
-- of more than 4 sources got no filters, and small live segments merged
-- only four at a time to keep theirs: 11 segments were left, one without
-- filters).  VACUUM gathers the merged segments' groups of one family into
-- one (filter_gather.cpp), and the build's groups are freed once none of
-- their segments is left (counted on the pages: the special space's kind,
-- 11 for a group's header).  The 1,000 rows inserted are sealed by VACUUM
-- (what is pending beyond the tail) after the merges.  Two segments,
-- both filtered, in two groups (one family, but the small seal's slot
-- would be widened past half again its blocks to join the merged one's).
CREATE EXTENSION pageinspect;
CREATE FUNCTION filter_groups(idx regclass) RETURNS int LANGUAGE sql AS $$
    SELECT count(*)::int FROM generate_series(1, pg_relation_size(idx) / 8192 - 1) b
    WHERE get_byte(get_raw_page(idx::text, b::int), 8178) = 11
      AND get_byte(get_raw_page(idx::text, b::int), 8179) = 0
      AND get_byte(get_raw_page(idx::text, b::int), 8190) = 213   -- page id 0xB1D5
$$;
SELECT filter_groups('sf_bl') AS groups_before;
INSERT INTO sf SELECT i, i * 7 + 3, i % 1000, 'new', i % 300 FROM generate_series(40001, 41000) i;
DELETE FROM sf WHERE id % 3 <> 0 AND id <= 20000;
SELECT wait_for_older_xacts();
VACUUM sf;
SELECT filter_groups('sf_bl') AS groups_after, segments, filtered_segments
FROM bloomidx_index_info('sf_bl');
SELECT bloomidx_verify('sf_bl');
SELECT q, index_vs_seqscan('SELECT id FROM sf WHERE ' || q)
FROM (VALUES ('u = 703'), ('u = 280010'), ('k = 17'), ('s = ''paid'''), ('n IS NULL'),
             ('u IN (10, 703, 7003, 280010)')) AS t(q);

-- Seals: each sealed segment gets a group of its own, made from the filter
-- keys its pending rows kept (4 bytes a column).  Small segments here, so
-- that inserts seal many.
CREATE TABLE sfs (id int, u int, k int, s text) WITH (autovacuum_enabled = off);
CREATE TABLE sfs_off (LIKE sfs) WITH (autovacuum_enabled = off);
CREATE INDEX sfs_bl ON sfs USING bloomidx (u, k, s);
CREATE INDEX sfs_off_bl ON sfs_off USING bloomidx (u, k, s) WITH (segment_filter_rate = 0);
SET bloomidx.segment_rows = 8000;
INSERT INTO sfs
SELECT i, i * 7 + 3, (i * 7919) % 1000, (ARRAY['new','paid','sent','done','lost','back'])[1 + i % 6]
FROM generate_series(1, 96000) i;
INSERT INTO sfs_off SELECT * FROM sfs;
SELECT bloomidx_seal('sfs_bl') AS sealed_rows, bloomidx_seal('sfs_off_bl') AS sealed_rows_off;
SELECT segments > 10 AS many_segments, filtered_segments = segments AS every_one_filtered
FROM bloomidx_index_info('sfs_bl');
SELECT filtered_segments AS filtered_without FROM bloomidx_index_info('sfs_off_bl');
SELECT bloomidx_verify('sfs_bl');
-- A miss on the unique column reads each segment's filter pages (two: its
-- group's header and one region page), not its slice pages (about 6 a
-- segment: 8,000 rows take 16 of a slice page's 127 lines, so 7 slices
-- share a page, and it reads slices until no row is left).  (Segments
-- of 1,000 rows take 2 slice pages, no more than their own filter group.)
SELECT ((f->>'Shared Hit Blocks')::int + (f->>'Shared Read Blocks')::int) * 2
       < (o->>'Shared Hit Blocks')::int + (o->>'Shared Read Blocks')::int AS far_fewer_buffers
FROM bitmap_index_node('SELECT * FROM sfs WHERE u = 5') f,
     bitmap_index_node('SELECT * FROM sfs_off WHERE u = 5') o;
SELECT setseed(0.21);
SELECT * FROM filter_random('sfs', 150, 3);

-- VACUUM gathers the sealed segments' groups (a group each, their blocks
-- a full segment's count times a power of two, so of one family: the
-- last seal's fewer rows too) into one group of many slots
-- (filter_gather.cpp): a miss then reads that group's header and a
-- region page a key, not two pages a segment; no filter is lost and every
-- answer stays right.  The index of segments without filters has nothing
-- to gather.
-- (Misses counted as the fewest of five values absent from the table:
-- a segment that lets one through by chance, 2.5 % of them, reads its
-- slices too.)
CREATE FUNCTION sfs_miss() RETURNS int LANGUAGE sql AS $$
    SELECT min(index_buffers(format('SELECT * FROM sfs WHERE u = %s', v)))
    FROM unnest(ARRAY[5, 6, 8, 9, 11]) v
$$;
SELECT filter_groups('sfs_bl') AS groups_sealed, sfs_miss() AS miss_sealed \gset
SELECT wait_for_older_xacts();
VACUUM sfs;
VACUUM sfs_off;
SELECT :groups_sealed > 10 AS had_many_groups, filter_groups('sfs_bl') AS groups_gathered,
       filtered_segments = segments AS every_one_filtered, filter_groups('sfs_off_bl') AS groups_off
FROM bloomidx_index_info('sfs_bl');
-- (Both measured at a generation this backend has scanned before: it
-- keeps the headers it read, header_cache.cpp.)
SELECT sfs_miss() AS miss_gathered_first \gset
SELECT sfs_miss() * 3 < :miss_sealed AS far_fewer_buffers;
SELECT bloomidx_verify('sfs_bl');
SELECT setseed(0.25);
SELECT * FROM filter_random('sfs', 150, 3);

-- Merges: two thirds deleted; VACUUM merges the sealed segments, and each
-- merged one has filters made from those of its sources (no row is read
-- back from the table), which still rule out a miss.
DELETE FROM sfs WHERE id % 3 <> 0;
DELETE FROM sfs_off WHERE id % 3 <> 0;
-- (An older transaction elsewhere, an autovacuum's, would keep the rows.)
SELECT wait_for_older_xacts();
SELECT segments AS segments_before FROM bloomidx_index_info('sfs_bl') \gset
VACUUM sfs;
VACUUM sfs_off;
SELECT segments < :segments_before AS merged, filtered_segments = segments AS every_one_filtered
FROM bloomidx_index_info('sfs_bl');
SELECT bloomidx_verify('sfs_bl');
SELECT ((f->>'Shared Hit Blocks')::int + (f->>'Shared Read Blocks')::int) * 3 / 2
       < (o->>'Shared Hit Blocks')::int + (o->>'Shared Read Blocks')::int AS fewer_buffers
FROM bitmap_index_node('SELECT * FROM sfs WHERE u = 5') f,
     bitmap_index_node('SELECT * FROM sfs_off WHERE u = 5') o;
SELECT setseed(0.22);
SELECT * FROM filter_random('sfs', 150, 3);

-- IN lists, element by element, in sealed segments and merged ones: an
-- IN of 10 values, each in another segment, reads no more index buffers
-- than the ten lookups one by one (it read about 3 times as many when
-- every element's slices were read in every segment that any element let
-- through), and random lists answer as a sequential scan.
SELECT index_buffers(format('SELECT * FROM sfs WHERE u IN (%s)',
                            string_agg(((300 + 8000 * j) * 7 + 3)::text, ', ')))
       <= sum(index_buffers(format('SELECT * FROM sfs WHERE u = %s', (300 + 8000 * j) * 7 + 3)))
       AS in_list_no_dearer_than_its_lookups
FROM generate_series(0, 9) j;
SELECT setseed(0.24);
SELECT * FROM in_list_random('sfs', 150);
SELECT * FROM in_list_random('sfs', 40, 400);
-- A long list is asked of the filters element by element too (a bit an
-- element in a segment's mask, core/query.hpp): ninety absent values
-- beside the ten cost their filter rows, not their slices in every
-- segment the ten let through (before, a list of over 64 elements was
-- not asked, and those ten segments read 100 elements' slices each).
SELECT index_buffers(format('SELECT * FROM sfs WHERE u IN (%s)', string_agg(v::text, ', ')))
       < index_buffers(format('SELECT * FROM sfs WHERE u IN (%s)',
                              string_agg(v::text, ', ') FILTER (WHERE v % 7 = 3)))
         + 3 * 90 AS absent_elements_cost_their_filters
FROM (SELECT (300 + 8000 * j) * 7 + 3 AS v FROM generate_series(0, 9) j
      UNION ALL SELECT 5000000 + 7 * i FROM generate_series(1, 90) i) l;
SELECT index_vs_seqscan(format('SELECT id FROM sfs WHERE u IN (%s)', string_agg(v::text, ', ')))
FROM (SELECT (300 + 8000 * j) * 7 + 3 AS v FROM generate_series(0, 9) j
      UNION ALL SELECT 5000000 + 7 * i FROM generate_series(1, 90) i) l;

-- Without a rate, later seals write no filters; an index built without
-- filters keeps no filter keys, so a rate set later takes effect at
-- REINDEX, as the other options do.
ALTER INDEX sfs_bl SET (segment_filter_rate = 0);
ALTER INDEX sfs_off_bl SET (segment_filter_rate = 0.01);
INSERT INTO sfs SELECT i, i * 7 + 3, i % 1000, 'new' FROM generate_series(96001, 102000) i;
INSERT INTO sfs_off SELECT i, i * 7 + 3, i % 1000, 'new' FROM generate_series(96001, 102000) i;
-- (fewer rows than a segment's: bloomidx_seal seals them)
SELECT bloomidx_seal('sfs_bl') >= 0 AND bloomidx_seal('sfs_off_bl') >= 0 AS sealed_the_rest;
SELECT i.pending_rows < 1000 AS sealed, o.pending_rows < 1000 AS sealed_off
FROM bloomidx_index_info('sfs_bl') i, bloomidx_index_info('sfs_off_bl') o;
SELECT segments > filtered_segments AS some_unfiltered FROM bloomidx_index_info('sfs_bl');
SELECT filtered_segments AS filtered_off FROM bloomidx_index_info('sfs_off_bl');
-- Merging a segment without filters with filtered ones: the merged one has none.
SELECT segments AS segments_before, filtered_segments AS filtered_before
FROM bloomidx_index_info('sfs_bl') \gset
DELETE FROM sfs WHERE id % 3 = 0 AND id <= 99000;
SELECT wait_for_older_xacts();
VACUUM sfs;
SELECT segments < :segments_before AS merged, filtered_segments < :filtered_before AS fewer_filtered,
       segments > filtered_segments AS some_unfiltered
FROM bloomidx_index_info('sfs_bl');
SELECT bloomidx_verify('sfs_bl');
SELECT setseed(0.23);
SELECT * FROM filter_random('sfs', 100, 3);
-- (and where no segment has filters left: every element tested)
SELECT setseed(0.25);
SELECT * FROM in_list_random('sfs', 100);
REINDEX INDEX sfs_off_bl;
SELECT filtered_segments = segments AS every_one_filtered FROM bloomidx_index_info('sfs_off_bl');
RESET bloomidx.segment_rows;
DROP TABLE sfs, sfs_off;
DROP FUNCTION sfs_miss();

-- The last rows of a build become a segment, with filters, when they
-- would fill as many pending pages as a segment has slices (16 here):
-- 20,000 rows of 2-byte signatures, a segment's worth being 65,024.
CREATE TABLE sf_tail WITH (autovacuum_enabled = off) AS SELECT i AS a, i % 97 AS b FROM generate_series(1, 20000) i;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX sf_tail_bl ON sf_tail USING bloomidx (a, b) WITH (length = 16, col1 = 4, col2 = 4);
RESET max_parallel_maintenance_workers;
SELECT segments, pending_rows FROM bloomidx_index_info('sf_tail_bl');
SELECT q, index_vs_seqscan('SELECT a FROM sf_tail WHERE ' || q)
FROM (VALUES ('a = 12345'), ('a = 20001'), ('b = 5'), ('a = 12345 AND b = 26')) AS t(q);
DROP TABLE sf_tail;

-- Groups of up to 1,016 segments (format 18; 127 from format 13): a
-- build spools each segment's filters and writes a group from them row by
-- row, each slot's filter widened to the group's largest
-- (filter_write.cpp).  A slot takes the block counts of the group's first
-- segment, doubled as often as its own values need
-- (filter_blocks_in_group).  130 segments of 256 rows, whose u holds 40 to
-- 240 distinct values: two groups, the second with slots past 64 (a
-- probe's answer's second word).  Every sampled value, random equalities
-- and IN lists against a sequential scan, in one process and in three
-- (each participant writes its own groups).  A warm 2-column miss reads
-- the metapage and a region page a group and key asked (format 12's
-- groups of 15 made 9 groups, 27 pages).
CREATE TABLE sfw (id int, u int, k int, s text, n int) WITH (autovacuum_enabled = off, parallel_workers = 2);
INSERT INTO sfw SELECT i, (i / 256) * 1000 + (i % (40 + (i / 256) % 5 * 50)) * 3 + 1, i % 1000,
                       (ARRAY['new','paid','x'])[1 + i % 3], i % 300
FROM generate_series(0, 130 * 256 - 1) i;
CREATE FUNCTION sfw_sampled(nq int) RETURNS TABLE (queries bigint, differences bigint) LANGUAGE sql AS $$
    SELECT count(*), count(*) FILTER (WHERE r NOT LIKE 'same%')
    FROM (SELECT index_vs_seqscan(format('SELECT id FROM sfw WHERE u = %s', v.u + v.d)) r
          FROM (SELECT w.u, (w.id % 5 = 0)::int AS d FROM sfw w ORDER BY random() LIMIT nq) v) q
$$;
SET bloomidx.segment_rows = 256;
SET max_parallel_maintenance_workers = 0;
CREATE INDEX sfw_bl ON sfw USING bloomidx (u, k, s, n) WITH (length = 16, col1 = 3, col2 = 3, col3 = 4, col4 = 3);
SELECT filter_groups('sfw_bl') AS groups, segments, filtered_segments
FROM bloomidx_index_info('sfw_bl');
-- The segments of each group, in order: the first segment's u (40
-- values) needs 6 blocks; the third's 140 values need 21, more than twice
-- that (24 in the group), so it starts a group of its own (GROUP_MAX_WIDENING), which then
-- takes the other 127 (a group holds up to 1,016).
SELECT array_agg(n ORDER BY g) AS segments_per_group
FROM (SELECT (regexp_match(detail, 'filter group (\d+)'))[1]::bigint AS g, count(*) AS n
      FROM bloomidx_page_items('sfw_bl', 0) WHERE item_kind = 'segment entry' GROUP BY 1) q;
SELECT setseed(0.14);
SELECT * FROM sfw_sampled(400);
SELECT * FROM filter_random('sfw', 100, 4);
SELECT * FROM in_list_random('sfw', 60);
SELECT index_buffers('SELECT * FROM sfw WHERE u = 2 AND k = 5000') AS two_column_miss_buffers;
DROP INDEX sfw_bl;
SET max_parallel_maintenance_workers = 2;
-- Region pages composed one page a batch (a debugging setting): windows
-- of the spool read back batch after batch.
SET bloomidx.debug_filter_batch_pages = 1;
CREATE INDEX sfw_bl ON sfw USING bloomidx (u, k, s, n) WITH (length = 16, col1 = 3, col2 = 3, col3 = 4, col4 = 3);
RESET bloomidx.debug_filter_batch_pages;
-- Each of three participants writes its own groups: a few (its first
-- segment's group may be cut short as above, and its last is written in
-- sizes whose rows fill their pages), and the leader's seal of their last
-- rows one of its own.
SELECT filter_groups('sfw_bl') BETWEEN 2 AND 13 AS groups_per_participant,
       segments BETWEEN 125 AND 130 AS segments, filtered_segments = segments AS all_filtered
FROM bloomidx_index_info('sfw_bl');
SELECT * FROM sfw_sampled(400);
SELECT * FROM in_list_random('sfw', 60);
SELECT bloomidx_verify('sfw_bl');
RESET max_parallel_maintenance_workers;
RESET bloomidx.segment_rows;
DROP TABLE sfw;
DROP FUNCTION sfw_sampled(int);

-- Seals of different sizes take filters of one family (a full segment's
-- block count times a power of two, filter_blocks_in_family), so VACUUM
-- gathers them into groups of the largest counts, each smaller slot
-- widened by a whole factor (every block copied whole into the blocks its
-- keys' range covers, so no value is lost and the rate stays its own),
-- where a group takes at most half again its slots' own blocks: here the
-- last seal's few rows with the half-segment ones, the full ones apart.
-- (Seals of half a segment's rows or more: smaller ones VACUUM merges.)
SET bloomidx.segment_rows = 8000;
CREATE TABLE sfm (id int, u int, k int, s text) WITH (autovacuum_enabled = off);
CREATE INDEX sfm_bl ON sfm USING bloomidx (u, k, s);
CREATE FUNCTION sfm_load(first int, last int) RETURNS boolean LANGUAGE sql AS $$
    INSERT INTO sfm SELECT i, i * 7 + 3, i % 700, (ARRAY['new','paid','sent','done'])[1 + i % 4]
    FROM generate_series(first, last) i;
    SELECT bloomidx_seal('sfm_bl') IS NOT NULL $$;
CREATE FUNCTION group_shapes(idx regclass) RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(DISTINCT substring(h.detail from 'column blocks \{[0-9,]+\}'), '; ')
    FROM bloomidx_page_items(idx, 0) e,
         bloomidx_page_items(idx, substring(e.detail from 'filter block ([0-9]+)')::int) h
    WHERE e.item_kind = 'segment entry' AND h.item IS NULL $$;
SELECT sfm_load(1, 8000), sfm_load(8001, 12200), sfm_load(12201, 20200), sfm_load(20201, 24300);
SELECT filter_groups('sfm_bl') AS groups_sealed, group_shapes('sfm_bl') AS shapes_sealed;
SELECT wait_for_older_xacts();
VACUUM sfm;
SELECT filter_groups('sfm_bl') AS groups_gathered, group_shapes('sfm_bl') AS shape_gathered,
       segments, filtered_segments = segments AS every_one_filtered
FROM bloomidx_index_info('sfm_bl');
SELECT bloomidx_verify('sfm_bl');
-- Every 20th row's values, each column alone, and misses.
SELECT count(*) AS queries, count(*) FILTER (WHERE r NOT LIKE 'same%') AS differences
FROM (SELECT index_vs_seqscan(q) AS r
      FROM (SELECT format('SELECT id FROM sfm WHERE u = %s', u) AS q FROM sfm WHERE id % 20 = 0
            UNION ALL
            SELECT format('SELECT id FROM sfm WHERE k = %s AND s = %L', k, s) FROM sfm WHERE id % 97 = 0
            UNION ALL
            SELECT format('SELECT id FROM sfm WHERE u = %s', v) FROM generate_series(1, 2000, 9) v) q) r;
-- Sixty seals of 2,000 rows and one of a segment's: the small ones gather
-- into one group of their own count, not widened to the large one's (which
-- would take about 580 filter pages, not 30).
SET bloomidx.background_seal = off;
CREATE TABLE sfa (id int, a int) WITH (autovacuum_enabled = off);
CREATE INDEX sfa_bl ON sfa USING bloomidx (a);
SET bloomidx.segment_rows = 65024;
INSERT INTO sfa SELECT i, (i * 7919) % 1000003 FROM generate_series(1, 65024) i;
SELECT bloomidx_seal('sfa_bl') >= 0 AS sealed;
SET bloomidx.segment_rows = 2000;
DO $$ BEGIN FOR k IN 0..59 LOOP
  INSERT INTO sfa SELECT i, (i * 7919) % 1000003
    FROM generate_series(65025 + k * 2000, 65024 + (k + 1) * 2000) i;
  PERFORM bloomidx_seal('sfa_bl'); END LOOP; END $$;
SELECT wait_for_older_xacts();
VACUUM sfa;
SELECT (SELECT count(DISTINCT substring(detail from 'filter block ([0-9]+)'))
        FROM bloomidx_page_items('sfa_bl', 0) WHERE item_kind = 'segment entry') <= 3 AS few_groups,
       filter_pages < 60 AS small_filters
FROM bloomidx_stats('sfa_bl');
SELECT count(*) AS queries, count(*) FILTER (WHERE r NOT LIKE 'same%') AS differences
FROM (SELECT index_vs_seqscan(format('SELECT id FROM sfa WHERE a = %s', a)) AS r
      FROM sfa WHERE id % 500 = 0) q;
DROP TABLE sfa;
RESET bloomidx.background_seal;
-- A gathered group that is not full takes more slots only once 16 more
-- (or half its own) are due, not a VACUUM at a time: one seal more leaves
-- the groups as they were (its segments' slots in a group beside them),
-- sixteen more are gathered with them.  (Counts of segments a group: seals
-- of 2,000 rows at that segment size, each leaving its tail page's rows to
-- the next.)
SET bloomidx.segment_rows = 2000;
SET bloomidx.background_seal = off;
CREATE TABLE sfh (id int, u int) WITH (autovacuum_enabled = off);
CREATE INDEX sfh_bl ON sfh USING bloomidx (u);
CREATE FUNCTION sfh_seals(n int) RETURNS void LANGUAGE plpgsql AS $$
DECLARE
    base int;
BEGIN
    SELECT coalesce(max(id), 0) INTO base FROM sfh;
    FOR k IN 0..n - 1 LOOP
        INSERT INTO sfh SELECT i, i * 7 + 3
        FROM generate_series(base + k * 2000 + 1, base + (k + 1) * 2000) i;
        PERFORM bloomidx_seal('sfh_bl');
    END LOOP;
END $$;
CREATE FUNCTION sfh_groups() RETURNS text LANGUAGE sql AS $$
    SELECT string_agg(n::text, ',' ORDER BY n DESC)
    FROM (SELECT count(*) AS n FROM bloomidx_page_items('sfh_bl', 0)
          WHERE item_kind = 'segment entry'
          GROUP BY substring(detail from 'filter block ([0-9]+)')) q $$;
SELECT sfh_seals(20);
SELECT wait_for_older_xacts();
VACUUM sfh;
SELECT sfh_groups() AS after_twenty;
SELECT sfh_seals(1);
VACUUM sfh;
SELECT sfh_groups() AS after_one_more;
SELECT sfh_seals(16);
VACUUM sfh;
SELECT sfh_groups() AS after_sixteen_more;
SELECT bloomidx_verify('sfh_bl');
SELECT count(*) AS queries, count(*) FILTER (WHERE r NOT LIKE 'same%') AS differences
FROM (SELECT index_vs_seqscan(format('SELECT id FROM sfh WHERE u = %s', v)) AS r
      FROM (SELECT u AS v FROM sfh WHERE id % 400 = 0
            UNION ALL SELECT v FROM generate_series(1, 3000, 17) v) s) q;
DROP TABLE sfh;
DROP FUNCTION sfh_seals(int);
DROP FUNCTION sfh_groups();
RESET bloomidx.background_seal;
RESET bloomidx.segment_rows;

DROP TABLE sfm;
DROP FUNCTION sfm_load(int, int);
DROP FUNCTION group_shapes(regclass);
RESET bloomidx.segment_rows;

-- Bad input: the rate is checked.
CREATE INDEX ON sf USING bloomidx (u) WITH (segment_filter_rate = 0.6);
CREATE INDEX ON sf USING bloomidx (u) WITH (segment_filter_rate = -0.1);
DROP TABLE sf, sf_off;
DROP FUNCTION filter_groups(regclass);
DROP FUNCTION filter_random(text, int, int);
DROP FUNCTION in_list_random(text, int, int);
DROP EXTENSION pageinspect;
