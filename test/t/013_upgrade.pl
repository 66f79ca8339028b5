
# ALTER EXTENSION bloomidx UPDATE on a database whose bloomidx indexes were
# built while version 1.0 was installed: the update adds 1.1's functions
# (1.2 adds none), so the indexes keep answering, before and after, exactly
# as a sequential scan does, take inserts, deletes and VACUUM, and the new
# functions read them.  The updated extension holds the same objects as a
# fresh CREATE EXTENSION of 1.2, and 1.2 can be asked for by name.  An
# index an older library wrote (on-disk format 12, metapage rewritten here
# to say so) is named by the update in a WARNING that says to REINDEX it.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $node = new_bloomidx_node('upgrade', helpers => 1);

# The extension's members, described, one per line.
sub members
{
	my ($dbname) = @_;
	return $node->safe_psql($dbname, q{
		SELECT string_agg(pg_describe_object(classid, objid, objsubid), E'\n'
		                  ORDER BY pg_describe_object(classid, objid, objsubid))
		FROM pg_depend
		WHERE refclassid = 'pg_extension'::regclass AND deptype = 'e'
		  AND refobjid = (SELECT oid FROM pg_extension WHERE extname = 'bloomidx')});
}

my $fresh = members('postgres');
like($fresh, qr/function bloomidx_advise\(/, 'a fresh CREATE EXTENSION has 1.1\'s functions');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
	'1.2', 'a fresh CREATE EXTENSION installs 1.2');

# Version 1.0, in a database of its own (the helpers go with the extension).
$node->safe_psql('postgres', 'DROP EXTENSION bloomidx CASCADE');
$node->safe_psql('postgres', "CREATE EXTENSION bloomidx VERSION '1.0'");
install_helpers($node);
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
	'1.0', 'version 1.0 can be installed by name');
unlike(members('postgres'), qr/bloomidx_advise/, '1.0 has no bloomidx_advise');

# Indexes built by 1.0: defaults, options, partial, a partitioned table;
# some rows sealed into segments, some pending.
create_test_table($node, 't');
load_rows($node, 't', 1, 70000);
$node->safe_psql('postgres', q{
CREATE INDEX t_bl ON t USING bloomidx (a, b, c, d);
CREATE TABLE u AS SELECT * FROM t;
CREATE INDEX u_bl ON u USING bloomidx (d, c) WITH (length = 64, col1 = 2, col2 = 5);
CREATE TABLE p (id int4, a int4, b int8, c text, d int4) PARTITION BY RANGE (id);
CREATE TABLE p1 PARTITION OF p FOR VALUES FROM (0) TO (40000);
CREATE TABLE p2 PARTITION OF p FOR VALUES FROM (40000) TO (1000000);
CREATE INDEX p_bl ON p USING bloomidx (a, b, c, d);
});
load_rows($node, 't', 70001, 72000);
$node->safe_psql('postgres', 'INSERT INTO p SELECT * FROM t');
$node->safe_psql('postgres', 'INSERT INTO u SELECT * FROM t WHERE id > 70000');
$node->safe_psql('postgres', 'ANALYZE t, u, p');

my $rows = fetch_rows($node, 't');
my @conds = @{ random_conditions($rows, full_or_quick(150, 60)) };

# Every query through each index, against a sequential scan: u's index
# is asked the conditions on its columns.
sub check_answers
{
	my ($label) = @_;
	compare_index_to_seqscan(
		idx_node => $node, seq_node => $node, table => 't', index => 't_bl',
		conds => \@conds, label => "$label, t_bl");
	my @dc = grep { !/\b[ab]\b/ } @conds;
	push @dc, 'd = 3', "c = 'v7'", 'd IS NULL', "d = 5 AND c = 'v100'";
	compare_index_to_seqscan(
		idx_node => $node, seq_node => $node, table => 'u', index => 'u_bl',
		conds => \@dc, label => "$label, u_bl");
	compare_index_to_seqscan(
		idx_node => $node, seq_node => $node, table => 'p1', index => 'p1_a_b_c_d_idx',
		conds => \@conds, label => "$label, partition p1");
	return;
}

