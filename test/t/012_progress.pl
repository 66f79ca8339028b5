
# The progress of a build in pg_stat_progress_create_index (src/bloomidx.h,
# BuildPhase): one session builds a bloomidx index on a table of a few
# million rows while another polls the view every millisecond or so and
# keeps every change it sees.  A serial CREATE INDEX CONCURRENTLY, then a
# REINDEX over two workers, each checked for:
# - its phases in order, each bloomidx step named ("building index:
#   scanning table" ...), the table scan and, in the parallel build, the
#   seal of what the participants left pending seen;
# - blocks and tuples never past their totals, never going back within a
#   step, the scan's blocks total the table's, its blocks done reaching it;
# - the index then answering as a sequential scan does.
# The seal is seen for certain: the poller holds the advisory lock that
# bloomidx.debug_pause_at = 'seal_marked' makes the seal wait on, and lets
# it go once it has seen the step.  Each poll is a transaction of its own:
# it sees fresh statistics, and holds no snapshot that CREATE INDEX
# CONCURRENTLY would wait for.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $nrows = 1_000_000;
my $node = new_bloomidx_node('progress', helpers => 1);
create_test_table($node, 't');
load_rows($node, 't', 1, $nrows);
my $table_blocks = $node->safe_psql('postgres',
	"SELECT pg_relation_size('t') / current_setting('block_size')::int");

# Rows of the table to take query values from (fetch_rows reads a table whole).
$node->safe_psql('postgres', 'CREATE TABLE sample AS SELECT * FROM t WHERE id % 1000 = 7');
my $sample = fetch_rows($node, 'sample');

$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE progress_seen (
    n serial, run text, command text, phase text, phase_n bigint, subphase_n bigint,
    blocks_total bigint, blocks_done bigint, tuples_total bigint, tuples_done bigint);

-- Polls the progress of the build on tbl until it ends, keeping each
-- change of it in progress_seen; at phase release_at, lets go of the
-- session's advisory locks (and after 20 s without a change, so that a
-- build that never gets there does not wait forever).
CREATE PROCEDURE watch_build(run text, tbl regclass, release_at text)
LANGUAGE plpgsql AS $$
DECLARE
    r record;
    cur text;
    last text;
    seen bool := false;
    started timestamptz := clock_timestamp();
    changed timestamptz := clock_timestamp();
BEGIN
    WHILE clock_timestamp() - started < interval '3 minutes' LOOP
        SELECT v.command, v.phase, s.param10 AS phase_n, s.param11 AS subphase_n,
               v.blocks_total, v.blocks_done, v.tuples_total, v.tuples_done
          INTO r
          FROM pg_stat_progress_create_index v
          JOIN pg_stat_get_progress_info('CREATE INDEX') s USING (pid)
         WHERE v.relid = tbl;
        IF FOUND THEN
            seen := true;
            cur := concat_ws('|', r.command, r.phase, r.phase_n, r.subphase_n, r.blocks_total,
                             r.blocks_done, r.tuples_total, r.tuples_done);
            IF cur IS DISTINCT FROM last THEN
                INSERT INTO progress_seen (run, command, phase, phase_n, subphase_n, blocks_total,
                                           blocks_done, tuples_total, tuples_done)
                VALUES (run, r.command, r.phase, r.phase_n, r.subphase_n, r.blocks_total,
                        r.blocks_done, r.tuples_total, r.tuples_done);
                last := cur;
                changed := clock_timestamp();
            END IF;
            IF r.phase = release_at OR clock_timestamp() - changed > interval '20 s' THEN
                PERFORM pg_advisory_unlock_all();
            END IF;
        ELSIF seen THEN
            EXIT;
        END IF;
        COMMIT;
        PERFORM pg_sleep(0.001);
    END LOOP;
    PERFORM pg_advisory_unlock_all();
END
$$;
});

my @BLOOMIDX_STEPS = (
	'initializing',      'scanning table',
	'writing last rows', 'syncing and writing directory',
	'sealing pending rows');

