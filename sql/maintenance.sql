--
-- DELETE + VACUUM + INSERT reuse space; VACUUM FULL, REINDEX, CREATE INDEX
-- CONCURRENTLY, TRUNCATE, partial and expression indexes all keep the
-- index right.
--
CREATE TABLE tm (id int4, a int4, b text) WITH (autovacuum_enabled = off);
CREATE INDEX tm_bl ON tm USING bloomidx (a, b);	-- its rows pending, as inserted
INSERT INTO tm SELECT i, i % 100, 'b' || (i % 77) FROM generate_series(1, 20000) i;

-- Delete half, vacuum, insert as many again: the freed space is reused.
-- (VACUUM seals the rows left into a segment and frees their pending
-- pages, where the new rows go.)
DELETE FROM tm WHERE id % 2 = 0;
SELECT wait_for_older_xacts();
VACUUM tm;
SELECT pending_rows AS pending_after_vacuum FROM bloomidx_index_info('tm_bl');
SELECT pg_relation_size('tm_bl') / current_setting('block_size')::int AS blocks_before \gset
SELECT index_vs_seqscan('SELECT id FROM tm WHERE a = 3');
INSERT INTO tm SELECT i, i % 100, 'c' || (i % 55) FROM generate_series(20001, 30000) i;
SELECT pg_relation_size('tm_bl') / current_setting('block_size')::int <= :blocks_before AS space_reused;
SELECT cols, index_vs_seqscan('SELECT id FROM tm WHERE ' || cols)
FROM (VALUES ('a = 3'), ('a = 4'), ('b = ''b5'''), ('b = ''c5'''), ('a = 5 AND b = ''c5''')) AS q(cols);

-- UPDATE, then VACUUM again.
UPDATE tm SET a = a + 1000 WHERE id % 3 = 0;
VACUUM tm;
SELECT cols, index_vs_seqscan('SELECT id FROM tm WHERE ' || cols)
FROM (VALUES ('a = 1003'), ('a = 3'), ('a = 1010 AND b = ''c10''')) AS q(cols);

-- VACUUM FULL and REINDEX rebuild the index.
VACUUM FULL tm;
SELECT index_vs_seqscan('SELECT id FROM tm WHERE a = 1003 AND b = ''c3''');
REINDEX INDEX tm_bl;
SELECT index_vs_seqscan('SELECT id FROM tm WHERE a = 7');
REINDEX TABLE tm;
SELECT index_vs_seqscan('SELECT id FROM tm WHERE b = ''b7''');

-- CREATE INDEX CONCURRENTLY and REINDEX CONCURRENTLY.
DROP INDEX tm_bl;
CREATE INDEX CONCURRENTLY tm_bl2 ON tm USING bloomidx (a, b);
SELECT indisvalid FROM pg_index WHERE indexrelid = 'tm_bl2'::regclass;
SELECT index_vs_seqscan('SELECT id FROM tm WHERE a = 9 AND b = ''c9''');
REINDEX INDEX CONCURRENTLY tm_bl2;
SELECT index_vs_seqscan('SELECT id FROM tm WHERE a = 9');

-- TRUNCATE empties it; new rows are found.
TRUNCATE tm;
SELECT index_vs_seqscan('SELECT id FROM tm WHERE a = 9');
INSERT INTO tm SELECT i, i % 10, 'd' || i FROM generate_series(1, 1000) i;
SELECT index_vs_seqscan('SELECT id FROM tm WHERE a = 9');
-- TRUNCATE inside the transaction that created the table.
BEGIN;
CREATE TABLE tt (a int4);
CREATE INDEX tt_bl ON tt USING bloomidx (a);
INSERT INTO tt SELECT generate_series(1, 100);
TRUNCATE tt;
INSERT INTO tt SELECT generate_series(1, 50);
SELECT index_vs_seqscan('SELECT a FROM tt WHERE a = 7');
COMMIT;

-- Partial index: used only where its predicate holds.
CREATE TABLE tp (id int4, a int4, b int4, status text);
INSERT INTO tp SELECT i, i % 30, i % 40, CASE WHEN i % 4 = 0 THEN 'open' ELSE 'closed' END
FROM generate_series(1, 10000) i;
CREATE INDEX tp_bl ON tp USING bloomidx (a, b) WHERE status = 'open';
SELECT index_vs_seqscan('SELECT id FROM tp WHERE status = ''open'' AND a = 8 AND b = 8');
SET enable_seqscan = off;
EXPLAIN (COSTS OFF) SELECT id FROM tp WHERE status = 'closed' AND a = 4;
RESET enable_seqscan;

-- Expression index.
CREATE INDEX tp_expr ON tp USING bloomidx (lower(status), (a + b));
SELECT index_vs_seqscan('SELECT id FROM tp WHERE lower(status) = ''open'' AND a + b = 16');

-- ALTER INDEX ... SET stores new options; as with btree's fillfactor, they
-- take effect at the next REINDEX, and until then the index answers with
-- those it was built with.
ALTER INDEX tp_bl SET (length = 128);
SELECT index_vs_seqscan('SELECT id FROM tp WHERE status = ''open'' AND a = 4');
REINDEX INDEX tp_bl;
SELECT index_vs_seqscan('SELECT id FROM tp WHERE status = ''open'' AND a = 4');
ALTER INDEX tp_bl RESET (length);
ALTER INDEX tp_bl SET (length = 64, col1 = 200);
ALTER INDEX tp_bl RENAME TO tp_bl_renamed;
