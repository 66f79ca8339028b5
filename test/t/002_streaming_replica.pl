
# bloomidx on a streaming standby: the index in the base backup, the index
# writes of a workload on the primary (inserts, updates of indexed columns,
# deletes, VACUUM, inserts into freed space) and whole index builds
# (CREATE INDEX, REINDEX) after the backup all reach the standby through
# WAL.  For many random queries the standby's index (forced Bitmap Index
# Scan, checked with EXPLAIN) finds exactly what a sequential scan finds on
# the primary.  wal_consistency_checking makes the standby compare every
# replayed page with the primary's image.  Segments are small, so that the
# builds write many and the inserts and VACUUMs seal pending rows often
# (src/storage/README.md): the standby replays every step of it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $primary = new_bloomidx_node(
	'primary',
	init    => { allows_streaming => 1 },
	helpers => 1,
	conf    => q{
log_statement = mod
max_wal_size = 1GB
wal_consistency_checking = 'all'
# small segments: builds write many, inserts and VACUUM seal pending rows
bloomidx.segment_rows = 500
# inserts leave their seals to background workers (src/seal_worker.cpp),
# whose WAL the standby replays as an inserter's
bloomidx.background_seal = on
});
create_test_table($primary, 't');
load_rows($primary, 't', 1, 4000);
$primary->safe_psql('postgres',
	'CREATE INDEX t_bloomidx ON t USING bloomidx (a, b, c, d)');

my $standby = new_streaming_standby($primary, 'standby');
$standby->append_conf(
	'postgresql.conf', q{
shared_buffers = 32MB
max_connections = 20
max_standby_streaming_delay = -1
});
$standby->start;

# Workload after the backup.
load_rows($primary, 't', 4001, 9000);
$primary->safe_psql('postgres', 'UPDATE t SET a = a + 1000 WHERE id % 7 = 0');
$primary->safe_psql('postgres',
	q{UPDATE t SET c = c || '-u' WHERE id % 11 = 0});
$primary->safe_psql('postgres', 'DELETE FROM t WHERE id % 5 = 0');
$primary->safe_psql('postgres', 'VACUUM t');
load_rows($primary, 't', 9001, 12000);

create_test_table($primary, 'u');
load_rows($primary, 'u', 1, 3000);
$primary->safe_psql('postgres',
	'CREATE INDEX u_bloomidx ON u USING bloomidx (d, c, b, a)');
load_rows($primary, 'u', 3001, 3500);
$primary->safe_psql('postgres', 'REINDEX INDEX u_bloomidx');
load_rows($primary, 'u', 3501, 4000);
parallel_build($primary, 'p', 'p_bloomidx', 60000);
# Segments of 64 rows: 250 of them, 26 entries on a directory page.
create_test_table($primary, 'dp');
load_rows($primary, 'dp', 1, 16000);
$primary->safe_psql('postgres',
	'SET bloomidx.segment_rows = 64; SET max_parallel_maintenance_workers = 0; '
	  . 'CREATE INDEX dp_bloomidx ON dp USING bloomidx (a, b, c, d) WITH (false_positive_rate = 0.05)');

$primary->wait_for_catchup($standby);

