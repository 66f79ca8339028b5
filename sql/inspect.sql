--
-- bloomidx_stats(index) and bloomidx_page_items(index, blkno)
-- (src/functions/stats.cpp, src/functions/page_items.cpp): the rows, pages and fill of an
-- index, and what each page holds.  Every figure is checked against
-- another source: the table (count(*), its ctids), bloomidx_index_info,
-- the file's length, bloomidx_false_positive_rate, the bits page_items
-- shows, and false positives measured by scanning.  Then what they refuse.
-- (Damaged pages: test/t/007_random_corruption.pl runs both on indexes
-- damaged on disk.)
--
SET bloomidx.segment_rows = 1000;
SET max_parallel_maintenance_workers = 0;
CREATE TABLE insp (id int, a int, b text, c int8) WITH (autovacuum_enabled = off);
INSERT INTO insp
SELECT i, i % 300, CASE WHEN i % 7 = 0 THEN NULL ELSE 'v' || (i % 200) END, i * 7919
FROM generate_series(1, 5300) i;
CREATE INDEX insp_bl ON insp USING bloomidx (a, b, c);

-- Every page of an index, through bloomidx_page_items.
CREATE FUNCTION insp_items(idx regclass)
RETURNS TABLE (blkno int, page_kind text, item int, item_kind text, tid tid, live bool,
               bits varbit, keys int8[], detail text)
LANGUAGE sql AS $$
    SELECT b, p.*
    FROM generate_series(0, (pg_relation_size(idx) / current_setting('block_size')::int)::int - 1) b,
         bloomidx_page_items(idx, b) p
$$;
CREATE TEMP TABLE items AS SELECT * FROM insp_items('insp_bl');

-- Five segments of 1,000 rows and 300 rows pending: as bloomidx_index_info
-- counts them, every row of the table live, the kinds of page adding up to
-- the file, the slices of each segment packed on its pages.
SELECT s.live_rows = (SELECT count(*) FROM insp) AS every_row_live, s.dead_rows,
       s.segments, s.pending_rows,
       (s.segments, s.pending_rows, s.pending_pages) = (i.segments, i.pending_rows, i.pending_pages)
           AS as_index_info,
       s.total_pages = pg_relation_size('insp_bl') / current_setting('block_size')::int AS the_files_length,
       1 + s.directory_pages + s.pending_pages + s.segment_header_pages + s.slice_pages
           + s.tid_pages + s.live_pages + s.filter_pages + s.free_pages = s.total_pages AS kinds_add_up,
       -- (1,000 rows take 2 of a slice page's 127 lines: 63 slices a page)
       s.slice_pages = s.segments * ((s.signature_length + 62) / 63) AS slices_packed,
       s.segment_header_pages = s.segments AND s.live_pages = s.segments AS a_header_and_live_page_each
FROM bloomidx_stats('insp_bl') s, bloomidx_index_info('insp_bl') i;
SELECT total_pages, directory_pages, pending_pages, segment_header_pages, slice_pages, tid_pages,
       live_pages, filter_pages, free_pages, signature_length, column_bits
FROM bloomidx_stats('insp_bl');

-- page_items sees the same pages (a first row each, item NULL), and one
-- item per slice, per live page, per TID page of a segment header, per
-- row (with its TID, a pending row with its signature and filter keys).
SELECT page_kind, count(*) AS pages FROM items WHERE item IS NULL GROUP BY 1 ORDER BY 1;
SELECT page_kind, item_kind, count(*) AS items, count(tid) AS tids, count(live) FILTER (WHERE live) AS live,
       count(bits) AS bits, min(length(bits)) AS min_length, max(length(bits)) AS max_length,
       count(keys) AS keys, min(cardinality(keys)) AS keys_a_row
FROM items WHERE item IS NOT NULL GROUP BY 1, 2 ORDER BY 1, 2;
-- What the page rows say: the metapage, a segment header, a slice.
SELECT item, item_kind, detail FROM items WHERE blkno = 0 ORDER BY item NULLS FIRST;
SELECT page_kind, detail FROM items
WHERE page_kind IN ('segment header', 'slice', 'live', 'tids') AND item IS NULL
  AND detail LIKE 'segment 1,%' AND (page_kind <> 'slice' OR detail LIKE '%slice 0,%')
ORDER BY blkno;

-- The TIDs of the pending rows and of the TID pages are the table's, each once.
SELECT (SELECT array_agg(tid ORDER BY tid) FROM items WHERE item_kind = 'row')
       = (SELECT array_agg(ctid ORDER BY ctid) FROM insp) AS tids_are_the_tables;

-- The fill is the bits the rows set: those of the slices and of the
-- pending rows' signatures, over every row's signature_length bits.
SELECT abs(s.fill - (SELECT sum(bit_count(bits)) FROM items WHERE item_kind IN ('slice', 'row'))
                    / (s.live_rows * s.signature_length)) < 1e-12 AS fill_is_the_rows_bits
FROM bloomidx_stats('insp_bl') s;
-- The predicted rates are bloomidx_false_positive_rate's.
SELECT bool_and(s.predicted_rates[i] = bloomidx_false_positive_rate('insp_bl', ARRAY[i]))
           AS predicted_rates_are_the_models,
       cardinality(s.predicted_rates) AS columns, cardinality(s.fill_rates) AS fill_rates
FROM bloomidx_stats('insp_bl') s, generate_series(1, 3) i GROUP BY s.predicted_rates, s.fill_rates;

-- Deleted rows of segments, once VACUUM has cleared their live bits, are
-- dead; the live ones are the table's.  (A deleted pending row is removed
-- outright by VACUUM: never dead.)  A tenth of each segment: no merge.
CREATE TEMP TABLE insp_deleted AS
SELECT tid FROM items WHERE page_kind = 'tids' AND item_kind = 'row' AND item % 10 = 3;
DELETE FROM insp WHERE ctid IN (SELECT tid FROM insp_deleted);
DELETE FROM insp WHERE id > 5290;	-- pending rows
SELECT wait_for_older_xacts();
VACUUM insp;
SELECT s.dead_rows = (SELECT count(*) FROM insp_deleted) AS dead_rows_are_the_deleted, s.dead_rows,
       s.live_rows = (SELECT count(*) FROM insp) AS live_rows_are_the_tables,
       (s.segments, s.pending_rows) = (i.segments, i.pending_rows) AS as_index_info
