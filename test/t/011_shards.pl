
# bloomidx behind postgres_fdw shards (doc/scaling-out.md): a
# coordinator whose table t is hash-partitioned on a into two foreign
# partitions, each on a shard server with its own bloomidx index, and a
# table of the same rows on one node as the reference.  Rows are loaded
# through the coordinator.  Random multi-column equalities, IN lists and
# IS NULL on the coordinator's t must return what the reference returns;
# their conditions are pushed down to the shards (EXPLAIN VERBOSE's Remote
# SQL), both shards are asked at once (Async Foreign Scan), an equality on
# a asks only its shard, and each shard answers through its bloomidx index
# (pg_stat_user_indexes.idx_scan grows).  With one shard stopped, a query
# that needs it fails with a clear error and one that does not still
# answers right.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $nrows = full_or_quick(200000, 120000);

# Each shard: table t with the rows of its partition and a bloomidx index
# of segments of 20,000 rows, so that its rows are in segments with
# filters, and the shard's planner prefers the index for a selective query
# to a sequential scan (segments of a few hundred rows would make the index
# larger than the table).
my @shards;
for my $i (0, 1)
{
	my $shard = new_bloomidx_node("shard$i", conf => "bloomidx.segment_rows = 20000\n");
	# postgres_fdw reads through a cursor: plan for every row (doc/scaling-out.md).
	$shard->safe_psql('postgres', 'ALTER DATABASE postgres SET cursor_tuple_fraction = 1');
	create_test_table($shard, 't');
	$shard->safe_psql('postgres', 'CREATE INDEX t_bloomidx ON t USING bloomidx (a, b, c, d)');
	push @shards, $shard;
}

my $coord = new_bloomidx_node('coordinator', helpers => 1);
$coord->safe_psql('postgres', 'CREATE EXTENSION postgres_fdw');
$coord->safe_psql('postgres',
	'CREATE TABLE t (id int4, a int4, b int8, c text, d int4) PARTITION BY HASH (a)');
for my $i (0, 1)
{
	my ($host, $port) = ($shards[$i]->host, $shards[$i]->port);
	$coord->safe_psql(
		'postgres', qq{
CREATE SERVER shard$i FOREIGN DATA WRAPPER postgres_fdw
    OPTIONS (host '$host', port '$port', dbname 'postgres',
             async_capable 'true', batch_size '500');
CREATE USER MAPPING FOR CURRENT_USER SERVER shard$i;
CREATE FOREIGN TABLE t_s$i PARTITION OF t FOR VALUES WITH (MODULUS 2, REMAINDER $i)
    SERVER shard$i OPTIONS (table_name 't');});
}

# The rows, through the coordinator (routed to their shards), and the same
# rows in one local table.
load_rows($coord, 't', 1, $nrows);
create_test_table($coord, 'ref');
load_rows($coord, 'ref', 1, $nrows);
$_->safe_psql('postgres', 'ANALYZE t') for @shards;
$coord->safe_psql('postgres', 'ANALYZE ref');

my @counts = map { $_->safe_psql('postgres', 'SELECT count(*) FROM t') } @shards;
is($counts[0] + $counts[1], $nrows, "the $nrows rows are on the shards");
ok($counts[0] > $nrows / 3 && $counts[1] > $nrows / 3,
	"both shards hold a share ($counts[0] and $counts[1])");
is(table_digest($coord, 't'), table_digest($coord, 'ref'),
	'the shards hold the rows the reference holds');
for my $i (0, 1)
{
	verify_index($shards[$i], 't_bloomidx', "shard$i");
	is( $shards[$i]->safe_psql('postgres',
			'SELECT segments > 0 AND filtered_segments = segments '
			  . "FROM bloomidx_index_info('t_bloomidx')"),
		't', "shard$i: its rows are in segments with filters");
}

# Pushdown and routing, from the coordinator's plans.
my $row = $coord->safe_psql('postgres',
	'SELECT a, b, c FROM ref WHERE c IS NOT NULL ORDER BY id LIMIT 1 OFFSET 77');
my ($ra, $rb, $rc) = split /\|/, $row;
my $plan = $coord->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM t WHERE b = ${rb}::int8 AND c = '$rc'");
like($plan, qr/Async Foreign Scan on public\.t_s0.*Async Foreign Scan on public\.t_s1/s,
	'a query without a asks both shards at once (Async Foreign Scan)');
like($plan, qr/Remote SQL: SELECT id FROM public\.t WHERE \(\(b = ${rb}::bigint\)\) AND \(\(c = '\Q$rc\E'(?:::text)?\)\)/,
	'its conditions are pushed down to the shards');
$plan = $coord->safe_psql('postgres',
	"EXPLAIN (VERBOSE, COSTS OFF) SELECT id FROM t WHERE a = $ra AND c = '$rc'");
