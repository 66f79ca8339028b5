# shellcheck shell=bash
# Run the suites against a PostgreSQL major version that this machine's
# Debian release does not ship, inside a Debian chroot that does.  Source it.
#
#   debian_release_for <major>    the Debian release whose archive ships
#                                 postgresql-<major> (15 bookworm, 17 trixie,
#                                 18 forky, 19 sid with experimental); empty
#                                 if none does
#   debian_extra_suite_for <major>
#                                 the suite added to that release's sources
#                                 for it (19: experimental), pinned to
#                                 PostgreSQL's own packages; mostly empty
#   host_release                  this machine's Debian release (codename)
#   chroot_run <major> [var=value ...]
#                                 create the chroot when missing (reuse it
#                                 when a previous run left it), copy the
#                                 working tree into it and run
#                                 test/run-tests.sh --pg <major> there with
#                                 the given environment; returns its status.
#                                 Call it in a subshell: it sets an EXIT trap
#                                 that unmounts the chroot's file systems
#
# A chroot is a `debootstrap --variant=minbase` Debian with the packages of
# BLOOMIDX_APT_PACKAGES for that major.  It lives outside the checkout, in
# $BLOOMIDX_CHROOT_ROOT/<release>-pg<major> (default root
# /var/cache/bloomidx/chroots), is created under a temporary name and
# renamed once complete, so an interrupted creation is never reused.
# Needs root (or sudo), debootstrap (installed when missing) and the Debian
# archive ($BLOOMIDX_DEBIAN_MIRROR, default http://deb.debian.org/debian).

# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

BLOOMIDX_CHROOT_ROOT="${BLOOMIDX_CHROOT_ROOT:-/var/cache/bloomidx/chroots}"
BLOOMIDX_DEBIAN_MIRROR="${BLOOMIDX_DEBIAN_MIRROR:-http://deb.debian.org/debian}"

debian_release_for() {
	case "$1" in
	15) echo bookworm ;;
	17) echo trixie ;;
	18) echo forky ;;
	19) echo sid ;;
	*) echo "" ;;
	esac
}

# PostgreSQL 19 is in experimental until it is released: sid plus that
# suite, pinned so that only the packages built from postgresql-19's source
# come from it and everything else from sid (apt-get -t experimental would
# take experimental's perl, whose transition sid has not made).
debian_extra_suite_for() {
	case "$1" in
	19) echo experimental ;;
	*) echo "" ;;
	esac
}

host_release() {
	(
		# shellcheck disable=SC1091
		. /etc/os-release 2>/dev/null && echo "${VERSION_CODENAME:-}"
	)
}

# The chroot's mounts: the kernel's file systems PostgreSQL and apt need.
# Each bind mount is made a slave, so that nothing mounted under it
# propagates back to the host's /dev (where / is a shared mount).
_chroot_mounts=(proc dev dev/pts dev/shm)

_chroot_mount() {
	local dir="$1" m
	_chroot_umount "$dir"
	as_root mount -t proc proc "$dir/proc" || return 1
	for m in dev dev/pts dev/shm; do
		as_root mount --bind "/$m" "$dir/$m" && as_root mount --make-rslave "$dir/$m" || return 1
	done
}

