
# bloomidx_verify: passes on a sound index while other sessions insert,
# update, delete and vacuum, and on a streaming standby; finds what was
# overwritten in an index file on disk (the metapage's magic number and
# insert hint, a data page's special space, count and pd_lower, an entry's
# heap TID and signature) and raises ERRCODE_INDEX_CORRUPTED (XX002) naming
# the block or the row; a query through a corrupted page raises an error
# too.  After each corruption the server is still up, accepting connections,
# and no backend crashed.  A page left all zeros by an interrupted extension
# is fine.  VACUUM over a damaged page warns, skips it and completes.
use strict;
use warnings;

use IPC::Run;
use Math::BigInt;
use PostgreSQL::Test::Cluster;
use PostgreSQL::Test::Utils;
use Test::More;
use BloomidxTAP;

init_seed();

my $node = new_bloomidx_node('verify', init => { allows_streaming => 1 });
is($node->safe_psql('postgres', 'SHOW data_checksums'),
	'off', 'no data checksums: overwritten bytes reach bloomidx, not the checksum check');

# ------------------------------------------------------------------------
# A sound index stays sound under concurrent writes: pgbench inserts,
# updates and deletes while this session verifies it, and VACUUMs.

create_test_table($node, 't');
load_rows($node, 't', 1, 6000);
$node->safe_psql('postgres',
	'CREATE INDEX t_bl ON t USING bloomidx (a, b, c, d)');
$node->safe_psql('postgres', "SELECT bloomidx_verify('t_bl')");
pass('freshly built index verifies');

my $script = PostgreSQL::Test::Utils::tempdir() . '/workload.sql';
PostgreSQL::Test::Utils::append_to_file(
	$script, q{
\set id random(1, 1000000)
INSERT INTO t (id, a, b, c, d) VALUES (:id + 100000, :id % 997, 10000000000 + :id % 4999, 'p' || (:id % 500), :id % 13);
UPDATE t SET d = coalesce(d, 0) + 1 WHERE id = :id % 6000 + 1;
UPDATE t SET c = c WHERE id = (:id * 3) % 6000 + 1;
DELETE FROM t WHERE id = (:id * 7) % 6000 + 1;
});
my ($pgb_out, $pgb_err) = ('', '');
my $pgbench = IPC::Run::start(
	[
		'pgbench', '-n', '-c', '4', '-T', '6', '-f', $script,
		'-h', $node->host, '-p', $node->port, 'postgres'
	],
	'>', \$pgb_out, '2>', \$pgb_err);
my ($verified, $failures) = (0, 0);
while ($pgbench->pumpable)
{
	my ($ret, $out, $err) = $node->psql('postgres',
		($verified % 3 == 2 ? 'VACUUM t; ' : '') . "SELECT bloomidx_verify('t_bl')");
	if ($ret != 0)
	{
		$failures++;
		diag "bloomidx_verify failed during the workload: $err" if $failures <= 3;
	}
	$verified++;
	$pgbench->pump_nb;
}
ok($pgbench->finish, 'pgbench workload ran') or diag "$pgb_out\n$pgb_err";
cmp_ok($verified, '>', 0, "bloomidx_verify ran $verified times during the workload");
is($failures, 0, 'bloomidx_verify never failed during the workload');
$node->safe_psql('postgres', "VACUUM t; SELECT bloomidx_verify('t_bl')");
pass('index verifies after the workload and a VACUUM');

# ------------------------------------------------------------------------
# On a streaming standby: a logged index verifies (hot standby snapshot);
# an unlogged one has no data there and says so.

$node->safe_psql(
	'postgres', q{
CREATE UNLOGGED TABLE u (a int4, b text);
INSERT INTO u SELECT i % 50, 'u' || i FROM generate_series(1, 2000) i;
CREATE INDEX u_bl ON u USING bloomidx (a, b);
});
my $standby = new_streaming_standby($node, 'verify_standby');
$standby->start;
load_rows($node, 't', 200001, 203000);
$node->safe_psql('postgres', 'DELETE FROM t WHERE id % 10 = 0; VACUUM t');
$node->wait_for_catchup($standby);
my ($ret, $out, $err) =
  $standby->psql('postgres', "SELECT bloomidx_verify('t_bl')");
is($ret, 0, 'the standby verifies the replayed index') or diag $err;
($ret, $out, $err) =
  $standby->psql('postgres', "SELECT bloomidx_verify('u_bl')");
is($ret, 0, 'an unlogged index on the standby is no error');
like($err, qr/NOTICE:  index "u_bl" is unlogged and the server is in recovery/,
	'... and the standby says there is nothing to verify');
# The functions that read its metapage refuse it as the planner does
# (0A000), not with the error of a file the standby does not have.
foreach my $call (
	"bloomidx_index_info('u_bl')", "bloomidx_stats('u_bl')",
	"bloomidx_page_items('u_bl', 0)", "bloomidx_false_positive_rate('u_bl', '{1}')")
{
	($ret, $out, $err) =
	  $standby->psql('postgres', "\\set VERBOSITY verbose\nSELECT * FROM $call");
	like($err, qr/ERROR:  0A000: cannot read unlogged index "u_bl" during recovery/,
		"$call on the standby: unlogged, refused");
}
is($standby->safe_psql('postgres', "SELECT segments FROM bloomidx_index_info('t_bl')"),
	$node->safe_psql('postgres', "SELECT segments FROM bloomidx_index_info('t_bl')"),
	'... while a logged index reads there as on the primary');
$standby->stop;

# ------------------------------------------------------------------------
# Corruption on disk.  A fresh table, so that entry 0 of block 1 is the
# table's first row; indexed empty, so that its rows are pending (a build
# makes more than a few pages' rows a segment).

create_test_table($node, 'c');
$node->safe_psql('postgres',
	'CREATE INDEX c_bl ON c USING bloomidx (a, b, c, d)');
load_rows($node, 'c', 1, 3000);
$node->safe_psql('postgres', "SELECT bloomidx_verify('c_bl')");
my $relpath = $node->safe_psql('postgres', "SELECT pg_relation_filepath('c_bl')");
my $file = $node->data_dir . '/' . $relpath;
my $BLCKSZ = $node->safe_psql('postgres', 'SHOW block_size');
is($BLCKSZ, 8192, 'block size is 8 kB');
my $row5 = $node->safe_psql('postgres', 'SELECT a, d FROM c WHERE id = 5');
my ($a5, $d5) = split /\|/, $row5;
my $query = "SELECT count(*) FROM c WHERE a = $a5 AND d = $d5";

