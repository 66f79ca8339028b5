
# Crash recovery under load: pgbench inserts, updates, deletes and looks up
# rows of a table with a bloomidx index with several clients, and the server
# is killed (immediate shutdown) at a random moment, several times.  After
# each restart (WAL replay) bloomidx_verify passes, for many random queries
# the index (forced Bitmap Index Scan) finds exactly what a sequential scan
# finds, and every row that survived the crash, i.e. every committed row, is
# found through the index by its own keys.  pgbench is expected to fail when
# the server dies; its exit status is ignored.
use strict;
use warnings;

use IPC::Run;
use Time::HiRes qw(time usleep);
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $CYCLES = full_or_quick(4, 2);
my $NROWS = 4000;

# Small segments: pgbench's inserts seal pending rows while the crashes come.
my $node = new_bloomidx_node('crash_cycles', helpers => 1,
	conf => "restart_after_crash = off\nbloomidx.segment_rows = 500\n");
create_test_table($node, 't');
load_rows($node, 't', 1, $NROWS);
# A btree on id for pgbench's updates and deletes by id; the checks force
# bitmap scans on conditions over a..d, which only bloomidx can serve.
$node->safe_psql(
	'postgres', q{
CREATE INDEX t_bl ON t USING bloomidx (a, b, c, d);
CREATE INDEX t_id ON t (id);
ANALYZE t;
});
verify_index($node, 't_bl', 'before the first crash');

my $script = PostgreSQL::Test::Utils::tempdir() . '/workload.sql';
PostgreSQL::Test::Utils::append_to_file(
	$script, workload_writes($NROWS, "'r' || (:k % 300)") . qq{BEGIN;
INSERT INTO t (id, a, b, c, d) SELECT :nid + 2000000 + g, (:nid + g) % 997, 10000000000 + g, 'm' || g, g % 13 FROM generate_series(1, 2) g;
DELETE FROM t WHERE id = (:k * 17) % $NROWS + 1;
COMMIT;
\\set qa random(0, 996)
\\set qd random(0, 12)
SET enable_seqscan = off;
SET enable_indexscan = off;
SELECT count(*) FROM t WHERE a = :qa AND d = :qd;
SELECT count(*) FROM t WHERE c = ('v' || :qa);
RESET enable_seqscan;
RESET enable_indexscan;
});

my $total_rows_checked = 0;
for my $cycle (1 .. $CYCLES)
{
	my $label = "cycle $cycle";
	my $vacuum = $cycle % 2 == 0;
	my ($pgb_out, $pgb_err) = ('', '');
	my $pgbench = IPC::Run::start(
		[
			'pgbench', '-n', '-c', '3', '-j', '3', '-T', '60', '-R', '300', '-f', $script,
			'-h', $node->host, '-p', $node->port, 'postgres'
		],
		'>', \$pgb_out, '2>', \$pgb_err);

	# A random moment: 1 to 3 s into the workload (seeded).  On even cycles
	# a VACUUM runs concurrently, so that the crash may hit it too.
	my $delay = 1 + rand(2);
	note sprintf("%s: killing the server %.2f s into the workload", $label, $delay);
	my $t0 = time();
	my $vac_h;
	if ($vacuum)
	{
		usleep(int($delay * 500_000));
		my ($vo, $ve) = ('', '');
		$vac_h = IPC::Run::start(
			[
				'psql', '-X', '-q', '-h', $node->host, '-p', $node->port,
				'-d', 'postgres', '-c', 'VACUUM t'
			],
			'>', \$vo, '2>', \$ve);
	}
	while (time() - $t0 < $delay)
	{
		$pgbench->pump_nb;
		usleep(50_000);
	}
	$node->stop('immediate');

	# pgbench (and the VACUUM) lose their connections and exit; their exit
	# statuses are irrelevant.
	for my $h (grep { defined } $pgbench, $vac_h)
	{
		my $deadline = time() + 20;
		while ($h->pumpable && time() < $deadline)
		{
			$h->pump_nb;
			usleep(50_000);
		}
		$h->kill_kill if $h->pumpable;
		eval { $h->finish };
	}
	my ($ntx) = $pgb_err =~ /(?:processed|progress)\D*(\d+)/;
	note "$label: pgbench said: " . join(' | ', grep { /abort|error|connection/i } split /\n/, $pgb_err)
	  if $pgb_err ne '';

	$node->start;
	is($node->safe_psql('postgres', 'SELECT 1'), '1', "$label: the server is up after crash recovery");

	verify_index($node, 't_bl', "$label, after recovery");
	my $rows = fetch_rows($node, 't');
	$total_rows_checked += @$rows;
	cmp_ok(scalar(@$rows), '>=', $NROWS / 2, "$label: " . scalar(@$rows) . ' rows after recovery');
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 't',
		index    => 't_bl',
		conds    => [ @{ combo_conditions($rows) }, @{ random_conditions($rows, 120) } ],
		label    => "$label, after recovery");
	check_every_row_found($node, 't', 't_bl',
		[ [ 'a', 'd' ], [ 'a', 'b', 'c', 'd' ] ], "$label, after recovery");
}

# A last VACUUM and a clean check: recovery left nothing that VACUUM chokes on.
$node->safe_psql('postgres', 'VACUUM t');
verify_index($node, 't_bl', 'after all crashes and a VACUUM');
my $log = slurp_file($node->logfile);
unlike($log, qr/PANIC|TRAP:|terminated by signal (?!9)/, 'no PANIC, assertion failure or backend crash in the log');
note "checked $total_rows_checked rows over $CYCLES crash cycles";

$node->stop;
done_testing();
