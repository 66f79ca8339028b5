#!/usr/bin/perl
# Writes the pg_regress input that runs every SQL example of README.md and
# of the documents beside it in doc/ (sql/readme.sql), so that the
# examples cannot rot: each ```sql block, in order, preceded by a comment
# naming its file and section (not its line, so that prose edits leave the
# test's output alone), and the hidden setup the files carry in HTML
# comments that begin "<!-- regress:" (a table for an example to query, a
# database of its own), which a reader of the rendered page does not see.
#
# README.md comes first, then the other files in the order of their names,
# so that a document's examples may use what the README's made.  What
# must run after every file (dropping the examples' database) is written
# once, in the README, in comments that begin "<!-- regress-end:", and
# comes last.
#
#   perl test/readme/readme_sql.pl README.md doc/*.md > sql/readme.sql
#   perl test/readme/readme_sql.pl --check sql/readme.sql README.md doc/*.md
#
# --check exits non-zero, saying what to run, when the file is not what
# the documents give (run by test/run-tests.sh's regress suite).
use strict;
use warnings;

my $target;
if (@ARGV && $ARGV[0] eq '--check')
{
	shift @ARGV;
	$target = shift @ARGV;
}
my ($readme, @docs) = @ARGV;
die "usage: $0 [--check sql/readme.sql] README.md [doc/NAME.md ...]\n"
  unless defined $readme;

my $out = "-- Generated from README.md and doc/*.md by test/readme/readme_sql.pl:\n"
  . "-- do not edit; change the documents and run `make sql/readme.sql`.\n";
my ($end, $blocks) = ('', 0);

# Appends one file's examples and hidden setup to $out, and its
# regress-end comments to $end; returns how many examples it has.
sub examples_of
{
	my ($file, $may_end) = @_;
	open(my $in, '<', $file) or die "cannot read $file: $!\n";
	my @lines = <$in>;
	close $in;

	my ($in_sql, $in_hidden, $hidden_kind, $count) = (0, undef, '', 0);
	my ($section, $in_section, $in_other) = ('(top)', 0, 0);
	for my $n (0 .. $#lines)
	{
		my $line = $lines[$n];
		my $where = "$file, line " . ($n + 1);
		if ($in_sql)
		{
			if ($line =~ /^```\s*$/) { $in_sql = 0; next; }
			die "$where: close an SQL example with ``` alone at the line's start\n"
			  if $line =~ /^\s*(?:`{3,}|~{3,})/;
			$out .= $line;
		}
		elsif ($in_hidden)
		{
			my $text = $line;
			my $closes = $text =~ s/-->\s*$/\n/;
			$text = '' if $closes && $text =~ /^\s*$/;
			${$in_hidden} .= $text;
			$in_hidden = undef if $closes;
		}
		elsif ($in_other)
		{
			if ($line =~ /^```\s*$/) { $in_other = 0; next; }
			# A fence inside a block (a block of Markdown showing one) would
			# make this script and the renderer disagree on where blocks end.
			die "$where: a fence inside a ``` block: this script reads no nested blocks\n"
			  if $line =~ /^\s*(?:`{3,}|~{3,})/;
		}
		elsif ($line =~ /^```sql\s*$/)
		{
			$in_sql = 1;
			$count++;
			$in_section++;
			$out .= "\n-- $file, $section, example $in_section\n";
		}
		elsif ($line =~ /^\s*(?:`{3,}|~{3,})\s*(?:sql|psql|pgsql|plpgsql|postgres|postgresql)\b/i)
		{
			die "$where: write SQL examples as ```sql alone on the line, which the tests run\n";
		}
		elsif ($line =~ /^```[A-Za-z0-9_+-]*\s*$/)
		{
			$in_other = 1;    # another language's block, whose '#' lines are not headings
		}
		elsif ($line =~ /^\s*(?:`{3,}|~{3,})/)
		{
			# Indented, ~~~, longer or with more than a language: a block
			# this script might misread, and whose SQL it would not run.
			die "$where: write code blocks as ``` or ```LANGUAGE at the line's start\n";
		}
		elsif ($line =~ /^#+\s+(.*?)\s*$/)
		{
			($section, $in_section) = ($1, 0);
		}
		elsif ($line =~ /^<!-- regress(-end)?:\s*(.*?)\s*(-->)?\s*$/)
		{
			die "$where: only $readme may hold <!-- regress-end: (it runs last)\n"
			  if defined $1 && !$may_end;
			die "$where: nothing may follow --> on a regress comment's line\n" if $2 =~ /-->/;
			$hidden_kind = defined $1 ? 'regress-end' : 'regress';
			my $into = defined $1 ? \$end : \$out;
			${$into} .= "\n-- $file, $section (hidden " . (defined $1 ? 'teardown' : 'setup') . ")\n";
			${$into} .= "$2\n" if $2 ne '';
			$in_hidden = defined $3 ? undef : $into;
		}
	}
	die "$file: a ```sql block is not closed\n" if $in_sql;
	die "$file: a <!-- $hidden_kind: comment is not closed\n" if $in_hidden;
	return $count;
}

$blocks += examples_of($readme, 1);
$blocks += examples_of($_, 0) for sort @docs;
die "$readme: no ```sql block\n" unless $blocks;
$out .= $end;

if (defined $target)
{
	open(my $t, '<', $target) or die "cannot read $target: $!\n";
	local $/;
	my $have = <$t>;
	close $t;
	if ($have ne $out)
	{
		print STDERR "$target is not what the documents give: run `make sql/readme.sql` and commit it\n";
		exit 1;
	}
	print "$target holds the $blocks SQL examples of $readme and doc/\n";
	exit 0;
}
print $out;