sub read_file_raw
{
	open my $fh, '<:raw', $file or die "open $file: $!";
	local $/;
	my $bytes = <$fh>;
	close $fh;
	return $bytes;
}

sub write_file_raw
{
	my ($bytes) = @_;
	open my $fh, '>:raw', $file or die "open $file: $!";
	print $fh $bytes;
	close $fh or die "close $file: $!";
	return;
}

sub u16 { my ($b, $off) = @_; return unpack('v', substr($$b, $off, 2)); }
sub set_u16 { my ($b, $off, $v) = @_; substr($$b, $off, 2) = pack('v', $v); return; }
sub set_u32 { my ($b, $off, $v) = @_; substr($$b, $off, 4) = pack('V', $v); return; }

# The layout (src/core/page_layout.hpp): page header 24 bytes (pd_lower at
# 12, pd_upper at 14, pd_special at 16), special space in the last 16 bytes
# (count, flags, format, signature sum, TID sum, 4 reserved bytes, page_id),
# metapage data after the header (magic at
# 24, signature_bytes at 36, ncolumns at 38, filter_keys at 42), the
# directory at 152 (pending list head at 160, segment entries from 184, 32
# bytes each: id, header block, first slice block, ...); on a pending page
# the signatures from 24 up, and from the special space down each row's
# tail: its 6-byte TID, then (filter_keys = 1) a 4-byte filter key a column.
my $SPECIAL = $BLCKSZ - 16;
$node->safe_psql('postgres', 'CHECKPOINT');    # the index's pages on disk
my $orig = read_file_raw();
my $sigbytes = u16(\$orig, 36);
cmp_ok($sigbytes, '>=', 2, "signatures take $sigbytes bytes");
my $tail = 6 + (u16(\$orig, 42) ? 4 * u16(\$orig, 38) : 0);
is($tail, 6 + 4 * 4, 'pending rows keep a filter key a column');
my $blk1 = $BLCKSZ;
my $tid0 = $blk1 + $SPECIAL - $tail;    # entry 0's TID on block 1
my ($bi_hi, $bi_lo, $off0) = unpack('vvv', substr($orig, $tid0, 6));
my $tid_text = sprintf('(%u,%u)', ($bi_hi << 16) | $bi_lo, $off0);
is($tid_text, '(0,1)', 'entry 0 of block 1 is the first row');

my $log_start = -s $node->logfile;

sub server_is_fine
{
	my ($label) = @_;
	is($node->safe_psql('postgres', 'SELECT 1'), '1',
		"$label: the server accepts connections");
	my $log = substr(slurp_file($node->logfile), $log_start);
	unlike(
		$log,
		qr/terminated by signal|exited with exit code [2-9]|terminating any other active server processes/,
		"$label: no backend crashed");
	return;
}

sub psql_verbose
{
	my ($sql) = @_;
	my ($ret, $out, $err) =
	  $node->psql('postgres', "\\set VERBOSITY verbose\n$sql");
	return ($ret, $err);
}

# Stops the node, lets $mutate change the file's bytes, starts the node,
# runs $check, then puts the file back as it was (unless $keep).
sub with_corruption
{
	my (%args) = @_;
	$node->stop;
	my $before = read_file_raw();
	my $bytes = $before;
	$args{mutate}->(\$bytes);
	write_file_raw($bytes);
	$node->start;
	$args{check}->();
	server_is_fine($args{label});
	return if $args{keep};
	$node->stop;
	write_file_raw($before);
	$node->start;
	my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
	is($ret, 0, "$args{label}: verifies again once the file is put back")
	  or diag $err;
	return;
}

# Verification and a query through the index both raise XX002 naming the
# block, with $detail.
sub check_corrupted
{
	my ($label, $block, $detail) = @_;
	my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
	isnt($ret, 0, "$label: bloomidx_verify fails");
	like($err,
		qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block $block\b/,
		"$label: bloomidx_verify raises XX002 naming block $block");
	like($err, qr/DETAIL:  \Q$detail\E/, "$label: and says what is wrong");
	($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS $query");
	isnt($ret, 0, "$label: a query through the index fails");
	like($err,
		qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block $block\b/,
		"$label: the query raises XX002 naming block $block");
	return;
}

with_corruption(
	label  => 'metapage magic',
	mutate => sub { set_u32($_[0], 24, 0xDEADBEEF) },
	check  => sub { check_corrupted('metapage magic', 0, 'bad metapage magic number.') });

with_corruption(
	label  => 'data page count',
	mutate => sub { set_u16($_[0], $blk1 + $SPECIAL, 0xFFFF) },
	check  => sub {
		check_corrupted('data page count', 1, 'entry count exceeds page capacity.');
	});

with_corruption(
	label  => 'data page special space',
	mutate => sub { set_u16($_[0], 2 * $BLCKSZ + 16, $SPECIAL - 8) },    # pd_special
	check  => sub {
		check_corrupted('data page special space', 2, 'not a bloomidx page.');
	});

with_corruption(
	label  => 'data page pd_lower',
	mutate => sub {
		my $b = shift;
		set_u16($b, $blk1 + 12, u16($b, $blk1 + 12) - $sigbytes);
	},
	check => sub {
		check_corrupted('data page pd_lower', 1, 'page header bounds out of place.');
	});

# The directory's head of the pending list past the end: the directory's
# own check catches it before anything follows the link.
with_corruption(
	label  => 'pending list head',
	mutate => sub { set_u32($_[0], 160, 999999) },
	check  => sub {
		check_corrupted('pending list head', 0,
			'segment directory or pending list damaged.');
	});

with_corruption(
	label  => 'heap TID',
	mutate => sub { set_u16($_[0], $tid0 + 4, 0) },    # offset 0
	check  => sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		like($err,
			qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block 1\b.*\n.*DETAIL:  Entry 0 points to \(0,0\), which is not a valid heap tuple/,
			'heap TID: bloomidx_verify raises XX002 naming block 1 and the entry');
		my $row1 = $node->safe_psql('postgres', 'SELECT a, d FROM c WHERE id = 1');
		my ($a1, $d1) = split /\|/, $row1;
		($ret, $err) = psql_verbose(
			"$BloomidxTAP::INDEX_GUCS SELECT count(*) FROM c WHERE a = $a1 AND d = $d1");
		like($err,
			qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block 1\b.*\n.*DETAIL:  heap TIDs do not match the page's sum/,
			'heap TID: a query matching the entry raises XX002 (the TID sum), not a lost row');
	});

