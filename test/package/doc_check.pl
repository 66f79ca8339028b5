#!/usr/bin/perl
#
# doc_check.pl: checks that the documents say what the tree is, so that
# they cannot drift from it unseen.
#
#   perl test/package/doc_check.pl [REPO]     (default: this script's checkout)
#
# - The README is a user's guide of at most 800 lines, and it links every
#   document in doc/.
# - Every relative link of README.md and doc/*.md names a file that exists,
#   and its #anchor, if any, a heading of that file (GitHub's anchors).
# - Every on-disk format version the documents state is kMetaVersion
#   (src/core/page_layout.hpp), and the two version errors they show are
#   one older than kMetaVersionOldest, the oldest read, and one newer.
# - The extension version the documents state is bloomidx.control's
#   default_version.
# - doc/how-it-works.md's "The source tree" lists every file of src/, once,
#   under the heading of its folder, and no file that is not there.
#
# Prints "ok: ..." and exits 0, or prints each problem and exits 1.  Core
# Perl only (run by the package suite, test/package/doc_check.t).

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Find ();
use File::Spec;

my $repo = shift @ARGV
  // File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..');
my @problems;

sub problem { push @problems, join('', @_); }

for my $needed ('README.md', 'bloomidx.control', 'doc', 'src')
{
	next if -e File::Spec->catfile($repo, $needed);
	print "$repo is not a bloomidx checkout: it has no $needed\n";
	exit 1;
}

sub read_file
{
	my ($rel) = @_;
	my $path = File::Spec->catfile($repo, $rel);
	open my $fh, '<', $path or do { problem("cannot read $rel: $!"); return ''; };
	local $/;
	my $text = scalar <$fh>;
	$text =~ s/\r\n/\n/g;
	return $text;
}

# A document's text as a reader sees it rendered: no code blocks, no HTML
# comments (links there are not links).
sub rendered
{
	my ($text) = @_;
	$text =~ s/^```.*?^```[^\n]*$//gms;
	$text =~ s/<!--.*?-->//gs;
	return $text;
}

# Every capture of $re in the text of $rel (at least one, or a problem
# saying what is missing).
sub stated
{
	my ($rel, $re, $what) = @_;
	my @have = read_file($rel) =~ /$re/g;
	problem("$rel does not state $what (looked for /$re/)") unless @have;
	return @have;
}

# The targets of a rendered text's links: inline ones ([text](target),
# with or without <...> or a title) and reference definitions
# ([label]: target).
sub links
{
	my ($text) = @_;
	my @links;
	push @links, $1 // $2
	  while $text =~ /\]\(\s*(?:<([^>]*)>|([^)\s]+))(?:\s+(?:"[^"]*"|'[^']*'|\([^)]*\)))?\s*\)/g;
	push @links, $1 // $2
	  while $text =~ /^[ ]{0,3}\[[^\]]+\]:\s*(?:<([^>]*)>|(\S+))/mg;
	return @links;
}

