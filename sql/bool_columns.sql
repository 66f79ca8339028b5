--
-- bool columns.  The planner turns "v = true" into "v" and "v = false"
-- into "NOT v".  PostgreSQL 15 takes those as index conditions for btree
-- and hash only, so there a bool column is searched through = ANY, IN
-- lists, IS NULL and parameters of generic plans (and through the index's
-- other columns).  From PostgreSQL 17 on, the planner turns them back into
-- "v = true" and "v = false" for any index whose operator family holds
-- bool's "=", so bloomidx serves them too.
--
CREATE TABLE ty_bool (id serial, v bool, k int4 DEFAULT 1);
INSERT INTO ty_bool (v) VALUES (true), (false), (NULL);
CREATE INDEX ON ty_bool USING bloomidx (v, k);
INSERT INTO ty_bool (v) VALUES (true), (false), (NULL), (true), (false);
SELECT q, index_vs_seqscan('SELECT id FROM ty_bool WHERE ' || q)
FROM (VALUES ('v = ANY (''{true}'')'), ('v = ANY (''{false}'')'), ('v IN (true, false)'),
             ('v = ANY (''{true}'') AND k = 1'), ('v = ANY (''{false}'') AND k = 2'),
             ('v IS NULL'), ('v AND k = 1'), ('NOT v AND k = 2')) AS x(q);
-- The planner's own forms: an index condition from 17 on (as on 18; 16
-- is not tested), with the rows a sequential scan finds; not one on 15.
-- One expected output for every version: plan_as_expected says the plan
-- is the one of the running version, same_rows that the index's answer
-- is the sequential scan's (where the index is used).
SELECT q, (r NOT LIKE 'INDEX NOT USED%') = (current_setting('server_version_num')::int >= 170000)
              OR current_setting('server_version_num')::int BETWEEN 160000 AND 169999
              AS plan_as_expected,
       r LIKE 'INDEX NOT USED%' OR r ~ '^same' AS same_rows,
       rows_by_seqscan
FROM (SELECT q, index_vs_seqscan('SELECT id FROM ty_bool WHERE ' || q) AS r,
             cardinality(rows_of('SELECT id FROM ty_bool WHERE ' || q)) AS rows_by_seqscan
      FROM (VALUES ('v = true'), ('v = false'), ('v'), ('NOT v'), ('v IS TRUE'),
                   ('v IS FALSE')) AS x(q)) AS y;
SET enable_seqscan = off;
PREPARE bool_count(bool) AS SELECT count(*) FROM ty_bool WHERE v = $1;
SET plan_cache_mode = force_generic_plan;
EXPLAIN (COSTS OFF) EXECUTE bool_count(true);
EXECUTE bool_count(true);
EXECUTE bool_count(false);
RESET plan_cache_mode;
RESET enable_seqscan;
DEALLOCATE bool_count;
DROP TABLE ty_bool;
