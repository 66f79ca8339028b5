
# A crash at each step of a seal, of a merge and of VACUUM's gathering of
# filter groups (src/storage/README.md, "Crashes"):
# bloomidx.debug_seal_stop makes the server stop (PANIC) right after the
# chosen step, and the server restarts from WAL.  After each: no row lost or
# seen twice (index against sequential scan, bloomidx_verify, the index's
# row count against the table's), and the next VACUUM frees exactly the pages
# the interrupted step left behind (a segment written but not published
# after step 2, a seal's pending pages after step 3, nothing else: a merge's
# publish lists the old segments' blocks as free in the same record), after
# which seals and merges carry on.  Past 224 segments, a crash inside the
# publish, after its directory pages are written or switched, likewise.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $node = new_bloomidx_node(
	'steps',
	helpers => 1,
	conf    => q{
restart_after_crash = on
wal_consistency_checking = 'all'
# inserts leave rows pending; the seals below choose 500-row segments
bloomidx.segment_rows = 65024
});

my $seal_gucs = 'SET bloomidx.segment_rows = 500;';
$node->safe_psql('postgres', 'CREATE EXTENSION pageinspect');
create_test_table($node, 't');
load_rows($node, 't', 1, 4000);
$node->safe_psql('postgres',
	"$seal_gucs CREATE INDEX t_bloomidx ON t USING bloomidx (a, b, c, d)");
my $next = 4001;

sub info
{
	return $node->safe_psql('postgres',
		"SELECT segments || ' segments, ' || pending_pages || ' pending pages' FROM bloomidx_index_info('t_bloomidx')"
	);
}

# Runs $sql with the stop at $step set: the server must stop, then come back.
sub crash_at
{
	my ($step, $sql, $label) = @_;
	my $log_offset = -s $node->logfile;
	my ($ret, $stdout, $stderr) = $node->psql('postgres',
		"$seal_gucs SET bloomidx.debug_seal_stop = $step; $sql");
	isnt($ret, 0, "$label: the server stopped") or diag $stdout;
	ok(wait_until_back($node, $log_offset),
		"$label: the server is back");
	like(slurp_file($node->logfile, $log_offset), qr/stopped after seal step $step/,
		"$label: it stopped after step $step");
	return;
}

# The index answers as a sequential scan does and passes bloomidx_verify.
sub check_answers
{
	my ($label) = @_;
	verify_index($node, 't_bloomidx', $label);
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 't',
		index    => 't_bloomidx',
		conds    => random_conditions(fetch_rows($node, 't'), 60),
		label    => $label);
	return;
}

# VACUUM (VERBOSE): the orphans its sweep freed; then the index holds each
# row of the table once.
sub vacuum_frees
{
	my ($label) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', "$seal_gucs VACUUM (VERBOSE) t");
	is($ret, 0, "$label: VACUUM runs") or diag $stderr;
	my ($freed) = $stderr =~ /index "t_bloomidx": pages: \d+ in total, (\d+) newly deleted/;
	ok(defined $freed, "$label: VACUUM VERBOSE reports the index's pages") or diag $stderr;
	is( $node->safe_psql('postgres',
			"SELECT live_rows + pending_rows = (SELECT count(*) FROM t) FROM bloomidx_index_info('t_bloomidx')"
		),
		't',
		"$label: after VACUUM the index holds each row once");
	return $freed // -1;
}