my $scans = () = $plan =~ /Foreign Scan on/g;
is($scans, 1, 'an equality on the partition key asks one shard only');
like($plan, qr/Remote SQL: SELECT id FROM public\.t WHERE \(\(a = $ra\)\) AND \(\(c = '\Q$rc\E'(?:::text)?\)\)/,
	'and pushes its conditions down');

# A shard's own plan for a pushed-down query, as postgres_fdw's cursor
# has it planned, is the bloomidx index, unforced.
$plan = $shards[0]->safe_psql('postgres',
	"BEGIN; EXPLAIN (COSTS OFF) DECLARE c CURSOR FOR SELECT id FROM public.t "
	  . "WHERE ((b = ${rb}::bigint)) AND ((c = '$rc'::text)); COMMIT;");
like($plan, qr/Bitmap Index Scan on t_bloomidx/,
	"shard0 plans the pushed-down query's cursor on bloomidx");

# Random queries: the coordinator's answers against the reference's, the
# shards' plans forced onto their bloomidx index (a query on a few values
# of d would rather scan the table), so that every query the coordinator
# sends a shard is one index scan there.
$_->safe_psql('postgres', 'ALTER DATABASE postgres SET enable_seqscan = off') for @shards;
sub idx_scans
{
	my ($node) = @_;
	return $node->safe_psql('postgres',
		"SELECT idx_scan FROM pg_stat_user_indexes WHERE indexrelname = 't_bloomidx'");
}
my @scans_before = map { idx_scans($_) } @shards;

my $rows  = fetch_rows($coord, 'ref');
my @conds = (
	@{ combo_conditions($rows) },
	@{ random_conditions($rows, full_or_quick(300, 120)) },
	'c IS NULL', 'd IS NULL', 'c IS NULL AND d = 5', "d IS NULL AND c = 'v100'",
	'a IS NULL', 'a IN (1, 2, 3) AND d IS NULL', "c IN ('v1', 'v2', 'v3')",
	"b IN (10000000001, 10000000002) AND d = 3", "c IN ('v7', 'nope') AND d IN (1, 2)");
# Those without a key on a go to both shards.
my $both = grep { !/\ba (=|IN|IS)/ } @conds;
# All in one session: bloomidx_tap_run's count and md5 of the sorted ids.
my $on_shards = BloomidxTAP::run_conditions($coord, 't',   \@conds, '');
my $on_one    = BloomidxTAP::run_conditions($coord, 'ref', \@conds, '');
my ($diffs, $nonempty) = (0, 0);
my @report;
for my $i (0 .. $#conds)
{
	my ($n,  $ids)  = @{ $on_shards->[$i] // [ -1, '' ] };
	my ($rn, $rids) = @{ $on_one->[$i]    // [ -2, '' ] };
	$nonempty++ if $rn > 0;
	next if $n eq $rn && $ids eq $rids;
	$diffs++;
	push @report, "DIFF [$conds[$i]]: shards $n rows, one node $rn rows" if @report < 10;
}
is($diffs, 0, scalar(@conds) . " queries on the shards answer as on one node ($nonempty non-empty)");
ok($nonempty * 3 >= @conds, 'at least a third of them return rows');
diag join("\n", @report) if @report;

# Each shard's index answered every query sent to it: at least those
# without a key on a (a backend's counts reach the statistics when it
# exits: postgres_fdw's connections end with each psql above).
for my $i (0, 1)
{
	ok( $shards[$i]->poll_query_until('postgres',
			"SELECT idx_scan >= $scans_before[$i] + $both FROM pg_stat_user_indexes "
			  . "WHERE indexrelname = 't_bloomidx'"),
		"shard$i answered the $both queries sent to both shards through its bloomidx index");
}
$_->safe_psql('postgres', 'ALTER DATABASE postgres RESET enable_seqscan') for @shards;

# One shard down: a query that needs it fails with a clear error, one that
# only needs the other still answers.
my $a0 = $coord->safe_psql('postgres', 'SELECT a FROM t_s0 ORDER BY id LIMIT 1');
$shards[1]->stop;
my ($ret, $out, $err) = $coord->psql('postgres', "SELECT id FROM t WHERE c = '$rc'");
isnt($ret, 0, 'with shard1 stopped, a query over every shard fails, not a part of its answer');
like($err, qr/could not connect to server "shard1"/, 'the error names the stopped shard');
is( $coord->safe_psql('postgres', "SELECT string_agg(id::text, ',' ORDER BY id) FROM t WHERE a = $a0"),
	$coord->safe_psql('postgres', "SELECT string_agg(id::text, ',' ORDER BY id) FROM ref WHERE a = $a0"),
	'a query routed to shard0 alone still answers right');
$shards[1]->start;
is( $coord->safe_psql('postgres', "SELECT count(*) FROM t WHERE c = '$rc'"),
	$coord->safe_psql('postgres', "SELECT count(*) FROM ref WHERE c = '$rc'"),
	'with shard1 back, queries over every shard answer again');

$coord->stop;
$_->stop for @shards;
done_testing();
