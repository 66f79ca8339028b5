#!/usr/bin/perl
#
# meta_check.pl: checks META.json against the PGXN Meta Spec 1.0 and
# against the tree it describes.
#
#   perl test/package/meta_check.pl [--meta FILE] [DIR]
#
# DIR is the distribution's root (default: the checkout this script is in),
# FILE its metadata (default DIR/META.json).  Prints every problem found,
# one a line, "where: what", and exits 1; or prints one "ok" line and exits
# 0.  Core Perl only (JSON::PP), so that it runs on any machine that builds
# the extension; `make dist` runs it before it makes the archive, and
# test/package/meta_check.t checks that it refuses broken metadata.
#
# The spec (https://pgxn.org/spec/, 1.0.x; its JSON Schema in the
# pgxn/meta repository) asks:
#   - required: name (a Term), version (a Version), abstract (a String),
#     maintainer (a String or a List of them), license (a License String,
#     a List of them, or a Map of license names to URIs), provides (a Map
#     of Terms to extensions: file and version required, abstract and
#     docfile optional), meta-spec (version 1.0.x, optional url);
#   - optional: description, generated_by (Strings), tags (a List of
#     Tags), no_index (file and directory: Lists of paths), prereqs (a Map
#     of phases to a Map of relationships to a Map of Terms to Version
#     Ranges), release_status (stable, testing, unstable), resources
#     (homepage, bugtracker {web, mailto}, repository {url, web, type});
#   - any other key, at any level, only if it starts with x_ or X_ (what a
#     custom key holds is not checked);
#   - a Version is a semantic version (MAJOR.MINOR.PATCH, semver.org); a
#     Term has at least two characters and no slash, backslash, space or
#     control character; a Tag fewer than 256 and no slash, backslash or
#     control character; a String is not empty; paths are relative, with
#     slashes.
# A List is an array here, except for maintainer and license, where the
# spec's own examples give a single string: PGXN's indexer reads tags and
# no_index's lists as arrays.
#
# And the tree must agree with it: each extension in provides has a
# control file, whose default_version is the extension's version (1.1 is
# 1.1.0) and, for the extension named like the distribution, the
# distribution's version too; the files META.json names exist; the
# control file sets every setting (comment, default_version,
# module_pathname, relocatable, superuser, trusted); the default version
# can be installed (an install script, then update scripts, leads to it);
# the Makefile's DATA holds exactly the extension's scripts in sql/, its
# EXTENSION the extensions of provides, its MODULE_big or MODULES the
# library module_pathname names; a relocatable extension's scripts do not
# use @extschema@; every other extension the regress and isolation tests
# create is a test requirement.

use strict;
use warnings;

use B ();
use File::Basename qw(basename dirname);
use File::Spec;
use JSON::PP ();

my $usage = "usage: $0 [--meta FILE] [DIR]\n";
my $meta_file;
my @args;
while (@ARGV)
{
	my $arg = shift @ARGV;
	if ($arg eq '--meta')
	{
		$meta_file = shift @ARGV // die $usage;
	}
	elsif ($arg =~ /^-/)
	{
		die $usage;
	}
	else
	{
		push @args, $arg;
	}
}
die $usage if @args > 1;
my $dir = $args[0] // File::Spec->catdir(dirname(File::Spec->rel2abs($0)), '..', '..');
$meta_file //= File::Spec->catfile($dir, 'META.json');
my $meta_name = basename($meta_file);

my @problems;

sub problem
{
	push @problems, join('', @_);
	return 0;
}

# ------------------------------------------------------------ value types

# The JSON type of a decoded value.  A number and a string are told apart
# as JSON::PP's encoder does, by the flags of the scalar: this must run
# before anything reads the value as a string (which sets its string flag).
sub json_type
{
	my ($v) = @_;
	return 'null' unless defined $v;
	return 'a boolean' if JSON::PP::is_bool($v);
	return 'an object' if ref $v eq 'HASH';
	return 'an array' if ref $v eq 'ARRAY';
	return 'a ' . ref($v) if ref $v;
	my $flags = B::svref_2object(\$v)->FLAGS;
	return 'a number'
	  if ($flags & (B::SVp_IOK | B::SVp_NOK)) && !($flags & B::SVp_POK);
	return 'a string';
}

