
# The free list under hostile use (found by a hostile review of format 8),
# and the trust a backend puts in a page's sum:
# 1. A seal that crashes after writing its segment into listed blocks
#    (debug_seal_stop = 2) leaves pages carrying the id the next published
#    segment takes (ids are spent only by a publish).  Once that id is
#    published elsewhere, later seals into those blocks must not take the
#    leftovers for pages in use (a false XX002 that would stop every seal).
# 2. A long-lived session that verified a slice page's sum, after the page
#    left shared buffers and came back damaged from disk with its LSN
#    intact (no data checksums here): XX002, as in a new session, never a
#    wrong answer.
# 3. Removals scattered over more places each round than the free list has
#    slots: VACUUM gathers the free runs back onto the list, and the index
#    stops growing.
use strict;
use warnings;

use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

my $node = new_bloomidx_node(
	'free_list',
	conf => q{
restart_after_crash = on
bloomidx.segment_rows = 1000
max_parallel_maintenance_workers = 0
shared_buffers = 16MB
});
$node->safe_psql('postgres', 'CREATE EXTENSION pg_buffercache');

# --- 1. segment id reused after a seal crashed between write and publish
$node->safe_psql(
	'postgres', q{
CREATE TABLE t1 (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO t1 SELECT g, g % 997, g % 13 FROM generate_series(1, 5200) g;
CREATE INDEX t1_bl ON t1 USING bloomidx (a, b);
DELETE FROM t1 WHERE id <= 1000;   -- segment 1 whole: its extent is listed
VACUUM t1;
});
# The insert's seal writes segment 6 into the listed extent, then stops.
my $log_offset = -s $node->logfile;
my ($ret) = $node->psql('postgres',
	q{SET bloomidx.debug_seal_stop = 2;
	  INSERT INTO t1 SELECT g, g % 997, g % 13 FROM generate_series(10001, 11000) g});
isnt($ret, 0, 'the seal stopped after writing');
ok(wait_until_back($node, $log_offset), 'server back');
# Segment 2 removed: its extent joins the one holding the orphan pages; the
# next seal publishes id 6 in segment 2's old blocks.
$node->safe_psql('postgres', q{DELETE FROM t1 WHERE id BETWEEN 1001 AND 2000; VACUUM t1;});
my $err = '';
for my $i (1 .. 3)
{
	my ($r, $out, $stderr) = $node->psql('postgres',
		"INSERT INTO t1 SELECT g, g % 997, g % 13 FROM generate_series(${i}0001 + 20000, ${i}1000 + 20000) g");
	$err .= $stderr;
}
my ($r2, $out2, $stderr2) = $node->psql('postgres', q{SELECT bloomidx_seal('t1_bl')});
$err .= $stderr2;
unlike($err, qr/free list includes a page in use/,
	'seals after a crashed seal do not report a healthy index as corrupted');
$node->safe_psql('postgres', q{SELECT bloomidx_verify('t1_bl')});

# --- 2. a sum trusted at the same LSN after the page was read back damaged
$node->safe_psql(
	'postgres', q{
CREATE TABLE t2 (id int, a int) WITH (autovacuum_enabled = off);
INSERT INTO t2 SELECT g, g % 100 FROM generate_series(1, 5000) g;
CREATE INDEX t2_bl ON t2 USING bloomidx (a);
});
for my $i (1 .. 8)
{
	$node->safe_psql('postgres',
		"CREATE TABLE fill$i AS SELECT g, repeat('x', 200) r FROM generate_series(1, 14000) g");
}
my $s1 = $node->background_psql('postgres', on_error_stop => 0);
$s1->query_safe('SET enable_seqscan = off');
is($s1->query_safe('SELECT count(*) FROM t2 WHERE a = 17'), '50', 'long session: 50 rows');
$node->safe_psql('postgres', 'CHECKPOINT');
my $cached = 1;
for my $round (1 .. 10)
{
	$node->safe_psql('postgres', "SELECT count(*) FROM fill$_") for 1 .. 8;
	$cached = $node->safe_psql('postgres',
		q{SELECT count(*) FROM pg_buffercache WHERE relfilenode = pg_relation_filenode('t2_bl')});
	last if $cached == 0;
}
is($cached, '0', 'the index left shared buffers');
my $path = $node->data_dir . '/'
  . $node->safe_psql('postgres', q{SELECT pg_relation_filepath('t2_bl')});
# Zero the words of every slice page (blocks of segments: 16 slices, a live,
# a TID page and a header, 19 blocks each, from block 1), keeping LSN and special space.
open(my $fh, '+<', $path) or die "open $path: $!";
binmode $fh;
for my $seg (0 .. 4)
{
	for my $j (0 .. 15)
	{
		my $blk = 1 + $seg * 19 + $j;
		seek($fh, $blk * 8192 + 24, 0);
		print $fh ("\0" x 8128);
	}
}
close $fh;
my ($r3, $out3, $err3) = $node->psql('postgres',
	'SET enable_seqscan = off; SELECT count(*) FROM t2 WHERE a = 17');
like($err3, qr/corrupted page/, 'a new session sees the damage');
my $long = $s1->query('SELECT count(*) FROM t2 WHERE a = 17');
isnt($long, '0', 'the long session does not return a wrong answer');
like($s1->{stderr}, qr/corrupted page/, 'the long session sees the damage too (XX002)');
$s1->quit;
$node->safe_psql('postgres', 'DROP TABLE t2');

# --- 3. scattered removals: the index grows round after round
$node->safe_psql(
	'postgres', q{
CREATE TABLE fr (id int, a int, b int) WITH (autovacuum_enabled = off);
INSERT INTO fr SELECT g, g % 1000, g % 7 FROM generate_series(1, 80000) g;
CREATE INDEX fr_bl ON fr USING bloomidx (a, b);
});
my @pages;
for my $round (1 .. 4)
{
	$node->safe_psql(
		'postgres', q{
DELETE FROM fr WHERE id IN (SELECT id FROM (SELECT id, row_number() OVER (ORDER BY ctid) rn FROM fr) s
                            WHERE ((rn - 1) / 1000) % 2 = 0);
VACUUM fr;
INSERT INTO fr SELECT g, g % 1000, g % 7
FROM generate_series((SELECT max(id) FROM fr) + 1, (SELECT max(id) FROM fr) + 80000 - (SELECT count(*) FROM fr)) g;
VACUUM fr;
});
	push @pages, $node->safe_psql('postgres', q{SELECT pg_relation_size('fr_bl') / 8192});
}
note "index pages after each round: @pages";
cmp_ok($pages[3], '<=', $pages[1] * 1.15, 'the index stops growing under scattered churn');

$node->stop;
done_testing();
