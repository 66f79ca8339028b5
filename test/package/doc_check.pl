#!/usr/bin/perl
#
# doc_check.pl: checks that the documents say what the tree is, so that
# they cannot drift from it unseen.
#
#   perl test/package/doc_check.pl [REPO]
#
# - The README is a user's guide of at most 800 lines, and it links every
#   document in doc/.
# - Every relative link of README.md and doc/*.md names a file that exists.
# - The on-disk format version the documents state is kMetaVersion
#   (src/core/page_layout.hpp), and the two version errors they show are
#   one older and one newer.
# - The extension version the documents state is bloomidx.control's
#   default_version.
# - doc/how-it-works.md's "The source tree" lists every file of src/, once,
#   under the heading of its folder, and no file that is not there.
#
# Prints "ok: ..." and exits 0, or prints each problem and exits 1.  Core
# Perl only (run by the package suite, test/package/doc_check.t).

use strict;
use warnings;

use File::Find ();
use File::Spec;

my $repo = shift @ARGV // '.';
my @problems;

sub problem { push @problems, join('', @_); }

sub read_file
{
	my ($rel) = @_;
	my $path = File::Spec->catfile($repo, $rel);
	open my $fh, '<', $path or do { problem("cannot read $rel: $!"); return ''; };
	local $/;
	return scalar <$fh>;
}

# The first capture of $re in the text of $rel, or a problem saying what
# is missing.
sub stated
{
	my ($rel, $re, $what) = @_;
	my $text = read_file($rel);
	return $1 if $text =~ $re;
	problem("$rel does not state $what (looked for /$re/)");
	return undef;
}

# ------------------------------------------------------------ README size

my $readme = read_file('README.md');
my $readme_lines = () = $readme =~ /\n/g;
problem("README.md has $readme_lines lines: the user's guide keeps to 800, ",
	"the rest belongs in doc/")
  if $readme_lines > 800;

opendir(my $dh, File::Spec->catdir($repo, 'doc')) or problem("cannot read doc/: $!");
my @docs = $dh ? sort grep { /\.md\z/ } readdir $dh : ();
closedir $dh if $dh;
problem("doc/ holds no document") unless @docs;
for my $doc (@docs)
{
	problem("README.md does not link doc/$doc")
	  unless $readme =~ /\]\(doc\/\Q$doc\E(?:#[^)]*)?\)/;
}

# ------------------------------------------------------------ links

for my $rel ('README.md', map { "doc/$_" } @docs)
{
	my $text = read_file($rel);
	$text =~ s/^```.*?^```//gms;    # code blocks hold no links
	my (undef, $dir) = File::Spec->splitpath($rel);
	while ($text =~ /\]\(([^)\s]+)\)/g)
	{
		my $target = $1;
		next if $target =~ m{\A(?:[a-z]+:|#)};    # a URL, an anchor here
		$target =~ s/#.*//;
		my $path = File::Spec->catfile($repo, $dir, $target);
		problem("$rel links $1, which does not exist") unless -e $path;
	}
}

# ------------------------------------------------------------ versions

my $layout = read_file('src/core/page_layout.hpp');
my ($format) = $layout =~ /\bkMetaVersion\s*=\s*(\d+)\s*;/;
problem('src/core/page_layout.hpp: no kMetaVersion') unless defined $format;

if (defined $format)
{
	my @says = (
		[ 'doc/how-it-works.md', qr/on-disk format is version (\d+)/, 'the format version', $format ],
		[ 'doc/versions-and-upgrades.md', qr/`format_version` of `bloomidx_index_info`; (\d+) now/,
		  'the format version', $format ],
		[ 'doc/versions-and-upgrades.md', qr/format version (\d+), older than the version \d+ /,
		  'the version of an older index', $format - 1 ],
		[ 'doc/versions-and-upgrades.md', qr/format version \d+, older than the version (\d+) /,
		  'the version read, beside an older index', $format ],
		[ 'doc/versions-and-upgrades.md', qr/format version (\d+), newer than the version \d+ /,
		  'the version of a newer index', $format + 1 ],
		[ 'doc/versions-and-upgrades.md', qr/format version \d+, newer than the version (\d+) /,
		  'the version read, beside a newer index', $format ],
	);
	for my $say (@says)
	{
		my ($rel, $re, $what, $want) = @$say;
		my $have = stated($rel, $re, $what);
		problem("$rel gives $what as $have; src/core/page_layout.hpp's kMetaVersion makes it $want")
		  if defined $have && $have != $want;
	}
}

my $control = read_file('bloomidx.control');
my ($extversion) = $control =~ /^\s*default_version\s*=\s*'([^']*)'/m;
problem('bloomidx.control: no default_version') unless defined $extversion;
if (defined $extversion)
{
	my $have = stated('doc/versions-and-upgrades.md', qr/installs extension version (\d+(?:\.\d+)*)/,
		'the extension version');
	problem("doc/versions-and-upgrades.md gives the extension version as $have; ",
		"bloomidx.control's default_version is $extversion")
	  if defined $have && $have ne $extversion;
}

# ------------------------------------------------------------ file map

# The files of src/ a reader should know of: sources, headers, notes
# (not what a build leaves beside them).
my %on_disk;
File::Find::find(
	{
		no_chdir => 1,
		wanted => sub {
			return unless -f $_ && /\.(?:c|cc|cpp|h|hpp|md)\z/;
			my $rel = File::Spec->abs2rel($_, $repo);
			$on_disk{$rel} = 1;
		}
	},
	File::Spec->catdir($repo, 'src'));

my $map = read_file('doc/how-it-works.md');
if ($map =~ /^## The source tree\n(.*?)(?=^## |\z)/ms)
{
	my $section = $1;
	my ($folder, %listed);
	for my $line (split /\n/, $section)
	{
		if ($line =~ /^### `(src\/[^`]*)`/)
		{
			$folder = $1;
			$folder .= '/' unless $folder =~ m{/\z};
			next;
		}
		next unless $line =~ /^- ((?:`[^`]+`(?:, | and )?)+):/;
		my $names = $1;
		if (!defined $folder)
		{
			problem("doc/how-it-works.md lists $names before any folder's heading");
			next;
		}
		for my $name ($names =~ /`([^`]+)`/g)
		{
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
