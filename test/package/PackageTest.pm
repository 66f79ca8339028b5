#
# PackageTest: what the tests of test/package share: files read and
# written whole, and commands run for their exit status and output.
# Core Perl only.
#
package PackageTest;

use strict;
use warnings;

use Exporter 'import';
use IPC::Open3 qw(open3);

our @EXPORT = qw(slurp spew run_in);

sub slurp
{
	my ($file) = @_;
	open my $fh, '<:raw', $file or die "$file: $!\n";
	local $/;
	return scalar <$fh>;
}

sub spew
{
	my ($file, $text) = @_;
	open my $fh, '>:raw', $file or die "$file: $!\n";
	print $fh $text;
	close $fh or die "$file: $!\n";
}

# run_in(DIR, COMMAND...): runs COMMAND (a program and its arguments, no
# shell) in DIR (undef: here), with nothing on its standard input; returns
# its exit status and its output, stdout and stderr together.
sub run_in
{
	my ($dir, @command) = @_;
	@command = ('sh', '-c', 'cd "$1" && shift && exec "$@"', 'sh', $dir, @command) if defined $dir;
	my $pid = open3(my $in, my $out, undef, @command);
	close $in;
	local $/;
	my $output = <$out> // '';
	waitpid $pid, 0;
	return ($? >> 8, $output);
}

1;