# A pending row's filter key, from which a seal would build its segment's
# filter: verify names the entry, and a query matching it meets the tail
# sum (TID and keys), so no filter is ever built from it silently.
with_corruption(
	label  => 'filter key',
	mutate => sub {
		my $b = shift;
		substr($$b, $tid0 + 6, 1) = chr(ord(substr($$b, $tid0 + 6, 1)) ^ 0x20);
	},
	check => sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		like($err,
			qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block 1\b.*\n.*DETAIL:  Entry 0 \(heap tuple \Q$tid_text\E\) keeps filter keys that its tuple's values do not give/,
			'filter key: bloomidx_verify raises XX002 naming the entry');
		my ($a1, $d1) = split /\|/,
		  $node->safe_psql('postgres', 'SELECT a, d FROM c WHERE id = 1');
		($ret, $err) = psql_verbose(
			"$BloomidxTAP::INDEX_GUCS SELECT count(*) FROM c WHERE a = $a1 AND d = $d1");
		like($err,
			qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block 1\b.*\n.*DETAIL:  heap TIDs do not match the page's sum/,
			'filter key: a query matching the entry raises XX002 (the tail sum)');
	});

with_corruption(
	label  => 'signature bit',
	mutate => sub {
		my $b = shift;
		# clear the lowest set bit of entry 0's signature
		for my $i (0 .. $sigbytes - 1)
		{
			my $byte = ord(substr($$b, $blk1 + 24 + $i, 1));
			next unless $byte;
			substr($$b, $blk1 + 24 + $i, 1) = chr($byte & ($byte - 1));
			last;
		}
	},
	check => sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		like($err,
			qr/ERROR:  XX002: the entry of heap tuple \Q$tid_text\E of table "c" in index "c_bl" does not match the tuple.*\n.*DETAIL:  Entry 0 of block 1 lacks 1 of the \d+ bits/,
			'signature bit: bloomidx_verify raises XX002 naming the row');
		# The one promise: with data checksums off, the cleared bit would
		# have lost the row silently; the signatures' sum catches it.
		my ($a1, $d1) = split /\|/,
		  $node->safe_psql('postgres', 'SELECT a, d FROM c WHERE id = 1');
		($ret, $err) = psql_verbose(
			"$BloomidxTAP::INDEX_GUCS SELECT count(*) FROM c WHERE a = $a1 AND d = $d1");
		like($err,
			qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block 1\b.*\n.*DETAIL:  signatures do not match the page's sum/,
			'signature bit: a query for the row raises XX002, not a silent miss');
	});

with_corruption(
	label  => 'entry sums',
	mutate => sub { set_u16($_[0], $blk1 + $SPECIAL + 6, u16($_[0], $blk1 + $SPECIAL + 6) ^ 0x0100) },
	check  => sub {
		check_corrupted('entry sums', 1, "signatures do not match the page's sum.");
	});

with_corruption(
	label  => 'signature zeroed',
	mutate => sub { substr(${ $_[0] }, $blk1 + 24, $sigbytes) = "\0" x $sigbytes },
	check  => sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		like($err,
			qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block 1\b.*\n.*DETAIL:  Entry 0 \(heap tuple \Q$tid_text\E\) has 0 bits set/,
			'signature zeroed: bloomidx_verify raises XX002 naming block 1 and the entry');
	});

# An extension a crash interrupted leaves a page of zeros: no corruption.
with_corruption(
	label  => 'zeroed page at the end',
	keep   => 1,
	mutate => sub { ${ $_[0] } .= "\0" x $BLCKSZ },
	check  => sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		is($ret, 0, 'zeroed page: bloomidx_verify passes') or diag $err;
		load_rows($node, 'c', 3001, 6000);
		$node->safe_psql('postgres', 'DELETE FROM c WHERE id % 3 = 0; VACUUM c');
		load_rows($node, 'c', 6001, 7000);
		($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		is($ret, 0, 'zeroed page: verifies after inserts, VACUUM and more inserts')
		  or diag $err;
		is( $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $query"),
			$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $query"),
			'zeroed page: the index finds what a sequential scan finds');
	});

# A pending page's link cut short (the head's, to nothing): the walk ends
# early, which scans and verification notice against the metapage's count
# of pending pages, instead of missing the rows of the pages cut off.
my $npending;
with_corruption(
	label  => 'pending link',
	mutate => sub {
		my $b = shift;
		my $head = unpack('V', substr($$b, 160, 4));
		$npending = unpack('V', substr($$b, 172, 4));    # the directory's pending_pages
		set_u32($b, $head * $BLCKSZ + $SPECIAL + 10, 0);
	},
	check => sub {
		check_corrupted('pending link', 0,
			"The pending list ends after 1 of the $npending pages the metapage counts: a link is damaged.");
	});

# The metapage's pending tail a page of the index that is not on its
# list (a new page at the end): an insert links its page behind the tail the metapage names, so a
# stale tail would lose the rows linked there; only verification can tell
# (a tail of none with pages on the list fails the metapage's own check).  The directory carries a check of its fields
# (XXH3 of them, seeded: directory_check in core/segment_pages.cpp), put
# back together here, so that it is the tail that verification finds.
my $M64 = Math::BigInt->new(2)**64;

sub le64
{
	my ($bytes, $off) = @_;
	my ($lo, $hi) = unpack('VV', substr($bytes, $off, 8));
	return Math::BigInt->new($hi) * 4294967296 + $lo;
}

# XXH3_64bits_withSeed of 32 bytes (xxhash.h, XXH3_len_17to128_64b).
sub xxh3_64_32
{
	my ($input, $seed) = @_;
	my $secret = pack('C*',
		0xb8, 0xfe, 0x6c, 0x39, 0x23, 0xa4, 0x4b, 0xbe, 0x7c, 0x01, 0x81, 0x2c, 0xf7, 0x21, 0xad, 0x1c,
		0xde, 0xd4, 0x6d, 0xe9, 0x83, 0x90, 0x97, 0xdb, 0x72, 0x40, 0xa4, 0xa4, 0xb7, 0xb3, 0x67, 0x1f);
	my $s = Math::BigInt->new($seed);
	my $mix16 = sub {
		my ($off) = @_;
		my $lo = le64($input, $off) ^ ((le64($secret, $off) + $s) % $M64);
		my $hi = le64($input, $off + 8) ^ ((le64($secret, $off + 8) - $s) % $M64);
		my $product = $lo * $hi;
		return ($product % $M64) ^ ($product >> 64);
	};
	my $acc = (Math::BigInt->new('0x9E3779B185EBCA87') * 32 + $mix16->(0) + $mix16->(16)) % $M64;
	$acc ^= $acc >> 37;
	$acc = ($acc * Math::BigInt->new('0x165667919E3779F9')) % $M64;
	$acc ^= $acc >> 32;
	return $acc;
}