# Runs $build_sql while a second session watches it; returns the build's
# stderr (its DEBUG1 messages) and the changes seen, in order, as hashes.
sub watch
{
	my ($run, $build_sql, $release_at) = @_;
	my $poller = $node->background_psql('postgres');
	$poller->query_safe('SET synchronous_commit = off');
	$poller->query_safe('SELECT pg_advisory_lock(4242)') if $release_at;
	$poller->query_until(qr/polling/,
		"\\echo polling\nCALL watch_build('$run', 't', '" . ($release_at // '') . "');\n");
	my ($ret, $out, $err) =
	  $node->psql('postgres', $build_sql, timeout => $PostgreSQL::Test::Utils::timeout_default);
	is($ret, 0, "$run: the build ran") or diag $err;
	$poller->query('SELECT 1');    # the poller saw the build end
	$poller->quit;

	my @seen;
	for my $line (split /\n/,
		$node->safe_psql('postgres',
			"SELECT command, phase, phase_n, subphase_n, blocks_total, blocks_done, tuples_total, tuples_done "
			  . "FROM progress_seen WHERE run = '$run' ORDER BY n"))
	{
		my %s;
		@s{qw(command phase phase_n subphase_n blocks_total blocks_done tuples_total tuples_done)} =
		  split /\|/, $line, -1;
		push @seen, \%s;
	}
	note "$run: " . scalar(@seen) . " changes seen";
	return ($err, \@seen);
}

# The checks every build's progress passes; returns the changes seen in
# each bloomidx step, by name.  PostgreSQL's table scan reports its first
# block as every block done (heapam_scan_get_blocks_done counts from the
# start block up to the current one, round the end of the table when they
# are the same), then 1, 2 ... : what it shows for that block is left out.
sub check_progress
{
	my ($run, $command, $seen) = @_;
	my (%steps, @problems);
	my $prev;
	ok(@$seen > 0, "$run: its progress was seen");
	for my $s (@$seen)
	{
		next
		  if $s->{phase} eq 'building index: scanning table'
		  && $s->{blocks_total} > 0
		  && $s->{blocks_done} == $s->{blocks_total};
		push @problems, "command $s->{command}" if $s->{command} ne $command;
		push @problems, "phase ($s->{phase_n}, $s->{subphase_n}) after ($prev->{phase_n}, $prev->{subphase_n})"
		  if $prev
		  && ($s->{phase_n} < $prev->{phase_n}
			|| ($s->{phase_n} == $prev->{phase_n} && $s->{subphase_n} < $prev->{subphase_n}));
		if ($s->{phase_n} == 2)    # building index: the access method's steps
		{
			my ($name) = $s->{phase} =~ /^building index: (.+)$/;
			if (!defined $name || !grep { $_ eq $name } @BLOOMIDX_STEPS)
			{
				push @problems, "unnamed step: '$s->{phase}' ($s->{subphase_n})";
				$name = '?';
			}
			push @{ $steps{$name} }, $s;
			for my $what ('blocks', 'tuples')
			{
				my ($done, $total) = ($s->{"${what}_done"}, $s->{"${what}_total"});
				push @problems, "$s->{phase}: $what done $done of $total" if $done > $total;
				next unless $prev && $prev->{phase} eq $s->{phase};
				for my $count ("${what}_total", "${what}_done")
				{
					push @problems, "$s->{phase}: $count from $prev->{$count} back to $s->{$count}"
					  if $s->{$count} < $prev->{$count};
				}
			}
		}
		$prev = $s;
	}
	splice(@problems, 20, @problems - 20, '...') if @problems > 20;
	is(join("\n", @problems), '',
		"$run: phases in order, bloomidx steps named, counts within their totals and never going back");
	note "$run: steps seen: " . join(', ', map { "$_ (" . scalar(@{ $steps{$_} }) . ")" }
		  grep { $steps{$_} } @BLOOMIDX_STEPS);

	my $scan = $steps{'scanning table'} // [];
	ok(@$scan > 0, "$run: the table scan was seen");
	my ($total) = map { $_->{blocks_total} } grep { $_->{blocks_total} > 0 } @$scan;
	my $done = (sort { $b <=> $a } map { $_->{blocks_done} } @$scan)[0] // 0;
	is($total, $table_blocks, "$run: the scan's blocks total is the table's $table_blocks blocks");
	cmp_ok($done, '>=', 0.9 * $table_blocks,
		"$run: the scan's blocks done reached $done, 90% of the table's or more");
	ok(!(grep { $_->{tuples_total} != 0 || $_->{tuples_done} != 0 } @$scan),
		"$run: the scan shows no tuple counts");
	return \%steps;
}

sub check_answers
{
	my ($label) = @_;
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 't',
		index    => 't_bloomidx',
		conds    => [ @{ random_conditions($sample, full_or_quick(10, 4)) }, @{ combo_conditions($sample) } ],
		label    => $label);
	return;
}

# A serial CREATE INDEX CONCURRENTLY.  Its short steps after the scan are
# checked when the poller caught them.
my ($err, $seen) = watch('serial',
	"SET client_min_messages = debug1; SET max_parallel_maintenance_workers = 0; "
	  . "CREATE INDEX CONCURRENTLY t_bloomidx ON t USING bloomidx (a, b, c, d)");
unlike($err, qr/parallel build/, 'serial: the build ran in one process');
my $steps = check_progress('serial', 'CREATE INDEX CONCURRENTLY', $seen);
ok(!$steps->{'sealing pending rows'}, 'serial: nothing sealed (a serial build leaves no rows to seal)');
for my $s (@{ $steps->{'writing last rows'} // [] })
{
	is($s->{tuples_total}, $nrows, "serial: writing last rows: tuples total is the table's $nrows rows");
}
for my $s (@{ $steps->{'syncing and writing directory'} // [] })
{
	is("$s->{tuples_total} $s->{tuples_done}", "$nrows $nrows",
		'serial: syncing and writing directory: every row written');
}
check_answers('after a serial CREATE INDEX CONCURRENTLY');

# A REINDEX over two workers and the leader.  Segments of 16,384 rows leave
# each participant's last rows pending (fewer than a segment's slices' worth
# of pending pages: build.cpp), so that the leader seals them: segments of
# format 13's layout (bloomidx.debug_unpacked_slices), as packed ones take
# a participant's last rows once they fill a few pages.
$node->safe_psql('postgres', 'ALTER TABLE t SET (parallel_workers = 2)');
($err, $seen) = watch(
	'parallel',
	"SET client_min_messages = debug1; SET max_parallel_maintenance_workers = 2; "
	  . "SET maintenance_work_mem = '256MB'; SET bloomidx.segment_rows = 16384; "
	  . "SET bloomidx.debug_unpacked_slices = 1; "
	  . "SET bloomidx.debug_pause_at = 'seal_marked'; REINDEX INDEX t_bloomidx",
	'building index: sealing pending rows');
like($err, qr/bloomidx index "t_bloomidx": parallel build, 2 of 2 workers launched, leader participating/,
	'parallel: the build ran over the leader and 2 workers');
$steps = check_progress('parallel', 'REINDEX', $seen);
# How the heap scan splits between the participants decides whether they
# leave enough pending rows for the leader's seal (build.cpp's tail rule;
# on a loaded machine one participant may get most of the blocks).
my $seal = $steps->{'sealing pending rows'} // [];
my ($left, $left_pages) = split /\|/, $node->safe_psql('postgres',
	"SELECT pending_rows, pending_pages FROM bloomidx_index_info('t_bloomidx')");
# The seal takes only rows past the list's tail, and at least the tail
# rule's minimum: the step may run and find too few.  Either way less than
# a segment's rows stay pending.
if (@$seal)
{
	my $pending = $seal->[0]{tuples_total} // 0;
	cmp_ok($pending, '>', 0, 'parallel: the seal has rows to seal');
	note "parallel: of the $pending rows left pending, the seal took all but $left";
}
else
{
	note "parallel: the participants left too few rows to seal ($left rows on $left_pages pages)";
}
cmp_ok($left, '<', 16384, 'parallel: less than a segment of rows stayed pending');
for my $s (@{ $steps->{'syncing and writing directory'} // [] })
{
	is("$s->{tuples_total} $s->{tuples_done}", "$nrows $nrows",
		'parallel: syncing and writing directory: every row written');
}
check_answers('after a parallel REINDEX');

$node->stop;
done_testing();
