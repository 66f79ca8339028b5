
# bloomidx through pg_dump and restore: a custom-format dump restored with
# pg_restore, and a plain-SQL dump restored with psql, each into a new
# database of the same node.  The tables hold NULLs; their bloomidx indexes
# have options (length and colN, false_positive_rate), one is partial, one
# is on expressions, one uses user-made operator classes of another schema,
# one is on a partitioned table, and one had its options changed by ALTER
# INDEX (the dump carries the new ones, so the restored index is built
# with them).  In every restored database: pg_indexes.indexdef and
# pg_class.reloptions and the operator classes are those of the source,
# the indexes are the size of the source's (all but the altered one, and
# one whose source saw deletes) and pass bloomidx_verify, and for many
# random queries each database's index (forced Bitmap Index Scan, checked
# with EXPLAIN) finds exactly what a sequential scan finds in the source
# database.  The restored indexes then take deletes, VACUUM and inserts.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $node = new_bloomidx_node('dump', helpers => 1);

# Rows with NULLs in a and b too (load_rows has some in c and d), so that
# IS NULL has something to find.
sub load_null_rows
{
	my ($table, $from, $to) = @_;
	$node->safe_psql(
		'postgres', qq{
		INSERT INTO $table (id, a, b, c, d)
		SELECT i,
		       CASE WHEN i % 3 = 0 THEN NULL ELSE i % 997 END,
		       CASE WHEN i % 3 = 1 THEN NULL ELSE 10000000000 + i % 4999 END,
		       CASE WHEN i % 2 = 0 THEN NULL ELSE 'v' || i % 701 END,
		       CASE WHEN i % 5 = 0 THEN NULL ELSE i % 13 END
		FROM generate_series($from, $to) AS i});
	return;
}

# One table per index, so that the planner has one index to choose.
my %index_of;
for my $t (qw(t_def t_len t_fpr t_part t_expr t_opc t_alt))
{
	create_test_table($node, $t);
	load_rows($node, $t, 1, 5000);
	load_null_rows($t, 5001, 5300);
}
$node->safe_psql(
	'postgres', q{
CREATE TABLE tp (id int4, a int4, b int8, c text, d int4) PARTITION BY RANGE (id);
CREATE TABLE tp_1 PARTITION OF tp FOR VALUES FROM (MINVALUE) TO (2500);
CREATE TABLE tp_2 PARTITION OF tp FOR VALUES FROM (2500) TO (MAXVALUE);
});
load_rows($node, 'tp', 1, 5000);
load_null_rows('tp', 5001, 5300);

# User-made operator classes (not the defaults) in a schema of their own.
$node->safe_psql(
	'postgres', q{
CREATE SCHEMA ops;
CREATE OPERATOR CLASS ops.bl_text_ops FOR TYPE text USING bloomidx AS
    OPERATOR 1 = (text, text),
    FUNCTION 1 hashtextextended(text, int8);
CREATE OPERATOR CLASS ops.bl_int4_ops FOR TYPE int4 USING bloomidx AS
    OPERATOR 1 = (int4, int4),
    FUNCTION 1 hashint4extended(int4, int8);
});

$node->safe_psql(
	'postgres', q{
CREATE INDEX t_def_bl ON t_def USING bloomidx (a, b, c, d);
CREATE INDEX t_len_bl ON t_len USING bloomidx (a, b, c, d)
    WITH (length = 80, col1 = 2, col2 = 3, col3 = 5, col4 = 2);
CREATE INDEX t_fpr_bl ON t_fpr USING bloomidx (a, b, c, d)
    WITH (false_positive_rate = 0.02, col2 = 9);
CREATE INDEX t_part_bl ON t_part USING bloomidx (a, b, c, d)
    WITH (length = 64) WHERE d IS NOT NULL;
CREATE INDEX t_expr_bl ON t_expr USING bloomidx (lower(c), (a % 100), (b - 10000000000), d)
    WITH (false_positive_rate = 0.005);
CREATE INDEX t_opc_bl ON t_opc USING bloomidx (a, b, c ops.bl_text_ops, d ops.bl_int4_ops)
    WITH (col3 = 12);
CREATE INDEX t_alt_bl ON t_alt USING bloomidx (a, b, c, d) WITH (length = 256);
ALTER INDEX t_alt_bl SET (length = 80, col1 = 5);
CREATE INDEX tp_bl ON tp USING bloomidx (a, b, c, d) WITH (false_positive_rate = 0.005);
});

