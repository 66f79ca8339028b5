
# bloomidx on a streaming standby under a concurrent workload, then
# promoted.  pgbench runs inserts, updates of indexed columns (to values
# and to NULL), deletes and lookups on the primary with several clients,
# while this session VACUUMs and once rebuilds the index with REINDEX
# CONCURRENTLY; each pgbench lookup compares the index with a sequential
# scan in one REPEATABLE READ snapshot, and so does the standby, against
# its own heap, while it replays.  After catch-up, for many random
# queries the standby's index (forced Bitmap Index Scan, checked with
# EXPLAIN) finds exactly what a sequential scan finds on the primary.  The
# primary stops, the standby is promoted and takes writes of its own
# (inserts, updates, deletes, VACUUM, pgbench again, a crash and restart),
# and its index still equals a sequential scan and passes bloomidx_verify.
# wal_consistency_checking = 'generic' makes the standby compare every
# replayed index page with the primary's image.
use strict;
use warnings;

use IPC::Run;
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

# About two minutes of concurrent writes, lookups and VACUUMs (issue 5);
# 20 s on the versions a run tests after its first.
my $PGBENCH_SECONDS = $ENV{BLOOMIDX_SOAK_SECONDS} // full_or_quick(120, 20);
my $NROWS = 20000;

my $primary = new_bloomidx_node(
	'promote_primary',
	init    => { allows_streaming => 1 },
	helpers => 1,
	conf    => q{
max_wal_size = 1GB
wal_consistency_checking = 'generic'
max_standby_streaming_delay = -1
});
create_test_table($primary, 't');
load_rows($primary, 't', 1, $NROWS);
# A btree on id for pgbench's updates and deletes by id; conditions on a..d
# can only use bloomidx (the checks force bitmap scans).
$primary->safe_psql(
	'postgres', q{
CREATE INDEX t_bl ON t USING bloomidx (a, b, c, d);
CREATE INDEX t_id ON t (id);
CREATE TABLE mismatches (at timestamptz DEFAULT now(), what text);
ANALYZE t;
});

# bloomidx_tap_same(table, conditions): in the caller's snapshot, each
# condition through the index (forced bitmap scan) and by seqscan; returns
# "<not through the index> <different>".
$primary->safe_psql(
	'postgres', q{
CREATE FUNCTION bloomidx_tap_same(tbl text, conds text[]) RETURNS text
LANGUAGE plpgsql AS $f$
DECLARE
    c text;
    i_n bigint; i_ids text; i_plan text;
    s_n bigint; s_ids text;
    not_indexed int := 0;
    different int := 0;
BEGIN
    FOREACH c IN ARRAY conds LOOP
        PERFORM set_config('enable_seqscan', 'off', true);
        PERFORM set_config('enable_indexscan', 'off', true);
        PERFORM set_config('enable_bitmapscan', 'on', true);
        SELECT r.n, r.ids, r.plan INTO i_n, i_ids, i_plan FROM bloomidx_tap_run(tbl, c) r;
        IF i_plan NOT LIKE '%Bitmap Index Scan on t_bl%' THEN
            not_indexed := not_indexed + 1;
        END IF;
        PERFORM set_config('enable_seqscan', 'on', true);
        PERFORM set_config('enable_bitmapscan', 'off', true);
        SELECT r.n, r.ids INTO s_n, s_ids FROM bloomidx_tap_run(tbl, c) r;
        IF i_n <> s_n OR i_ids <> s_ids THEN
            different := different + 1;
        END IF;
    END LOOP;
    RETURN not_indexed || ' ' || different;
END
$f$;
});

my $standby = new_streaming_standby($primary, 'promote_standby');
$standby->start;
$primary->wait_for_catchup($standby);

# ------------------------------------------------------------------------
# The workload.

# The same four counts through the index (i_) and by a sequential scan (s_).
my $counts = q{SELECT (SELECT count(*) FROM t WHERE a = :qa AND d = :qd) AS n1,
       (SELECT count(*) FROM t WHERE b = 10000000000 + :qb) AS n2,
       (SELECT count(*) FROM t WHERE c = ('v' || :qc) AND d IS NULL) AS n3,
       (SELECT count(*) FROM t WHERE a IN (:qa, :qa + 1) AND c IN ('p' || :qc, 'v' || :qc)) AS n4};
