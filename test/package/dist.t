#!/usr/bin/perl
#
# dist.t: `make dist` in a fresh clone makes the archive PGXN takes, and
# the archive builds.  The archive is NAME-VERSION.zip (META.json's name
# and version), every file in it under NAME-VERSION/, META.json at its top
# and the only file of that name (PGXN Manager and pgxnclient take the
# first they find); it holds exactly the committed files but those
# .gitattributes marks export-ignore (so no untracked file, such as a
# build product, and none of .ci/, .gitignore, .gitattributes); META.json
# checks out against the unpacked tree; the unpacked tree compiles with
# `make PG_CONFIG=...` (no install).  Also: `make dist` outside a git
# checkout fails with a clear message, an uncommitted META.json does not
# name the archive, `make clean` removes the archive.
#
#   PG_CONFIG=/usr/lib/postgresql/15/bin/pg_config prove test/package/dist.t
#
# It tests the committed tree (HEAD), as `make dist` archives it: commit
# before running it.  Skipped outside a git checkout (a run in a chroot
# copies the working tree without .git).  Core Perl only (the archive is
# read with IO::Uncompress::Unzip); needs git, make and a compiler.

use strict;
use warnings;

use File::Basename qw(dirname);
use File::Path qw(make_path);
use File::Spec;
use File::Temp qw(tempdir);
use IO::Uncompress::Unzip qw($UnzipError);
use JSON::PP ();
use Test::More;

use lib dirname(File::Spec->rel2abs(__FILE__));
use PackageTest;

my $repo = File::Spec->canonpath(File::Spec->catdir(dirname(File::Spec->rel2abs(__FILE__)), '..', '..'));
my $pg_config = $ENV{PG_CONFIG} // 'pg_config';

# The last 40 lines of a command's output, for a diagnostic.
sub tail
{
	my ($text) = @_;
	my @lines = split /\n/, $text;
	return join("\n", @lines > 40 ? @lines[-40 .. -1] : @lines) . "\n";
}

my ($status, $output) = run_in($repo, 'git', 'rev-parse', '--show-toplevel');
plan skip_all => "$repo is not a git checkout: make dist archives the committed tree" if $status != 0;
($status, $output) = run_in($repo, 'git', 'status', '--porcelain', '--untracked-files=no');
diag("uncommitted changes are not tested: this tests the committed tree (HEAD)") if $output ne '';

my $tmp = tempdir('bloomidx-dist.XXXXXX', TMPDIR => 1, CLEANUP => 1);
my $clone = File::Spec->catdir($tmp, 'clone');
# (safe.directory: a checkout of another user's, as a chroot's or a CI's
# root may see it, is still ours to read.)
($status, $output) = run_in($tmp, 'git', '-c', 'safe.directory=*', 'clone', '-q', $repo, $clone);
is($status, 0, 'a fresh clone') or BAIL_OUT("git clone failed:\n$output");

my $meta = JSON::PP->new->decode(slurp(File::Spec->catfile($clone, 'META.json')));
my $prefix = "$meta->{name}-$meta->{version}";
my $zip = "$prefix.zip";
my @extensions = sort keys %{ $meta->{provides} };

# Untracked files, as a build leaves them, must stay out of the archive.
for my $probe ('untracked-probe.txt', 'src/untracked-probe.o')
{
	open my $fh, '>', File::Spec->catfile($clone, $probe) or die "$probe: $!\n";
	close $fh;
}

($status, $output) = run_in($clone, 'make', 'dist', "PG_CONFIG=$pg_config");
is($status, 0, "make dist") or diag(tail($output));
ok(-f File::Spec->catfile($clone, $zip), "it makes $zip") or BAIL_OUT("no $zip:\n$output");
unlike($output, qr/WARNING/, 'with no warning in a clean clone') or diag($output);

# The archive's members, {name => content}, in their order.
my (%content, @names);
{
	my $unzip = IO::Uncompress::Unzip->new(File::Spec->catfile($clone, $zip))
	  or BAIL_OUT("$zip: $UnzipError");
	my $more = 1;
	while ($more > 0)
	{
		my $name = $unzip->getHeaderInfo()->{Name};
		my $data = '';
		my $read;
		while (($read = $unzip->read(my $buffer)) > 0)
		{
			$data .= $buffer;
		}
		BAIL_OUT("$zip: reading $name: $UnzipError") if $read < 0;
		push @names, $name;
		$content{$name} = $data;
		$more = $unzip->nextStream();
	}
	BAIL_OUT("$zip: $UnzipError") if $more < 0;
}
my @outside = grep { !m{\A\Q$prefix\E/} } @names;
ok(!@outside, "every member is under $prefix/") or diag("outside: @outside");
my @meta_files = grep { m{META\.json\z} } @names;
is_deeply(\@meta_files, ["$prefix/META.json"], "META.json at the top, and no other file of that name");
is($content{"$prefix/META.json"}, slurp(File::Spec->catfile($clone, 'META.json')), 'the committed META.json');

