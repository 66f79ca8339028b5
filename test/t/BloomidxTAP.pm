
# Shared code of the bloomidx TAP tests (test/t/*.pl): the test table, its
# data, and the checks that compare what a bloomidx index finds (forced
# Bitmap Index Scan, verified with EXPLAIN) against a sequential scan.
package BloomidxTAP;

use strict;
use warnings;

use Exporter 'import';
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use IPC::Run;
use Time::HiRes qw(usleep);

our @EXPORT = qw(
  init_seed
  wait_until_back
  full_or_quick
  new_bloomidx_node
  new_streaming_standby
  parallel_build
  workload_writes
  verify_index
  create_test_table
  load_rows
  install_helpers
  fetch_rows
  random_conditions
  combo_conditions
  compare_index_to_seqscan
  check_every_row_found
  table_digest
);

# The test tables all have this shape: id identifies a row (not indexed, so
# that no other index competes with bloomidx), a..d are indexed.
our @COLUMNS = (
	{ name => 'a', type => 'int4' },
	{ name => 'b', type => 'int8' },
	{ name => 'c', type => 'text' },
	{ name => 'd', type => 'int4' },);

# Session settings that leave a Bitmap Index Scan as the only sane plan for
# an equality on indexed columns, and the ones for the reference plan.
our $INDEX_GUCS =
  "SET enable_seqscan = off; SET enable_indexscan = off; SET enable_indexonlyscan = off; "
  . "SET enable_tidscan = off; SET enable_bitmapscan = on;";
our $SEQ_GUCS =
  "SET enable_seqscan = on; SET enable_indexscan = off; SET enable_indexonlyscan = off; "
  . "SET enable_tidscan = off; SET enable_bitmapscan = off;";

my $seed;

# Seed Perl's RNG from BLOOMIDX_TAP_SEED, or from the clock.  The seed is
# printed at the end of a failing test so that the run can be repeated.
# $full, or $quick when BLOOMIDX_TAP_QUICK=1: test/run-tests.sh runs the
# TAP tests shorter (fewer rounds, a shorter soak) on every PostgreSQL
# version of a run, to keep the whole suite short; BLOOMIDX_TAP_QUICK=0
# runs them at full length.
sub full_or_quick
{
	my ($full, $quick) = @_;
	return ($ENV{BLOOMIDX_TAP_QUICK} // '') eq '1' ? $quick : $full;
}

sub init_seed
{
	$seed = $ENV{BLOOMIDX_TAP_SEED};
	$seed = (time() ^ ($$ << 8)) & 0x7fffffff
	  unless defined $seed && $seed =~ /^\d+$/;
	srand($seed);
	note "random seed $seed";
	return $seed;
}

END
{
	if (defined $seed && !Test::More->builder->is_passing)
	{
		diag "random seed was $seed: rerun with BLOOMIDX_TAP_SEED=$seed";
	}
}

sub create_test_table
{
	my ($node, $table) = @_;
	$node->safe_psql('postgres',
		"CREATE TABLE $table (id int4, a int4, b int8, c text, d int4)");
	return;
}

# Insert rows with ids $from..$to.  Values are pseudo-random functions of the
# id: a has ~1000 distinct values, b ~5000 large int8 values, c ~700 short
# strings plus some long ones, d 13 values; c and d have some NULLs.
sub load_rows
{
	my ($node, $table, $from, $to, $dbname) = @_;
	$node->safe_psql(
		$dbname // 'postgres', qq{
		INSERT INTO $table (id, a, b, c, d)
		SELECT i,
		       ((i::int8 * 7919) % 997)::int4,
		       10000000000 + (i::int8 * 104729) % 4999,
		       CASE WHEN i % 53 = 0 THEN NULL
		            WHEN i % 97 = 0 THEN repeat('long', 40) || (i % 5)::text
		            ELSE 'v' || ((i * 31) % 701)::text END,
		       CASE WHEN i % 41 = 0 THEN NULL ELSE i % 13 END
		FROM generate_series($from, $to) AS i});
	return;
}

