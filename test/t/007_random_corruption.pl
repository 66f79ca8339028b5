
# Random damage to index pages on disk: bytes of the page headers, the
# metapage, the special space and the signature/TID area of several small
# bloomidx indexes are overwritten with random values (hundreds of positions
# over many rounds, each round starting from the pristine files).  Every
# query through a damaged index (forced Bitmap Index Scan), every VACUUM,
# every bloomidx_verify, bloomidx_stats and bloomidx_page_items of each
# page must then either succeed -- a query with exactly the rows a
# sequential scan finds -- or fail with
#   XX002 (ERRCODE_INDEX_CORRUPTED) naming the index (and a block or a heap
#         tuple), or
#   XX001 (ERRCODE_DATA_CORRUPTED) naming a block of the index's file: the
#         cluster has data checksums, so damaged pages mostly fail their
#         checksum before bloomidx sees them.
# Anything else fails the test: another SQLSTATE, a wrong answer, a backend
# crash or assertion failure, a hang (statement_timeout).
#
# Half of the rounds run with ignore_checksum_failure = on, so that the
# damaged bytes reach bloomidx's own checks: page structure, the metapage's
# options check, and the entry sums of each data page (the sums of its
# signatures and of its TIDs, page_layout.hpp), which turn a cleared
# signature bit or a changed TID into XX002.  The one thing allowed to give
# a wrong answer is damage those sums cannot see: several changed bytes
# whose changes cancel mod 2^16 (about 1 damaged page in 3,000; the test
# recomputes the sums to tell).  Such answers are counted apart; any other
# wrong answer fails.
use strict;
use warnings;

use File::Copy;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $ROUNDS = full_or_quick(40, 12);    # server starts; every round damages every index
my $NTABLES = 4;
my $BLCKSZ = 8192;
my $SPECIAL = $BLCKSZ - 16;

my $node = new_bloomidx_node(
	'random_corruption',
	init => { extra => ['--data-checksums'] },
	conf => "shared_buffers = 16MB\nrestart_after_crash = off\n");
is($node->safe_psql('postgres', 'SHOW data_checksums'), 'on', 'data checksums are on');
is($node->safe_psql('postgres', 'SHOW block_size'), $BLCKSZ, 'block size is 8 kB');

# Small tables, a few index pages each, with dead rows so that VACUUM has
# index entries to delete.
my @tabs;
for my $i (1 .. $NTABLES)
{
	my $t = "r$i";
	create_test_table($node, $t);
	load_rows($node, $t, $i * 10000, $i * 10000 + 1500 + 300 * $i);
	$node->safe_psql('postgres',
		"CREATE INDEX ${t}_bl ON $t USING bloomidx (a, b, c, d); "
		  . "DELETE FROM $t WHERE id % 10 = 0; ANALYZE $t;");
	push @tabs, { table => $t, index => "${t}_bl" };
}
$node->safe_psql('postgres', 'CHECKPOINT');