sub check_standby
{
	my ($phase, $nqueries) = @_;
	is( $standby->safe_psql('postgres', 'SELECT pg_is_in_recovery()'),
		't', "$phase: standby is in recovery");
	is(table_digest($standby, 't'), table_digest($primary, 't'),
		"$phase: standby heap of t equals primary");

	my $plan = $standby->safe_psql('postgres',
		"$BloomidxTAP::INDEX_GUCS EXPLAIN (COSTS OFF) SELECT count(*) FROM t WHERE b = 10000000007::int8"
	);
	like($plan, qr/Bitmap Index Scan on t_bloomidx/,
		"$phase: standby planner uses t_bloomidx");

	my $rows = fetch_rows($primary, 't');
	compare_index_to_seqscan(
		idx_node => $standby,
		seq_node => $primary,
		table    => 't',
		index    => 't_bloomidx',
		conds    => [ @{ combo_conditions($rows) }, @{ random_conditions($rows, $nqueries) } ],
		label    => "$phase t (standby index vs primary seqscan)");
	check_every_row_found($standby, 't', 't_bloomidx',
		[ ['c'], [ 'a', 'd' ], [ 'a', 'b', 'c', 'd' ] ], "$phase t on standby");

	my $urows = fetch_rows($primary, 'u');
	compare_index_to_seqscan(
		idx_node => $standby,
		seq_node => $primary,
		table    => 'u',
		index    => 'u_bloomidx',
		conds    => random_conditions($urows, int($nqueries / 2)),
		label    => "$phase u (standby index vs primary seqscan)");
	check_every_row_found($standby, 'u', 'u_bloomidx', [ ['b'] ],
		"$phase u on standby");
	compare_index_to_seqscan(
		idx_node => $standby,
		seq_node => $primary,
		table    => 'p',
		index    => 'p_bloomidx',
		conds    => random_conditions(fetch_rows($primary, 'p'), int($nqueries / 4)),
		label    => "$phase p, built in parallel (standby index vs primary seqscan)");
	compare_index_to_seqscan(
		idx_node => $standby,
		seq_node => $primary,
		table    => 'dp',
		index    => 'dp_bloomidx',
		conds    => random_conditions(fetch_rows($primary, 'dp'), int($nqueries / 4)),
		label    => "$phase dp, with directory pages (standby index vs primary seqscan)");
	verify_index($_->[0], $_->[1], "$phase on the $_->[2]")
	  for ([ $primary, 't_bloomidx', 'primary' ], [ $standby, 't_bloomidx', 'standby' ],
		[ $primary, 'dp_bloomidx', 'primary' ], [ $standby, 'dp_bloomidx', 'standby' ],
		[ $primary, 'u_bloomidx', 'primary' ], [ $standby, 'u_bloomidx', 'standby' ],
		[ $primary, 'p_bloomidx', 'primary' ], [ $standby, 'p_bloomidx', 'standby' ]);
	return;
}

is( $primary->safe_psql('postgres',
		"SELECT segments > 0 AND generation > 1 FROM bloomidx_index_info('t_bloomidx')"),
	't', 'the workload sealed pending rows into segments');
check_standby('after workload', 400);

# A second round: the standby's index, already replayed into, takes more.
$primary->safe_psql('postgres', 'DELETE FROM t WHERE id % 3 = 0 AND id > 6000');
$primary->safe_psql('postgres', 'VACUUM t');
load_rows($primary, 't', 12001, 14000);
$primary->safe_psql('postgres', 'UPDATE t SET b = b + 1 WHERE id % 13 = 0');
$primary->safe_psql('postgres', 'DELETE FROM u WHERE id % 2 = 0');
$primary->safe_psql('postgres', 'VACUUM u');
load_rows($primary, 'u', 4001, 5000);
# Directory pages rewritten: merges (entries removed from the metapage and
# the directory page), live counts cleared in place, seals appending.
$primary->safe_psql('postgres', 'DELETE FROM dp WHERE id % 4 <> 0 AND id BETWEEN 2000 AND 12000');
$primary->safe_psql('postgres', 'VACUUM dp');
load_rows($primary, 'dp', 16001, 20000);
$primary->safe_psql('postgres', "SELECT bloomidx_seal('dp_bloomidx')");
$primary->safe_psql('postgres', 'DELETE FROM dp WHERE id % 7 = 0');
$primary->safe_psql('postgres', 'VACUUM dp');
$primary->wait_for_catchup($standby);

check_standby('after second workload', 200);

# A mass DELETE: VACUUM merges what is left, moves it before the free pages,
# moves the pending pages that end the index (too few rows left on them for
# VACUUM to seal) to free pages before them too, and truncates
# (src/storage/truncate.cpp); the standby replays the moves and the
# truncation, its queries still find every row.
my $size_sql = "SELECT pg_relation_size('u_bloomidx') / 8192";
my $u_before = $primary->safe_psql('postgres', $size_sql);
$primary->safe_psql('postgres', 'DELETE FROM u WHERE id % 100 <> 0');
$primary->safe_psql('postgres', 'VACUUM u');
my $u_after = $primary->safe_psql('postgres', $size_sql);
ok($u_after < $u_before,
	"VACUUM after a mass DELETE truncated u_bloomidx ($u_before -> $u_after pages)");