# A streaming standby of $primary named $name, from a backup this takes:
# a physical replication slot, made first, keeps the WAL it needs, so that
# a standby that falls behind (two TAP files at a time on two cores, with
# wal_consistency_checking) does not find the primary's checkpoints removed
# it (PostgreSQL 18 in CI: "requested WAL segment ... has already been
# removed", then a catch-up that timed out).  Not started.
sub new_streaming_standby
{
	my ($primary, $name) = @_;
	$primary->safe_psql('postgres',
		"SELECT pg_create_physical_replication_slot('${name}_slot', true)");
	$primary->backup("${name}_backup");
	my $standby = PostgreSQL::Test::Cluster->new($name);
	$standby->init_from_backup($primary, "${name}_backup", has_streaming => 1);
	$standby->append_conf('postgresql.conf', "primary_slot_name = '${name}_slot'\n");
	return $standby;
}

# A started node with bloomidx installed: PostgreSQL::Test::Cluster's
# init(%$init), the settings every test shares (small, no autovacuum,
# inserts that seal in the statement, so that the steps a test takes fall
# where it puts them; 002 turns background seals on),
# then the lines of $conf (a later setting wins), and with helpers => 1
# bloomidx_tap_run (install_helpers).  Data checksums are off unless
# init's extra asks for them: initdb turns them on by default from
# PostgreSQL 18 on, as it did not before.
sub new_bloomidx_node
{
	my ($name, %args) = @_;
	my $node = PostgreSQL::Test::Cluster->new($name);
	my %init = %{ $args{init} // {} };
	my @extra = @{ $init{extra} // [] };
	push @extra, '--no-data-checksums'
	  if $node->pg_version >= 18 && !grep { $_ eq '--data-checksums' || $_ eq '-k' } @extra;
	$node->init(%init, extra => \@extra);
	$node->append_conf('postgresql.conf',
		"shared_buffers = 32MB\nmax_connections = 20\nautovacuum = off\n"
		  . "bloomidx.background_seal = off\n"
		  . ($args{conf} // ''));
	$node->start;
	$node->safe_psql('postgres', 'CREATE EXTENSION bloomidx');
	install_helpers($node) if $args{helpers};
	return $node;
}

# Creates table $table with $nrows rows and builds index $index on it with
# two parallel workers (the leader and both workers each write and
# WAL-log pages of their own); passes only if both workers started.
sub parallel_build
{
	my ($node, $table, $index, $nrows) = @_;
	create_test_table($node, $table);
	load_rows($node, $table, 1, $nrows);
	my ($ret, $out, $err) = $node->psql('postgres',
		"ALTER TABLE $table SET (parallel_workers = 2); SET client_min_messages = debug1; "
		  . "SET max_parallel_maintenance_workers = 2; SET maintenance_work_mem = '256MB'; "
		  . "CREATE INDEX $index ON $table USING bloomidx (a, b, c, d)");
	is($ret, 0, "parallel build of $index") or diag $err;
	like($err, qr/bloomidx index "\Q$index\E": parallel build, 2 of 2 workers launched/,
		"$index: built by the leader and 2 workers");
	return;
}

# The writes of the pgbench workloads on a test table of $nrows rows (ids
# 1 .. $nrows; k is a random id): an INSERT of a new row, two UPDATEs (one
# moving d to or from NULL), a DELETE, and the re-INSERT of half the ids
# deleted with b NULL and c $reinsert_c.  pgbench script lines.
sub workload_writes
{
	my ($nrows, $reinsert_c) = @_;
	return qq{\\set k random(1, $nrows)
\\set nid random(1, 100000000)
INSERT INTO t (id, a, b, c, d) VALUES (:nid + 1000000, :nid % 997, 10000000000 + :nid % 4999, 'p' || (:nid % 701), :nid % 13);
UPDATE t SET a = (a + 1) % 997, c = 'v' || ((:k * 7) % 701) WHERE id = :k;
UPDATE t SET d = CASE WHEN d IS NULL THEN :k % 13 END, b = b + 1 WHERE id = (:k * 3) % $nrows + 1;
DELETE FROM t WHERE id = (:k * 13) % $nrows + 1;
INSERT INTO t (id, a, b, c, d) SELECT (:k * 13) % $nrows + 1, :k % 997, NULL, $reinsert_c, :k % 13 WHERE :k % 2 = 0;
};
}

# Create bloomidx_tap_run(table, condition): EXPLAIN (COSTS OFF) of the
# query it then runs, its row count and an md5 of its sorted ids.
sub install_helpers
{
	my ($node, $dbname) = @_;
	$node->safe_psql(
		$dbname // 'postgres', q{
CREATE OR REPLACE FUNCTION bloomidx_tap_run(tbl text, cond text,
    OUT n bigint, OUT ids text, OUT plan text)
LANGUAGE plpgsql AS $f$
DECLARE
    qry text := format('SELECT count(*), md5(coalesce(string_agg(id::text, %L ORDER BY id), %L)) FROM %s WHERE %s',
                       ',', '', tbl, cond);
    l text;
BEGIN
    plan := '';
    FOR l IN EXECUTE 'EXPLAIN (COSTS OFF) ' || qry LOOP
        plan := plan || l || ' ;; ';
    END LOOP;
    EXECUTE qry INTO n, ids;
END
$f$;
});
	return;
}

# All rows of $table (in database $dbname, default postgres) as
# [id, a, b, c, d], undef for NULL.
sub fetch_rows
{
	my ($node, $table, $dbname) = @_;
	my $out = $node->safe_psql($dbname // 'postgres',
		    "SELECT id, coalesce(a::text, '\\N'), coalesce(b::text, '\\N'), "
		  . "coalesce(c, '\\N'), coalesce(d::text, '\\N') FROM $table ORDER BY id"
	);
	my @rows;
	for my $line (split /\n/, $out)
	{
		my @f = split /\|/, $line, -1;
		push @rows, [ map { $_ eq '\\N' ? undef : $_ } @f ];
	}
	return \@rows;
}

sub literal
{
	my ($type, $v) = @_;
	return $v if $type eq 'int4';
	return "${v}::int8" if $type eq 'int8';
	(my $q = $v) =~ s/'/''/g;
	return "'$q'::text";
}

sub random_value
{
	my ($col) = @_;
	my $r = rand();
	if ($col->{name} eq 'a') { return int(rand(2100)) - 10; }
	if ($col->{name} eq 'b') { return 10000000000 + int(rand(5200)) - 50; }
	if ($col->{name} eq 'c')
	{
		return 'v' . int(rand(800)) if $r < 0.8;
		return 'v' . int(rand(800)) . '-u' if $r < 0.9;
		return 'nope' . int(rand(100));
	}
	return int(rand(16)) - 1;
}

# $n random WHERE clauses over a random non-empty subset of a..d, mostly with
# the values of a random existing row (so that most return rows), sometimes
# with random values (mostly no rows: false positives must be rechecked
# away), and a few IN lists.
sub random_conditions
{
	my ($rows, $n) = @_;
	my @conds;
	while (@conds < $n)
	{
		my $row = $rows->[ int(rand(@$rows)) ];
		my $mask = 1 + int(rand(15));
		my @parts;
		for my $i (0 .. 3)
		{
			next unless $mask & (1 << $i);
			my $col = $COLUMNS[$i];
			my $v = $row->[ $i + 1 ];
			$v = random_value($col) if !defined $v || rand() < 0.2;
			if (rand() < 0.05)
			{
				my @vals = ($v, map { random_value($col) } 1 .. 2);
				push @parts, "$col->{name} IN ("
				  . join(', ', map { literal($col->{type}, $_) } @vals) . ")";
			}
			else
			{
				push @parts, "$col->{name} = " . literal($col->{type}, $v);
			}
		}
		push @conds, join(' AND ', @parts);
	}
	return \@conds;
}

# The 15 column combinations, each with the values of one row that has no
# NULL in a..d.
sub combo_conditions
{
	my ($rows) = @_;
	my @conds;
	my @full = grep { !grep { !defined } @$_[ 1 .. 4 ] } @$rows;
	for my $mask (1 .. 15)
	{
		my $row = $full[ int(rand(@full)) ];
		my @parts;
		for my $i (0 .. 3)
		{
			next unless $mask & (1 << $i);
			push @parts,
			  "$COLUMNS[$i]{name} = "
			  . literal($COLUMNS[$i]{type}, $row->[ $i + 1 ]);
		}
		push @conds, join(' AND ', @parts);
	}
	return \@conds;
}

# Run every condition through bloomidx_tap_run on $node with $gucs; returns
# an arrayref of [n, md5, plan] in the order of @$conds.
sub run_conditions
{
	my ($node, $table, $conds, $gucs) = @_;
	my @values;
	for my $i (0 .. $#$conds)
	{
		push @values, "($i, \$bq\$$conds->[$i]\$bq\$)";
	}
	my $sql =
	    "$gucs\n"
	  . "SELECT v.i, r.n, r.ids, r.plan FROM (VALUES\n"
	  . join(",\n", @values)
	  . "\n) AS v(i, cond) CROSS JOIN LATERAL bloomidx_tap_run('$table', v.cond) AS r ORDER BY v.i;";
	my $out = $node->safe_psql('postgres', $sql);
	my @res;
	for my $line (split /\n/, $out)
	{
		my ($i, $n, $md5, $plan) = split /\|/, $line, 4;
		$res[$i] = [ $n, $md5, $plan ];
	}
	return \@res;
}

sub id_list
{
	my ($node, $table, $cond, $gucs) = @_;
	my $out = $node->safe_psql('postgres',
		"$gucs SELECT id FROM $table WHERE $cond ORDER BY id");
	return [ split /\n/, $out ];
}

# For every condition: the ids $idx_node finds with a forced Bitmap Index
# Scan on $index must equal the ids $seq_node finds with a Seq Scan.  Both
# plans are checked with EXPLAIN.  Any difference fails.
sub compare_index_to_seqscan
{
	my (%args) = @_;
	my ($idx_node, $seq_node, $table, $index, $conds, $label) =
	  @args{qw(idx_node seq_node table index conds label)};
	my $ires = run_conditions($idx_node, $table, $conds, $INDEX_GUCS);
	my $sres = run_conditions($seq_node, $table, $conds, $SEQ_GUCS);

	my ($not_indexed, $not_seq, $diffs, $nonempty, $total) = (0, 0, 0, 0, 0);
	my @report;
	for my $i (0 .. $#$conds)
	{
		my ($in, $imd5, $iplan) = @{ $ires->[$i] // [ -1, '', 'missing' ] };
		my ($sn, $smd5, $splan) = @{ $sres->[$i] // [ -2, '', 'missing' ] };
		if ($iplan !~ /Bitmap Index Scan on \Q$index\E\b/)
		{
			$not_indexed++;
			push @report, "not a Bitmap Index Scan on $index: [$conds->[$i]] plan: $iplan"
			  if @report < 10;
		}
		if ($splan !~ /Seq Scan on \Q$table\E\b/)
		{
			$not_seq++;
			push @report, "reference is not a Seq Scan: [$conds->[$i]] plan: $splan"
			  if @report < 10;
		}
		$nonempty++ if $sn > 0;
		$total += $sn;
		next if $in eq $sn && $imd5 eq $smd5;
		$diffs++;
		if ($diffs <= 5)
		{
			my %iids = map { $_ => 1 }
			  @{ id_list($idx_node, $table, $conds->[$i], $INDEX_GUCS) };
			my %sids = map { $_ => 1 }
			  @{ id_list($seq_node, $table, $conds->[$i], $SEQ_GUCS) };
			my @missing = grep { !$iids{$_} } sort { $a <=> $b } keys %sids;
			my @extra   = grep { !$sids{$_} } sort { $a <=> $b } keys %iids;
			my $cut = sub { my @l = @_; @l > 20 ? (@l[ 0 .. 19 ], '...') : @l };
			push @report,
			    "DIFF [$conds->[$i]]: index $in rows, seqscan $sn rows; "
			  . "missing from index: [@{[ $cut->(@missing) ]}] "
			  . "extra in index: [@{[ $cut->(@extra) ]}]";
		}
	}
	my $n = @$conds;
	is($not_indexed, 0,
		"$label: all $n queries use a Bitmap Index Scan on $index");
	is($not_seq, 0, "$label: all $n reference queries use a Seq Scan");
	is($diffs, 0,
		"$label: index results equal seqscan results for $n queries ($nonempty non-empty, $total rows)"
	);
	ok($nonempty * 3 >= $n,
		"$label: at least a third of the queries return rows ($nonempty of $n)");
	diag join("\n", @report) if @report;
	return $diffs;
}

# Every row with non-NULL keys must be found through the index by an
# equality on its own key columns: for each distinct key of the table, a
# parameterized Bitmap Index Scan (one per key: rows that share a key are
# found by the same lookup), its rows rechecked against the key; summed
# over all keys, they must be as many as a sequential scan counts.  A row
# the index missed is missing from its key's count (even when the keys
# themselves are listed through the index), and no row can be counted for
# a key it does not have.  Quick runs (BLOOMIDX_TAP_QUICK=1) look every
# row up by the widest key set only, which reads the bits of the most
# columns; the narrower ones read subsets of the same bits, and the random
# queries of compare_index_to_seqscan go through their code paths.
sub check_every_row_found
{
	my ($node, $table, $index, $keysets, $label) = @_;
	$keysets = [ (sort { @$b <=> @$a } @$keysets)[0] ] if full_or_quick(0, 1);
	my $gucs =
	    $INDEX_GUCS
	  . " SET enable_hashjoin = off; SET enable_mergejoin = off;"
	  . " SET enable_material = off; SET enable_memoize = off;";
	for my $keys (@$keysets)
	{
		my $notnull = join(' AND ', map { "$_ IS NOT NULL" } @$keys);
		my $match   = join(' AND ', map { "i.$_ = k.$_" } @$keys);
		my $q =
		    "SELECT count(*) FROM (SELECT DISTINCT " . join(', ', map { "o.$_" } @$keys)
		  . " FROM $table o WHERE $notnull) k CROSS JOIN LATERAL "
		  . "(SELECT 1 FROM $table i WHERE $match) f";
		my $plan = $node->safe_psql('postgres', "$gucs EXPLAIN (COSTS OFF) $q");
		my $k = join(',', @$keys);
		like($plan,
			qr/Nested Loop.*Bitmap Index Scan on \Q$index\E\b\s+Index Cond: \(\(?\w+ = o\.\w+\)/s,
			"$label: lookup by ($k) of every key is a nested loop over a parameterized Bitmap Index Scan on $index"
		) or diag $plan;
		my $checked = $node->safe_psql('postgres',
			"$SEQ_GUCS SELECT count(*) FROM $table WHERE $notnull");
		my $found = $node->safe_psql('postgres', "$gucs $q");
		is($checked - $found, 0,
			"$label: each of the $checked rows is found by ($k) through $index"
		);
	}
	return;
}

# bloomidx_verify(index) passes: page structure, and every visible row of
# the table present in the index with its signature.
sub verify_index
{
	my ($node, $index, $label) = @_;
	my ($ret, $stdout, $stderr) =
	  $node->psql('postgres', "SELECT bloomidx_verify('$index')");
	is($ret, 0, "$label: bloomidx_verify($index) passes")
	  or diag($stderr);
	return;
}

# count and md5 of the whole table by seqscan (heap contents).
sub table_digest
{
	my ($node, $table) = @_;
	return $node->safe_psql('postgres',
		"$SEQ_GUCS SELECT count(*) || ' ' || md5(string_agg(format('%s,%s,%s,%s,%s', id, a, b, c, d), ';' ORDER BY id, a, b, c, d)) FROM $table"
	);
}

# Waits until $node answers queries again after a crash it restarts from
# (restart_after_crash); false if it does not within the timeout.  Not
# poll_query_until: that gives psql its query on standard input, which a
# psql refused while the server recovers closes unread, and the broken
# pipe kills the test.  With $log_offset (the log's size before the
# crash), first waits until the log says the postmaster reinitialized
# and is ready again: a connection made right after the crashed backend
# died, before the postmaster noticed, would answer and then be killed
# with the rest by the restart.
sub wait_until_back
{
	my ($node, $log_offset) = @_;
	local %ENV = $node->_get_env();
	for (1 .. 10 * $PostgreSQL::Test::Utils::timeout_default)
	{
		if (defined $log_offset
			&& slurp_file($node->logfile, $log_offset) !~
			/reinitializing.*ready to accept connections/s)
		{
			usleep(100_000);
			next;
		}
		my ($out, $err) = ('', '');
		IPC::Run::run(
			[
				$node->installed_command('psql'), '-XAt', '-c', 'SELECT true',
				'-d', $node->connstr('postgres')
			],
			'<', '/dev/null', '>', \$out, '2>', \$err);
		return 1 if $out =~ /^t$/m;
		usleep(100_000);
	}
	return 0;
}

1;
