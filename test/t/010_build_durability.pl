# CREATE INDEX writes its segments straight to the index's file, past
# shared buffers (src/storage/block_write.cpp), so what makes them durable is the
# file's fsync, not a checkpoint writing buffers out.  Each case builds
# indexes (serially and in parallel), then stops the server (a crash, or a
# clean shutdown for an unlogged index), and checks after the restart that
# each index passes bloomidx_verify and answers as a sequential scan does:
# - wal_level = minimal, where a new index is not WAL-logged and commit
#   syncs its file (wal_skip_threshold 0) or logs its pages (a large one);
# - a checkpoint that begins while a parallel build writes: the build then
#   fsyncs the file itself (its DEBUG1 message says so, and strace, watching
#   the building backend's fsync calls, sees the index's file among them: a
#   crash of the server keeps the operating system's cache, so nothing else
#   would notice a build that skipped it);
# - an unlogged index across a clean restart.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use BloomidxTAP;

init_seed();

sub check_index
{
	my ($node, $table, $index, $label) = @_;
	verify_index($node, $index, $label);
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => $table,
		index    => $index,
		conds    => random_conditions(fetch_rows($node, $table), 60),
		label    => $label);
	return;
}

# wal_level = minimal: the builds write no WAL; commit makes them durable.
my $min = new_bloomidx_node(
	'minimal',
	helpers => 1,
	conf    => q{
wal_level = minimal
max_wal_senders = 0
bloomidx.segment_rows = 500
});
for my $case ([ 'm_sync', '0' ], [ 'm_log', '1GB' ])
{
	my ($table, $threshold) = @$case;
	create_test_table($min, $table);
	load_rows($min, $table, 1, 6000);
	$min->safe_psql('postgres',
		"SET wal_skip_threshold = '$threshold'; CREATE INDEX ${table}_bloomidx ON $table USING bloomidx (a, b, c, d)");
}
parallel_build($min, 'm_par', 'm_par_bloomidx', 40000);
$min->stop('immediate');
$min->start;
check_index($min, 'm_sync', 'm_sync_bloomidx', 'wal_level minimal, commit fsyncs the file');
check_index($min, 'm_log', 'm_log_bloomidx', 'wal_level minimal, commit logs the pages');
check_index($min, 'm_par', 'm_par_bloomidx', 'wal_level minimal, parallel build');
$min->stop;

# A checkpoint during a parallel build: the build fsyncs the file at its
# end, then a crash; replay starts past the build's WAL.  (fsync on, which
# the test framework turns off, so that the build's fsync is a system call.)
my $node = new_bloomidx_node(
	'checkpoint',
	init    => { allows_streaming => 1 },    # wal_level replica: the build is logged
	helpers => 1,
	conf    => q{
bloomidx.segment_rows = 500
checkpoint_timeout = 1h
max_wal_size = 2GB
fsync = on
});
create_test_table($node, 'c');
load_rows($node, 'c', 1, 300000);
my $bg = $node->background_psql('postgres');
# (The settings echo as LOG lines on this session's stderr: query, not query_safe.)
$bg->query(
	"ALTER TABLE c SET (parallel_workers = 2); SET log_min_messages = debug1; "
	  . "SET max_parallel_maintenance_workers = 2; SET maintenance_work_mem = '256MB'");
my $log_offset = -s $node->logfile;
# The backend's fsync and fdatasync calls, with the paths of their files,
# where strace is installed and may trace another process (Yama's
# ptrace_scope 1, or a container without CAP_SYS_PTRACE, refuses it: the
# check is then skipped, and says why).
my $build_pid = $bg->query_safe('SELECT pg_backend_pid()');
my $strace_out = "${PostgreSQL::Test::Utils::tmp_check}/build_syncs.txt";
my ($strace_in, $strace_err) = ('', '');
my $strace;
my $traced = 0;
if (system('strace -V >/dev/null 2>&1') == 0)
{
	$strace = IPC::Run::start(
		[ 'strace', '-qq', '-y', '-e', 'trace=fsync,fdatasync', '-o', $strace_out, '-p', $build_pid ],
		\$strace_in, \$strace_err);
	# Attached once the kernel shows the backend traced (or strace gave up).
	for (my $i = 0; $i < 100 && $strace->pumpable; $i++)
	{
		$traced = slurp_file("/proc/$build_pid/status") =~ /^TracerPid:\s*[1-9]/m;
		last if $traced;
		usleep(50_000);
	}
}
# Checkpoints every 20 ms for about 6 s from another session, and the
# build meanwhile (well under a second): at least one begins during it.
# The table's load is checkpointed first: a first checkpoint that writes
# it took 0.46 s, began 3 ms before the build and ended after it, and
# none began during it (a CI run on PostgreSQL 17).
$node->safe_psql('postgres', 'CHECKPOINT');
my $cp = $node->background_psql('postgres');
$cp->query_until(qr/looping/,
	"\\echo looping\nDO \$\$ BEGIN FOR i IN 1 .. 300 LOOP CHECKPOINT; PERFORM pg_sleep(0.02); END LOOP; END \$\$;\n");
$bg->query('CREATE INDEX c_bloomidx ON c USING bloomidx (a, b, c, d)');
my $index_file = $bg->query_safe("SELECT pg_relation_filepath('c_bloomidx')");
$bg->quit;
if ($strace)
{
	$strace->signal('INT') if $strace->pumpable;
	$strace->finish;
}
$cp->query('SELECT 1');    # the checkpoints are done
$cp->quit;
my $build_log = slurp_file($node->logfile, $log_offset);
like($build_log, qr/bloomidx index "c_bloomidx": parallel build, 2 of 2 workers launched/,
	'the build ran in parallel');
like($build_log, qr/bloomidx: index "c_bloomidx" fsynced: a checkpoint began while it was built/,
	'the build says it fsynced the index after a checkpoint began during it');
SKIP:
{
	skip "strace cannot trace the backend here: " . ($strace ? $strace_err : 'not installed'), 1
	  unless $traced;
	like(slurp_file($strace_out), qr/^f(?:data)?sync\(\d+<[^>]*\Q$index_file\E>\)\s*=\s*0/m,
		'the building backend fsynced the index\'s file');
}
load_rows($node, 'c', 300001, 301000);
$node->stop('immediate');
$node->start;
check_index($node, 'c', 'c_bloomidx', 'checkpoint during the build, then a crash');

# An unlogged index survives a clean shutdown whole.
$node->safe_psql('postgres',
	"CREATE UNLOGGED TABLE un (id int4, a int4, b int8, c text, d int4)");
load_rows($node, 'un', 1, 6000);
$node->safe_psql('postgres',
	'SET bloomidx.segment_rows = 500; CREATE INDEX un_bloomidx ON un USING bloomidx (a, b, c, d)');
$node->restart;
check_index($node, 'un', 'un_bloomidx', 'unlogged index after a clean restart');
$node->stop;

done_testing();