my $kinds = $primary->safe_psql('postgres',
	"SELECT string_agg((SELECT string_agg(DISTINCT page_kind, '/') FROM bloomidx_page_items('u_bloomidx', b)), ', ' ORDER BY b)
	 FROM generate_series(0, (pg_relation_size('u_bloomidx') / 8192 - 1)::int) b");
note "u_bloomidx's pages after the truncation: $kinds";
unlike($kinds, qr/free.*pending$/,
	'no free page before the pending pages that end u_bloomidx: they were moved there');
$primary->wait_for_catchup($standby);
is($standby->safe_psql('postgres', $size_sql),
	$u_after, 'the standby replayed the truncation');
check_standby('after a mass DELETE', 100);

# A merge that reads its rows' filter keys from the table
# (src/storage/heap_keys.cpp) gives zero keys only to a row whose tuples
# are gone (pruned: a standby query that could still see them met that as
# a recovery conflict first), not to one merely dead to all on the
# primary.  Here VACUUM cannot prune row 0's page (a cursor holds it
# pinned), and a standby snapshot older than its DELETE (no
# hot_standby_feedback) still sees the row after the merge is replayed:
# through the index too.
# (Segments of 30,000 rows, so that the merged one has filters; heap page
# 0 holds row 0 and a live row only.)
$primary->safe_psql('postgres', q{
SET bloomidx.segment_rows = 30000;
CREATE TABLE hz (id int, b text) WITH (autovacuum_enabled = off);
INSERT INTO hz SELECT i, CASE WHEN i = 0 THEN 'rrr' ELSE 'v' || i END
FROM generate_series(0, 90000) i;
UPDATE hz SET id = -1 WHERE id = 1;
DELETE FROM hz WHERE ctid < '(1,0)' AND id NOT IN (0, -1);
VACUUM hz;
CREATE INDEX hz_bl ON hz USING bloomidx (b);
DELETE FROM hz WHERE id > 0 AND id % 5 <> 0;
});
my $hz_segments = $primary->safe_psql('postgres',
	q{SELECT segments FROM bloomidx_index_info('hz_bl')});
$primary->wait_for_catchup($standby);
my $old = $standby->background_psql('postgres', on_error_stop => 0);
$old->query_safe('BEGIN ISOLATION LEVEL REPEATABLE READ');
$old->query_safe('SET LOCAL enable_seqscan = off');
is($old->query_safe(q{SELECT count(*) FROM hz WHERE b = 'rrr'}),
	'1', 'standby snapshot: row 0 found through the index');
$primary->safe_psql('postgres', 'DELETE FROM hz WHERE id = 0');
my $pin = $primary->background_psql('postgres', on_error_stop => 0);
$pin->query_safe('BEGIN');
$pin->query_safe('DECLARE c CURSOR FOR SELECT id FROM hz');
$pin->query_safe('FETCH 1 FROM c');
$primary->safe_psql('postgres', 'SET bloomidx.segment_rows = 30000; VACUUM hz');
cmp_ok($primary->safe_psql('postgres',
		q{SELECT segments FROM bloomidx_index_info('hz_bl')}),
	'<', $hz_segments, 'VACUUM merged the mostly dead segments');
$primary->wait_for_catchup($standby);
like($old->query_safe(q{EXPLAIN (COSTS OFF) SELECT count(*) FROM hz WHERE b = 'rrr'}),
	qr/Bitmap Index Scan on hz_bl/, 'the standby query uses the index');
is($old->query_safe(q{SELECT count(*) FROM hz WHERE b = 'rrr'}),
	'1', 'standby snapshot: row 0, deleted and unpruned on the primary, still found after the merge');
$old->query_safe('COMMIT');
$old->quit;
$pin->query_safe('COMMIT');
$pin->quit;

my $log = slurp_file($standby->logfile);
unlike($log, qr/inconsistent page found/,
	'no WAL consistency failure on the standby');

$standby->stop;
$primary->stop;
done_testing();
