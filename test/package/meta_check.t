#!/usr/bin/perl
#
# meta_check.t: test/package/meta_check.pl passes the repository's
# META.json and tree, and refuses broken ones, each with a message that
# names what is wrong: variants of META.json (each made from the real one
# by one change) checked against the repository, and variants of the tree
# (a copy of the files the check reads, with one change) checked with the
# real META.json.  Variants the spec allows must pass, so that the check
# is not merely strict.  Core Perl only.
#
#   prove test/package/meta_check.t

use strict;
use warnings;

use File::Basename qw(basename dirname);
use File::Copy qw(copy);
use File::Path qw(make_path);
use File::Spec;
use File::Temp qw(tempdir);
use JSON::PP ();
use Test::More;

use lib dirname(File::Spec->rel2abs(__FILE__));
use PackageTest;

my $here = dirname(File::Spec->rel2abs(__FILE__));
my $repo = File::Spec->canonpath(File::Spec->catdir($here, '..', '..'));
my $check = File::Spec->catfile($here, 'meta_check.pl');
my $tmp = tempdir('bloomidx-meta-check.XXXXXX', TMPDIR => 1, CLEANUP => 1);

# Runs the check; returns its exit status and its output.
sub run_check
{
	return run_in(undef, $^X, $check, @_);
}

my $json = JSON::PP->new->pretty->canonical;
my $real = JSON::PP->new->decode(slurp(File::Spec->catfile($repo, 'META.json')));
my $name = $real->{name};
my $extension = (sort keys %{ $real->{provides} })[0];
my ($major) = $real->{version} =~ /\A([0-9]+)\./;
my $other_version = ($major + 1) . '.0.0';

my ($status, $output) = run_check($repo);
is($status, 0, 'the repository\'s META.json and tree pass') or diag($output);
like($output, qr/\Aok: META\.json is valid metadata/, 'and the check says so');

# ------------------------------------------------------------ META.json

my $variant_number = 0;

sub meta_variant
{
	my ($change) = @_;
	my $meta = JSON::PP->new->decode(JSON::PP->new->encode($real));
	$change->($meta);
	my $file = File::Spec->catfile($tmp, 'meta-' . ++$variant_number . '.json');
	spew($file, $json->encode($meta));
	return run_check('--meta', $file, $repo);
}