# The directory's header: 32 bytes at 152, its check the last 4.
sub directory_check
{
	my ($bytes) = @_;
	my $header = substr($bytes, 152, 28) . "\0" x 4;
	return (xxh3_64_32($header, 0x626C6478 ^ 0xD1) % 4294967296)->numify;
}
is(directory_check($orig), unpack('V', substr($orig, 180, 4)),
	'the test computes the directory check as bloomidx does');
with_corruption(
	label  => 'pending tail',
	mutate => sub {
		my $b = shift;
		# A new page at the end (as an interrupted extension leaves one):
		# within the file, and on no list whatever the pages before hold.
		$$b .= "\0" x $BLCKSZ;
		set_u32($b, 164, length($$b) / $BLCKSZ - 1);    # pending_tail
		set_u32($b, 180, directory_check($$b));
	},
	check => sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		isnt($ret, 0, 'pending tail: bloomidx_verify fails');
		like($err,
			qr/ERROR:  XX002: index "c_bl" contains a corrupted page at block 0\b/,
			'pending tail: bloomidx_verify raises XX002 naming the metapage');
		like($err, qr/DETAIL:  The metapage's pending list \(head \d+, tail \d+, \d+ pages\) does not end at its tail\./,
			'pending tail: and says the list does not end at its tail');
		is( $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $query"),
			$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $query"),
			'pending tail: a query still finds what a sequential scan finds');
	});

