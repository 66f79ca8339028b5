#!/usr/bin/perl
#
# doc_check.t: test/package/doc_check.pl passes the repository's
# documents, and refuses copies of them made wrong one change at a time
# (a format or extension version bumped without the documents, a source
# file added, removed or listed twice, a broken link, a README grown past
# 800 lines), each with a message that names what is wrong.  Core Perl
# only.
#
#   prove test/package/doc_check.t

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Copy qw(copy);
use File::Find ();
use File::Path qw(make_path);
use File::Spec;
use File::Temp qw(tempdir);
use Test::More;

use lib dirname(File::Spec->rel2abs(__FILE__));
use PackageTest;

my $here = dirname(File::Spec->rel2abs(__FILE__));
my $repo = File::Spec->canonpath(File::Spec->catdir($here, '..', '..'));
my $check = File::Spec->catfile($here, 'doc_check.pl');
my $tmp = tempdir('bloomidx-doc-check.XXXXXX', TMPDIR => 1, CLEANUP => 1);

my ($status, $output) = run_in(undef, $^X, $check, $repo);
is($status, 0, 'the repository\'s documents pass') or diag($output);
like($output, qr/\Aok: README\.md/, 'and the check says so');

# The files the check reads, copied into a fresh folder: the documents,
# bloomidx.control, src/, and what the documents link to (as empty files
# where only their being there counts).
my $copies = 0;

sub copy_of_repo
{
	my $dir = File::Spec->catdir($tmp, 'copy-' . ++$copies);
	my @files = ('README.md', 'bloomidx.control');
	File::Find::find(
		{
			no_chdir => 1,
			wanted => sub {
				return unless -f $_;
				push @files, File::Spec->abs2rel($_, $repo);
			}
		},
		map { File::Spec->catdir($repo, $_) } qw(doc src test/bench/results));
	for my $rel (@files, 'CHANGELOG.md')
	{
		my $to = File::Spec->catfile($dir, $rel);
		make_path(dirname($to));
		copy(File::Spec->catfile($repo, $rel), $to) or die "$rel: $!\n";
	}
	return $dir;
}

# One variant: a copy changed by $change (given the copy's folder) must
# fail, with a message matching $says.
sub refused
{
	my ($name, $change, $says) = @_;
	my $dir = copy_of_repo();
	$change->($dir);
	my ($status, $output) = run_in(undef, $^X, $check, $dir);
	isnt($status, 0, "refused: $name");
	like($output, $says, "... saying so: $name") or diag($output);
}

sub edit
{
	my ($dir, $rel, $from, $to) = @_;
	my $file = File::Spec->catfile($dir, $rel);
	my $text = slurp($file);
	$text =~ s/$from/$to/ or die "$rel: no $from to change\n";
	spew($file, $text);
}

my $copy = copy_of_repo();
($status, $output) = run_in(undef, $^X, $check, $copy);
is($status, 0, 'an unchanged copy passes') or diag($output);

refused('the format version bumped in the code alone',
	sub { edit($_[0], 'src/core/page_layout.hpp', qr/kMetaVersion = (\d+);/, 'kMetaVersion = 99;') },
	qr/kMetaVersion makes it 99/);
refused('the format version changed in one document alone',
	sub { edit($_[0], 'doc/how-it-works.md', qr/on-disk format is version \d+/, 'on-disk format is version 7') },
	qr/doc\/how-it-works\.md gives the format version as 7/);
refused('an older index\'s example version that is not one older',
	sub { edit($_[0], 'doc/versions-and-upgrades.md', qr/format version \d+, older/, 'format version 3, older') },
	qr/the version of an older index as 3/);
refused('the extension version bumped in bloomidx.control alone',
	sub { edit($_[0], 'bloomidx.control', qr/default_version = '[^']*'/, "default_version = '9.9'") },
	qr/default_version is 9\.9/);
refused('the extension version\'s sentence gone',
	sub { edit($_[0], 'doc/versions-and-upgrades.md', qr/installs extension version/, 'installs version') },
	qr/does not state the extension version/);
refused('a source file the map does not list',
	sub { spew(File::Spec->catfile($_[0], 'src/storage/new_thing.cpp'), "// new\n") },
	qr/does not list src\/storage\/new_thing\.cpp/);
refused('a listed source file that is gone',
	sub { unlink(File::Spec->catfile($_[0], 'src/cost.cpp')) or die $! },
	qr/lists src\/cost\.cpp, which does not exist/);
refused('a file listed under another folder',
	sub { edit($_[0], 'doc/how-it-works.md', qr/^- `tid_sink\.cpp`:/m, "- `vacuum.cpp`: again.\n- `tid_sink.cpp`:") },
	qr/lists src\/storage\/vacuum\.cpp, which does not exist/);
refused('a file listed twice',
	sub { edit($_[0], 'doc/how-it-works.md', qr/^- `merge\.cpp`:/m, "- `seal.cpp`: again.\n- `merge.cpp`:") },
	qr/lists src\/storage\/seal\.cpp twice/);
refused('the source tree\'s section gone',
	sub { edit($_[0], 'doc/how-it-works.md', qr/^## The source tree$/m, '## Files') },
	qr/no "## The source tree" section/);
refused('a document the README does not link',
	sub { spew(File::Spec->catfile($_[0], 'doc/orphan.md'), "# Orphan\n") },
	qr/README\.md does not link doc\/orphan\.md/);
refused('a link to a file that is not there',
	sub { edit($_[0], 'doc/tests.md', qr/\A/, "See [gone](gone.md).\n\n") },
	qr/doc\/tests\.md links gone\.md, which does not exist/);
refused('a README past 800 lines',
	sub { edit($_[0], 'README.md', qr/\z/, "\nmore\n" x 400) },
	qr/README\.md has \d+ lines/);

done_testing();