sub at
{
	my ($path, $key) = @_;
	return "$path/$key";
}

sub string
{
	my ($path, $v) = @_;
	my $type = json_type($v);
	return problem("$meta_name: $path: must be a string, not $type")
	  if $type ne 'a string';
	return problem("$meta_name: $path: must not be empty") if $v eq '';
	return 1;
}

# Strings of one form: $what names the form in the message.
sub string_like
{
	my ($path, $v, $ok, $what) = @_;
	string($path, $v) or return 0;
	return 1 if $ok->($v);
	return problem("$meta_name: $path: \"$v\" is not $what");
}

# Semantic Versioning 2.0.0 (semver.org's own expression, ASCII digits).
my $SEMVER = qr/
	(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)
	(?:-(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*)
		(?:\.(?:0|[1-9][0-9]*|[0-9]*[a-zA-Z-][0-9a-zA-Z-]*))*)?
	(?:\+[0-9a-zA-Z-]+(?:\.[0-9a-zA-Z-]+)*)?
/x;
my $SEMVER_WHAT = 'a semantic version (MAJOR.MINOR.PATCH, such as 1.1.0: https://semver.org)';

sub version
{
	my ($path, $v) = @_;
	return string_like($path, $v, sub { $_[0] =~ /\A$SEMVER\z/ }, $SEMVER_WHAT);
}

sub term
{
	my ($path, $v) = @_;
	return string_like($path, $v,
		sub { length $_[0] >= 2 && $_[0] !~ m{[/\\\s\p{Cc}]} },
		'a term (two characters or more; no slash, backslash, space or control character)');
}

sub tag
{
	my ($path, $v) = @_;
	return string_like($path, $v,
		sub { length $_[0] < 256 && $_[0] !~ m{[/\\\p{Cc}]} },
		'a tag (fewer than 256 characters; no slash, backslash or control character)');
}