# An index of a newer on-disk format (a later bloomidx built it, then the
# server went back to this one): every use says so and what to do; the
# file put back, it answers again.
with_corruption(
	label  => 'metapage of format version 20',
	mutate => sub { set_u16($_[0], 24 + 4, 20) },
	check  => sub {
		my $new_format =
		  qr/ERROR:  XX002: index "c_bl" has on-disk format version 20, newer than the version 19 this bloomidx writes\n.*DETAIL:  A later bloomidx built it; the server now runs an older one\.\n.*HINT:  Install the bloomidx release that built it, or run REINDEX INDEX public\.c_bl to rebuild the index in this one's format\./;
		my ($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS $query");
		isnt($ret, 0, 'format version 20: a query through the index fails');
		like($err, $new_format, 'format version 20: the query says why and what to do');
		($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		like($err, $new_format, 'format version 20: so does bloomidx_verify');
	});

# An index of the previous on-disk format (12: filter groups of 15 slots,
# named after their first segment, which bloomidx 1.1 wrote) is not read as
# if it were current: every use says to REINDEX, and REINDEX does it.
# Last, as REINDEX gives the index a new file.
with_corruption(
	label  => 'metapage of format version 12',
	keep   => 1,
	mutate => sub { set_u16($_[0], 24 + 4, 12) },
	check  => sub {
		my $old_format =
		  qr/ERROR:  XX002: index "c_bl" has on-disk format version 12, older than the oldest version 19 this bloomidx reads\n.*DETAIL:  An earlier bloomidx built it\.\n.*HINT:  REINDEX INDEX public\.c_bl; rebuilds it in the current format\./;
		my ($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS $query");
		isnt($ret, 0, 'format version 12: a query through the index fails');
		like($err, $old_format, 'format version 12: the query says to REINDEX');
		($ret, $err) = psql_verbose("INSERT INTO c (id) VALUES (-1)");
		like($err, $old_format, 'format version 12: so does an INSERT');
		($ret, $err) = psql_verbose("REINDEX INDEX c_bl");
		is($ret, 0, 'format version 12: REINDEX rebuilds it') or diag $err;
		($ret, $err) = psql_verbose("SELECT bloomidx_verify('c_bl')");
		is($ret, 0, 'format version 12: verifies after REINDEX') or diag $err;
		is( $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $query"),
			$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $query"),
			'format version 12: after REINDEX the index finds what a sequential scan finds');
	});

# ------------------------------------------------------------------------
# VACUUM over a damaged page (src/vacuum.cpp says why): a WARNING naming the
# index and the block, and the page skipped, so that the table's VACUUM
# completes, removes its dead tuples and freezes; scans and bloomidx_verify
# still report the damage, and REINDEX clears it.  A table of its own, with
# no autovacuum to remove the dead tuples first, indexed empty so that
# its rows are pending.

create_test_table($node, 'vd');
$node->safe_psql('postgres', q{
ALTER TABLE vd SET (autovacuum_enabled = false);
CREATE INDEX vd_bl ON vd USING bloomidx (a, b, c, d);
});
load_rows($node, 'vd', 1, 3000);
$node->safe_psql('postgres', 'DELETE FROM vd WHERE id % 2 = 0');
$file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('vd_bl')");
my $vd_query = "SELECT count(*) FROM vd WHERE a = $a5";
my $frozen_before =
  $node->safe_psql('postgres', "SELECT relfrozenxid FROM pg_class WHERE relname = 'vd'");
with_corruption(
	label  => 'VACUUM over a damaged page',
	keep   => 1,    # REINDEX below gives the index a new file
	mutate => sub {
		my $b = shift;
		set_u16($b, $blk1 + 12, u16($b, $blk1 + 12) - $sigbytes);    # pd_lower
	},
	check => sub {
		my ($ret, $err) = psql_verbose('VACUUM (FREEZE) vd');
		is($ret, 0, 'damaged page: VACUUM completes') or diag $err;
		like($err,
			qr/WARNING:  XX002: index "vd_bl" contains a corrupted page at block 1\b.*\n.*DETAIL:  page header bounds out of place\.  VACUUM skipped the page.*\n.*HINT:  Please REINDEX it\./,
			'damaged page: VACUUM warns with XX002, naming the index and the block');
		is( $node->safe_psql('postgres',
				"SELECT n_dead_tup FROM pg_stat_user_tables WHERE relname = 'vd'"),
			'0', 'damaged page: the dead tuples are removed from the table');
		isnt(
			$node->safe_psql('postgres',
				"SELECT relfrozenxid FROM pg_class WHERE relname = 'vd'"),
			$frozen_before,
			'damaged page: the table is frozen (relfrozenxid moves)');
		($ret, $err) = psql_verbose("SELECT bloomidx_verify('vd_bl')");
		like($err,
			qr/ERROR:  XX002: index "vd_bl" contains a corrupted page at block 1\b/,
			'damaged page: bloomidx_verify still reports it');
		($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS $vd_query");
		like($err,
			qr/ERROR:  XX002: index "vd_bl" contains a corrupted page at block 1\b/,
			'damaged page: a query through the index still reports it');
		$node->safe_psql('postgres', 'REINDEX INDEX vd_bl');
		($ret, $err) = psql_verbose("SELECT bloomidx_verify('vd_bl')");
		is($ret, 0, 'damaged page: REINDEX clears it') or diag $err;
		is( $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $vd_query"),
			$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $vd_query"),
			'damaged page: after REINDEX the index finds what a sequential scan finds');
	});

# ------------------------------------------------------------------------
# Segments (src/storage/README.md): damage to a slice page, a TID page, the live
# page or a directory entry is an XX002 error naming the block, in
# bloomidx_verify and in the queries that read it, never a missed row.
# Small segments, so that a small table has several.

create_test_table($node, 's');
load_rows($node, 's', 1, 3000);
$node->safe_psql('postgres',
	'SET bloomidx.segment_rows = 1000; CREATE INDEX s_bl ON s USING bloomidx (a, b, c, d)');
is( $node->safe_psql('postgres',
		'SELECT segments, pending_rows FROM bloomidx_index_info(\'s_bl\')'),
	'3|0', 'segments: three of 1,000 rows, nothing pending');
$file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('s_bl')");
$node->safe_psql('postgres', 'CHECKPOINT');
$orig = read_file_raw();
my $seg_header = unpack('V', substr($orig, 184 + 4, 4));
my $seg_first_slice = unpack('V', substr($orig, 184 + 8, 4));
my $seg_live = unpack('V', substr($orig, $seg_header * $BLCKSZ + 24 + 8, 4));
my $seg_tids = unpack('V', substr($orig, $seg_header * $BLCKSZ + 24 + 24, 4));
note "segment 1: header $seg_header, slices from $seg_first_slice, live $seg_live, TIDs $seg_tids";
my $s_query = "SELECT count(*) FROM s WHERE a = $a5 AND d = $d5";

# Verification and a query for row 5 (in the first segment) fail with XX002,
# verification naming $block, the query some block of the segment.
sub check_segment_damage
{
	my ($label, $block, $detail, $query_detail) = @_;
	my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('s_bl')");
	like($err,
		qr/ERROR:  XX002: index "s_bl" contains a corrupted page at block $block\b.*\n.*DETAIL:  \Q$detail\E/,
		"$label: bloomidx_verify raises XX002 naming block $block");
	($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS $s_query");
	isnt($ret, 0, "$label: a query through the index fails, it does not miss the row");
	like($err, qr/ERROR:  XX002: index "s_bl" contains a corrupted page at block \d+\b.*\n.*DETAIL:  \Q$query_detail\E/,
		"$label: the query raises XX002");
	return;
}

# The index's file ($orig, its bytes) damaged by $mutate, $check run, then
# the file put back: $index verifies again.
sub with_damage
{
	my ($label, $orig, $index, $mutate, $check) = @_;
	$node->stop;
	my $bytes = $orig;
	$mutate->(\$bytes);
	write_file_raw($bytes);
	$node->start;
	$check->();
	server_is_fine($label);
	$node->stop;
	write_file_raw($orig);
	$node->start;
	my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('$index')");
	is($ret, 0, "$label: verifies again once the file is put back") or diag $err;
	return;
}

sub with_segment_damage
{
	my ($label, $mutate, $check) = @_;
	with_damage($label, $orig, 's_bl', $mutate, $check);
	return;
}

# One bit cleared in every slice page of the first segment (its slices
# packed, several a page: the pages before its live page): whichever
# slices the query reads, it meets one.
with_segment_damage(
	'slice bits',
	sub {
		my $b = shift;
		for my $blkno ($seg_first_slice .. $seg_live - 1)
		{
			my $at = $blkno * $BLCKSZ + 24;
			my $word = substr($$b, $at, 8);
			substr($$b, $at, 8) = pack('Q<', unpack('Q<', $word) ^ 1);
		}
	},
	sub {
		check_segment_damage('slice bits', $seg_first_slice,
			"slice bits do not match the page's sum.",
			"slice bits do not match the page's sum.");
	});

with_segment_damage(
	'TID bytes',
	sub { my $b = shift; substr($$b, $seg_tids * $BLCKSZ + 30, 1) ^= "\x01"; },
	sub {
		check_segment_damage('TID bytes', $seg_tids,
			"TID bytes do not match the page's sum.",
			"TID bytes do not match the page's sum.");
	});

# While every row of a segment is live (its directory entry says so), a
# query does not read the live page: damage there costs no row.
with_segment_damage(
	'live bits',
	sub { my $b = shift; substr($$b, $seg_live * $BLCKSZ + 24, 1) ^= "\x01"; },
	sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('s_bl')");
		like($err,
			qr/ERROR:  XX002: index "s_bl" contains a corrupted page at block $seg_live\b.*\n.*DETAIL:  live bits do not match the page's sum\./,
			"live bits: bloomidx_verify raises XX002 naming block $seg_live and its live bits");
		is( $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $s_query"),
			$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $s_query"),
			'live bits: a query, which needs no live page while every row is live, is right');
	});

# The first row's bit cleared in every slice of the first segment (slices
# of 1,000 rows take 128 bytes, 63 a page: each slice's first word at a
# multiple of 128 bytes), each page's sum (16-bit word i weighed 2i + 1)
# kept: no sum disagrees, and a query misses the row, so verify counts each
# row's bits from the slices and names the entry with none.
my ($s_row0_a, $s_row0_d) = split /\|/,
  $node->safe_psql('postgres', "SELECT a, d FROM s WHERE ctid = '(0,1)'");
my $s_row0_query = "SELECT count(*) FROM s WHERE a = $s_row0_a AND d = $s_row0_d";
with_segment_damage(
	'row bits',
	sub {
		my $b = shift;
		for my $blkno ($seg_first_slice .. $seg_live - 1)
		{
			my $sum = u16($b, $blkno * $BLCKSZ + $SPECIAL + 6);
			for (my $off = 0; $off + 8 <= 8128; $off += 128)
			{
				my $at = $blkno * $BLCKSZ + 24 + $off;
				my $word = u16($b, $at);
				my $i = $off / 2;
				$sum = ($sum - (2 * $i + 1) * ($word & 1)) % 65536;
				set_u16($b, $at, $word & ~1);
			}
			set_u16($b, $blkno * $BLCKSZ + $SPECIAL + 6, $sum);
		}
	},
	sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('s_bl')");
		like($err,
			qr/ERROR:  XX002: index "s_bl" contains a corrupted page at block $seg_header\b.*\n.*DETAIL:  Entry 0 \(heap tuple \(0,1\)\) has 0 bits set, fewer than the \d+ that column \d+ sets alone\./,
			'row bits: bloomidx_verify raises XX002 naming the segment and its entry 0');
		isnt($node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $s_row0_query"),
			$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $s_row0_query"),
			'row bits: a query, which trusts the slices, misses the row verify names');
		($ret, $err) = psql_verbose("SET maintenance_work_mem = '1MB'; SELECT bloomidx_verify('s_bl')");
		like($err, qr/DETAIL:  Entry 0 \(heap tuple \(0,1\)\) has 0 bits set/,
			'row bits: the same at 1MB');
	});

with_segment_damage(
	'directory entry',
	sub { my $b = shift; set_u32($b, 184 + 8, $seg_first_slice + 1); },
	sub {
		check_segment_damage('directory entry', 0,
			'Segment directory entry 0 is damaged.',
			'Segment directory entry 0 is damaged.');
	});

# Segment filters (src/storage/README.md, *Segment filters*): the segments'
# group, named in each directory entry (its header block at byte 16 of the
# entry), a header then region pages.  Damage to either is XX002, never a
# segment skipped on a damaged filter.
my $group = unpack('V', substr($orig, 184 + 16, 4));
ok($group > 0, "segments: the first segment has a filter group (block $group)");
with_segment_damage(
	'filter bits',
	sub {
		my $b = shift;
		my $pages = unpack('V', substr($$b, $group * $BLCKSZ + 24 + 8, 4));
		for my $p (1 .. $pages)
		{
			substr($$b, ($group + $p) * $BLCKSZ + 24 + 64 * ($p % 3), 1) ^= "\x04";
		}
	},
	sub {
		check_segment_damage('filter bits', $group + 1,
			'segment filter bits damaged.', 'segment filter bits damaged.');
	});
with_segment_damage(
	'filter group header',
	sub { my $b = shift; substr($$b, $group * $BLCKSZ + 24 + 20, 1) ^= "\x01"; },
	sub {
		check_segment_damage('filter group header', $group,
			'filter group page out of place.', 'filter group page out of place.');
	});

# ------------------------------------------------------------------------
# Directory pages (past the metapage's 224 entries): damage to one, or to
# the metapage's list of them, is an XX002 error naming the block, in
# bloomidx_verify and in queries, never segments left out.  Segments of 64
# rows make 250 segments of 16,000 rows: 26 entries on one directory page.

create_test_table($node, 'dp');
load_rows($node, 'dp', 1, 16000);
$node->safe_psql('postgres',
	'SET bloomidx.segment_rows = 64; SET max_parallel_maintenance_workers = 0; '
	  . 'CREATE INDEX dp_bl ON dp USING bloomidx (a)');
is( $node->safe_psql('postgres',
		'SELECT segments FROM bloomidx_index_info(\'dp_bl\')'),
	'250', 'directory pages: 250 segments');
$file = $node->data_dir . '/'
  . $node->safe_psql('postgres', "SELECT pg_relation_filepath('dp_bl')");
$node->safe_psql('postgres', 'CHECKPOINT');
my $dp_orig = read_file_raw();
my $dir_block = unpack('V', substr($dp_orig, 7352 + 8, 4));    # DirectoryPageList.blocks[0]
my $dp_query = 'SELECT count(*) FROM dp WHERE a = (SELECT a FROM dp WHERE id = 15990)';
note "directory page at block $dir_block";

for my $case (
	[ 'directory page entry', $dir_block, sub { substr(${ $_[0] }, $dir_block * $BLCKSZ + 24 + 25 * 32 + 8, 1) ^= "\x04" } ],
	[ 'directory page list', 0, sub { set_u32($_[0], 7352 + 8, $dir_block - 1) } ])
{
	my ($label, $block, $mutate) = @$case;
	$node->stop;
	my $bytes = $dp_orig;
	$mutate->(\$bytes);
	write_file_raw($bytes);
	$node->start;
	my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('dp_bl')");
	like($err,
		qr/ERROR:  XX002: index "dp_bl" contains a corrupted page at block $block\b.*\n.*DETAIL:  segment directory or pending list damaged\./,
		"$label: bloomidx_verify raises XX002 naming block $block");
	($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS $dp_query");
	isnt($ret, 0, "$label: a query through the index fails, it does not miss the rows");
	like($err, qr/ERROR:  XX002: index "dp_bl" contains a corrupted page at block $block\b/,
		"$label: the query raises XX002");
	server_is_fine($label);
	$node->stop;
	write_file_raw($dp_orig);
	$node->start;
	($ret, $err) = psql_verbose("SELECT bloomidx_verify('dp_bl')");
	is($ret, 0, "$label: verifies again once the file is put back") or diag $err;
}
is( $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $dp_query"),
	$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $dp_query"),
	'directory pages: a query of rows whose entry is on a directory page is right');

# VACUUM's gathering of filter groups (src/storage/filter_gather.cpp): a
# damaged region page in one sealed segment's group is warned of and left
# where it is, the other groups gathered without it; a query that reads it
# still fails with XX002, never misses a row.  The file put back, the next
# VACUUM gathers that group too.
create_test_table($node, 'fg');
$node->safe_psql('postgres', 'CREATE INDEX fg_bl ON fg USING bloomidx (a, b, c, d)');
load_rows($node, 'fg', 1, 4000);
$node->safe_psql('postgres', "SET bloomidx.segment_rows = 500; SELECT bloomidx_seal('fg_bl')");
my $fg_groups_sql =
  q{SELECT count(DISTINCT substring(detail FROM 'filter group (\d+)')) FROM bloomidx_page_items('fg_bl', 0) WHERE item_kind = 'segment entry'};
my $fg_groups = $node->safe_psql('postgres', $fg_groups_sql);
cmp_ok($fg_groups, '>=', 5, "gathering: $fg_groups sealed segments, a filter group each");
my ($fg_segment, $fg_header) = split /\|/, $node->safe_psql('postgres',
	q{SELECT substring(detail FROM 'segment (\d+)'), substring(detail FROM 'filter block (\d+)') FROM bloomidx_page_items('fg_bl', 0) WHERE item = 0 AND item_kind = 'segment entry'});
my $fg_region = $node->safe_psql('postgres',
	"SELECT substring(detail FROM 'block (\\d+)') FROM bloomidx_page_items('fg_bl', $fg_header) WHERE item_kind = 'region page' LIMIT 1");
note "gathering: segment $fg_segment, its group at $fg_header, region page $fg_region";
$file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('fg_bl')");
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
my $fg_orig = read_file_raw();
my $fg_bytes = $fg_orig;
substr($fg_bytes, $fg_region * $BLCKSZ + 24 + 10, 1) ^= "\x10";
write_file_raw($fg_bytes);
$node->start;
{
	# (In the seals' segment size, so that VACUUM does not merge them first.)
	my ($ret, $err) = psql_verbose('SET bloomidx.segment_rows = 500; VACUUM fg');
	is($ret, 0, 'gathering: VACUUM runs on an index with a damaged filter page') or diag $err;
	like($err,
		qr/WARNING:  XX002: index "fg_bl" contains a corrupted page at block $fg_region\b.*\n.*DETAIL:  segment filter bits damaged\.  VACUUM left the filters of segment $fg_segment in their group\./,
		'gathering: VACUUM warns of the damaged page and leaves its group');
	my $after = $node->safe_psql('postgres', $fg_groups_sql);
	cmp_ok($after, '<', $fg_groups - 1, "gathering: the other groups were gathered ($fg_groups groups, $after after)");
	cmp_ok($after, '>=', 2, 'gathering: the damaged one stays apart');
	my $q = "SELECT count(*) FROM fg WHERE a = -1";
	($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS $q");
	like($err, qr/ERROR:  XX002: index "fg_bl" contains a corrupted page at block $fg_region\b/,
		'gathering: a query that reads the damaged page raises XX002');
	server_is_fine('gathering');
}
$node->stop;
write_file_raw($fg_orig);
$node->start;
$node->safe_psql('postgres', 'SET bloomidx.segment_rows = 500; VACUUM fg');
cmp_ok($node->safe_psql('postgres', $fg_groups_sql), '<=', 2,
	'gathering: the file put back, VACUUM gathers every group');
verify_index($node, 'fg_bl', 'gathering, file put back');
my $fg_check = q{SELECT string_agg(n::text, ',' ORDER BY v) FROM generate_series(-10, 2000, 37) v,
    LATERAL (SELECT count(*) AS n FROM fg WHERE a = v) q};
is( $node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $fg_check"),
	$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $fg_check"),
	'gathering, file put back: 55 lookups through the index count as a sequential scan');


# ------------------------------------------------------------------------
# Pending groups (src/storage/pending_filters.cpp): filters over the
# pending pages that filled, a run of the pending list.  A scan trusts a
# slot's filter as it trusts a segment's: a slot's filter blocks cleared
# (and the page's sum made to match) lose its page's rows from queries
# without a word, so bloomidx_verify probes each pending row's filter keys
# in its slot's filters and names the region page.  The pending list's
# links are not summed: two pages swapped in it break the run the groups
# cover (a seal would follow the links), which verify names at the group's
# header.  Signatures of 512 bits: 94 rows a pending page, 4,000 rows
# about 43 pages, past the twice a group's pages where groups start.

create_test_table($node, 'pg');
$node->safe_psql('postgres',
	'CREATE INDEX pg_bl ON pg USING bloomidx (a, b, c, d) WITH (length = 512)');
load_rows($node, 'pg', 1, 4000);
$file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('pg_bl')");
my ($pg_header, $pg_group) = $node->safe_psql('postgres',
	"SELECT detail FROM bloomidx_page_items('pg_bl', 0) WHERE item IS NULL")
  =~ /, pending group (\d+) \(id (\d+)\)$/;
ok(defined $pg_group, 'pending groups: the metapage names the first')
  or BAIL_OUT('no pending group to damage');
verify_index($node, 'pg_bl', 'pending groups');
my @pg_slots = split /\n/, $node->safe_psql('postgres',
	"SELECT substring(detail FROM '^pending page (\\d+)\$') FROM bloomidx_page_items('pg_bl', $pg_header) WHERE item_kind = 'slot' ORDER BY item");
cmp_ok(scalar @pg_slots, '>=', 4, 'pending groups: the first group has slots');
# Column 1's block rows: region page and row on it (8 rows of 127 blocks
# of 8 bytes a page, format 18).
my %pg_column1;
for my $row (split /\n/, $node->safe_psql('postgres',
	qq{SELECT r.b || ' ' || p.item FROM (SELECT substring(detail FROM '^block (\\d+)\$')::int AS b
	                    FROM bloomidx_page_items('pg_bl', $pg_header) WHERE item_kind = 'region page') r,
	           bloomidx_page_items('pg_bl', r.b) p
	    WHERE p.item_kind = 'block row' AND p.detail LIKE 'column 1,%'}))
{
	my ($blkno, $item) = split / /, $row;
	push @{ $pg_column1{$blkno} }, $item;
}
cmp_ok(scalar keys %pg_column1, '>=', 1, 'pending groups: column 1 has region pages');
# Entry 0 of slot 1's page: its row, and a query for its value of a.
my $pg_tid = $node->safe_psql('postgres', "SELECT tid FROM bloomidx_page_items('pg_bl', $pg_slots[1]) WHERE item = 0");
my $pg_query = 'SELECT count(*) FROM pg WHERE a = ' . $node->safe_psql('postgres', "SELECT a FROM pg WHERE ctid = '$pg_tid'");
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
my $pg_orig = read_file_raw();
$node->start;

sub with_pending_damage
{
	my ($label, $mutate, $check) = @_;
	with_damage($label, $pg_orig, 'pg_bl', $mutate, $check);
	return;
}

# Slot 1's blocks of column 1 zeroed in every block row of column 1 (row
# r of a page at byte 24 + 1,016 r, slot s's block 8 bytes at 8 s in it),
# each page's sum (16-bit word i of the rows weighed 2i + 1) kept.
with_pending_damage(
	'pending filter',
	sub {
		my $b = shift;
		for my $blkno (keys %pg_column1)
		{
			my $sum = u16($b, $blkno * $BLCKSZ + $SPECIAL + 6);
			for my $i (map { my $w = $_ * 508 + 4; ($w .. $w + 3) } @{ $pg_column1{$blkno} })
			{
				my $at = $blkno * $BLCKSZ + 24 + 2 * $i;
				$sum = ($sum - (2 * $i + 1) * u16($b, $at)) % 65536;
				set_u16($b, $at, 0);
			}
			set_u16($b, $blkno * $BLCKSZ + $SPECIAL + 6, $sum);
		}
	},
	sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('pg_bl')");
		my ($block) = $err =~ /ERROR:  XX002: index "pg_bl" contains a corrupted page at block (\d+)\b.*\n.*DETAIL:  \QSlot 1 of pending group $pg_group lacks the filter key of column 1 of entry 0 of pending page $pg_slots[1]: a scan would skip the row.\E/;
		ok(defined $block && $pg_column1{$block},
			'pending filter: bloomidx_verify raises XX002 naming a region page of column 1 and the entry')
		  or diag $err;
		isnt($node->safe_psql('postgres', "$BloomidxTAP::INDEX_GUCS $pg_query"),
			$node->safe_psql('postgres', "$BloomidxTAP::SEQ_GUCS $pg_query"),
			'pending filter: a query, which trusts the filter, misses the row verify names');
	});

# Slots 1, 2, 3's pages P1 -> P2 -> P3 -> P4 linked P1 -> P3 -> P2 -> P4
# (the next block in the special space's reserved words, at 10): every
# page still on the list, once.
with_pending_damage(
	'pending run',
	sub {
		my $b = shift;
		my ($p1, $p2, $p3) = @pg_slots[ 1 .. 3 ];
		my $next = sub { unpack('V', substr($$b, $_[0] * $BLCKSZ + $SPECIAL + 10, 4)) };
		my $p4 = $next->($p3);
		set_u32($b, $p1 * $BLCKSZ + $SPECIAL + 10, $p3);
		set_u32($b, $p3 * $BLCKSZ + $SPECIAL + 10, $p2);
		set_u32($b, $p2 * $BLCKSZ + $SPECIAL + 10, $p4);
	},
	sub {
		my ($ret, $err) = psql_verbose("SELECT bloomidx_verify('pg_bl')");
		like($err,
			qr/ERROR:  XX002: index "pg_bl" contains a corrupted page at block $pg_header\b.*\n.*DETAIL:  \QSlot 2 of pending group $pg_group names page $pg_slots[2], but the pending list links slot 1's page $pg_slots[1] to page $pg_slots[3].\E/,
			'pending run: bloomidx_verify raises XX002 naming the group\'s header and the link');
	});

# ------------------------------------------------------------------------
# More entries for one heap block than verify's budget: at
# maintenance_work_mem = 1MB, 4,096 entries of a 4,096-bit index, far
# past the tuples a heap page holds, so only damage makes it.  Every
# pending row pointed at heap block 0 (its tuples' offsets, in turn), each
# page's TID sum kept: each pass narrows the batch, to block 0 alone, which
# still overflows, and verify reports that as corruption (naming the
# block) instead of narrowing for ever (a statement_timeout ends the test
# if it does).

create_test_table($node, 'ob');
$node->safe_psql('postgres',
	'CREATE INDEX ob_bl ON ob USING bloomidx (a) WITH (length = 4096)');
load_rows($node, 'ob', 1, 4200);
is($node->safe_psql('postgres', "SELECT pending_rows FROM bloomidx_index_info('ob_bl')"),
	'4200', 'one block: every row pending');
my $ob_tuples = $node->safe_psql('postgres', "SELECT count(*) FROM ob WHERE ctid < '(1,0)'");
cmp_ok($ob_tuples, '>', 1, 'one block: heap block 0 holds several tuples');
$file = $node->data_dir . '/' . $node->safe_psql('postgres', "SELECT pg_relation_filepath('ob_bl')");
$node->safe_psql('postgres', 'CHECKPOINT');
$node->stop;
my $ob_orig = read_file_raw();
$node->start;
my $ob_tail = 6 + (u16(\$ob_orig, 42) ? 4 * u16(\$ob_orig, 38) : 0);
my $ob_rows = 0;

with_damage(
	'one block',
	$ob_orig, 'ob_bl',
	sub {
		my $b = shift;
		for my $blkno (1 .. length($$b) / $BLCKSZ - 1)
		{
			my $page = $blkno * $BLCKSZ;
			next unless u16($b, $page + $SPECIAL + 2) == 2;    # a pending page
			my $sum = u16($b, $page + $SPECIAL + 8);
			for my $i (0 .. u16($b, $page + $SPECIAL) - 1)
			{
				my $at = $page + $SPECIAL - ($i + 1) * $ob_tail;
				my @new = (0, 0, 1 + $ob_rows++ % $ob_tuples);
				for my $w (0 .. 2)
				{
					$sum = ($sum - u16($b, $at + 2 * $w) + $new[$w]) % 65536;
					set_u16($b, $at + 2 * $w, $new[$w]);
				}
			}
			set_u16($b, $page + $SPECIAL + 8, $sum);
		}
	},
	sub {
		cmp_ok($ob_rows, '>', 4096, 'one block: more than 4,096 rows pointed at block 0');
		my ($ret, $err) = psql_verbose(
			"SET statement_timeout = '120s'; SET maintenance_work_mem = '1MB'; SELECT bloomidx_verify('ob_bl')");
		like($err,
			qr/ERROR:  XX002: index "ob_bl" has more than 4096 entries for heap block 0 of table "ob"/,
			'one block: bloomidx_verify raises XX002 naming heap block 0')
		  or diag $err;
		# A scan checks the TID sum of every pending page where a row matched.
		($ret, $err) = psql_verbose("$BloomidxTAP::INDEX_GUCS SELECT count(*) FROM ob WHERE a = 17");
		is($ret, 0, 'one block: a query through the index matches rows on the pages: their sums were kept')
		  or diag $err;
	});

$node->stop;
done_testing();