# Writes after the build on one of them: its index then holds entries of
# dead rows and space VACUUM freed, which the restored one does not.
$node->safe_psql('postgres', 'DELETE FROM t_def WHERE id % 4 = 0');
$node->safe_psql('postgres', 'UPDATE t_def SET a = a + 1, c = c || \'-u\' WHERE id % 7 = 0');
$node->safe_psql('postgres', 'VACUUM t_def');
load_rows($node, 't_def', 6001, 7000);
$node->safe_psql('postgres', 'ANALYZE');

my @part_indexes = split /\n/,
  $node->safe_psql('postgres',
	"SELECT relid FROM pg_partition_tree('tp_bl') WHERE isleaf ORDER BY relid::text");
is(scalar(@part_indexes), 2, 'the partitioned index has an index on each partition');

# ------------------------------------------------------------------------
# Dump and restore.

my $host = $node->host;
my $port = $node->port;
my $dir = PostgreSQL::Test::Utils::tempdir();

$node->command_ok(
	[ 'pg_dump', '-h', $host, '-p', $port, '-Fc', '-f', "$dir/src.dump", 'postgres' ],
	'pg_dump -Fc');
$node->command_ok(
	[ 'pg_dump', '-h', $host, '-p', $port, '-Fp', '-f', "$dir/src.sql", 'postgres' ],
	'pg_dump -Fp');
my $sqldump = slurp_file("$dir/src.sql");
like($sqldump, qr/CREATE INDEX t_opc_bl ON public\.t_opc USING bloomidx \(a, b, c ops\.bl_text_ops, d ops\.bl_int4_ops\) WITH \(col3='12'\);/,
	'the plain dump creates t_opc_bl with its operator classes and options');
like($sqldump, qr/CREATE OPERATOR CLASS ops\.bl_text_ops\s+FOR TYPE text USING bloomidx/,
	'the plain dump creates the user-made operator classes');

$node->safe_psql('postgres', 'CREATE DATABASE restored_c');
$node->command_checks_all(
	[
		'pg_restore', '-h', $host, '-p', $port, '--exit-on-error',
		'-d', 'restored_c', "$dir/src.dump"
	],
	0, [qr/\A\z/], [qr/\A\z/],
	'pg_restore of the custom dump into restored_c, no error or warning');

