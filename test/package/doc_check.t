#!/usr/bin/perl
#
# doc_check.t: test/package/doc_check.pl passes the repository's
# documents, and refuses copies of them made wrong one change at a time
# (a format or extension version bumped without the documents, a source
# file added, removed or listed twice, a broken link or anchor, a document
# linked only from a comment, a README grown past 800 lines), each with a
# message that names what is wrong; and passes copies changed in ways that
# are right (a build's objects beside the sources, a README of exactly 800
# lines).  Core Perl only.
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

# The repository's files (those git tracks, or every file of an unpacked
# archive), copied into a fresh folder without .git: the check then walks
# src/ as it does in an archive.
my @repo_files = -e File::Spec->catfile($repo, '.git') ? `git -C '$repo' ls-files` : ();
chomp @repo_files;
if (!@repo_files)
{
	File::Find::find(
		{
			no_chdir => 1,
			wanted => sub {
				return unless -f $_ && !/\.(?:o|bc|so)\z/;
				push @repo_files, File::Spec->abs2rel($_, $repo);
			}
		},
		$repo);
}
my $copies = 0;

sub copy_of_repo
{
	my $dir = File::Spec->catdir($tmp, 'copy-' . ++$copies);
	for my $rel (@repo_files)
	{
		my $to = File::Spec->catfile($dir, $rel);
		make_path(dirname($to));
		copy(File::Spec->catfile($repo, $rel), $to) or die "$rel: $!\n";
	}
	return $dir;
}

# A copy changed by $change (given the copy's folder) must pass.
sub passed
{
	my ($name, $change) = @_;
	my $dir = copy_of_repo();
	$change->($dir);
	my ($status, $output) = run_in(undef, $^X, $check, $dir);
	is($status, 0, "passed: $name") or diag($output);
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
refused('the oldest format read changed in the code alone',
	sub { edit($_[0], 'src/core/page_layout.hpp', qr/kMetaVersionOldest = (\d+);/, 'kMetaVersionOldest = 2;') },
	qr/the version of an older index as \d+; src\/core\/page_layout\.hpp's kMetaVersionOldest makes it 1/);
refused('an older index\'s example version that is not one older',
	sub { edit($_[0], 'doc/versions-and-upgrades.md', qr/format version \d+, older/, 'format version 3, older') },
	qr/the version of an older index as 3/);
refused('a newer index\'s example version that is not one newer',
	sub { edit($_[0], 'doc/versions-and-upgrades.md', qr/format version \d+, newer/, 'format version 12, newer') },
	qr/the version of a newer index as 12/);
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
refused('a file of another kind the map does not list',
	sub { spew(File::Spec->catfile($_[0], 'src/core/tables.inc'), "0\n") },
	qr/does not list src\/core\/tables\.inc/);
refused('an anchor no heading has',
	sub { edit($_[0], 'README.md', qr/\(#quick-start\)/, '(#quick-starts)') },
	qr/README\.md links #quick-starts, but no heading there has the anchor/);
refused('an anchor in another document that no heading has',
	sub { edit($_[0], 'doc/tests.md', qr/versions-and-upgrades\.md#postgresql-versions/, 'versions-and-upgrades.md#postgres-versions') },
	qr/doc\/tests\.md links versions-and-upgrades\.md#postgres-versions, but no heading/);
refused('a document linked only from a comment',
	sub {
		spew(File::Spec->catfile($_[0], 'doc/hidden.md'), "# Hidden\n");
		edit($_[0], 'README.md', qr/\z/, "\n<!-- [hidden](doc/hidden.md) -->\n");
	},
	qr/README\.md does not link doc\/hidden\.md/);
refused('a stale format version stated in another document',
	sub { edit($_[0], 'README.md', qr/\z/, "\nThe on-disk format is version 11.\n") },
	qr/README\.md gives the format version as 11/);
refused('a stale format version stated twice in one document',
	sub { edit($_[0], 'doc/how-it-works.md', qr/\z/, "\nThe on-disk format is version 11.\n") },
	qr/doc\/how-it-works\.md gives the format version as 11/);
refused('a file mapped under another folder by its path',
	sub { edit($_[0], 'doc/how-it-works.md', qr/^- `scan\.cpp`:/m, "- `storage/sweep.cpp`: here.\n- `scan.cpp`:") },
	qr/lists storage\/sweep\.cpp under src\//);
refused('a map entry in a comment',
	sub {
		edit($_[0], 'doc/how-it-works.md', qr/^- `cost\.cpp`:/m, "<!--\n- `cost.cpp`: hidden.\n-->\n- `costs.cpp`:");
	},
	qr/does not list src\/cost\.cpp/);
refused('a link with a title to a missing file',
	sub { edit($_[0], 'doc/tests.md', qr/\A/, "See [gone](gone.md \"T\").\n\n") },
	qr/links gone\.md, which does not exist/);
refused('a reference link to a missing file',
	sub { edit($_[0], 'doc/tests.md', qr/\z/, "\nSee [gone][g].\n\n[g]: missing.md\n") },
	qr/links missing\.md, which does not exist/);
passed('map entries spelled otherwise (two spaces, *, a space before the colon, no space after a comma)',
	sub {
		edit($_[0], 'doc/how-it-works.md', qr/^- `scan\.cpp`:/m, "-  `scan.cpp`:");
		edit($_[0], 'doc/how-it-works.md', qr/^- `cost\.cpp`:/m, "* `cost.cpp`:");
		edit($_[0], 'doc/how-it-works.md', qr/^- `hash\.hpp`, `hash\.cpp`:/m, "- `hash.hpp`,`hash.cpp` :");
	});
passed('a README that links a document as ./doc/',
	sub { edit($_[0], 'README.md', qr/\]\(doc\/tests\.md\)/, '](./doc/tests.md)') });

my $readme_lines = ()= slurp(File::Spec->catfile($repo, 'README.md')) =~ /\n/g;
passed('a README of exactly 800 lines',
	sub { edit($_[0], 'README.md', qr/\z/, "\n" x (800 - $readme_lines)) });
refused('a README of 800 lines and an unterminated 801st',
	sub { edit($_[0], 'README.md', qr/\z/, ("\n" x (800 - $readme_lines)) . 'more') },
	qr/README\.md has 801 lines/);
refused('a README of 801 lines',
	sub { edit($_[0], 'README.md', qr/\z/, "\n" x (801 - $readme_lines)) },
	qr/README\.md has 801 lines/);
passed('a build\'s objects beside the sources',
	sub {
		spew(File::Spec->catfile($_[0], "src/$_"), "\0") for qw(cost.o cost.bc storage/seal.o bloomidx.so);
	});

done_testing();