my $script = PostgreSQL::Test::Utils::tempdir() . '/workload.sql';
PostgreSQL::Test::Utils::append_to_file(
	$script, workload_writes($NROWS, 'NULL') . qq{\\set qa random(0, 996)
\\set qd random(0, 12)
\\set qb random(0, 5000)
\\set qc random(0, 700)
BEGIN ISOLATION LEVEL REPEATABLE READ;
SET LOCAL enable_seqscan = off;
SET LOCAL enable_indexscan = off;
$counts \\gset i_
SET LOCAL enable_seqscan = on;
SET LOCAL enable_bitmapscan = off;
$counts \\gset s_
END;
\\if :i_n1 != :s_n1 or :i_n2 != :s_n2 or :i_n3 != :s_n3 or :i_n4 != :s_n4
INSERT INTO mismatches (what) VALUES ('qa=:qa qd=:qd qb=:qb qc=:qc index :i_n1 :i_n2 :i_n3 :i_n4 seqscan :s_n1 :s_n2 :s_n3 :s_n4');
\\endif
});

my $rows0 = fetch_rows($primary, 't');

sub conds_array
{
	my ($conds) = @_;
	return 'ARRAY[' . join(', ', map { "\$bq\$$_\$bq\$" } @$conds) . ']';
}

my ($pgb_out, $pgb_err) = ('', '');
my $start = time();
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '3', '-j', '3', '-T', $PGBENCH_SECONDS, '-f', $script,
		'-h', $primary->host, '-p', $primary->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err);

# Meanwhile: VACUUM now and then, one REINDEX CONCURRENTLY, and the
# standby's index against its own heap in one snapshot while it replays.
my ($rounds, $vacuums, $reindexed, $standby_checks, $standby_bad) = (0, 0, 0, 0, 0);
while ($pgbench->pumpable)
{
	$rounds++;
	if ($rounds % 2 == 0)
	{
		$primary->safe_psql('postgres', 'VACUUM t');
		$vacuums++;
	}
	if (!$reindexed && time() - $start > $PGBENCH_SECONDS * 0.4)
	{
		$primary->safe_psql('postgres', 'REINDEX INDEX CONCURRENTLY t_bl');
		$reindexed = 1;
	}
	my $res = $standby->safe_psql('postgres',
		"BEGIN ISOLATION LEVEL REPEATABLE READ;\n"
		  . "SELECT bloomidx_tap_same('t', "
		  . conds_array(random_conditions($rows0, 25))
		  . ");\nCOMMIT;");
	$standby_checks++;
	if ($res ne '0 0')
	{
		$standby_bad++;
		diag "standby check during the workload: not indexed, different = $res"
		  if $standby_bad <= 3;
	}
	usleep(300_000);
	$pgbench->pump_nb;
}
ok($pgbench->finish, 'pgbench workload ran without error') or diag "$pgb_out\n$pgb_err";
my ($ntx) = $pgb_out =~ /number of transactions actually processed: (\d+)/;
$ntx //= 0;
cmp_ok($ntx, '>=', 200, "pgbench ran $ntx transactions in $PGBENCH_SECONDS s with 3 clients");
cmp_ok($vacuums, '>=', 2, "VACUUM ran $vacuums times during the workload");
ok($reindexed, 'REINDEX CONCURRENTLY ran during the workload');
cmp_ok($standby_checks, '>=', 5, "the standby compared index and seqscan $standby_checks times while replaying");
is($standby_bad, 0, 'the standby index equalled its seqscan in every snapshot while replaying');
is($primary->safe_psql('postgres', 'SELECT count(*) FROM mismatches'),
	0, 'every pgbench lookup through the index equalled its seqscan')
  or diag $primary->safe_psql('postgres', 'SELECT what FROM mismatches LIMIT 5');