# Stops what a killed run left running in the chroot (a postmaster holds
# its mounts busy), then unmounts.
_chroot_umount() {
	local dir="$1" i p root
	for p in /proc/[0-9]*; do
		root="$(as_root readlink "$p/root" 2>/dev/null)" || continue
		[[ "$root" == "$dir" ]] && as_root kill -9 "${p#/proc/}" 2>/dev/null
	done
	for ((i = ${#_chroot_mounts[@]} - 1; i >= 0; i--)); do
		if mountpoint -q "$dir/${_chroot_mounts[i]}" 2>/dev/null; then
			as_root umount -l "$dir/${_chroot_mounts[i]}" || true
		fi
	done
	return 0
}

# chroot_remove <dir>: deletes a chroot, never through a mount of the host.
chroot_remove() {
	local dir="$1"
	_chroot_umount "$dir"
	if awk -v d="$dir/" 'index($2, d) == 1' /proc/mounts | grep -q .; then
		die "chroot: file systems are still mounted under $dir; unmount them first"
	fi
	as_root rm -rf --one-file-system "$dir"
}

# chroot_exec <dir> <command...>: a command in the chroot with a clean
# environment (plus the var=value words given before the command).
chroot_exec() {
	local dir="$1"
	shift
	as_root chroot "$dir" /usr/bin/env -i \
		PATH=/usr/local/sbin:/usr/local/bin:/usr/sbin:/usr/bin:/sbin:/bin \
		HOME=/root LANG=C.UTF-8 DEBIAN_FRONTEND=noninteractive "$@"
}

# Installs debootstrap if missing (apt-get on this machine: a caller that
# runs apt-get at the same time calls this first).
chroot_need_debootstrap() {
	command -v debootstrap >/dev/null 2>&1 && return 0
	[[ "${BLOOMIDX_SKIP_APT:-}" == 1 ]] && die "debootstrap missing (BLOOMIDX_SKIP_APT=1)"
	local install=(env DEBIAN_FRONTEND=noninteractive apt-get install -y -q --no-install-recommends debootstrap)
	as_root "${install[@]}" </dev/null ||
		{ as_root apt-get update -q </dev/null && as_root "${install[@]}" </dev/null; } ||
		die "apt-get install debootstrap failed"
}

_chroot_create() {
	local major="$1" release="$2" dir="$3" tmp="$3.partial" start=$SECONDS
	local extra
	extra="$(debian_extra_suite_for "$major")"
	log "chroot: creating $dir (Debian $release, PostgreSQL $major)"
	chroot_need_debootstrap
	# (A creation that was killed may have left its mounts.)
	chroot_remove "$tmp"
	as_root mkdir -p "$tmp" || die "chroot: cannot make $tmp"
	# An older debootstrap knows no script for a newer release: all Debian
	# releases since buster bootstrap as sid does.
	local script=""
	[[ -e "/usr/share/debootstrap/scripts/$release" ]] || script=/usr/share/debootstrap/scripts/sid
	local bootlog
	bootlog="$(mktemp "$BLOOMIDX_TMPDIR/bloomidx-debootstrap.XXXXXX")"
	as_root debootstrap --variant=minbase "$release" "$tmp" "$BLOOMIDX_DEBIAN_MIRROR" $script \
		>"$bootlog" 2>&1 || {
		print_file "$bootlog" 60
		die "chroot: debootstrap $release failed"
	}
	rm -f "$bootlog"
	# Testing's and sid's Release files may be past their Valid-Until in a
	# snapshot mirror; no service starts inside the chroot; and the package
	# must not create a cluster of its own (the tests make theirs).
	as_root sh -ec '
		echo "Acquire::Check-Valid-Until \"false\";" >"$1/etc/apt/apt.conf.d/99bloomidx"
		if [ -n "$3" ]; then
			echo "deb $2 $3 main" >"$1/etc/apt/sources.list.d/$3.list"
			printf "Package: src:postgresql-%s\nPin: release a=%s\nPin-Priority: 990\n" "$4" "$3" \
				>"$1/etc/apt/preferences.d/bloomidx-$3"
		fi
		printf "#!/bin/sh\nexit 101\n" >"$1/usr/sbin/policy-rc.d"
		chmod 755 "$1/usr/sbin/policy-rc.d"
		mkdir -p "$1/etc/postgresql-common"
		echo "create_main_cluster = false" >"$1/etc/postgresql-common/createcluster.conf"
		cp /etc/resolv.conf "$1/etc/resolv.conf" 2>/dev/null || true' sh "$tmp" "$BLOOMIDX_DEBIAN_MIRROR" "$extra" "$major" ||
		die "chroot: configuring $tmp failed"
	# shellcheck disable=SC2064
	trap "$(printf '_chroot_umount %q' "$tmp")" EXIT
	_chroot_mount "$tmp" || die "chroot: mounting in $tmp failed"
	local rc=0
	chroot_exec "$tmp" apt-get update -q </dev/null &&
		chroot_exec "$tmp" apt-get install -y -q --no-install-recommends \
			$(bloomidx_apt_packages "$major") </dev/null || rc=$?
	_chroot_umount "$tmp"
	((rc == 0)) || die "chroot: installing PostgreSQL $major in $tmp failed"
	[[ -e "$dir" ]] && chroot_remove "$dir"	# one that lacks PostgreSQL
	as_root mv -T "$tmp" "$dir" || die "chroot: renaming $tmp failed"
	log "chroot: $dir ready in $((SECONDS - start))s"
}

# The chroot of PostgreSQL $1, locked (fd 9, held until the calling
# subshell ends) and created if missing; sets chroot_dir.  One run per
# chroot at a time: another would delete this one's tree and unmount its
# /proc.
_chroot_lock_ready() {
	local major="$1" release
	release="$(debian_release_for "$major")"
	[[ -n "$release" ]] || die "no Debian release ships PostgreSQL $major (supported: 15, 17, 18, 19)"
	chroot_dir="$BLOOMIDX_CHROOT_ROOT/$release-pg$major"
	as_root mkdir -p "$BLOOMIDX_CHROOT_ROOT" || die "chroot: cannot make $BLOOMIDX_CHROOT_ROOT"
	exec 9>>"$chroot_dir.lock" || die "chroot: cannot open $chroot_dir.lock"
	if ! flock -n 9; then
		log "chroot: waiting for another run in $chroot_dir"
		flock 9 || die "chroot: cannot lock $chroot_dir.lock"
	fi
	[[ -x "$chroot_dir/usr/lib/postgresql/$major/bin/postgres" &&
		-x "$chroot_dir/usr/lib/postgresql/$major/bin/pg_config" ]] ||
		_chroot_create "$major" "$release" "$chroot_dir"
}

# chroot_prepare <major>...: creates the chroots that are missing, one
# after the other (a run of every version starts this in the background,
# so that they are made while the first version's suites run; chroot_run
# waits on each one's lock).
chroot_prepare() {
	local major
	for major in "$@"; do
		(_chroot_lock_ready "$major") || return 1
	done
}

chroot_run() {
	local major="$1" release dir chroot_dir
	shift
	release="$(debian_release_for "$major")"
	_chroot_lock_ready "$major"
	dir="$chroot_dir"

	# The working tree (tracked and untracked files, not ignored ones, so
	# no build output of another version; a tracked file deleted in the
	# tree is skipped) goes to /build/bloomidx.
	local src=/build/bloomidx
	as_root rm -rf --one-file-system "$dir$src" && as_root mkdir -p "$dir$src" ||
		die "chroot: cannot make $dir$src"
	(
		cd "$BLOOMIDX_REPO" || exit 1
		if git rev-parse --is-inside-work-tree >/dev/null 2>&1; then
			git ls-files -z --cached --others --exclude-standard |
				tar --null -T - --ignore-failed-read -cf - 2>/dev/null
		else
			tar --exclude=.git -cf - .
		fi
	) | as_root tar -C "$dir$src" -xf - || die "chroot: copying the tree into $dir failed"

	log "chroot: running the suites in $dir (Debian $release, PostgreSQL $major)"
	# shellcheck disable=SC2064
	trap "$(printf '_chroot_umount %q' "$dir")" EXIT
	_chroot_mount "$dir" || die "chroot: mounting in $dir failed"
	local rc=0
	chroot_exec "$dir" "$@" bash "$src/test/run-tests.sh" --pg "$major" </dev/null || rc=$?
	_chroot_umount "$dir"
	return "$rc"
}