# A URI with a scheme and an authority (https://host/...), as PGXN's
# validator asks.
sub uri
{
	my ($path, $v) = @_;
	return string_like($path, $v,
		sub { $_[0] =~ m{\A[A-Za-z][A-Za-z0-9+.-]*://[^\s/?#]+\S*\z} },
		'a URI (scheme://host/...)');
}

sub email
{
	my ($path, $v) = @_;
	return string_like($path, $v, sub { $_[0] =~ /\A[^\s@]+@[^\s@]+\z/ },
		'an email address');
}

# A relative path in Unix form (a trailing slash is fine for a directory).
sub rel_path
{
	my ($path, $v) = @_;
	return string_like(
		$path, $v,
		sub {
			my $p = $_[0] =~ s{\A\./}{}r;
			return length $p >= 2
			  && $p !~ m{\A/}
			  && $p !~ m{\\}
			  && !grep { $_ eq '.' || $_ eq '..' || $_ eq '' } split m{/}, $p =~ s{/\z}{}r;
		},
		'a relative path with slashes (no leading slash, backslash, . or .. part)');
}

# A Version Range: 0 (any version), or versions, each after an optional
# operator (==, !=, <, <=, >, >=), joined by commas: ">= 15.0.0, < 19.0.0".
sub version_range
{
	my ($path, $v) = @_;
	my $type = json_type($v);
	return 1 if $type eq 'a number' && $v == 0 && $v eq '0';
	return problem("$meta_name: $path: must be a version range (a string) or 0, not $type"
		  . ($type eq 'a number' ? " $v" : ''))
	  if $type ne 'a string';
	my $what = 'a version range: 0, or versions (MAJOR.MINOR.PATCH), each after an optional'
	  . ' ==, !=, <, <=, > or >=, joined by commas, such as ">= 15.0.0, < 19.0.0"';
	my @parts = split /,\s*/, $v, -1;
	return problem("$meta_name: $path: \"$v\" is not $what") unless @parts;
	for my $i (0 .. $#parts)
	{
		my ($op, $version) = $parts[$i] =~ /\A(?:(==|!=|<=|>=|<|>)\s*)?(.*)\z/s;
		next if $version =~ /\A$SEMVER\z/;
		next if $i == 0 && $version eq '0';
		return problem("$meta_name: $path: \"$v\" is not $what (\"$version\" is not a semantic version)");
	}
	return 1;
}

# ------------------------------------------------------------ structures

# An object whose keys are those of $fields ({key => [required, check]})
# or custom ones (x_ or X_; their values are not checked).  Returns
# whether $v is an object.
sub map_of_fields
{
	my ($path, $v, $fields) = @_;
	my $type = json_type($v);
	return problem("$meta_name: " . ($path eq "" ? "/" : $path) . ": must be an object, not $type")
	  if $type ne "an object";
	for my $key (sort keys %$fields)
	{
		problem("$meta_name: " . at($path, $key) . ": required key missing")
		  if $fields->{$key}[0] && !exists $v->{$key};
	}
	for my $key (sort keys %$v)
	{
		if (my $field = $fields->{$key})
		{
			$field->[1]->(at($path, $key), $v->{$key});
		}
		elsif ($key !~ /\Ax_/i)
		{
			problem("$meta_name: " . at($path, $key) . ": unknown key \"$key\"; the spec knows "
				  . join(', ', sort keys %$fields)
				  . ' here, and other keys must start with x_ or X_');
		}
	}
	return 1;
}

# An object of any keys, each checked by $key_check, its value by
# $value_check; at least one.
sub map_of
{
	my ($path, $v, $key_check, $value_check) = @_;
	my $type = json_type($v);
	return problem("$meta_name: $path: must be an object, not $type") if $type ne 'an object';
	return problem("$meta_name: $path: must not be empty") unless %$v;
	for my $key (sort keys %$v)
	{
		$key_check->(at($path, $key) . ' (the key)', $key) if $key_check;
		$value_check->(at($path, $key), $v->{$key});
	}
	return 1;
}

# An array of items each checked by $item_check, at least one, no two
# alike; a single string too if $string_ok (the spec's maintainer and
# license examples).
sub list_of
{
	my ($path, $v, $item_check, $string_ok) = @_;
	my $type = json_type($v);
	return $item_check->($path, $v) if $string_ok && $type eq 'a string';
	return problem("$meta_name: $path: must be an array, not $type") if $type ne 'an array';
	return problem("$meta_name: $path: must not be empty") unless @$v;
	my %seen;
	for my $i (0 .. $#$v)
	{
		$item_check->("$path\[$i]", $v->[$i]) or next;
		problem("$meta_name: $path\[$i]: \"$v->[$i]\" is listed twice") if $seen{ $v->[$i] }++;
	}
	return 1;
}

my %LICENSES = map { $_ => 1 } qw(
  agpl_3 apache_1_1 apache_2_0 artistic_1 artistic_2 bsd freebsd gfdl_1_2
  gfdl_1_3 gpl_1 gpl_2 gpl_3 lgpl_2_1 lgpl_3_0 mit mozilla_1_0 mozilla_1_1
  openssl perl_5 postgresql qpl_1_0 ssleay sun zlib open_source restricted
  unrestricted unknown);

sub license_string
{
	my ($path, $v) = @_;
	return string_like($path, $v, sub { $LICENSES{ $_[0] } },
		'a license string of the spec (' . join(', ', sort keys %LICENSES) . ')');
}

sub license
{
	my ($path, $v) = @_;
	return map_of($path, $v, \&string, \&uri) if json_type($v) eq 'an object';
	return list_of($path, $v, \&license_string, 1);
}

sub maintainer
{
	my ($path, $v) = @_;
	return list_of($path, $v, \&string, 1);
}

sub provides
{
	my ($path, $v) = @_;
	return map_of(
		$path, $v,
		\&term,
		sub {
			map_of_fields(
				$_[0], $_[1],
				{
					file => [ 1, \&rel_path ],
					version => [ 1, \&version ],
					abstract => [ 0, \&string ],
					docfile => [ 0, \&rel_path ],
				});
		});
}

sub meta_spec
{
	my ($path, $v) = @_;
	return map_of_fields(
		$path, $v,
		{
			version => [
				1,
				sub {
					string_like(@_, sub { $_[0] =~ /\A1\.0\.[0-9]+\z/ },
						'a version of the PGXN Meta Spec this check knows (1.0.x)');
				}
			],
			url => [
				0,
				sub {
					string_like(@_, sub { $_[0] =~ m{\Ahttps?://pgxn\.org/meta/spec\.txt\z} },
						'the spec\'s URL, https://pgxn.org/meta/spec.txt');
				}
			],
		});
}

sub prereqs
{
	my ($path, $v) = @_;
	my $relationship = sub { map_of($_[0], $_[1], \&term, \&version_range) };
	my $phase = sub {
		my ($phase_path, $phase_value) = @_;
		map_of_fields($phase_path, $phase_value,
			{ map { $_ => [ 0, $relationship ] } qw(requires recommends suggests conflicts) })
		  or return 0;
		return problem("$meta_name: $phase_path: must not be empty") unless %$phase_value;
		return 1;
	};
	map_of_fields($path, $v, { map { $_ => [ 0, $phase ] } qw(configure build test runtime develop) })
	  or return 0;
	return problem("$meta_name: $path: must not be empty") unless %$v;
	return 1;
}

sub resources
{
	my ($path, $v) = @_;
	map_of_fields(
		$path, $v,
		{
			homepage => [ 0, \&uri ],
			bugtracker => [
				0,
				sub {
					map_of_fields($_[0], $_[1], { web => [ 0, \&uri ], mailto => [ 0, \&email ] });
				}
			],
			repository => [
				0,
				sub {
					my ($repo_path, $repo) = @_;
					map_of_fields(
						$repo_path, $repo,
						{
							url => [ 0, \&uri ],
							web => [ 0, \&uri ],
							type => [
								0,
								sub {
									string_like(@_, sub { $_[0] !~ /\p{Upper}/ },
										'lowercase (git, svn, hg, ...)');
								}
							],
						}) or return 0;
					return problem("$meta_name: $repo_path: a url needs a type (git, svn, hg, ...)")
					  if exists $repo->{url} && !exists $repo->{type};
					return 1;
				}
			],
		}) or return 0;
	return problem("$meta_name: $path: must not be empty") unless %$v;
	return 1;
}

my %TOP = (
	name => [ 1, \&term ],
	version => [ 1, \&version ],
	abstract => [ 1, \&string ],
	maintainer => [ 1, \&maintainer ],
	license => [ 1, \&license ],
	provides => [ 1, \&provides ],
	'meta-spec' => [ 1, \&meta_spec ],
	description => [ 0, \&string ],
	generated_by => [ 0, \&string ],
	tags => [ 0, sub { list_of(@_, \&tag) } ],
	no_index => [
		0,
		sub {
			map_of_fields(
				$_[0], $_[1],
				{
					file => [ 0, sub { list_of(@_, \&rel_path) } ],
					directory => [ 0, sub { list_of(@_, \&rel_path) } ],
				});
		}
	],
	prereqs => [ 0, \&prereqs ],
	release_status => [
		0,
		sub {
			string_like(@_, sub { $_[0] =~ /\A(?:stable|testing|unstable)\z/ },
				'a release status (stable, testing or unstable)');
		}
	],
	resources => [ 0, \&resources ],
);

# ------------------------------------------------------------ the tree

sub slurp
{
	my ($file) = @_;
	open my $fh, '<:raw', $file or return;
	local $/;
	return scalar <$fh>;
}

# A control file's settings ({name => value}), read as PostgreSQL reads
# it: name = value or name = 'quoted value', # to the end of the line a
# comment.
my %CONTROL_SETTINGS = map { $_ => 1 } qw(
  comment default_version directory encoding module_pathname no_relocate
  relocatable requires schema superuser trusted);
my @CONTROL_REQUIRED = qw(comment default_version module_pathname relocatable superuser trusted);
my $BOOL = qr/\A(?:true|false|on|off|yes|no|1|0)\z/i;

sub read_control
{
	my ($file, $rel) = @_;
	my $text = slurp($file) // return problem("$rel: cannot read it: $!");
	my %settings;
	my $line_number = 0;
	for my $line (split /\n/, $text)
	{
		$line_number++;
		next if $line =~ /\A\s*(?:#.*)?\z/;
		my ($name, $quoted, $bare) =
		  $line =~ /\A\s*([A-Za-z_][A-Za-z0-9_]*)\s*=?\s*(?:'((?:[^'\\]|''|\\.)*)'|([^\s#']+))\s*(?:#.*)?\z/
		  or return problem("$rel:$line_number: cannot read \"$line\" as name = value");
		problem("$rel:$line_number: $name is set twice") if exists $settings{$name};
		problem("$rel:$line_number: $name is not a control file setting PostgreSQL knows")
		  unless $CONTROL_SETTINGS{$name};
		$settings{$name} = defined $quoted ? $quoted =~ s/''/'/gr =~ s/\\(.)/$1/gr : $bare;
	}
	for my $name (@CONTROL_REQUIRED)
	{
		problem("$rel: does not set $name (every setting is given, defaults too)")
		  unless exists $settings{$name};
	}
	for my $name (qw(relocatable superuser trusted no_relocate))
	{
		problem("$rel: $name = '$settings{$name}' is not a boolean")
		  if exists $settings{$name} && $settings{$name} !~ $BOOL;
	}
	return \%settings;
}

sub is_true { return $_[0] =~ /\A(?:true|on|yes|1)\z/i }

# A control file's version in SemVer form: 1.1 is 1.1.0.
sub control_semver
{
	my ($version) = @_;
	return "$version.0" if $version =~ /\A(?:0|[1-9][0-9]*)\.(?:0|[1-9][0-9]*)\z/;
	return $version if $version =~ /\A$SEMVER\z/;
	return;
}

# The Makefile's variables as its plain assignments set them ({name =>
# [words]}); continuation lines joined, comments dropped, recipes skipped.
sub makefile_variables
{
	my ($file) = @_;
	my $text = slurp($file) // return problem("Makefile: cannot read it: $!");
	$text =~ s/\\\n/ /g;
	my %vars;
	for my $line (split /\n/, $text)
	{
		next if $line =~ /\A\t/;
		$line =~ s/#.*//;
		my ($name, $op, $value) = $line =~ /\A\s*([A-Za-z_][A-Za-z0-9_]*)\s*(\?=|::?=|\+=|=)\s*(.*?)\s*\z/
		  or next;
		my @words = split ' ', $value;
		if ($op eq '+=')
		{
			push @{ $vars{$name} }, @words;
		}
		elsif ($op ne '?=' || !exists $vars{$name})
		{
			$vars{$name} = \@words;
		}
	}
	return \%vars;
}

# The versions CREATE EXTENSION can install ({version => 1}), as
# PostgreSQL finds them: an install script (name--V.sql) installs V, an
# update script (name--A--B.sql) leads from A to B; and the versions of
# the install scripts.
sub installable_versions
{
	my ($name, $rel, @scripts) = @_;
	my (%installs, %updates);
	for my $script (@scripts)
	{
		my ($versions) = basename($script) =~ /\A\Q$name\E--(.+)\.sql\z/ or next;
		my @v = split /--/, $versions, -1;
		if (@v == 1)
		{
			$installs{ $v[0] } = 1;
		}
		elsif (@v == 2)
		{
			push @{ $updates{ $v[0] } }, $v[1];
		}
		else
		{
			problem("$rel: $script is neither an install script ($name--V.sql)"
				  . " nor an update script ($name--A--B.sql)");
		}
	}
	my %reached = %installs;
	my @todo = keys %installs;
	while (defined(my $from = shift @todo))
	{
		for my $to (@{ $updates{$from} // [] })
		{
			push @todo, $to unless $reached{$to}++;
		}
	}
	return (\%reached, [ sort keys %installs ]);
}

sub check_tree
{
	my ($meta) = @_;
	my $make = makefile_variables(File::Spec->catfile($dir, 'Makefile')) or return;
	my $data = $make->{DATA} // [];
	my @modules = (@{ $make->{MODULE_big} // [] }, @{ $make->{MODULES} // [] });
	my %in_data = map { $_ => 1 } @$data;
	if (my @unexpanded = grep { /[\$%*?]/ } @$data)
	{
		problem("Makefile: DATA has @unexpanded, which this check does not expand;"
			  . ' name the scripts one by one');
	}
	for my $file (@$data)
	{
		problem("Makefile: DATA has $file, which is not in the tree")
		  unless -f File::Spec->catfile($dir, $file);
	}

	my $provides = json_type($meta->{provides}) eq 'an object' ? $meta->{provides} : {};
	my @extensions = sort keys %$provides;
	my @make_extensions = sort @{ $make->{EXTENSION} // [] };
	problem("Makefile: EXTENSION is \"@make_extensions\", but $meta_name provides \"@extensions\"")
	  if "@make_extensions" ne "@extensions";

	for my $extension (grep { json_type($provides->{$_}) eq 'an object' } @extensions)
	{
		for my $key (qw(file docfile))
		{
			my $name = $provides->{$extension}{$key};
			next unless defined $name && json_type($name) eq 'a string';
			problem("$meta_name: /provides/$extension/$key: $name is not in the tree")
			  unless -f File::Spec->catfile($dir, $name);
		}
	}
	problem("$meta_name: /provides: no extension is named like the distribution, so its version"
		  . ' cannot be checked against a control file')
	  if json_type($meta->{name}) eq 'a string' && @extensions && !exists $provides->{ $meta->{name} };
	if (json_type($meta->{no_index}) eq 'an object')
	{
		for my $kind (qw(file directory))
		{
			my $list = $meta->{no_index}{$kind};
			next unless json_type($list) eq 'an array';
			for my $i (0 .. $#$list)
			{
				my $name = $list->[$i];
				next unless json_type($name) eq 'a string';
				my $there = File::Spec->catfile($dir, $name);
				problem("$meta_name: /no_index/$kind\[$i]: $name is not a $kind of the tree")
				  unless $kind eq 'file' ? -f $there : -d $there;
			}
		}
	}

	for my $name (@extensions)
	{
		next unless $name =~ /\A[A-Za-z0-9_.-]+\z/;
		my $rel = "$name.control";
		my $control = read_control(File::Spec->catfile($dir, $rel), $rel) or next;
		my $default = $control->{default_version} // next;
		my $semver = control_semver($default)
		  // problem("$rel: default_version '$default' has no semantic version form (X.Y or X.Y.Z)");

		my $entry = $provides->{$name};
		if ($semver && json_type($entry) eq 'an object' && json_type($entry->{version}) eq 'a string')
		{
			problem("$meta_name: /provides/$name/version: $entry->{version} is not $semver,"
				  . " ${rel}'s default_version '$default'")
			  if $entry->{version} ne $semver;
		}
		if ($semver && $name eq ($meta->{name} // '') && json_type($meta->{version}) eq 'a string')
		{
			problem("$meta_name: /version: $meta->{version} is not $semver, ${rel}'s default_version"
				  . " '$default' (a release is a version of the extension: a bug-fix release too"
				  . ' gets its own, with an update script, empty if nothing in SQL changes)')
			  if $meta->{version} ne $semver;
		}

		if (defined(my $path = $control->{module_pathname}))
		{
			my ($library) = $path =~ m{\A\$libdir/([^/]+)\z}
			  or problem("$rel: module_pathname '$path' is not \$libdir/LIBRARY");
			problem("$rel: module_pathname '$path' names $library, but the Makefile builds"
				  . (@modules ? " @modules" : ' no MODULE_big or MODULES'))
			  if defined $library && !grep { $_ eq $library } @modules;
		}
		if (defined $control->{requires})
		{
			my $runtime = $meta->{prereqs}{runtime}{requires};
			for my $required (split /\s*,\s*/, $control->{requires})
			{
				problem("$rel: requires $required, which ${meta_name}'s /prereqs/runtime/requires does not")
				  unless json_type($runtime) eq 'an object' && exists $runtime->{$required};
			}
		}

		# The scripts: those in sql/ are what DATA installs, no more, no less.
		my @in_sql = map { File::Spec->abs2rel($_, $dir) } glob(File::Spec->catfile($dir, 'sql', "$name--*.sql"));
		my %in_sql = map { $_ => 1 } @in_sql;
		problem("Makefile: DATA lacks $_, so make install would leave it out") for grep { !$in_data{$_} } @in_sql;
		my @scripts = grep { basename($_) =~ /\A\Q$name\E--.*\.sql\z/ } @$data;
		problem("Makefile: DATA has $_, which is not in sql/") for grep { !$in_sql{$_} } @scripts;

		my ($reached, $installs) = installable_versions($name, 'Makefile', @scripts);
		problem("$rel: default_version '$default' cannot be installed: no install script"
			  . ' and update scripts lead to it (install scripts: '
			  . (@$installs ? join(', ', map { "$name--$_.sql" } @$installs) : 'none') . ')')
		  unless $reached->{$default};

		if (defined $control->{relocatable} && is_true($control->{relocatable}))
		{
			problem("$rel: schema is set, but it is only for an extension that is not relocatable")
			  if defined $control->{schema};
			for my $script (@scripts)
			{
				my $sql = slurp(File::Spec->catfile($dir, $script)) // next;
				$sql =~ s/--[^\n]*//g;
				problem("$script: uses \@extschema\@, which PostgreSQL replaces only in the scripts"
					  . " of an extension that is not relocatable ($rel says relocatable = true)")
				  if $sql =~ /\@extschema(?::[^@\s]*)?\@/;
			}
		}
	}
	check_test_requirements($meta, \@extensions);
	return scalar @extensions;
}

# What `make installcheck` (what `pgxn check` runs) needs: every other
# extension that a regress or isolation test creates (sql/*.sql but the
# extensions' scripts, specs/*.spec) is one of /prereqs/test/requires;
# as a recommendation only, a machine without it fails the tests.
sub check_test_requirements
{
	my ($meta, $extensions) = @_;
	my %own = map { $_ => 1 } @$extensions;
	my $prereqs = $meta->{prereqs};
	my $requires =
	     json_type($prereqs) eq 'an object'
	  && json_type($prereqs->{test}) eq 'an object'
	  && json_type($prereqs->{test}{requires}) eq 'an object' ? $prereqs->{test}{requires} : {};
	my %reported;
	for my $path (sort(glob(File::Spec->catfile($dir, 'sql', '*.sql')),
			glob(File::Spec->catfile($dir, 'specs', '*.spec'))))
	{
		my $file = File::Spec->abs2rel($path, $dir);
		next if grep { basename($file) =~ /\A\Q$_\E--/ } @$extensions;
		my $sql = slurp($path) // next;
		$sql =~ s/--[^\n]*//g;
		while ($sql =~ /\bCREATE\s+EXTENSION\s+(?:IF\s+NOT\s+EXISTS\s+)?"?([A-Za-z0-9_]+)/gi)
		{
			my $needed = $1;
			next if $own{$needed} || exists $requires->{$needed} || $reported{$needed}++;
			problem("$file: creates extension $needed, which ${meta_name}'s /prereqs/test/requires"
				  . ' does not list (make installcheck fails without it)');
		}
	}
}

# ------------------------------------------------------------ main

my $text = slurp($meta_file) // die "$meta_file: cannot read it: $!\n";
my $meta = eval { JSON::PP->new->decode($text) };
if (!defined $meta)
{
	print STDERR "$meta_name: not valid JSON: $@";
	exit 1;
}
if (map_of_fields('', $meta, \%TOP))
{
	check_tree($meta);
}

if (@problems)
{
	print STDERR "$_\n" for @problems;
	printf STDERR "%d problem%s in %s or the tree it describes\n", scalar @problems,
	  @problems == 1 ? '' : 's', $meta_name;
	exit 1;
}
printf "ok: %s is valid metadata (PGXN Meta Spec %s) for %s %s, and the tree agrees with it\n",
  $meta_name, $meta->{'meta-spec'}{version}, $meta->{name}, $meta->{version};
exit 0;