FROM bloomidx_stats('insp_bl') s, bloomidx_index_info('insp_bl') i;
CREATE TEMP TABLE items_after AS SELECT * FROM insp_items('insp_bl');
SELECT (SELECT array_agg(tid ORDER BY tid) FROM items_after WHERE item_kind = 'row' AND live)
       = (SELECT array_agg(ctid ORDER BY ctid) FROM insp) AS live_tids_are_the_tables,
       (SELECT array_agg(tid ORDER BY tid) FROM items_after WHERE item_kind = 'row' AND NOT live)
       = (SELECT array_agg(tid ORDER BY tid) FROM insp_deleted) AS dead_tids_are_the_deleted;
-- The fill counts live rows only: the slices' bits of rows whose live bit
-- is set, and the pending rows'.
WITH segment_of AS (
    SELECT blkno, substring(detail FROM '^segment (\d+),')::int AS segment
    FROM items_after WHERE item IS NULL AND page_kind IN ('slice', 'live')),
bits AS (
    SELECT i.item_kind, i.bits, s.segment FROM items_after i JOIN segment_of s USING (blkno)
    WHERE i.item IS NOT NULL)
SELECT abs(st.fill - ((SELECT sum(bit_count(sl.bits & lv.bits))
                       FROM bits sl JOIN bits lv ON lv.segment = sl.segment AND lv.item_kind = 'live bits'
                       WHERE sl.item_kind = 'slice')
                      + (SELECT sum(bit_count(bits)) FROM items_after WHERE page_kind = 'pending' AND item IS NOT NULL))
                     / (st.live_rows * st.signature_length)) < 1e-12 AS fill_of_live_rows
FROM bloomidx_stats('insp_bl') st;

-- A seal frees the pending pages it took: free pages, in both.
INSERT INTO insp SELECT i, i % 300, 'w' || i, i FROM generate_series(6001, 7500) i;
SELECT bloomidx_seal('insp_bl') AS sealed;
SELECT s.free_pages > 0 AS some_free,
       s.free_pages = (SELECT count(*) FROM insp_items('insp_bl') WHERE item IS NULL AND page_kind = 'free')
           AS the_free_pages,
       s.live_rows = (SELECT count(*) FROM insp) AS live_rows_are_the_tables,
       1 + s.directory_pages + s.pending_pages + s.segment_header_pages + s.slice_pages
           + s.tid_pages + s.live_pages + s.filter_pages + s.free_pages = s.total_pages AS kinds_add_up
FROM bloomidx_stats('insp_bl') s;
SELECT item_kind, detail FROM insp_items('insp_bl') WHERE page_kind = 'free' LIMIT 1;
SELECT bloomidx_verify('insp_bl');