# Each: what is wrong, the change, the message the check must give.
my @refused = (
	[ 'no license', sub { delete $_[0]{license} }, qr{^\S+: /license: required key missing$}m ],
	[ 'no meta-spec', sub { delete $_[0]{'meta-spec'} }, qr{/meta-spec: required key missing}m ],
	[
		'a version that is not a semantic version',
		sub { $_[0]{version} = '1.1' },
		qr{/version: "1\.1" is not a semantic version \(MAJOR\.MINOR\.PATCH}
	],
	[
		'an unknown key',
		sub { $_[0]{homepage} = 'https://example.org/' },
		qr{/homepage: unknown key "homepage"; the spec knows .*other keys must start with x_ or X_}
	],
	[
		'a version the control file does not have',
		sub { $_[0]{version} = $other_version },
		qr{/version: \Q$other_version\E is not \Q$real->{version}\E, \Q$extension\E\.control's default_version '}
	],
	[
		'an extension version the control file does not have',
		sub { $_[0]{provides}{$extension}{version} = $other_version },
		qr{/provides/\Q$extension\E/version: \Q$other_version\E is not \Q$real->{version}\E}
	],
	[
		'a license the spec does not know',
		sub { $_[0]{license} = 'PostgreSQL' },
		qr{/license: "PostgreSQL" is not a license string of the spec \(.*postgresql}
	],
	[
		'a license list with an unknown license',
		sub { $_[0]{license} = [ 'postgresql', 'bsd_3' ] },
		qr{/license\[1\]: "bsd_3" is not a license string}
	],
	[
		'a license map whose value is no URI',
		sub { $_[0]{license} = { PostgreSQL => 'the PostgreSQL licence' } },
		qr{/license/PostgreSQL: "the PostgreSQL licence" is not a URI}
	],
	[
		'a version range of versions that are not semantic versions',
		sub { $_[0]{prereqs}{runtime}{requires}{PostgreSQL} = '>= 15, < 19' },
		qr{/prereqs/runtime/requires/PostgreSQL: ">= 15, < 19" is not a version range.*\("15" is not a semantic version\)}
	],
	[
		'a version range with an operator the spec does not have',
		sub { $_[0]{prereqs}{runtime}{requires}{PostgreSQL} = '=> 15.0.0' },
		qr{/prereqs/runtime/requires/PostgreSQL: "=> 15\.0\.0" is not a version range}
	],
	[
		'a version range that is a number other than 0',
		sub { $_[0]{prereqs}{runtime}{requires}{PostgreSQL} = 15 },
		qr{/prereqs/runtime/requires/PostgreSQL: must be a version range \(a string\) or 0, not a number 15}
	],
	[
		'a prerequisite phase the spec does not have',
		sub { $_[0]{prereqs}{install} = { requires => { PostgreSQL => '15.0.0' } } },
		qr{/prereqs/install: unknown key "install"; the spec knows build, configure, develop, runtime, test}
	],
	[
		'a prerequisite relationship the spec does not have',
		sub { $_[0]{prereqs}{runtime}{needs} = { PostgreSQL => '15.0.0' } },
		qr{/prereqs/runtime/needs: unknown key "needs"; the spec knows conflicts, recommends, requires, suggests}
	],
	[
		'an empty prerequisite relationship',
		sub { $_[0]{prereqs}{runtime}{suggests} = {} },
		qr{/prereqs/runtime/suggests: must not be empty}
	],
	[
		'an extension file that is not in the tree',
		sub { $_[0]{provides}{$extension}{file} = "sql/$extension.sql" },
		qr{/provides/\Q$extension\E/file: sql/\Q$extension\E\.sql is not in the tree}
	],
	[
		'a docfile that is not in the tree',
		sub { $_[0]{provides}{$extension}{docfile} = 'doc/manual.md' },
		qr{/provides/\Q$extension\E/docfile: doc/manual\.md is not in the tree}
	],
	[
		'an absolute extension file',
		sub { $_[0]{provides}{$extension}{file} = "/usr/share/$extension.sql" },
		qr{/provides/\Q$extension\E/file: "/usr/share/\Q$extension\E\.sql" is not a relative path}
	],
	[
		'an extension without a file',
		sub { delete $_[0]{provides}{$extension}{file} },
		qr{/provides/\Q$extension\E/file: required key missing}
	],
	[
		'an extension with an unknown key',
		sub { $_[0]{provides}{$extension}{description} = 'words' },
		qr{/provides/\Q$extension\E/description: unknown key "description"; the spec knows abstract, docfile, file, version}
	],
	[ 'no extension', sub { $_[0]{provides} = {} }, qr{/provides: must not be empty} ],
	[
		'an extension named like no control file',
		sub { $_[0]{provides}{"${extension}_extra"} = { %{ $_[0]{provides}{$extension} } } },
		qr{Makefile: EXTENSION is "\Q$extension\E", but \S+ provides "\Q$extension $extension\E_extra".*\Q$extension\E_extra\.control: cannot read it}s
	],
	[
		'a name with a space',
		sub { $_[0]{name} = 'bloom idx' },
		qr{/name: "bloom idx" is not a term \(two characters or more; no slash, backslash, space}
	],
	[
		'a version of the spec this check does not know',
		sub { $_[0]{'meta-spec'}{version} = '2.0.0' },
		qr{/meta-spec/version: "2\.0\.0" is not a version of the PGXN Meta Spec this check knows \(1\.0\.x\)}
	],
	[ 'a tag with a slash', sub { push @{ $_[0]{tags} }, 'and/or' }, qr{/tags\[\d+\]: "and/or" is not a tag} ],
	[ 'tags as a string', sub { $_[0]{tags} = 'index' }, qr{/tags: must be an array, not a string} ],
	[ 'a tag twice', sub { push @{ $_[0]{tags} }, $_[0]{tags}[0] }, qr{/tags\[\d+\]: "[^"]+" is listed twice} ],
	[ 'an empty abstract', sub { $_[0]{abstract} = '' }, qr{/abstract: must not be empty} ],
	[ 'an abstract that is a number', sub { $_[0]{abstract} = 42 }, qr{/abstract: must be a string, not a number} ],
	[ 'no maintainer in the list', sub { $_[0]{maintainer} = [] }, qr{/maintainer: must not be empty} ],
	[
		'a release status the spec does not have',
		sub { $_[0]{release_status} = 'final' },
		qr{/release_status: "final" is not a release status \(stable, testing or unstable\)}
	],
	[
		'a no_index directory that is not in the tree',
		sub { push @{ $_[0]{no_index}{directory} }, 'docs' },
		qr{/no_index/directory\[\d+\]: docs is not a directory of the tree}
	],
	[
		'a repository type in capitals, and a url without a type',
		sub {
			$_[0]{resources} = {
				repository => { url => 'https://example.org/a.git', web => 'https://example.org/a' },
				bugtracker => { web => 'https://example.org/a/issues', mailto => 'bugs' } };
			$_[0]{x_second} = { repository => { type => 'Git' } };
		},
		qr{/resources/bugtracker/mailto: "bugs" is not an email address.*/resources/repository: a url needs a type}s
	],
	[
		'a repository type in capitals',
		sub { $_[0]{resources} = { repository => { url => 'https://example.org/a.git', type => 'Git' } } },
		qr{/resources/repository/type: "Git" is not lowercase}
	],
	[
		'an extension the regress tests create, as a test recommendation only',
		sub {
			my $test = $_[0]{prereqs}{test};
			$test->{recommends}{pageinspect} = delete $test->{requires}{pageinspect};
		},
		qr{^sql/\S+\.sql: creates extension pageinspect, which \S+'s /prereqs/test/requires does not list}m
	],
);

for my $case (@refused)
{
	my ($what, $change, $message) = @$case;
	my ($status, $output) = meta_variant($change);
	ok($status == 1 && $output =~ $message, "refused: $what")
	  or diag("exit status $status, output:\n$output");
}

{
	my $file = File::Spec->catfile($tmp, 'not-json.json');
	spew($file, slurp(File::Spec->catfile($repo, 'META.json')) =~ s/,\s*"tags"/ "tags"/r);
	my ($status, $output) = run_check('--meta', $file, $repo);
	ok($status == 1 && $output =~ /\Anot-json\.json: not valid JSON: /, 'refused: text that is not JSON')
	  or diag("exit status $status, output:\n$output");
}

# What the spec allows passes.
my @allowed = (
	[
		'custom keys, at the top, in an extension, in prerequisites and resources',
		sub {
			$_[0]{x_ci} = { anything => [ 1, 2 ] };
			$_[0]{X_Notes} = 'fine';
			$_[0]{provides}{$extension}{x_kind} = 'index access method';
			$_[0]{prereqs}{x_os} = { packages => 'libxxhash-dev' };
			$_[0]{prereqs}{runtime}{x_note} = 'fine';
			$_[0]{resources} = { x_chat => 'irc' };
		}
	],
	[
		'version ranges: 0, "0", one version, operators without spaces',
		sub {
			$_[0]{prereqs}{build}{requires} = { plpgsql => 0 };
			$_[0]{prereqs}{build}{recommends} = { hstore => '0', ltree => '1.2.0' };
			$_[0]{prereqs}{develop}{suggests} = { pgtap => '>=1.2.0,!=1.2.1,<2.0.0-beta.1' };
		}
	],
	[ 'a license list', sub { $_[0]{license} = [ 'postgresql', 'bsd' ] } ],
	[ 'a license map', sub { $_[0]{license} = { PostgreSQL => 'https://www.postgresql.org/about/licence' } } ],
	[ 'a maintainer string', sub { $_[0]{maintainer} = 'bloomidx developers <dev@example.org>' } ],
	[
		'resources',
		sub {
			$_[0]{resources} = {
				homepage => 'https://example.org/',
				bugtracker => { web => 'https://example.org/a/issues', mailto => 'bugs@example.org' },
				repository => { url => 'git://example.org/a.git', web => 'https://example.org/a', type => 'git' } };
		}
	],
	[
		'no optional key but the test requirements (the tree\'s tests create extensions)',
		sub {
			delete @{ $_[0] }{qw(description generated_by tags no_index release_status)};
			$_[0]{prereqs} = { test => { requires => $_[0]{prereqs}{test}{requires} } };
		}
	],
);

for my $case (@allowed)
{
	my ($what, $change) = @$case;
	my ($status, $output) = meta_variant($change);
	ok($status == 0, "allowed: $what") or diag("exit status $status, output:\n$output");
}

# ------------------------------------------------------------ the tree

# A copy of what the check reads: META.json, the Makefile, the control
# files, the extension's scripts in sql/, and the files and directories
# META.json names.
sub tree_copy
{
	my $copy = File::Spec->catdir($tmp, 'tree-' . ++$variant_number);
	my @files = ('META.json', 'Makefile', map { "$_.control" } keys %{ $real->{provides} });
	for my $entry (values %{ $real->{provides} })
	{
		push @files, grep { defined } @$entry{qw(file docfile)};
	}
	push @files, @{ $real->{no_index}{file} // [] };
	for my $ext (keys %{ $real->{provides} })
	{
		push @files, map { File::Spec->abs2rel($_, $repo) } glob(File::Spec->catfile($repo, 'sql', "$ext--*.sql"));
	}
	for my $file (@files)
	{
		make_path(dirname(File::Spec->catfile($copy, $file)));
		copy(File::Spec->catfile($repo, $file), File::Spec->catfile($copy, $file)) or die "copy $file: $!\n";
	}
	make_path(map { File::Spec->catdir($copy, $_) } @{ $real->{no_index}{directory} // [] });
	return $copy;
}

# Applies $change (a substitution on $_) to $file of a fresh copy of the
# tree; returns the copy, or undef if the substitution changed nothing
# (then the test is out of date).
sub tree_variant
{
	my ($file, $change) = @_;
	my $copy = tree_copy();
	my $path = File::Spec->catfile($copy, $file);
	local $_ = slurp($path);
	my $before = $_;
	$change->();
	return if $_ eq $before;
	spew($path, $_);
	return $copy;
}

my $control = "$extension.control";
($status, $output) = run_check(tree_copy());
is($status, 0, 'a copy of the tree passes, so the changes below are what the check refuses')
  or diag($output);

my ($update_script) = sort grep { /\A\Q$extension\E--[^-]+(?:-[^-]+)*--/ } map { basename($_) }
  glob(File::Spec->catfile($repo, 'sql', "$extension--*--*.sql"));
my @tree_refused = (
	[
		'the Makefile\'s DATA without the update script',
		'Makefile',
		sub { s{^(DATA\s*=.*?)\s+sql/\Q$update_script\E}{$1}m },
		qr{Makefile: DATA lacks sql/\Q$update_script\E, so make install would leave it out.*default_version '[^']+' cannot be installed}s
	],
	[
		'the Makefile\'s DATA with a script that is not in the tree',
		'Makefile',
		sub { s{^(DATA\s*=.*)$}{$1 sql/$extension--0.9--1.0.sql}m },
		qr{Makefile: DATA has sql/\Q$extension\E--0\.9--1\.0\.sql, which is not in the tree}
	],
	[
		'a default_version no script leads to',
		$control,
		sub { s{^default_version\s*=.*$}{default_version = '7.7'}m },
		qr{\Q$control\E: default_version '7\.7' cannot be installed: no install script and update scripts lead to it}
	],
	[
		'a control file without trusted',
		$control,
		sub { s{^trusted\s*=.*\n}{}m },
		qr{\Q$control\E: does not set trusted \(every setting is given, defaults too\)}
	],
	[
		'a control file setting PostgreSQL does not know',
		$control,
		sub { s{^relocatable\s*=}{relocateable =}m },
		qr{\Q$control\E:\d+: relocateable is not a control file setting PostgreSQL knows}
	],
	[
		'a control file module_pathname that is not the library the Makefile builds',
		$control,
		sub { s{^module_pathname\s*=.*$}{module_pathname = '\$libdir/${extension}_old'}m },
		qr{\Q$control\E: module_pathname '\$libdir/\Q$extension\E_old' names \Q$extension\E_old, but the Makefile builds}
	],
	[
		'@extschema@ in a script of a relocatable extension',
		"sql/$update_script",
		sub { $_ .= "CREATE FUNCTION f() RETURNS int LANGUAGE sql AS 'SELECT \@extschema\@.g()';\n" },
		qr{sql/\Q$update_script\E: uses \@extschema\@, which PostgreSQL replaces only in the scripts of an extension that is not relocatable}
	],
);

for my $case (@tree_refused)
{
	my ($what, $file, $change, $message) = @$case;
	my $copy = tree_variant($file, $change);
	if (!$copy)
	{
		fail("refused: $what (the change no longer applies to $file: update this test)");
		next;
	}
	my ($status, $output) = run_check($copy);
	ok($status == 1 && $output =~ $message, "refused: $what") or diag("exit status $status, output:\n$output");
}

{
	my $copy = tree_copy();
	unlink File::Spec->catfile($copy, 'sql', $update_script) or die "$update_script: $!\n";
	my ($status, $output) = run_check($copy);
	ok($status == 1 && $output =~ m{Makefile: DATA has sql/\Q$update_script\E, which is not in the tree},
		'refused: a script of the Makefile\'s DATA missing from sql/')
	  or diag("exit status $status, output:\n$output");
}

{
	# A test that creates an extension the metadata does not require; in a
	# comment, CREATE EXTENSION creates nothing.
	my $copy = tree_copy();
	make_path(File::Spec->catdir($copy, 'sql'));
	spew(File::Spec->catfile($copy, 'sql', 'uses_trgm.sql'), "-- CREATE EXTENSION hstore;\nCREATE EXTENSION IF NOT EXISTS pg_trgm;\n");
	my ($status, $output) = run_check($copy);
	ok($status == 1
		  && $output =~ m{^sql/uses_trgm\.sql: creates extension pg_trgm, which META\.json's /prereqs/test/requires does not list \(make installcheck fails without it\)$}m
		  && $output !~ /hstore/,
		'refused: a regress test creating an extension /prereqs/test/requires does not list')
	  or diag("exit status $status, output:\n$output");
}

{
	# @extschema@ in a comment is not a use of it.
	my $copy = tree_variant("sql/$update_script", sub { $_ .= "-- never \@extschema\@ here\n" });
	my ($status, $output) = run_check($copy);
	is($status, 0, 'allowed: @extschema@ in a comment of a relocatable extension\'s script') or diag($output);
}

done_testing();