# Exactly the committed files but the export-ignore ones: those marked so,
# and those in a directory marked so (git archive leaves out the whole
# directory).
($status, $output) = run_in($clone, 'git', 'ls-files', '-z');
my @tracked = split /\0/, $output;
my %ignored;
{
	my %paths;
	for my $file (@tracked)
	{
		my @parts = split m{/}, $file;
		$paths{ join('/', @parts[ 0 .. $_ ]) } = 1 for 0 .. $#parts;
	}
	($status, $output) = run_in($clone, 'git', 'check-attr', '-z', 'export-ignore', '--', sort keys %paths);
	my @fields = split /\0/, $output;
	while (my ($path, undef, $value) = splice @fields, 0, 3)
	{
		$ignored{$path} = 1 if $value eq 'set';
	}
}
my @expected = sort grep {
	my @parts = split m{/};
	!grep { $ignored{ join('/', @parts[ 0 .. $_ ]) } } 0 .. $#parts
} @tracked;
my @files = sort map { s{\A\Q$prefix\E/}{}r } grep { !m{/\z} } @names;
is_deeply(\@files, \@expected, 'the committed files, but those marked export-ignore')
  or diag("in the archive only: @{[ grep { my $f = $_; !grep { $_ eq $f } @expected } @files ]}\n"
	  . "committed only: @{[ grep { my $f = $_; !grep { $_ eq $f } @files } @expected ]}");
my %in_archive = map { $_ => 1 } @files;
my @must = ('META.json', 'Makefile', (map { "$_.control" } @extensions), grep { m{\A(?:sql/\S+--\S+\.sql|src/)} } @tracked);
my @missing = grep { !$in_archive{$_} } @must;
ok(!@missing, 'with META.json, the Makefile, the control file, the scripts of sql/ and src/')
  or diag("missing: @missing");
ok(scalar(grep { m{\Asrc/.+\.cpp\z} } @files) > 0, 'src/ has the sources');
my @left_out = grep { $in_archive{$_} } ('.ci/run', '.gitignore', '.gitattributes', 'untracked-probe.txt', 'src/untracked-probe.o');
ok(!@left_out, 'without .ci/, .gitignore, .gitattributes and untracked files') or diag("there: @left_out");

# Unpacked, it is a tree META.json agrees with, and it compiles.
my $unpacked = File::Spec->catdir($tmp, 'unpacked');
for my $name (@names)
{
	my $path = File::Spec->catfile($unpacked, $name);
	if ($name =~ m{/\z})
	{
		make_path($path);
		next;
	}
	make_path(dirname($path));
	open my $fh, '>:raw', $path or die "$path: $!\n";
	print $fh $content{$name};
	close $fh or die "$path: $!\n";
}
my $top = File::Spec->catdir($unpacked, $prefix);
($status, $output) = run_in($top, $^X, 'test/package/meta_check.pl', '.');
is($status, 0, 'META.json agrees with the unpacked tree') or diag($output);

# The library only: LLVM bitcode (which doubles the compile) is the build
# suite's business, not the archive's.
($status, $output) = run_in($top, 'make', '-j2', "PG_CONFIG=$pg_config", 'with_llvm=no');
is($status, 0, "the unpacked tree builds: make PG_CONFIG=$pg_config") or diag(tail($output));
my @modules = grep { -f File::Spec->catfile($top, "$_.so") } @extensions;
is_deeply(\@modules, \@extensions, 'and makes the library') or diag(tail($output));

($status, $output) = run_in($top, 'make', 'dist', "PG_CONFIG=$pg_config");
ok($status != 0 && $output =~ /make dist: the archive is made from the committed tree: run it at the top of a git checkout/,
	'make dist outside a git checkout fails, saying why')
  or diag($output);

# An uncommitted META.json (here of another version, which the control
# file disagrees with) neither names the archive nor is checked in place of
# the committed one: make dist checks, and names the archive by, what HEAD
# holds.
my $meta_path = File::Spec->catfile($clone, 'META.json');
my $committed = slurp($meta_path);
(my $edited = $committed) =~ s/"version"(\s*):(\s*)"\Q$meta->{version}\E"/"version"$1:$2"99.0.0"/g;
spew($meta_path, $edited);
unlink File::Spec->catfile($clone, $zip);
($status, $output) = run_in($clone, 'make', 'dist', "PG_CONFIG=$pg_config");
is($status, 0, 'make dist with a META.json changed but not committed') or diag(tail($output));
like($output, qr/WARNING: uncommitted changes are not in the archive/, 'warns that the change is left out');
ok(-f File::Spec->catfile($clone, $zip) && !-e File::Spec->catfile($clone, "$meta->{name}-99.0.0.zip"),
	"and names the archive $zip, by the committed META.json")
  or diag($output);
spew($meta_path, $committed);

($status, $output) = run_in($clone, 'make', 'clean', "PG_CONFIG=$pg_config");
ok($status == 0 && !-e File::Spec->catfile($clone, $zip), 'make clean removes the archive') or diag($output);

done_testing();