-- Directory pages: 225 segments of 64 rows, one entry past the metapage's
-- 224 (signatures of 4 bits: 7 pages a segment).
SET bloomidx.segment_rows = 64;
CREATE TABLE insp_dir (a int) WITH (autovacuum_enabled = off);
INSERT INTO insp_dir SELECT i FROM generate_series(1, 225 * 64) i;
CREATE INDEX insp_dir_bl ON insp_dir USING bloomidx (a) WITH (length = 4, col1 = 1, segment_filter_rate = 0);
SELECT segments, directory_pages, live_rows FROM bloomidx_stats('insp_dir_bl');
SELECT item, item_kind, detail FROM bloomidx_page_items('insp_dir_bl', 0) WHERE item_kind <> 'segment entry';
SELECT p.page_kind, p.item, p.item_kind, p.detail
FROM bloomidx_page_items('insp_dir_bl', 0) m,
     bloomidx_page_items('insp_dir_bl', substring(m.detail FROM '^block (\d+),')::int) p
WHERE m.item_kind = 'directory page';
DROP TABLE insp_dir;
SET bloomidx.segment_rows = 1000;

--
-- The fill next to the sizing.  Rows whose values are independent fill
-- their signatures as the model expects; rows that share values do not:
-- a NULL sets its column's bits as a value does (so that IS NULL can be
-- searched), always the same ones, so where most rows are NULL in a column
-- they share those bits, and the fill is that of a few fixed sets, not the
-- model's average over random values.  Signatures of 32 bits, 3 per
-- column, no segment filters (a scan then tests every row's signature).
--
SET bloomidx.segment_rows = 5000;
CREATE TABLE insp_values (b int, c int, a int) WITH (autovacuum_enabled = off);
INSERT INTO insp_values SELECT i % 1000, i % 777, i FROM generate_series(1, 50000) i;
CREATE INDEX insp_values_bl ON insp_values USING bloomidx (b, c, a)
    WITH (length = 32, col1 = 3, col2 = 3, col3 = 3, segment_filter_rate = 0);
-- A row's fill is its bits over 32, between 3/32 and 9/32: its standard
-- deviation is below 3/32, that of a mean over 50,000 rows below 0.0005
-- (if they were independent; rows share a value of b or c with 50 others,
-- and such rows share 3 of their 9 bits); 0.005 is ten times that.
SELECT segments, pending_rows, abs(fill - predicted_fill) < 0.005 AS fill_as_predicted,
       round(predicted_fill::numeric, 4) AS predicted_fill
FROM bloomidx_stats('insp_values_bl');
-- The rate the fill implies is the rate queries meet: 100 values of a that
-- no row holds, each tested against every row (5,000,000 trials, over
-- 60,000 false positives expected: a 10 % error is far outside chance).
SELECT abs(measured / fill_rates[3] - 1) < 0.1 AS fill_rate_is_measured,
       abs(fill_rates[3] / predicted_rates[3] - 1) < 0.1 AS as_predicted
FROM bloomidx_stats('insp_values_bl'),
     LATERAL (SELECT miss_rate('insp_values', array_agg(format('a = %s', k))) AS measured
              FROM generate_series(50001, 50100) k) m;

-- Nine rows in ten NULL in b and c.  The NULLs of the first two columns
-- overlap (an index on those two columns alone, of the same sizing, shows
-- their 3 + 3 bits as 5), where two random values share 0.28 bits on
-- average: those rows set fewer bits than the model expects.
CREATE TABLE insp_nulls (b int, c int, a int) WITH (autovacuum_enabled = off);
INSERT INTO insp_nulls
SELECT CASE WHEN i % 10 = 0 THEN i % 1000 END, CASE WHEN i % 10 = 0 THEN i % 777 END, i
FROM generate_series(1, 50000) i;
CREATE INDEX insp_nulls_bl ON insp_nulls USING bloomidx (b, c, a)
    WITH (length = 32, col1 = 3, col2 = 3, col3 = 3, segment_filter_rate = 0);
CREATE TABLE insp_null_bits (b int, c int);
INSERT INTO insp_null_bits VALUES (NULL, NULL);
CREATE INDEX insp_null_bits_bl ON insp_null_bits USING bloomidx (b, c) WITH (length = 32, col1 = 3, col2 = 3);
SELECT bit_count(bits) AS null_bits FROM bloomidx_page_items('insp_null_bits_bl', 1) WHERE item = 0;
-- So the fill is below the prediction, beyond the 0.005 above, and is
-- what those shared bits give: 45,000 rows with the NULLs' u = 5 bits and
-- a's 3 falling on the other 27 with chance 27/32 each, 5,000 rows as
-- the model expects; and so is each column's rate the fill implies.
SELECT fill < predicted_fill - 0.005 AS fill_below_predicted,
       abs(fill - (45000 * (5 + 27 * 3 / 32.0) / 32 + 5000 * predicted_fill) / 50000) < 0.002
           AS fill_of_the_shared_bits,
       fill_rates[1] < predicted_rates[1] AND fill_rates[3] < predicted_rates[3] AS lower_fill_rates
FROM bloomidx_stats('insp_nulls_bl');
DROP TABLE insp_values, insp_nulls, insp_null_bits;
SET bloomidx.segment_rows = 1000;

-- An empty index: nothing to measure (NULL), the sizing still.
CREATE TABLE insp_empty (a int);
CREATE INDEX insp_empty_bl ON insp_empty USING bloomidx (a);
SELECT live_rows, dead_rows, segments, pending_rows, total_pages, fill, predicted_fill > 0 AS predicted,
       fill_rates, cardinality(predicted_rates) AS predicted_rates
FROM bloomidx_stats('insp_empty_bl');
SELECT page_kind, item, item_kind FROM bloomidx_page_items('insp_empty_bl', 0);

--
-- What they refuse.
--
SELECT * FROM bloomidx_stats(NULL);
SELECT * FROM bloomidx_index_info(NULL);
SELECT * FROM bloomidx_page_items(NULL, 0);
SELECT * FROM bloomidx_page_items('insp_bl', NULL);
SELECT * FROM bloomidx_stats('insp');
SELECT * FROM bloomidx_page_items('insp', 0);
CREATE INDEX insp_btree ON insp (a);
SELECT * FROM bloomidx_stats('insp_btree');
SELECT * FROM bloomidx_page_items('insp_btree', 0);
CREATE SEQUENCE insp_seq;
SELECT * FROM bloomidx_stats('insp_seq');
SELECT * FROM bloomidx_page_items('insp_seq', 0);
CREATE TABLE insp_parted (a int) PARTITION BY RANGE (a);
CREATE INDEX insp_parted_bl ON insp_parted USING bloomidx (a);
SELECT * FROM bloomidx_stats('insp_parted_bl');
SELECT * FROM bloomidx_page_items('insp_parted_bl', 0);
SELECT * FROM bloomidx_stats(0);
SELECT * FROM bloomidx_page_items(0, 0);
SELECT * FROM bloomidx_page_items('insp_bl', -1);
SELECT * FROM bloomidx_page_items('insp_bl', (pg_relation_size('insp_bl') / 8192)::int);
SELECT count(*) > 0 AS last_block FROM bloomidx_page_items('insp_bl', (pg_relation_size('insp_bl') / 8192)::int - 1);
DROP TABLE insp_parted;
DROP SEQUENCE insp_seq;

-- Privileges: stats reads every page, as pgstatindex does, so it is
-- pg_stat_scan_tables's; raw pages bypass column privileges and row-level
-- security, so page_items is the superuser's and pg_read_server_files's
-- (who can read the index's file anyway), checked in C too: a GRANT
-- EXECUTE alone does not open it.
CREATE FUNCTION insp_outcome(query text) RETURNS text
LANGUAGE plpgsql AS $$
BEGIN
    EXECUTE query;
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END
$$;
CREATE ROLE regress_bloomidx_inspect;
GRANT SELECT ON insp TO regress_bloomidx_inspect;
SET ROLE regress_bloomidx_inspect;
SELECT insp_outcome('SELECT * FROM bloomidx_stats(''insp_bl'')') AS stats,
       insp_outcome('SELECT * FROM bloomidx_page_items(''insp_bl'', 0)') AS page_items;
RESET ROLE;
GRANT EXECUTE ON FUNCTION bloomidx_page_items(regclass, int4) TO regress_bloomidx_inspect;
SET ROLE regress_bloomidx_inspect;
SELECT * FROM bloomidx_page_items('insp_bl', 0);
SELECT insp_outcome('SELECT * FROM bloomidx_page_items(NULL, NULL)') AS before_anything_else;
RESET ROLE;
REVOKE EXECUTE ON FUNCTION bloomidx_page_items(regclass, int4) FROM regress_bloomidx_inspect;
GRANT pg_stat_scan_tables TO regress_bloomidx_inspect;
SET ROLE regress_bloomidx_inspect;
SELECT insp_outcome('SELECT * FROM bloomidx_stats(''insp_bl'')') AS stats,
       insp_outcome('SELECT * FROM bloomidx_page_items(''insp_bl'', 0)') AS page_items;
RESET ROLE;
REVOKE pg_stat_scan_tables FROM regress_bloomidx_inspect;
GRANT pg_read_server_files TO regress_bloomidx_inspect;
SET ROLE regress_bloomidx_inspect;
SELECT insp_outcome('SELECT * FROM bloomidx_stats(''insp_bl'')') AS stats,
       insp_outcome('SELECT * FROM bloomidx_page_items(''insp_bl'', 0)') AS page_items;
RESET ROLE;
REVOKE pg_read_server_files FROM regress_bloomidx_inspect;
DROP OWNED BY regress_bloomidx_inspect;
DROP ROLE regress_bloomidx_inspect;
DROP FUNCTION insp_outcome(text), insp_items(regclass);
RESET bloomidx.segment_rows;
RESET max_parallel_maintenance_workers;
DROP TABLE insp, insp_empty;
