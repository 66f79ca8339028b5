--
-- amvalidate accepts every shipped operator class, and explains what is
-- wrong with a broken one.  A new type is a few lines of SQL: its "=" and
-- its extended hash function.
--
SELECT opc.opcname, opf.opfname, amvalidate(opc.oid)
FROM pg_opclass opc
JOIN pg_opfamily opf ON opf.oid = opc.opcfamily
JOIN pg_am am ON am.oid = opc.opcmethod
WHERE am.amname = 'bloomidx'
ORDER BY 1;

-- A user-made opclass for a type bloomidx does not ship (float8).
CREATE OPERATOR CLASS my_float8_ops
FOR TYPE float8 USING bloomidx AS
    OPERATOR 1 = (float8, float8),
    FUNCTION 1 hashfloat8extended(float8, int8);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'my_float8_ops';
CREATE TABLE tf (x float8, y int4);
INSERT INTO tf SELECT (i % 100) / 4.0, i FROM generate_series(1, 4000) i;
INSERT INTO tf VALUES ('-0'::float8, -1), ('NaN', -2);
CREATE INDEX tf_bl ON tf USING bloomidx (x my_float8_ops, y);
SELECT cols, index_vs_seqscan('SELECT y FROM tf WHERE ' || cols)
FROM (VALUES ('x = 2.25'), ('x = 0'), ('x = ''NaN''::float8'), ('x = 3.5 AND y = 14')) AS q(cols);

-- Broken opclasses: wrong support function signature, wrong strategy.
CREATE OPERATOR CLASS bad_hash_ops
FOR TYPE float4 USING bloomidx AS
    OPERATOR 1 = (float4, float4),
    FUNCTION 1 hashfloat4(float4);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'bad_hash_ops';
-- Strategy 2 does not exist; an opclass without its hash function.
CREATE OPERATOR CLASS bad_strategy_ops
FOR TYPE numeric USING bloomidx AS
    OPERATOR 2 < (numeric, numeric),
    FUNCTION 1 hash_numeric_extended(numeric, int8);
CREATE OPERATOR CLASS no_hash_ops
FOR TYPE numeric USING bloomidx AS
    OPERATOR 1 = (numeric, numeric);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'no_hash_ops';
