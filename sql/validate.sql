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

-- A user-made opclass for a type bloomidx does not ship (pg_lsn): the
-- type's "=" and its extended hash function, as doc/adding-a-type.md shows.
CREATE OPERATOR CLASS my_pg_lsn_ops
FOR TYPE pg_lsn USING bloomidx AS
    OPERATOR 1 = (pg_lsn, pg_lsn),
    FUNCTION 1 pg_lsn_hash_extended(pg_lsn, int8);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'my_pg_lsn_ops';
CREATE TABLE tl (x pg_lsn, y int4);
INSERT INTO tl SELECT '0/0'::pg_lsn + (i % 100) * 4096, i FROM generate_series(1, 4000) i;
INSERT INTO tl VALUES ('FFFFFFFF/FFFFFFFF', -1), ('0/0', -2);
CREATE INDEX tl_bl ON tl USING bloomidx (x my_pg_lsn_ops, y);
SELECT cols, index_vs_seqscan('SELECT y FROM tl WHERE ' || cols)
FROM (VALUES ('x = ''0/9000'''), ('x = ''0/0'''), ('x = ''FFFFFFFF/FFFFFFFF'''),
             ('x = ''0/3000'' AND y = 3'), ('x = ''0/3001''')) AS q(cols);

-- Broken opclasses: wrong support function signature, wrong strategy.
CREATE OPERATOR CLASS bad_hash_ops
FOR TYPE float4 USING bloomidx AS
    OPERATOR 1 = (float4, float4),
    FUNCTION 1 hashfloat4(float4);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'bad_hash_ops';
-- Another type's hash function passes only where PostgreSQL's own hash
-- opclasses use it (hashcharextended for bool, hashint4extended for date...).
CREATE OPERATOR CLASS bad_borrowed_ops
FOR TYPE int2 USING bloomidx AS
    OPERATOR 1 = (int2, int2),
    FUNCTION 1 hashcharextended("char", int8);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'bad_borrowed_ops';
-- Strategy 2 does not exist; an opclass without its hash function.
CREATE OPERATOR CLASS bad_strategy_ops
FOR TYPE numeric USING bloomidx AS
    OPERATOR 2 < (numeric, numeric),
    FUNCTION 1 hash_numeric_extended(numeric, int8);
CREATE OPERATOR CLASS no_hash_ops
FOR TYPE numeric USING bloomidx AS
    OPERATOR 1 = (numeric, numeric);
SELECT amvalidate(oid) FROM pg_opclass WHERE opcname = 'no_hash_ops';