for my $tab (@tabs)
{
	my ($t, $idx) = @$tab{qw(table index)};
	verify_index($node, $idx, "pristine $idx");
	$tab->{idxpath} = $node->safe_psql('postgres', "SELECT pg_relation_filepath('$idx')");
	$tab->{heappath} = $node->safe_psql('postgres', "SELECT pg_relation_filepath('$t')");
	$tab->{npages} = $node->safe_psql('postgres', "SELECT pg_relation_size('$idx') / $BLCKSZ");
	cmp_ok($tab->{npages}, '>=', 3, "$idx has $tab->{npages} pages");
	# Queries with their answers from a sequential scan.
	my $rows = fetch_rows($node, $t);
	my @conds = (@{ random_conditions($rows, 3) }, @{ combo_conditions($rows) }[ 2, 14 ]);
	for my $c (@conds)
	{
		my $q = "SELECT count(*), md5(coalesce(string_agg(id::text, ',' ORDER BY id), '')) FROM $t WHERE $c";
		my $plan = $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS EXPLAIN (COSTS OFF) $q");
		like($plan, qr/Bitmap Index Scan on \Q$idx\E\b/, "$idx: [$c] goes through the index");
		push @{ $tab->{queries} },
		  { sql => $q, expected => $node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $q"), cond => $c };
	}
}

$node->stop;

# The pristine files of every index and table (all forks and segments).
my $pgdata = $node->data_dir;
my $saved = PostgreSQL::Test::Utils::tempdir();
sub rel_files
{
	my ($path) = @_;
	opendir my $dh, "$pgdata/" . ($path =~ s{/[^/]+$}{}r) or die $!;
	my $base = $path =~ s{.*/}{}r;
	my @f = map { ($path =~ s{[^/]+$}{}r) . $_ } grep { /^\Q$base\E(?:_\w+)?(?:\.\d+)?$/ } readdir $dh;
	closedir $dh;
	return @f;
}
for my $tab (@tabs)
{
	for my $key (qw(idxpath heappath))
	{
		my @files = rel_files($tab->{$key});
		$tab->{"${key}_files"} = \@files;
		for my $f (@files)
		{
			(my $flat = $f) =~ s{/}{_}g;
			copy("$pgdata/$f", "$saved/$flat") or die "copy $f: $!";
		}
	}
	open my $fh, '<:raw', "$pgdata/$tab->{idxpath}" or die $!;
	local $/;
	$tab->{pristine} = <$fh>;
	close $fh;
}

sub restore_files
{
	my ($tab) = @_;
	for my $key (qw(idxpath heappath))
	{
		# forks created since (a VACUUM's visibility map, ...) go away
		my %keep = map { $_ => 1 } @{ $tab->{"${key}_files"} };
		unlink "$pgdata/$_" for grep { !$keep{$_} } rel_files($tab->{$key});
		for my $f (@{ $tab->{"${key}_files"} })
		{
			(my $flat = $f) =~ s{/}{_}g;
			copy("$saved/$flat", "$pgdata/$f") or die "restore $f: $!";
		}
	}
	return;
}

# Whether every data page in @pages still has entry sums that match its
# entries (as src/core/page_layout.cpp computes them): damage there that
# bloomidx cannot see.
sub sums_still_match
{
	my ($bytes, @pages) = @_;
	my $sig_bytes = unpack('v', substr($bytes, 24 + 12, 2));    # metapage: signature_bytes
	for my $page (@pages)
	{
		my $p = substr($bytes, $page * $BLCKSZ, $BLCKSZ);
		my $count = unpack('v', substr($p, $SPECIAL, 2));
		return 0 if 24 + $count * ($sig_bytes + 6) > $SPECIAL;
		my ($sig, $tid) = (0, 0);
		$sig += $_ for unpack('v*', substr($p, 24, $count * $sig_bytes));
		$tid += $_ for unpack('v*', substr($p, $SPECIAL - 6 * $count, 6 * $count));
		my $stored = unpack('V', substr($p, $SPECIAL + 6, 4));    # signature sum, TID sum
		return 0 if $sig % 65536 != ($stored & 0xFFFF) || $tid % 65536 != ($stored >> 16);
	}
	return 1;
}

# Damage: 1-4 bytes in one region of the file, random values.  Returns the
# description, how many bytes changed, and whether every changed byte lies
# in the entries of data pages whose entry sums still match (damage only
# luck can hide).
my @REGIONS = qw(header metapage special entries anywhere);
sub damage
{
	my ($tab, $ignore_checksums) = @_;
	my $bytes = $tab->{pristine};
	my $size = length $bytes;
	my $npages = $size / $BLCKSZ;
	my $region = $REGIONS[ int(rand(@REGIONS)) ];
	my $n = 1 + int(rand(4));
	my ($changed, $entry_area) = (0, 1);
	my (@where, %pages);
	for (1 .. $n)
	{
		my $off;
		my $page = int(rand($npages));
		if ($region eq 'header') { $off = $page * $BLCKSZ + int(rand(24)); }
		elsif ($region eq 'metapage') { $off = 24 + int(rand(40)); }
		elsif ($region eq 'special') { $off = $page * $BLCKSZ + $SPECIAL + int(rand(16)); }
		elsif ($region eq 'entries')
		{
			$page = 1 + int(rand($npages - 1));
			$off = $page * $BLCKSZ + 24 + int(rand($SPECIAL - 24));
		}
		else { $off = int(rand($size)); }
		# A page LSN from the future makes the shutdown checkpoint fail to
		# flush WAL that far once a VACUUM has dirtied the (ignored-checksum)
		# page: that is PostgreSQL's own rule, not bloomidx's; leave it.
		next if $ignore_checksums && $off % $BLCKSZ < 8;
		my $v = int(rand(256));
		push @where, sprintf('%d:%d=0x%02x', int($off / $BLCKSZ), $off % $BLCKSZ, $v);
		next if ord(substr($bytes, $off, 1)) == $v;
		substr($bytes, $off, 1) = chr($v);
		$changed++;
		my $in_page = $off % $BLCKSZ;
		$entry_area = 0 unless $off >= $BLCKSZ && $in_page >= 24 && $in_page < $SPECIAL;
		$pages{ int($off / $BLCKSZ) } = 1;
	}
	my $unseen = $changed > 0 && $entry_area && sums_still_match($bytes, keys %pages);
	open my $fh, '>:raw', "$pgdata/$tab->{idxpath}" or die $!;
	print $fh $bytes;
	close $fh or die $!;
	return ("$region [@where]", $changed, $unseen);
}

my %count = (correct => 0, XX002 => 0, XX001 => 0, 'wrong, damage the entry sums cannot see' => 0);
my ($bad, $statements) = (0, 0);
my $log_pos = -s $node->logfile;
my $running = 0;

# The statements of one damaged index, each in a backend of its own (a
# fresh session reads the damaged pages cold), through one psql that
# reconnects between them (a psql per statement made this test spend most
# of its time starting psql).  Markers on both output streams tell whose
# output and errors are whose; a statement after which psql lost its
# server (it then stops) is a crash.  Returns [ok, output, errors] per
# statement, ok undef for one psql never reached.
sub run_statements
{
	my ($ignore, @sqls) = @_;
	my $gucs = "SET statement_timeout = '30s';"
	  . ($ignore ? ' SET ignore_checksum_failure = on;' : '');
	my $script = "\\set VERBOSITY verbose\n";
	for my $i (0 .. $#sqls)
	{
		$script .= "\\connect\n" if $i > 0;
		$script .= "\\qecho \@\@$i\n\\warn \@\@$i\n$gucs\n$sqls[$i];\n";
	}
	my ($ret, $out, $err) = $node->psql('postgres', $script, on_error_stop => 0);
	my (%out, %err);
	for my $stream ([ $out, \%out ], [ $err, \%err ])
	{
		my @parts = split /^\@\@(\d+)\n?/m, $stream->[0];
		shift @parts;
		while (my ($i, $text) = splice(@parts, 0, 2))
		{
			$stream->[1]{$i} = $text // '';
			chomp $stream->[1]{$i};
		}
	}
	my @res;
	for my $i (0 .. $#sqls)
	{
		if (!exists $out{$i} || !exists $err{$i}) { push @res, [ undef, '', '' ]; next; }
		my $lost = $err{$i} =~ /server closed the connection|connection to server .*lost|no connection to the server|^(?:psql:\S+ )?(?:FATAL|PANIC):/m
		  || ($ret != 0 && $i == $#sqls && $err{$i} !~ /ERROR:/);
		my $ok = !$lost && $err{$i} !~ /^(?:psql:\S+ )?ERROR:/m;
		push @res, [ $ok ? 1 : $lost ? -1 : 0, $out{$i}, $err{$i} ];
	}
	return @res;
}

# One statement's outcome: success (with $expected output if given) or an
# accepted error.  Counts the outcome; reports the rest.
sub check_statement
{
	my ($tab, $what, $res, $expected, $ignore, $unseen, $damage) = @_;
	my ($ok, $out, $err) = @$res;
	$statements++;
	my $idx = $tab->{index};
	my $why;
	if (!defined $ok)
	{
		$why = 'not run: psql stopped after an earlier statement lost its server';
	}
	elsif ($ok == 1)
	{
		if (!defined $expected || $out eq $expected) { $count{correct}++; return; }
		if ($ignore && $unseen)
		{
			$count{'wrong, damage the entry sums cannot see'}++;
			return;
		}
		$why = "wrong answer: got [$out], expected [$expected]";
	}
	elsif ($ok == 0 && $err =~ /^(?:psql:\S+ )?ERROR:  (\w{5}): (.*)$/m)
	{
		my ($state, $msg) = ($1, $2);
		my ($detail) = $err =~ /^(?:psql:\S+ )?DETAIL:  (.*)$/m;
		$detail //= '';
		# (A damaged format version reads as an index of another format,
		# which is an error naming the index and saying to REINDEX.)
		if ($state eq 'XX002' && $msg =~ /index "\Q$idx\E"/
			&& ("$msg $detail" =~ /\bblock \d+/ || $msg =~ /heap tuple \(\d+,\d+\)/
				|| $msg =~ /has on-disk format version \d+, (?:older|newer) than/))
		{
			$count{XX002}++;
			return;
		}
		# (PostgreSQL 18 quotes the relation's path in the first message.)
		if ($state eq 'XX001'
			&& $msg =~ /(?:invalid page in block \d+ of relation "?|could not read block \d+ in file ")\Q$tab->{idxpath}\E\b/)
		{
			$count{XX001}++;
			return;
		}
		$why = "unexpected error: $state: $msg" . ($detail ne '' ? " DETAIL: $detail" : '');
	}
	else
	{
		$why = "crash or lost connection: $err";
	}
	$bad++;
	diag "$idx, $what after damage $damage"
	  . ($ignore ? ' (ignore_checksum_failure)' : '') . ": $why"
	  if $bad <= 15;
	return;
}

for my $round (1 .. $ROUNDS)
{
	my $ignore = $round % 2 == 0;
	my @damage;
	for my $tab (@tabs)
	{
		restore_files($tab);
		push @damage, [ damage($tab, $ignore) ];
	}
	$node->start;
	$running = 1;
	for my $i (0 .. $#tabs)
	{
		my $tab = $tabs[$i];
		my ($desc, $changed, $unseen) = @{ $damage[$i] };
		note "round $round: $tab->{index}: $desc" . ($ignore ? ' (ignore_checksum_failure)' : '');
		# The queries, a VACUUM, bloomidx_verify, and the first query again
		# after the VACUUM: whatever VACUUM did or did not do to the damaged
		# index, answers stay right or errors stay clean.
		my $q0 = $tab->{queries}[0];
		my @checks = (
			(map { [ "query [$_->{cond}]", "$BloomidxTAP::INDEX_GUCS $_->{sql}", $_->{expected} ] }
				  @{ $tab->{queries} }),
			[ 'VACUUM', "VACUUM $tab->{table}", undef ],
			[ 'bloomidx_verify', "SELECT bloomidx_verify('$tab->{index}')", undef ],
			[ 'bloomidx_stats', "SELECT * FROM bloomidx_stats('$tab->{index}')", undef ],
			[
				'bloomidx_page_items of every page',
				"SELECT count(*) FROM generate_series(0, $tab->{npages} - 1) b, "
				  . "bloomidx_page_items('$tab->{index}', b)",
				undef
			],
			[ "query after VACUUM [$q0->{cond}]", "$BloomidxTAP::INDEX_GUCS $q0->{sql}", $q0->{expected} ]);
		my @res = run_statements($ignore, map { $_->[1] } @checks);
		for my $j (0 .. $#checks)
		{
			check_statement($tab, $checks[$j][0], $res[$j], $checks[$j][2], $ignore, $unseen, $desc);
		}
	}
	# The server is up and no backend died.
	my ($ret, $out) = $node->psql('postgres', 'SELECT 1');
	my $log = slurp_file($node->logfile);
	my $new = substr($log, $log_pos);
	$log_pos = length $log;
	if ($ret != 0 || $out ne '1'
		|| $new =~ /(terminated by signal|exited with exit code [2-9]|TRAP:|PANIC:|terminating any other active server processes)/)
	{
		$bad++;
		diag "round $round: the server is not fine: " . ($1 // "SELECT 1 gave ret $ret");
		last;
	}
	$node->stop;
	$running = 0;
}

my $summary = join(', ', map { "$_: $count{$_}" } sort keys %count);
note "outcomes of $statements statements: $summary";
diag "outcomes of $statements statements: $summary";
is($bad, 0, "every statement after damage gave the right answer or raised XX002/XX001 naming the index ($statements statements)");
cmp_ok($count{XX001}, '>', 0, 'page checksums caught damage');
cmp_ok($count{XX002}, '>', 0, 'bloomidx caught damage the checksums were told to ignore');
cmp_ok($count{correct}, '>', 0, 'some statements succeeded');

# Pristine again: everything verifies and answers right.
for my $tab (@tabs) { restore_files($tab); }
$node->stop if $running;
$node->start;
for my $tab (@tabs)
{
	verify_index($node, $tab->{index}, "$tab->{index} restored");
	my $q = $tab->{queries}[0];
	is($node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $q->{sql}"),
		$q->{expected}, "$tab->{index} restored: the index answers right");
}
$node->stop;
done_testing();