check_answers('built by 1.0');
verify_index($node, $_, 'built by 1.0') for qw(t_bl u_bl p1_a_b_c_d_idx p2_a_b_c_d_idx);

# What the indexes' operator classes are made of: operators and support
# functions of every bloomidx family.  The update must leave it alone.
my $opclasses_sql = q{
	SELECT string_agg(format('%s %s %s', f.opfamily, f.member, f.n), E'\n' ORDER BY 1)
	FROM (SELECT amopfamily::regclass::text AS opfamily, amopopr::regoperator::text AS member,
	             amopstrategy AS n
	      FROM pg_amop WHERE amopmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomidx')
	      UNION ALL
	      SELECT amprocfamily::text, amproc::regprocedure::text, amprocnum
	      FROM pg_amproc WHERE amprocfamily IN
	          (SELECT oid FROM pg_opfamily WHERE opfmethod = (SELECT oid FROM pg_am WHERE amname = 'bloomidx'))) f};
my $opclasses_10 = $node->safe_psql('postgres', $opclasses_sql);
my $members_10 = members('postgres');

# An index of the previous on-disk format: its metapage's version (the
# u16 after the magic) set to 12, as bloomidx 1.1's library wrote it.
$node->safe_psql('postgres', q{
CREATE TABLE o AS SELECT * FROM t LIMIT 1000;
CREATE INDEX o_bl ON o USING bloomidx (a, b);
CHECKPOINT;
});
my $o_file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('o_bl')");
$node->stop;
open(my $fh, '+<:raw', $o_file) or die "open $o_file: $!";
seek($fh, 24 + 4, 0);
print $fh pack('v', 12);
close($fh);
$node->start;

my ($update_ret, $update_out, $update_err) = $node->psql('postgres', 'ALTER EXTENSION bloomidx UPDATE');
is($update_ret, 0, 'ALTER EXTENSION bloomidx UPDATE succeeds') or diag $update_err;
like($update_err,
	qr/WARNING:  index "o_bl" has on-disk format version 12, older than the oldest version 19 this bloomidx reads\n.*HINT:  REINDEX INDEX public\.o_bl; rebuilds it in the current format\./,
	'the update names the index of the older format and says to REINDEX it');
unlike($update_err, qr/WARNING:.*"(t_bl|u_bl|p1_a_b_c_d_idx|p2_a_b_c_d_idx)"/,
	'and no index of the current format');