# After a crash: answers right; the next VACUUM frees what the crash left
# behind ($left: whether it left pages: a segment written, not published,
# or a seal's pending pages published away, not yet freed) and nothing
# else; answers still right.
sub after_crash
{
	my ($left, $label) = @_;
	check_answers($label);
	my @before = page_kinds();
	my $listed = unpublished_group_listed(@before);
	my $freed = vacuum_frees($label);
	my @after = page_kinds();
	# Group pages that VACUUM took from their group: made free pages, or
	# free pages then reused by its own seals, merges or gathering, which
	# run after its sweep (a removed segment's own group goes to the free
	# list with its extent, keeping its pages until reused).  Counting only
	# the pages left free made this check fail now and then, when the
	# gathering wrote its group into pages the sweep had just freed.
	my $groups_freed = grep { $before[$_] =~ /^1[12]:/ && ($after[$_] // '') ne $before[$_] } 0 .. $#before;
	if ($left)
	{
		# (A gathering that took its run off the free list left its pages
		# there: free already, nothing for the sweep.)
		ok($freed > 0 || $listed > 0,
			"$label: VACUUM freed the $freed pages left behind, or they were on the free list ($listed)");
	}
	else
	{
		# A merge's publish can leave a filter group no segment names any
		# more (its segments all removed), freed after it: a crash between
		# leaves those pages, and only those, for VACUUM's sweep.  (The
		# VACUUM's own merges free groups too, uncounted by the sweep.)
		cmp_ok($freed, '<=', $groups_freed,
			"$label: nothing was left behind but unnamed filter groups ($freed pages of $groups_freed)");
	}
	check_answers("$label, then VACUUM");
	return;
}

# How many pages of a filter group no publish named (its id the
# directory's next group id: a gathering stopped before its publish) the
# index holds, if every one lies in an extent of the metapage's free list
# (a gathering writes its group in a run it takes off the list where one
# fits: left there, the pages are free already); else 0.  @kinds: as
# page_kinds gives them.
sub unpublished_group_listed
{
	my @kinds = @_;
	my ($next_group) = $node->safe_psql('postgres',
		"SELECT detail FROM bloomidx_page_items('t_bloomidx', 0) WHERE item IS NULL") =~ /next group id (\d+)/;
	my @extents = map { [/first block (\d+), blocks (\d+)/] } split /\n/,
	  $node->safe_psql('postgres',
		"SELECT detail FROM bloomidx_page_items('t_bloomidx', 0) WHERE item_kind = 'free extent'");
	my @orphans = grep { ($kinds[$_] // '') =~ /^1[12]:(\d+)$/ && $1 == $next_group } 0 .. $#kinds;
	for my $b (@orphans)
	{
		return 0 unless grep { $b >= $_->[0] && $b < $_->[0] + $_->[1] } @extents;
	}
	return scalar @orphans;
}

# The kind of every page of t_bloomidx (the special space's flags; 7 a
# free page, 11 and 12 a filter group's header and region pages, these
# two followed by ':' and their group's id), by block.
sub page_kinds
{
	return split /,/, $node->safe_psql(
		'postgres', q{
		SELECT string_agg(CASE WHEN get_byte(p, 8190) = 213 AND get_byte(p, 8191) = 177
		                       THEN (get_byte(p, 8178) + 256 * get_byte(p, 8179))::text
		                            || CASE WHEN get_byte(p, 8178) IN (11, 12) AND get_byte(p, 8179) = 0
		                                    THEN ':' || (get_byte(p, 8186) + 256 * get_byte(p, 8187)
		                                                 + 65536 * get_byte(p, 8188)
		                                                 + 16777216::bigint * get_byte(p, 8189))::text
		                                    ELSE '' END
		                       ELSE '0' END, ',' ORDER BY b)
		FROM generate_series(0, pg_relation_size('t_bloomidx') / 8192 - 1) b,
		     LATERAL (SELECT get_raw_page('t_bloomidx', b::int) AS p) r});
}

# A seal stopped after each step.
for my $step (1 .. 4)
{
	my $label = "seal, crash after step $step";
	load_rows($node, 't', $next, $next + 1499);
	$next += 1500;
	note "$label: before, " . info();
	crash_at($step, "SELECT bloomidx_seal('t_bloomidx')", $label);
	note "$label: after, " . info();
	after_crash($step == 2 || $step == 3, $label);
	is($node->safe_psql('postgres', "$seal_gucs SELECT bloomidx_seal('t_bloomidx') >= 0"),
		't', "$label: a seal runs again");
}

# A seal that keeps its rows' filter keys (format 16: at most a quarter
# of a segment's rows, here of 65,024) stopped after step 2, its segment
# written and not published: its key pages are orphans too, and VACUUM's
# sweep frees them: afterwards every key page in the file is one a
# segment names (bloomidx_verify, in after_crash, checks each against its
# rows).  Fewer than 224 segments: the metapage lists them all.
{
	my $label = 'seal keeping keys, crash after step 2';
	# Key pages in the file, and those the headers of listed segments name
	# (bloomidx_stats counts every page by its kind, orphans too).
	my $key_pages = sub {
		my @kinds = page_kinds();
		my $named = $node->safe_psql('postgres', q{
			WITH e AS (SELECT substring(detail from 'header block (\d+)')::int AS hb
			           FROM bloomidx_page_items('t_bloomidx', 0) WHERE item_kind = 'segment entry')
			SELECT coalesce(sum(coalesce(substring(h.detail from 'key pages (\d+)')::int, 0)), 0)
			FROM e, LATERAL (SELECT detail FROM bloomidx_page_items('t_bloomidx', e.hb)
			                 WHERE item IS NULL LIMIT 1) h});
		return (scalar(grep { $_ eq '13' } @kinds), $named);
	};
	load_rows($node, 't', $next, $next + 499);
	$next += 500;
	crash_at(2, "SET bloomidx.segment_rows = 65024; SELECT bloomidx_seal('t_bloomidx')", $label);
	my ($in_file, $named) = $key_pages->();
	cmp_ok($in_file, '>', $named,
		"$label: the unpublished segment left key pages ($in_file in the file, $named named)");
	after_crash(1, $label);
	($in_file, $named) = $key_pages->();
	is($in_file, $named, "$label: after VACUUM every key page is named by a segment ($in_file)");
}

# A merge (VACUUM's, of segments mostly deleted) stopped after each step.
for my $step (2 .. 4)
{
	my $label = "merge, crash after step $step";
	load_rows($node, 't', $next, $next + 1999);
	$next += 2000;
	$node->safe_psql('postgres', "$seal_gucs SELECT bloomidx_seal('t_bloomidx')");
	$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 10 < 7 AND random() < 0.9');
	note "$label: before, " . info();
	crash_at($step, 'VACUUM t', $label);
	note "$label: after, " . info();
	# The publish lists the old segments' blocks as free in the same record.
	after_crash($step == 2, $label);
}

# VACUUM's gathering of the sealed segments' filter groups into one
# (src/storage/filter_gather.cpp) stopped after each step: the new group
# written (its pages orphans), published (the old groups' pages are), the
# old groups freed.  The seals before it leave groups of one shape, one
# a segment.
for my $step (7 .. 9)
{
	my $label = "gathering of filter groups, crash after step $step";
	load_rows($node, 't', $next, $next + 1499);
	$next += 1500;
	$node->safe_psql('postgres', "$seal_gucs SELECT bloomidx_seal('t_bloomidx')");
	note "$label: before, " . info();
	crash_at($step, "$seal_gucs VACUUM t", $label);
	note "$label: after, " . info();
	after_crash($step == 7 || $step == 8, $label);
}

# Inside a publish that rewrites directory pages (past 224 segments): a
# crash after the new directory pages are written (step 5: they and the
# segment are orphans) and after the record switched to them (step 6: the
# replaced pages are).  Segments of 64 rows make 250 of them (built again
# for each step: VACUUM merges such small segments).
create_test_table($node, 'dp');
load_rows($node, 'dp', 1, 16000);
$node->safe_psql('postgres',
	'CREATE INDEX dp_bloomidx ON dp USING bloomidx (a, b, c, d) WITH (false_positive_rate = 0.05)');
my $dp_next = 16001;
for my $step (5, 6)
{
	my $label = "seal past 224 segments, crash after step $step";
	$node->safe_psql('postgres', 'SET bloomidx.segment_rows = 64; REINDEX INDEX dp_bloomidx');
	load_rows($node, 'dp', $dp_next, $dp_next + 2999);
	$dp_next += 3000;
	my $log_offset = -s $node->logfile;
	my ($ret) = $node->psql('postgres',
		"SET bloomidx.segment_rows = 64; SET bloomidx.debug_seal_stop = $step; "
		  . "SELECT bloomidx_seal('dp_bloomidx')");
	isnt($ret, 0, "$label: the server stopped");
	ok(wait_until_back($node, $log_offset), "$label: the server is back");
	like(slurp_file($node->logfile, $log_offset), qr/stopped after seal step $step/,
		"$label: it stopped after step $step");
	verify_index($node, 'dp_bloomidx', $label);
	compare_index_to_seqscan(
		idx_node => $node,
		seq_node => $node,
		table    => 'dp',
		index    => 'dp_bloomidx',
		conds    => random_conditions(fetch_rows($node, 'dp'), 30),
		label    => $label);
	my ($vret, $vout, $verr) = $node->psql('postgres', 'VACUUM (VERBOSE) dp');
	my ($freed) = $verr =~ /index "dp_bloomidx": pages: \d+ in total, (\d+) newly deleted/;
	ok(defined $freed && $freed > 0, "$label: VACUUM freed the pages left behind ("
		  . ($freed // 'none') . ')') or diag $verr;
	is( $node->safe_psql('postgres',
			"SELECT live_rows + pending_rows = (SELECT count(*) FROM dp) "
			  . "FROM bloomidx_index_info('dp_bloomidx')"),
		't', "$label: after VACUUM the index holds each row once");
	verify_index($node, 'dp_bloomidx', "$label, then VACUUM");
}

# The freed pages are reused or given back: VACUUM truncates the free pages
# that end the index (src/storage/truncate.cpp) and records the others in
# the free space map, where the pending pages of more rows find them
# rather than growing the index.  The map is not WAL-logged: a crash
# forgets what it learned since its pages were last written (which a build
# passing through shared buffers used to force), and a VACUUM finds the
# free pages again, as for core indexes.
my $size_sql = "SELECT pg_relation_size('t_bloomidx') / 8192";
$node->safe_psql('postgres', "$seal_gucs VACUUM t");
my $pages_before = $node->safe_psql('postgres', $size_sql);
# Free pages the free space map has (not those on the metapage's free
# list, which are for segments).
my $free_before = $node->safe_psql('postgres',
	"SELECT count(*) FROM generate_series(1, ($size_sql) - 1) b, "
	  . "LATERAL (SELECT page_kind FROM bloomidx_page_items('t_bloomidx', b::int) LIMIT 1) k "
	  . "WHERE page_kind = 'free'");
cmp_ok($free_before, '>=', 3, "free pages inside the index after VACUUM ($free_before)");
# As many rows as fill all but one of them.
my ($capacity) = $node->safe_psql('postgres',
	"SELECT detail FROM bloomidx_page_items('t_bloomidx', 0) WHERE item IS NULL")
  =~ /pending page capacity (\d+)/;
load_rows($node, 't', $next, $next + ($free_before - 1) * $capacity - 1);
my $pages_loaded = $node->safe_psql('postgres', $size_sql);
# The pending pages that filled may have gained a pending group
# (src/storage/pending_filters.cpp), whose header and region pages the
# file grows by; nothing else may grow it.
my $pending_group_pages = $node->safe_psql('postgres',
	"SELECT count(*) FROM generate_series(1, ($size_sql) - 1) b, "
	  . "LATERAL (SELECT detail FROM bloomidx_page_items('t_bloomidx', b::int) WHERE item IS NULL) k "
	  . "WHERE k.detail LIKE 'pending group %'");
cmp_ok($pages_loaded - $pending_group_pages, '<=', $pages_before,
	"the new rows' pending pages took free pages ($pages_before pages before, $pages_loaded after, "
	  . "$pending_group_pages of pending groups, which may take a free page too)");
$node->safe_psql('postgres', "$seal_gucs SELECT bloomidx_seal('t_bloomidx')");
$node->safe_psql('postgres', "$seal_gucs VACUUM t");
check_answers('at the end');

# An insert's pending filters (src/storage/pending_filters.cpp) stopped
# after step 10: a filled page's region blocks written, its group's header
# not yet naming the slot.  After the restart the index answers as a
# sequential scan does, the next inserts write the slot again and the
# groups cover the pages that filled (a miss reads a few more pages than
# with the list empty, not every pending one), and VACUUM drops the groups
# before it seals their pages.
{
	my $label = 'pending filters, crash after step 10';
	my $insert = sub {
		my ($from, $to) = @_;
		return qq{INSERT INTO t (id, a, b, c, d)
			SELECT i, ((i::int8 * 7919) % 997)::int4, 10000000000 + (i::int8 * 104729) % 4999,
			       'v' || ((i * 31) % 701)::text, i % 13
			FROM generate_series($from, $to) AS i};
	};
	# The Bitmap Index Scan's buffers (under the Bitmap Heap Scan) of a miss.
	my $miss_sql = q{
		SET enable_seqscan = off;
		CREATE FUNCTION pg_temp.index_buffers(q text) RETURNS int LANGUAGE plpgsql AS $$
		DECLARE j json;
		BEGIN
			EXECUTE 'EXPLAIN (ANALYZE, BUFFERS, FORMAT JSON) ' || q INTO j;
			RETURN (j->0->'Plan'->'Plans'->0->>'Shared Hit Blocks')::int
			       + (j->0->'Plan'->'Plans'->0->>'Shared Read Blocks')::int;
		END $$;
		SELECT pg_temp.index_buffers('SELECT * FROM t WHERE a = -1 AND d = -1')};
	my $base = $node->safe_psql('postgres', $miss_sql);
	# Enough full pages for groups (twice a group's pages: about 40 here).
	load_rows($node, 't', $next, $next + 60 * $capacity - 1);
	$next += 60 * $capacity;
	my $log_offset = -s $node->logfile;
	my ($ret) = $node->psql('postgres',
		'SET bloomidx.debug_seal_stop = 10; ' . $insert->($next, $next + 3 * $capacity - 1));
	$next += 3 * $capacity;
	isnt($ret, 0, "$label: the server stopped");
	ok(wait_until_back($node, $log_offset), "$label: the server is back");
	like(slurp_file($node->logfile, $log_offset), qr/stopped after seal step 10/,
		"$label: it stopped after step 10");
	check_answers($label);
	load_rows($node, 't', $next, $next + 10 * $capacity - 1);
	$next += 10 * $capacity;
	check_answers("$label, then more rows");
	my $pending = $node->safe_psql('postgres',
		"SELECT pending_pages FROM bloomidx_index_info('t_bloomidx')");
	my $miss = $node->safe_psql('postgres', $miss_sql);
	cmp_ok($miss - $base, '<', $pending / 4,
		"$label: a miss reads $miss index pages, $base with none pending, with $pending pending");
	# INDEX_CLEANUP ON: the crashed INSERT's rows are dead on few heap
	# pages, which VACUUM would otherwise leave in the index.
	$node->safe_psql('postgres', 'VACUUM (INDEX_CLEANUP ON) t');
	is( $node->safe_psql('postgres',
			"SELECT live_rows + pending_rows = (SELECT count(*) FROM t) FROM bloomidx_index_info('t_bloomidx')"
		),
		't',
		"$label: after VACUUM the index holds each row once");
	check_answers("$label, then VACUUM");
}

done_testing();