$node->safe_psql('postgres', 'CREATE DATABASE restored_p');
$node->command_checks_all(
	[
		'psql', '-X', '-q', '-h', $host, '-p', $port, '-v', 'ON_ERROR_STOP=1',
		'-d', 'restored_p', '-f', "$dir/src.sql"
	],
	0, [qr//], [qr/\A\z/],
	'psql restores the plain dump into restored_p, no error or warning');

my @dbs = qw(postgres restored_c restored_p);
my @restored = qw(restored_c restored_p);

# ------------------------------------------------------------------------
# Catalogs: the same index definitions and options.

my $catalog_sql = q{
SELECT c.relname, c.relkind, am.amname, coalesce(c.reloptions::text, '-'),
       pg_get_indexdef(c.oid), i.tablename, i.indexdef, i.tablespace IS NULL
FROM pg_class c
JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomidx'
LEFT JOIN pg_indexes i ON i.schemaname = c.relnamespace::regnamespace::text AND i.indexname = c.relname
ORDER BY c.relname};
my %catalog = map { $_ => $node->safe_psql($_, $catalog_sql) } @dbs;
my $nindexes = () = $catalog{postgres} =~ /\n/g;
$nindexes++;
is($nindexes, 10, 'the source has 10 bloomidx indexes (one partitioned, two on its partitions)');
for my $db (@restored)
{
	is($catalog{$db}, $catalog{postgres},
		"$db: every bloomidx index has the source's definition, reloptions and table");
}
like($catalog{postgres}, qr/^t_len_bl\|i\|bloomidx\|\{length=80,col1=2,col2=3,col3=5,col4=2\}\|/m,
	't_len_bl keeps length and colN');
like($catalog{postgres}, qr/^t_fpr_bl\|i\|bloomidx\|\{false_positive_rate=0\.02,col2=9\}\|/m,
	't_fpr_bl keeps false_positive_rate');
like($catalog{postgres}, qr/^t_part_bl\|.*WHERE \(d IS NOT NULL\)/m, 't_part_bl is partial');
like($catalog{postgres}, qr/^t_expr_bl\|.*\(lower\(c\), \(\(a % 100\)\), \(\(b - '10000000000'::bigint\)\), d\)/m,
	't_expr_bl is on expressions');
like($catalog{postgres}, qr/^t_alt_bl\|i\|bloomidx\|\{length=80,col1=5\}\|/m,
	't_alt_bl has the options ALTER INDEX gave it');
like($catalog{postgres}, qr/^tp_bl\|I\|bloomidx\|\{false_positive_rate=0\.005\}\|/m,
	'tp_bl is a partitioned bloomidx index');

# The opclasses of every index column, by name and schema.
my $opclass_sql = q{
SELECT i.indexrelid::regclass, array_agg(n.nspname || '.' || opc.opcname ORDER BY k.n)
FROM pg_index i
JOIN pg_class c ON c.oid = i.indexrelid
JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomidx'
CROSS JOIN LATERAL unnest(i.indclass::oid[]) WITH ORDINALITY AS k(opc, n)
JOIN pg_opclass opc ON opc.oid = k.opc
JOIN pg_namespace n ON n.oid = opc.opcnamespace
GROUP BY 1 ORDER BY i.indexrelid::regclass::text};
my $opclasses = $node->safe_psql('postgres', $opclass_sql);
like($opclasses, qr/^t_opc_bl\|\{public\.int4_ops,public\.int8_ops,ops\.bl_text_ops,ops\.bl_int4_ops\}$/m,
	't_opc_bl uses the user-made operator classes');
is($node->safe_psql($_, $opclass_sql), $opclasses,
	"$_: every index column has the source's operator class")
  for @restored;

# Sizes: a restored index is built from the same rows with the same
# options, so it is the size of the source's, except t_def_bl (its source
# saw deletes and VACUUM) and t_alt_bl (built with length 256 in the
# source, with the length 80 of its reloptions when restored).
my $size_sql = q{
SELECT c.relname, pg_relation_size(c.oid)
FROM pg_class c JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomidx'
WHERE c.relkind = 'i' ORDER BY c.relname};
my %sizes;
for my $db (@dbs)
{
	$sizes{$db} = { map { split /\|/ } split /\n/, $node->safe_psql($db, $size_sql) };
}
for my $db (@restored)
{
	for my $idx (sort keys %{ $sizes{postgres} })
	{
		next if $idx eq 't_def_bl' || $idx eq 't_alt_bl';
		is($sizes{$db}{$idx}, $sizes{postgres}{$idx},
			"$db: $idx is the size of the source's ($sizes{postgres}{$idx} bytes)");
	}
	# 32-byte signatures against 10, beside 22 bytes of TID and filter keys a row.
	cmp_ok($sizes{$db}{t_alt_bl}, '<', $sizes{postgres}{t_alt_bl} * 0.7,
		"$db: t_alt_bl was built with its new length ($sizes{$db}{t_alt_bl} bytes, "
		  . "$sizes{postgres}{t_alt_bl} in the source)");
}

# Heaps: the same rows.
for my $t (qw(t_def t_len t_fpr t_part t_expr t_opc t_alt tp))
{
	my $sql = "$BloomidxTAP::SEQ_GUCS SELECT count(*) || ' ' || md5(string_agg("
	  . "format('%s,%s,%s,%s,%s', id, a, b, c, d), ';' ORDER BY id, a, b, c, d)) FROM $t";
	my $src = $node->safe_psql('postgres', $sql);
	is($node->safe_psql($_, $sql), $src, "$_: $t has the source's rows") for @restored;
}

# ------------------------------------------------------------------------
# bloomidx_verify on every index of every database.

for my $db (@dbs)
{
	my $out = $node->safe_psql(
		$db, q{
CREATE FUNCTION pg_temp.outcome(idx regclass) RETURNS text LANGUAGE plpgsql AS $$
BEGIN
    PERFORM bloomidx_verify(idx);
    RETURN 'ok';
EXCEPTION WHEN OTHERS THEN
    RETURN SQLSTATE || ': ' || SQLERRM;
END $$;
SELECT count(*) || ' indexes, ' || count(*) FILTER (WHERE o = 'ok') || ' ok'
       || coalesce(': ' || string_agg(c.relname || ': ' || o, '; ') FILTER (WHERE o <> 'ok'), '')
FROM pg_class c JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomidx'
CROSS JOIN LATERAL pg_temp.outcome(c.oid) AS o
WHERE c.relkind = 'i'});
	is($out, '9 indexes, 9 ok', "$db: bloomidx_verify passes on all 9 bloomidx indexes");
}

# ------------------------------------------------------------------------
# Random queries: each database's index against the source's seqscan.

# bloomidx_tap_run (install_helpers, dumped with the rest) over $conds in
# $db with $gucs: [n, md5, plan] per condition.
sub run_conditions_in
{
	my ($db, $table, $conds, $gucs) = @_;
	my @values = map { "($_, \$bq\$$conds->[$_]\$bq\$)" } 0 .. $#$conds;
	my $out = $node->safe_psql($db,
		    "$gucs\nSELECT v.i, r.n, r.ids, r.plan FROM (VALUES\n"
		  . join(",\n", @values)
		  . "\n) AS v(i, cond) CROSS JOIN LATERAL bloomidx_tap_run('$table', v.cond) AS r ORDER BY v.i;"
	);
	my @res;
	for my $line (split /\n/, $out)
	{
		my ($i, $n, $md5, $plan) = split /\|/, $line, 4;
		$res[$i] = [ $n, $md5, $plan ];
	}
	return \@res;
}

# For every database of @dbs, every condition: its index plan is a Bitmap
# Index Scan on each of @$indexes (no Seq Scan), and the rows (count and md5
# of ids) equal the seqscan of the source, $dbs[0]; its own seqscan equals
# the source's too.
sub compare_across
{
	my ($table, $indexes, $conds, $label) = @_;
	my $ref = run_conditions_in($dbs[0], $table, $conds, $BloomidxTAP::SEQ_GUCS);
	my $n = @$conds;
	my $nonempty = grep { $_->[0] > 0 } @$ref;
	my $refplans = grep { $_->[2] =~ /Seq Scan on \Q$table\E/ && $_->[2] !~ /Index/ } @$ref;
	is($refplans, $n, "$label: the $n reference queries are Seq Scans");
	ok($nonempty * 3 >= $n, "$label: at least a third of the queries return rows ($nonempty of $n)");
	for my $db (@dbs)
	{
		my $ires = run_conditions_in($db, $table, $conds, $BloomidxTAP::INDEX_GUCS);
		my $sres = run_conditions_in($db, $table, $conds, $BloomidxTAP::SEQ_GUCS);
		my ($not_indexed, $diffs, $seqdiffs) = (0, 0, 0);
		my @report;
		for my $i (0 .. $#$conds)
		{
			my ($rn, $rmd5) = @{ $ref->[$i] };
			my ($in, $imd5, $iplan) = @{ $ires->[$i] // [ -1, '', 'missing' ] };
			my ($sn, $smd5) = @{ $sres->[$i] // [ -1, '' ] };
			my $uses = !($iplan =~ /Seq Scan/)
			  && !grep { $iplan !~ /Bitmap Index Scan on \Q$_\E\b/ } @$indexes;
			if (!$uses)
			{
				$not_indexed++;
				push @report, "not a Bitmap Index Scan on @$indexes: [$conds->[$i]] plan: $iplan"
				  if @report < 10;
			}
			if ($in ne $rn || $imd5 ne $rmd5)
			{
				$diffs++;
				push @report, "DIFF [$conds->[$i]]: index $in rows, source seqscan $rn rows"
				  if @report < 10;
			}
			$seqdiffs++ if $sn ne $rn || $smd5 ne $rmd5;
		}
		is($not_indexed, 0, "$label, $db: all $n queries use a Bitmap Index Scan on @$indexes");
		is($diffs, 0,
			"$label, $db: index results equal the source's seqscan for $n queries ($nonempty non-empty)");
		is($seqdiffs, 0, "$label, $db: seqscan results equal the source's");
		diag join("\n", @report) if @report;
	}
	return;
}

my @null_conds = (
	'a IS NULL', 'b IS NULL AND c = \'v17\'', 'c IS NULL AND d = 3',
	'a IS NULL AND b IS NULL', 'd IS NULL AND a = 1', 'a IN (1, 2, NULL)');

sub table_conds
{
	my ($table, $n) = @_;
	my $rows = fetch_rows($node, $table, $dbs[0]);
	return [ @{ combo_conditions($rows) }, @{ random_conditions($rows, $n) }, @null_conds ];
}

for my $t (qw(t_def t_len t_fpr t_opc t_alt))
{
	compare_across($t, ["${t}_bl"], table_conds($t, 150), $t);
}
compare_across('tp', \@part_indexes, table_conds('tp', 150), 'tp (partitioned)');

# The partial index: every condition implies its predicate.
compare_across('t_part', ['t_part_bl'],
	[ map { "$_ AND d IS NOT NULL" } @{ table_conds('t_part', 150) } ],
	't_part (partial)');

# The expression index: conditions on its expressions.
{
	my $rows = fetch_rows($node, 't_expr');
	my @conds;
	while (@conds < 150)
	{
		my $row = $rows->[ int(rand(@$rows)) ];
		my ($id, $a, $b, $c, $d) = @$row;
		my $miss = rand() < 0.2;
		my @parts;
		push @parts, 'lower(c) = ' . ($miss ? "'nope" . int(rand(50)) . "'" : "lower('" . uc($c) . "')")
		  if defined $c && rand() < 0.5;
		push @parts, '(a % 100) = ' . ($miss ? 100 + int(rand(50)) : $a % 100)
		  if defined $a && rand() < 0.5;
		push @parts, '(b - 10000000000) = ' . ($miss ? -1 - int(rand(50)) : $b - 10000000000)
		  if defined $b && rand() < 0.5;
		push @parts, 'd = ' . ($miss ? 13 + int(rand(5)) : $d)
		  if defined $d && (rand() < 0.3 || !@parts);
		push @conds, join(' AND ', @parts) if @parts;
	}
	push @conds, 'lower(c) IS NULL', "lower(c) IS NULL AND (a % 100) = 4", 'd IS NULL AND (b - 10000000000) = 7';
	compare_across('t_expr', ['t_expr_bl'], \@conds, 't_expr (expressions)');
}

# ------------------------------------------------------------------------
# The restored indexes take writes like any other.

for my $db (@restored)
{
	$node->safe_psql($db, 'DELETE FROM t_len WHERE id % 3 = 0; VACUUM t_len');
	load_rows($node, 't_len', 10001, 11000, $db);
	$node->safe_psql($db, "SELECT bloomidx_verify('t_len_bl')");
	pass("$db: t_len_bl verifies after deletes, VACUUM and inserts");
}
$node->safe_psql('postgres', 'DELETE FROM t_len WHERE id % 3 = 0; VACUUM t_len');
load_rows($node, 't_len', 10001, 11000);
compare_across('t_len', ['t_len_bl'], table_conds('t_len', 100), 't_len after writes');

# ------------------------------------------------------------------------
# Options no build can apply, stored where no check saw them (the event
# trigger disabled): ALTER INDEX gives a 4-column index a col7, and a
# partitioned index has a rate its 16 bits cannot reach for 4 columns.  A
# TRUNCATE builds with a WARNING, and pg_restore -j 2 restores both
# indexes, ignoring what cannot apply with a WARNING that names the index,
# where before the restore lost them ("errors ignored on restore").

$node->safe_psql('postgres', 'CREATE DATABASE bad_opts');
install_helpers($node, 'bad_opts');
$node->safe_psql(
	'bad_opts', q{
CREATE EXTENSION bloomidx;
CREATE TABLE t_bad (id int4, a int4, b int8, c text, d int4);
CREATE INDEX t_bad_bl ON t_bad USING bloomidx (a, b, c, d);
ALTER EVENT TRIGGER bloomidx_ddl_check DISABLE;
ALTER INDEX t_bad_bl SET (col7 = 3);
CREATE TABLE tbp (id int4, a int4, b int8, c text, d int4) PARTITION BY RANGE (id);
CREATE INDEX tbp_bl ON tbp USING bloomidx (a, b, c, d) WITH (false_positive_rate = 0.0001, length = 16);
ALTER EVENT TRIGGER bloomidx_ddl_check ENABLE ALWAYS;
});
my ($ret, $stdout, $stderr) = $node->psql('bad_opts',
	'CREATE TABLE tbp_1 PARTITION OF tbp FOR VALUES FROM (MINVALUE) TO (2500);'
	  . 'CREATE TABLE tbp_2 PARTITION OF tbp FOR VALUES FROM (2500) TO (MAXVALUE);'
	  . 'TRUNCATE t_bad;');
is($ret, 0, 'new partitions and a TRUNCATE build on options that cannot apply');
like($stderr, qr/WARNING:  col7 = 3 is given, but the index has only 4 columns\nDETAIL:  Index "t_bad_bl" is built without it\./,
	'the TRUNCATE warns, naming the index and the option it ignores');
like($stderr, qr/HINT:  Index "tbp_2_a_b_c_d_idx" is built as if "false_positive_rate" were not given/,
	'a new partition warns, naming its index');
load_rows($node, $_, 1, 5000, 'bad_opts') for qw(t_bad tbp);
$node->safe_psql('bad_opts', 'ANALYZE');

$node->command_ok(
	[ 'pg_dump', '-h', $host, '-p', $port, '-Fc', '-f', "$dir/bad.dump", 'bad_opts' ],
	'pg_dump -Fc of the indexes with options that cannot apply');
$node->safe_psql('postgres', 'CREATE DATABASE bad_opts_r');
$node->command_checks_all(
	[
		'pg_restore', '-h', $host, '-p', $port, '--exit-on-error', '-j', '2',
		'--verbose', '-d', 'bad_opts_r', "$dir/bad.dump"
	],
	0, [qr/\A\z/],
	[
		qr/WARNING:  col7 = 3 is given, but the index has only 4 columns/,
		qr/Index "t_bad_bl" is built without it\./,
		qr/Index "tbp_1_a_b_c_d_idx" is built as if "false_positive_rate" were not given/,
		qr/Index "tbp_2_a_b_c_d_idx" is built as if "false_positive_rate" were not given/,
		qr/\A(?:(?!ERROR)[\s\S])*\z/
	],
	'pg_restore -j 2 --exit-on-error restores them with WARNINGs (shown with --verbose), no error');
is( $node->safe_psql('bad_opts_r', $catalog_sql),
	$node->safe_psql('bad_opts', $catalog_sql),
	'bad_opts_r: the indexes are restored with their definitions and options');
@dbs = qw(bad_opts bad_opts_r);
compare_across('t_bad', ['t_bad_bl'], table_conds('t_bad', 100), 't_bad (options ignored)');
my @bad_part_indexes = split /\n/,
  $node->safe_psql('bad_opts_r',
	"SELECT relid FROM pg_partition_tree('tbp_bl') WHERE isleaf ORDER BY relid::text");
is(scalar(@bad_part_indexes), 2, 'bad_opts_r: the partitioned index has an index on each partition');
compare_across('tbp', \@bad_part_indexes, table_conds('tbp', 100), 'tbp (options ignored)');

$node->stop;
done_testing();