is( $primary->safe_psql('postgres',
		"SELECT count(*) FROM pg_index WHERE indrelid = 't'::regclass AND NOT (indisvalid AND indisready)"),
	0,
	'no invalid index left by REINDEX CONCURRENTLY');

$primary->safe_psql('postgres', 'VACUUM t');
$primary->wait_for_catchup($standby);

# ------------------------------------------------------------------------
# After catch-up: the standby's index against the primary's seqscan.

is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	't', 'the standby is in recovery');
is(table_digest($standby, 't'), table_digest($primary, 't'),
	'after catch-up: the standby heap equals the primary');
my $rows = fetch_rows($primary, 't');
cmp_ok(scalar(@$rows), '>', $NROWS / 2, scalar(@$rows) . ' rows after the workload');
compare_index_to_seqscan(
	idx_node => $standby,
	seq_node => $primary,
	table    => 't',
	index    => 't_bl',
	conds    => [ @{ combo_conditions($rows) }, @{ random_conditions($rows, 400) } ],
	label    => 'after catch-up (standby index vs primary seqscan)');
check_every_row_found($standby, 't', 't_bl', [ ['c'], [ 'a', 'd' ], [ 'a', 'b', 'c', 'd' ] ],
	'after catch-up, on the standby');
verify_index($primary, 't_bl', 'after catch-up, on the primary');
verify_index($standby, 't_bl', 'after catch-up, on the standby');

# ------------------------------------------------------------------------
# Failover: the primary stops, the standby is promoted and takes writes.

$primary->stop;
$standby->promote;
is($standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
	'f', 'the promoted standby is out of recovery');

my $promoted = $standby;
load_rows($promoted, 't', 2000001, 2005000);
$promoted->safe_psql('postgres', 'UPDATE t SET a = a + 1000, c = c || \'-x\' WHERE id % 11 = 0');
$promoted->safe_psql('postgres', 'UPDATE t SET b = NULL WHERE id % 17 = 0');
$promoted->safe_psql('postgres', 'DELETE FROM t WHERE id % 6 = 0');
$promoted->safe_psql('postgres', 'VACUUM t');
load_rows($promoted, 't', 2005001, 2007000);

($pgb_out, $pgb_err) = ('', '');
$pgbench = IPC::Run::run(
	[
		'pgbench', '-n', '-c', '2', '-j', '2', '-T', '4', '-f', $script,
		'-h', $promoted->host, '-p', $promoted->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err);
ok($pgbench, 'pgbench ran on the promoted node') or diag "$pgb_out\n$pgb_err";
is($promoted->safe_psql('postgres', 'SELECT count(*) FROM mismatches'),
	0, 'on the promoted node too, every pgbench lookup equalled its seqscan')
  or diag $promoted->safe_psql('postgres', 'SELECT what FROM mismatches LIMIT 5');
$promoted->safe_psql('postgres', 'VACUUM t');

# The promoted node's index against its own sequential scans, and verified.
sub check_promoted
{
	my ($label, $conds) = @_;
	compare_index_to_seqscan(
		idx_node => $promoted,
		seq_node => $promoted,
		table    => 't',
		index    => 't_bl',
		conds    => $conds,
		label    => $label);
	verify_index($promoted, 't_bl', $label);
	return;
}

$rows = fetch_rows($promoted, 't');
check_promoted('promoted, after its own writes',
	[ @{ combo_conditions($rows) }, @{ random_conditions($rows, 300) } ]);
check_every_row_found($promoted, 't', 't_bl', [ ['b'], [ 'a', 'c', 'd' ] ],
	'promoted, after its own writes');

# A crash after the promotion: recovery replays the new timeline's WAL.
load_rows($promoted, 't', 2007001, 2008000);
$promoted->safe_psql('postgres', 'DELETE FROM t WHERE id % 9 = 0');
$promoted->stop('immediate');
$promoted->start;
check_promoted('promoted, after a crash', random_conditions(fetch_rows($promoted, 't'), 150));

my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found/, 'no WAL consistency failure on the standby');

$promoted->stop;
done_testing();
