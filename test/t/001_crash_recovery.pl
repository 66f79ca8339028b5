
# bloomidx survives a crash: everything written to the index after the last
# checkpoint (inserts, inserts into space freed by DELETE + VACUUM, updates,
# a whole index build) is replayed from WAL, and the index then finds exactly
# what a sequential scan finds.  Uncommitted and rolled-back rows stay
# invisible.  The server keeps dirty pages in memory until the crash (no
# checkpoints, no background writer), so the index on disk is stale and only
# WAL replay can make it right; wal_consistency_checking compares every
# replayed page with the image the primary logged.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $node = new_bloomidx_node(
	'crash',
	init    => { allows_streaming => 1 },
	helpers => 1,
	conf    => q{
shared_buffers = 64MB
# small segments: builds write many, inserts and VACUUM seal pending rows
bloomidx.segment_rows = 500
log_statement = mod
checkpoint_timeout = 1h
max_wal_size = 2GB
bgwriter_lru_maxpages = 0
wal_consistency_checking = 'all'
});

# Built before the checkpoint: its build is on disk.
create_test_table($node, 't');
load_rows($node, 't', 1, 3000);
$node->safe_psql('postgres',
	'CREATE INDEX t_bloomidx ON t USING bloomidx (a, b, c, d)');
$node->safe_psql('postgres', 'CHECKPOINT');

# After the checkpoint: only in WAL (and in shared buffers) at the crash.
load_rows($node, 't', 3001, 8000);
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 4 = 0 AND id <= 6000');
$node->safe_psql('postgres', 'VACUUM t');
load_rows($node, 't', 8001, 11000);    # reuses the space VACUUM freed
$node->safe_psql('postgres',
	'UPDATE t SET d = d + 100, c = c || \'-u\' WHERE id % 9 = 0');

# A table whose whole index build happens after the checkpoint.
create_test_table($node, 'u');
load_rows($node, 'u', 1, 2500);
$node->safe_psql('postgres',
	'CREATE INDEX u_bloomidx ON u USING bloomidx (c, a, d, b)');
load_rows($node, 'u', 2501, 4000);

# And a parallel build after the checkpoint: pages written and WAL-logged
# by three processes.
parallel_build($node, 'p', 'p_bloomidx', 60000);

# An uncommitted transaction (still open at the crash) and a rolled-back one,
# both with a = -1 / -2, which no committed row has.
my $bg = $node->background_psql('postgres', on_error_stop => 0);
$bg->query_safe(
	q{BEGIN; INSERT INTO t SELECT i, -1, i, 'uncommitted', 1 FROM generate_series(20001, 20500) i});
$node->safe_psql('postgres',
	q{BEGIN; INSERT INTO t SELECT i, -2, i, 'rolledback', 1 FROM generate_series(30001, 30500) i; ROLLBACK});

# Committed after the open transaction's inserts: its commit flushes their
# WAL too, so replay will put their index entries back.
load_rows($node, 't', 11001, 11500);

my $digest_t = table_digest($node, 't');
my $digest_u = table_digest($node, 'u');

$node->stop('immediate');
eval { $bg->quit; };    # psql lost its server; only reap it
$node->start;

sub check_all
{
	my ($phase, $nqueries) = @_;
	is(table_digest($node, 't'), $digest_t, "$phase: heap of t as committed");
	is(table_digest($node, 'u'), $digest_u, "$phase: heap of u as committed");
	verify_index($node, 't_bloomidx', $phase);
	verify_index($node, 'u_bloomidx', $phase);

	my $plan = $node->safe_psql('postgres',
		"$BloomidxTAP::INDEX_GUCS EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE a = 5 AND c = 'v7'"
	);
	like($plan, qr/Bitmap Index Scan on t_bloomidx/,
		"$phase: planner uses t_bloomidx");

	for my $marker (-1, -2)
	{
		is( $node->safe_psql(
				'postgres',
				"$BloomidxTAP::INDEX_GUCS SELECT count(*) FROM t WHERE a = $marker"),
			0,
			"$phase: no uncommitted/rolled-back rows (a = $marker) through the index");
	}

	my $rows = fetch_rows($node, 't');
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 't',
		index    => 't_bloomidx',
		conds    => [ @{ combo_conditions($rows) }, @{ random_conditions($rows, $nqueries) } ],
		label    => "$phase t");
	check_every_row_found($node, 't', 't_bloomidx',
		[ ['a'], [ 'b', 'c' ], [ 'a', 'b', 'c', 'd' ] ], "$phase t");

	my $urows = fetch_rows($node, 'u');
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 'u',
		index    => 'u_bloomidx',
		conds    => random_conditions($urows, int($nqueries / 2)),
		label    => "$phase u");
	check_every_row_found($node, 'u', 'u_bloomidx', [ [ 'c', 'd' ] ],
		"$phase u");
	verify_index($node, 'p_bloomidx', "$phase (parallel build)");
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 'p',
		index    => 'p_bloomidx',
		conds    => random_conditions(fetch_rows($node, 'p'), int($nqueries / 4)),
		label    => "$phase p");
	return;
}

check_all('after crash recovery', 400);

# The recovered index keeps working: write to it, crash again, check again.
load_rows($node, 't', 11501, 13500);
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 7 = 0 AND id > 8000');
$node->safe_psql('postgres', 'VACUUM t');
load_rows($node, 't', 13501, 14500);
load_rows($node, 'u', 4001, 5000);
$digest_t = table_digest($node, 't');
$digest_u = table_digest($node, 'u');

$node->stop('immediate');
$node->start;

check_all('after second crash', 200);

# The server log must show no inconsistent page (wal_consistency_checking
# stops recovery with a FATAL, so the start would have failed anyway).
my $log = slurp_file($node->logfile);
unlike($log, qr/inconsistent page found/, 'no WAL consistency failure in the log');

$node->stop;
done_testing();
