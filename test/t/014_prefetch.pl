
# A scan asks for the index pages it will read ahead of reading them
# (src/support/page.cpp's bloomidx_prefetch_page: PrefetchBuffer, which
# for a page not in shared buffers asks the kernel to read it, with
# posix_fadvise).  Nothing in a query's answer shows it, so strace watches
# the scanning backend's fadvise64 calls right after a restart (shared
# buffers empty):
# - with effective_io_concurrency 1, a query asks for pages of the index's
#   file, the filter groups' and the segments' (more than one call), and
#   none past the file's end; the same query again, its pages now in
#   shared buffers, asks for none;
# - with effective_io_concurrency 0, as core scans take it, not one;
# and the answers, from a cold start with either setting, are those of a
# sequential scan.  Where strace cannot trace another process (Yama's
# ptrace_scope, a container without CAP_SYS_PTRACE), the strace checks
# are skipped and say why; the answers are still compared.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);
use BloomidxTAP;

init_seed();

my $node = new_bloomidx_node('prefetch', helpers => 1,
	conf => "bloomidx.segment_rows = 1000\n");
create_test_table($node, 't');
load_rows($node, 't', 1, 60000);
$node->safe_psql('postgres', 'CREATE INDEX t_bl ON t USING bloomidx (a, b, c, d); VACUUM ANALYZE t');
my $info = $node->safe_psql('postgres',
	"SELECT segments, filtered_segments FROM bloomidx_index_info('t_bl')");
like($info, qr/^(\d+)\|\1$/, "the index has segments, each with filters ($info)");
my $index_file = $node->safe_psql('postgres', "SELECT pg_relation_filepath('t_bl')");
my $index_bytes = $node->safe_psql('postgres', "SELECT pg_relation_size('t_bl')");
my $rows = fetch_rows($node, 't');
# A 2-column hit and a 1-column hit: segments pass the filters, and their
# slices, headers and TID pages are read.
my ($row) = grep { defined $_->[1] && defined $_->[3] } @{$rows}[ 30000 .. $#$rows ];
my ($a, $c) = @{$row}[ 1, 3 ];
my $hit2 = "SELECT count(*) FROM t WHERE a = $a AND c = '$c'";
my $hit1 = "SELECT count(*) FROM t WHERE a = $a";

my $can_trace = system('strace -V >/dev/null 2>&1') == 0;

# Runs $sql in the session $bg (whose backend is $pid) under strace when
# it can attach; returns the query's output and the index file's fadvise64
# calls as [offset, length] (undef when not traced, with why).
sub traced_query
{
	my ($bg, $pid, $sql) = @_;
	my $out = "${PostgreSQL::Test::Utils::tmp_check}/prefetch_${pid}_" . int(rand(1e9)) . '.txt';
	my ($in, $err) = ('', '');
	my ($strace, $traced);
	if ($can_trace)
	{
		$strace = IPC::Run::start(
			[ 'strace', '-qq', '-y', '-e', 'trace=fadvise64', '-o', $out, '-p', $pid ],
			\$in, \$err);
		for (my $i = 0; $i < 100 && $strace->pumpable; $i++)
		{
			$traced = slurp_file("/proc/$pid/status") =~ /^TracerPid:\s*[1-9]/m;
			last if $traced;
			usleep(50_000);
		}
	}
	my $result = $bg->query_safe($sql);
	if ($strace)
	{
		$strace->signal('INT') if $strace->pumpable;
		$strace->finish;
	}
	return ($result, undef, $can_trace ? "strace could not attach: $err" : 'strace is not installed')
	  unless $traced;
	my @calls;
	for my $line (split /\n/, slurp_file($out))
	{
		push @calls, [ $1, $2 ]
		  if $line =~ /^fadvise64\(\d+<[^>]*\Q$index_file\E>, (\d+), (\d+), POSIX_FADV_WILLNEED\)/;
	}
	return ($result, \@calls, '');
}

# Restarts the node (shared buffers empty) and opens a session with
# $setting: the session and its backend's pid.
sub cold_session
{
	my ($setting) = @_;
	$node->restart;
	my $bg = $node->background_psql('postgres');
	$bg->query_safe("SET enable_seqscan = off; SET $setting");
	return ($bg, $bg->query_safe('SELECT pg_backend_pid()'));
}

my $expected2 = $node->safe_psql('postgres', "SET enable_bitmapscan = off; SET enable_indexscan = off; $hit2");
my $expected1 = $node->safe_psql('postgres', "SET enable_bitmapscan = off; SET enable_indexscan = off; $hit1");
cmp_ok($expected2, '>', 0, "the 2-column query has rows ($expected2)");

for my $q ([ $hit2, $expected2, '2-column hit' ], [ $hit1, $expected1, '1-column hit' ])
{
	my ($sql, $expected, $label) = @$q;
	my ($bg, $pid) = cold_session('effective_io_concurrency = 1');
	my ($result, $calls, $why) = traced_query($bg, $pid, $sql);
	is($result, $expected, "$label from a cold start, prefetching: the sequential scan's count");
	SKIP:
	{
		skip $why, 2 unless $calls;
		cmp_ok(scalar(@$calls), '>', 1,
			"$label: the scan asked for index pages ahead (" . scalar(@$calls) . ' fadvise calls)');
		my @past = grep { $_->[0] + $_->[1] > $index_bytes } @$calls;
		is(scalar(@past), 0, "$label: none past the index's end ($index_bytes bytes)");
	}
	# The same query again, its pages now in shared buffers: a scan that
	# meets no page outside them asks for none.
	($result, $calls, $why) = traced_query($bg, $pid, $sql);
	is($result, $expected, "$label again, warm: the sequential scan's count");
	SKIP:
	{
		skip $why, 1 unless $calls;
		is(scalar(@$calls), 0, "$label again, warm: no index page asked for ahead");
	}
	$bg->quit;
	($bg, $pid) = cold_session('effective_io_concurrency = 0');
	($result, $calls, $why) = traced_query($bg, $pid, $sql);
	$bg->quit;
	is($result, $expected, "$label from a cold start, effective_io_concurrency 0: the sequential scan's count");
	SKIP:
	{
		skip $why, 1 unless $calls;
		is(scalar(@$calls), 0, "$label: effective_io_concurrency 0 asks for no index page ahead");
	}
}

# Random queries from cold starts with either setting: the index's answers
# are a sequential scan's.
for my $setting ('effective_io_concurrency = 1', 'effective_io_concurrency = 0')
{
	$node->restart;
	$node->safe_psql('postgres', "ALTER SYSTEM SET $setting");
	$node->restart;
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 't',
		index    => 't_bl',
		conds    => random_conditions($rows, 80),
		label    => "from a cold start, $setting");
}
$node->stop;
done_testing();