# The anchors GitHub gives a document's headings: lower case, what is not
# a letter, digit, space, '-' or '_' dropped, spaces made '-'; a repeated
# one gets -1, -2, ...
sub anchors
{
	my ($text) = @_;
	my (%seen, %anchors);
	$text =~ s/^```.*?^```[^\n]*$//gms;
	for my $heading ($text =~ /^#{1,6}[ \t]+(.*?)[ \t]*#*[ \t]*$/mg)
	{
		my $anchor = lc $heading;
		$anchor =~ s/[^\w\- ]//g;
		$anchor =~ s/ /-/g;
		my $n = $seen{$anchor}++;
		$anchors{$n ? "$anchor-$n" : $anchor} = 1;
	}
	return \%anchors;
}

# ------------------------------------------------------------ README size

my $readme = read_file('README.md');
my $readme_lines = () = $readme =~ /\n/g;
$readme_lines++ if $readme ne '' && $readme !~ /\n\z/;    # an unterminated last line
problem("README.md has $readme_lines lines: the user's guide keeps to 800, ",
	"the rest belongs in doc/")
  if $readme_lines > 800;

my @docs;
if (opendir(my $dh, File::Spec->catdir($repo, 'doc')))
{
	@docs = sort grep { /\.md\z/ } readdir $dh;
	closedir $dh;
}
else
{
	problem("cannot read doc/: $!");
}
problem("doc/ holds no document") unless @docs;
my $readme_shown = rendered($readme);
for my $doc (@docs)
{
	problem("README.md does not link doc/$doc")
	  unless grep { m{\A(?:\./)?doc/\Q$doc\E(?:#|\z)} } links($readme_shown);
}

# ------------------------------------------------------------ links

for my $rel ('README.md', map { "doc/$_" } @docs)
{
	my $source = read_file($rel);
	my $text = rendered($source);
	my (undef, $dir) = File::Spec->splitpath($rel);
	for my $link (links($text))
	{
		next if $link =~ m{\A[a-z][a-z0-9+.-]*:}i;    # a URL
		my ($target, $anchor) = $link =~ /\A([^#]*)(?:#(.*))?\z/;
		my $path = File::Spec->catfile($repo, $dir, $target);
		if ($target ne '' && !-e $path)
		{
			problem("$rel links $link, which does not exist");
			next;
		}
		next unless defined $anchor && $anchor ne '';
		my $linked = $target eq '' ? $source : $target =~ /\.md\z/ ? read_file(File::Spec->catfile($dir, $target)) : undef;
		next unless defined $linked;
		problem("$rel links $link, but no heading there has the anchor #$anchor")
		  unless anchors($linked)->{$anchor};
	}
}

# ------------------------------------------------------------ versions

my $layout = read_file('src/core/page_layout.hpp');
my ($format) = $layout =~ /\bkMetaVersion\s*=\s*(\d+)\s*;/;
problem('src/core/page_layout.hpp: no kMetaVersion') unless defined $format;
my ($oldest) = $layout =~ /\bkMetaVersionOldest\s*=\s*(\d+)\s*;/;
problem('src/core/page_layout.hpp: no kMetaVersionOldest') unless defined $oldest;

if (defined $format && defined $oldest)
{
	my @says = (
		[ 'doc/how-it-works.md', qr/on-disk format is version (\d+)/, 'the format version', $format ],
		[ 'doc/versions-and-upgrades.md', qr/`format_version` of `bloomidx_index_info`; (\d+) now/,
		  'the format version', $format ],
		[ 'doc/versions-and-upgrades.md', qr/format version (\d+), older than the oldest version \d+ /,
		  'the version of an older index', $oldest - 1 ],
		[ 'doc/versions-and-upgrades.md', qr/format version \d+, older than the oldest version (\d+) /,
		  'the oldest version read, beside an older index', $oldest ],
		[ 'doc/versions-and-upgrades.md', qr/format version (\d+), newer than the version \d+ /,
		  'the version of a newer index', $format + 1 ],
		[ 'doc/versions-and-upgrades.md', qr/format version \d+, newer than the version (\d+) /,
		  'the version read, beside a newer index', $format ],
	);
	for my $say (@says)
	{
		my ($rel, $re, $what, $want) = @$say;
		# Stated in $rel; wherever else a document says it, the same.
		my @have = map { [ $rel, $_ ] } stated($rel, $re, $what);
		for my $other ('README.md', map { "doc/$_" } @docs)
		{
			next if $other eq $rel;
			push @have, map { [ $other, $_ ] } read_file($other) =~ /$re/g;
		}
		for my $said (@have)
		{
			my ($where, $have) = @$said;
			problem("$where gives $what as $have; src/core/page_layout.hpp's kMetaVersion"
				  . ($what =~ /older/ ? 'Oldest' : '') . " makes it $want")
			  if $have != $want;
		}
	}
}

my $control = read_file('bloomidx.control');
my ($extversion) = $control =~ /^\s*default_version\s*=\s*'([^']*)'/m;
problem('bloomidx.control: no default_version') unless defined $extversion;
if (defined $extversion)
{
	for my $have (stated('doc/versions-and-upgrades.md', qr/installs extension version (\d+(?:\.\d+)*)/,
			'the extension version'))
	{
		problem("doc/versions-and-upgrades.md gives the extension version as $have; ",
			"bloomidx.control's default_version is $extversion")
		  if $have ne $extversion;
	}
}

# ------------------------------------------------------------ file map

# The files of src/: in a git checkout, those git tracks; else (an
# unpacked archive) every file but what a build leaves beside them.
my %on_disk;
my @tracked = -e File::Spec->catfile($repo, '.git')
  ? `git -C '$repo' ls-files -- src 2>/dev/null`
  : ();
if (@tracked)
{
	chomp @tracked;
	$on_disk{$_} = 1 for @tracked;
}
else
{
	File::Find::find(
		{
			no_chdir => 1,
			wanted => sub {
				return unless -f $_;
				return if /\.(?:o|bc|so|a|d|gcno|gcda)\z/ || m{/\.[^/]*\z};
				$on_disk{ File::Spec->abs2rel($_, $repo) } = 1;
			}
		},
		File::Spec->catdir($repo, 'src'));
}

my $map = read_file('doc/how-it-works.md');
if ($map =~ /^## The source tree\n(.*?)(?=^## |\z)/ms)
{
	my $section = rendered($1);
	my ($folder, %listed);
	for my $line (split /\n/, $section)
	{
		if ($line =~ /^### `(src\/[^`]*)`/)
		{
			$folder = $1;
			$folder .= '/' unless $folder =~ m{/\z};
			next;
		}
		next unless $line =~ /^[-*+]\s+((?:`[^`]+`\s*(?:,|and)?\s*)+):/;
		my $names = $1;
		if (!defined $folder)
		{
			problem("doc/how-it-works.md lists $names before any folder's heading");
			next;
		}
		for my $name ($names =~ /`([^`]+)`/g)
		{
			if ($name =~ m{/})
			{
				problem("doc/how-it-works.md lists $name under $folder: list a file under its own folder's heading");
				next;
			}
			my $rel = "$folder$name";
			problem("doc/how-it-works.md lists $rel twice") if $listed{$rel}++;
			problem("doc/how-it-works.md lists $rel, which does not exist") unless $on_disk{$rel};
		}
	}
	for my $rel (sort keys %on_disk)
	{
		problem("doc/how-it-works.md's source tree does not list $rel") unless $listed{$rel};
	}
}
else
{
	problem('doc/how-it-works.md has no "## The source tree" section');
}

# ------------------------------------------------------------ result

if (@problems)
{
	print "$_\n" for @problems;
	exit 1;
}
printf "ok: README.md (%d lines) and doc/ (%d documents) agree with the tree: "
  . "format version %s, extension version %s, %d files of src/ mapped\n",
  $readme_lines, scalar @docs, $format, $extversion, scalar keys %on_disk;
exit 0;
