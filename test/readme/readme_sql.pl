#!/usr/bin/perl
# Writes the pg_regress input that runs every SQL example of README.md
# (sql/readme.sql), so that the README's examples cannot rot: each
# ```sql block, in order, preceded by a comment naming its section (not
# its line, so that prose edits leave the test's output alone), and the
# hidden setup the README carries in HTML comments that begin
# "<!-- regress:" (a table for an example to query, a database of its
# own), which a reader of the rendered README does not see.
#
#   perl test/readme/readme_sql.pl README.md > sql/readme.sql
#   perl test/readme/readme_sql.pl --check README.md sql/readme.sql
#
# --check exits non-zero, saying what to run, when the file is not what
# the README gives (run by test/run-tests.sh's regress suite).
use strict;
use warnings;

my $check = @ARGV && $ARGV[0] eq '--check' ? shift @ARGV : undef;
my ($readme, $target) = @ARGV;
die "usage: $0 [--check] README.md [sql/readme.sql]\n"
  unless defined $readme && (!$check || defined $target);

open(my $in, '<', $readme) or die "cannot read $readme: $!\n";
my @lines = <$in>;
close $in;

my $out = "-- Generated from README.md by test/readme/readme_sql.pl: do not edit;\n"
  . "-- change the README and run `make sql/readme.sql`.\n";
my ($in_sql, $in_hidden, $blocks) = (0, 0, 0);
my ($section, $in_section, $in_other) = ('(top)', 0, 0);
for my $n (0 .. $#lines)
{
	my $line = $lines[$n];
	if ($in_sql)
	{
		if ($line =~ /^```\s*$/) { $in_sql = 0; next; }
		$out .= $line;
	}
	elsif ($in_hidden)
	{
		if ($line =~ /^(.*?)-->\s*$/) { $out .= "$1\n" if $1 ne ''; $in_hidden = 0; next; }
		$out .= $line;
	}
	elsif ($in_other)
	{
		$in_other = 0 if $line =~ /^```\s*$/;
	}
	elsif ($line =~ /^```sql\s*$/)
	{
		$in_sql = 1;
		$blocks++;
		$in_section++;
		$out .= "\n-- README.md, $section, example $in_section\n";
	}
	elsif ($line =~ /^```\s*(?:sql|psql|pgsql|plpgsql|postgres|postgresql)\s*$/i)
	{
		die "$readme, line " . ($n + 1) . ": write SQL examples as ```sql, which the tests run\n";
	}
	elsif ($line =~ /^```/)
	{
		$in_other = 1;    # another language's block, whose '#' lines are not headings
	}
	elsif ($line =~ /^#+\s+(.*?)\s*$/)
	{
		($section, $in_section) = ($1, 0);
	}
	elsif ($line =~ /^<!-- regress:\s*(.*?)\s*(-->)?\s*$/)
	{
		$out .= "\n-- README.md, $section (hidden setup)\n";
		$out .= "$1\n" if $1 ne '';
		$in_hidden = !defined $2;
	}
}
die "$readme: a ```sql block is not closed\n" if $in_sql;
die "$readme: a <!-- regress: comment is not closed\n" if $in_hidden;
die "$readme: no ```sql block\n" unless $blocks;

if ($check)
{
	open(my $t, '<', $target) or die "cannot read $target: $!\n";
	local $/;
	my $have = <$t>;
	close $t;
	if ($have ne $out)
	{
		print STDERR "$target is not what $readme gives: run `make sql/readme.sql` and commit it\n";
		exit 1;
	}
	print "$target holds the $blocks SQL examples of $readme\n";
	exit 0;
}
print $out;