$node->safe_psql('postgres', 'REINDEX INDEX o_bl');
verify_index($node, 'o_bl', 'the older format REINDEXed');
$node->safe_psql('postgres', 'DROP TABLE o');
is($node->safe_psql('postgres', "SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
	'1.2', 'ALTER EXTENSION bloomidx UPDATE goes to 1.2');
is(members('postgres'), $fresh, 'the updated extension holds what a fresh 1.2 holds');
is($node->safe_psql('postgres', $opclasses_sql), $opclasses_10,
	'the update leaves the operator classes the indexes use as they were');
my %before = map { $_ => 1 } split /\n/, $members_10;
my @added = grep { !$before{$_} } split /\n/, members('postgres');
my %after = map { $_ => 1 } split /\n/, members('postgres');
my @removed = grep { !$after{$_} } split /\n/, $members_10;
is_deeply(\@added,
	[ 'function bloomidx_advise(regclass,text[],double precision)',
	  'function bloomidx_page_items(regclass,integer)',
	  'function bloomidx_stats(regclass)' ],
	'1.0 to 1.2 adds bloomidx_advise, bloomidx_page_items and bloomidx_stats');
is_deeply(\@removed, [], 'and removes nothing');

check_answers('1.0 indexes under 1.2');
verify_index($node, $_, 'under 1.2') for qw(t_bl u_bl p1_a_b_c_d_idx p2_a_b_c_d_idx);

# The new functions on indexes 1.0 built.
like($node->safe_psql('postgres',
		"SELECT create_index FROM bloomidx_advise('t', '{a, b, c, d}')"),
	qr/^CREATE INDEX ON public\.t USING bloomidx \(a, b, c, d\) WITH \(length = \d+, col1 = \d+, col2 = \d+, col3 = \d+, col4 = \d+\)$/,
	'bloomidx_advise works after the update');
is($node->safe_psql('postgres', "SELECT live_rows + pending_rows FROM bloomidx_index_info('t_bl')"),
	$node->safe_psql('postgres', 'SELECT count(*) FROM t'),
	'bloomidx_index_info counts every row of a 1.0 index');

# Writes after the update: deletes, VACUUM, inserts.
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 5 = 0; DELETE FROM u WHERE id % 5 = 0');
$node->safe_psql('postgres', 'VACUUM t, u');
load_rows($node, 't', 72001, 75000);
$node->safe_psql('postgres', 'INSERT INTO u SELECT * FROM t WHERE id > 72000');
$rows = fetch_rows($node, 't');
@conds = @{ random_conditions($rows, full_or_quick(150, 60)) };
check_answers('1.0 indexes after writes under 1.2');
verify_index($node, $_, 'after writes') for qw(t_bl u_bl);

# The update from 1.1 in a database where it cannot read every index: one
# locked by another session (DROP INDEX in an open transaction) and
# another session's temporary index.  It neither waits long nor fails:
# the locked index is named in a WARNING, the temporary one passed over.
$node->safe_psql('postgres', 'CREATE DATABASE upd');
$node->safe_psql('upd', q{
CREATE EXTENSION bloomidx VERSION '1.1';
CREATE TABLE lk (a int, b int);
INSERT INTO lk SELECT i, i % 7 FROM generate_series(1, 3000) i;
CREATE INDEX lk_bl ON lk USING bloomidx (a, b);
});
my $locker = $node->background_psql('upd', on_error_stop => 0);
$locker->query_safe('BEGIN; DROP INDEX lk_bl;');
my $temp_owner = $node->background_psql('upd', on_error_stop => 0);
$temp_owner->query_safe(
	'CREATE TEMP TABLE tt (a int); CREATE INDEX tt_bl ON tt USING bloomidx (a); INSERT INTO tt VALUES (1)');
my $t0 = time;
my ($lk_ret, $lk_out, $lk_err) = $node->psql('upd', 'ALTER EXTENSION bloomidx UPDATE');
my $lk_seconds = time - $t0;
is($lk_ret, 0, 'the update succeeds beside a locked index and a temporary one') or diag $lk_err;
like($lk_err,
	qr/WARNING:  index public\.lk_bl could not be checked for an older on-disk format: canceling statement due to lock timeout/,
	'the locked index is named as not checked');
unlike($lk_err, qr/tt_bl/, 'another session\'s temporary index is passed over');
cmp_ok($lk_seconds, '<', 20, 'the update does not wait for the lock');
is($node->safe_psql('upd', "SELECT extversion FROM pg_extension WHERE extname = 'bloomidx'"),
	'1.2', 'and the database is at 1.2');
$locker->query_safe('ROLLBACK');
$locker->quit;
$temp_owner->quit;
is($node->safe_psql('upd', "SELECT format_version FROM bloomidx_index_info('lk_bl')"), '19',
	'the index, unlocked, is of the current format');

# And back: an update to a version that does not exist says so.
my ($ret, $out, $err) = $node->psql('postgres', "ALTER EXTENSION bloomidx UPDATE TO '9.9'");
isnt($ret, 0, 'an update to an unknown version fails');
like($err, qr/extension "bloomidx" has no update path from version "1\.2" to version "9\.9"/,
	'and says there is no such update path');

$node->stop;
done_testing();
