# shellcheck shell=bash
# Shared helpers for test/run-tests.sh and test/demo.sh.  Source it, do not
# run it.  It defines functions and a few variables; it runs nothing else.
#
# Settings (environment, all optional):
#   PG_MAJOR        PostgreSQL major version to build against (default 15)
#   PG_CONFIG       pg_config to build with (default /usr/lib/postgresql/$PG_MAJOR/bin/pg_config)
#   BLOOMIDX_TMPDIR where throwaway folders go (default /tmp; must be usable by
#                   the postgres OS user)
#   BLOOMIDX_SKIP_APT=1  never call apt-get (fail if something is missing)

if [[ -n "${_BLOOMIDX_COMMON_SH:-}" ]]; then return 0; fi
_BLOOMIDX_COMMON_SH=1

PG_MAJOR="${PG_MAJOR:-15}"
PG_CONFIG="${PG_CONFIG:-/usr/lib/postgresql/$PG_MAJOR/bin/pg_config}"
BLOOMIDX_TMPDIR="${BLOOMIDX_TMPDIR:-/tmp}"
# The repository root (this file is test/lib/common.sh).
BLOOMIDX_REPO="$(cd "$(dirname "${BASH_SOURCE[0]}")/../.." && pwd)"

# Debian packages the build, the unit tests, pg_regress and the TAP tests need
# (bloomidx_apt_packages <major>).  contrib (pageinspect, and bloom for the
# demo) ships inside postgresql-<major>.  postgresql-server-dev-<major> pulls
# in the clang and llvm that PGXS needs for the JIT bitcode (with_llvm=yes).
# strace: a TAP test watches the build's fsync (010_build_durability.pl).
bloomidx_apt_packages() {
	echo "postgresql-$1 postgresql-server-dev-$1 libxxhash-dev libgtest-dev libipc-run-perl build-essential strace"
}
# shellcheck disable=SC2207
BLOOMIDX_APT_PACKAGES=($(bloomidx_apt_packages "$PG_MAJOR"))

log() { printf '[%s] %s\n' "$(date +%H:%M:%S)" "$*"; }
warn() { printf '[%s] WARNING: %s\n' "$(date +%H:%M:%S)" "$*" >&2; }
die() {
	printf '[%s] ERROR: %s\n' "$(date +%H:%M:%S)" "$*" >&2
	exit 1
}

is_root() { [[ "$(id -u)" -eq 0 ]]; }

# Run a command as root: directly when we are root, else through sudo.
as_root() {
	if is_root; then
		"$@"
	elif command -v sudo >/dev/null 2>&1; then
		sudo "$@"
	else
		die "need root (or sudo) for: $*"
	fi
}

# The OS user that owns the throwaway clusters.  PostgreSQL refuses to run as
# root, so as root we use the 'postgres' user of the Debian package; as any
# other user we simply run as ourselves.
pg_os_user() {
	if is_root; then echo postgres; else id -un; fi
}

# Command prefix that runs a program as the cluster owner (for use with
# `timeout` and the like, which cannot run shell functions).
if is_root; then AS_PG=(runuser -u postgres --); else AS_PG=(); fi

# Run a command as the cluster owner.  The caller must cd somewhere that user
# can read first (the checkout may not be).
as_pg() {
	"${AS_PG[@]}" "$@"
}

# Make a throwaway folder owned by the cluster owner; prints its path.
make_pg_tmpdir() {
	local prefix="$1" dir
	dir="$(mktemp -d "$BLOOMIDX_TMPDIR/$prefix.XXXXXX")"
	if is_root; then chown postgres: "$dir"; fi
	chmod 700 "$dir"
	echo "$dir"
}

pkg_installed() {
	[[ "$(dpkg-query -W -f='${Status}' "$1" 2>/dev/null)" == "install ok installed" ]]
}

# Install whatever is missing with apt-get.  'apt-get update' runs only when
# something is missing.  When it does, the whole list is passed to apt-get so
# that postgresql-$PG_MAJOR is brought to the same minor version as the
# server-dev package (the machine image may carry an older minor release).
deps_install() {
	local missing=() p
	for p in "${BLOOMIDX_APT_PACKAGES[@]}"; do
		pkg_installed "$p" || missing+=("$p")
	done
	if ((${#missing[@]} == 0)); then
		log "deps: all packages present (${BLOOMIDX_APT_PACKAGES[*]})"
	else
		[[ "${BLOOMIDX_SKIP_APT:-}" == 1 ]] && die "missing packages: ${missing[*]} (BLOOMIDX_SKIP_APT=1)"
		command -v apt-get >/dev/null 2>&1 || die "missing packages: ${missing[*]} and no apt-get"
		log "deps: missing ${missing[*]}; installing with apt-get"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get update -q </dev/null ||
			die "apt-get update failed"
		as_root env DEBIAN_FRONTEND=noninteractive apt-get install -y -q \
			--no-install-recommends -o Dpkg::Options::=--force-confdef \
			-o Dpkg::Options::=--force-confold "${BLOOMIDX_APT_PACKAGES[@]}" </dev/null ||
			die "apt-get install failed"
		for p in "${BLOOMIDX_APT_PACKAGES[@]}"; do
			pkg_installed "$p" || die "package $p still missing after apt-get install"
		done
	fi
	pg_env_init
	if is_root; then
		id postgres >/dev/null 2>&1 || die "no 'postgres' OS user (postgresql-$PG_MAJOR should create it)"
	fi
}

# Fill PG_BINDIR / PGXS_ROOT from pg_config.
pg_env_init() {
	[[ -x "$PG_CONFIG" ]] || die "pg_config not found at $PG_CONFIG (is postgresql-server-dev-$PG_MAJOR installed?)"
	PG_BINDIR="$("$PG_CONFIG" --bindir)"
	local pgxs
	pgxs="$("$PG_CONFIG" --pgxs)"
	PGXS_ROOT="${pgxs%/src/makefiles/pgxs.mk}"
	export PG_CONFIG PG_BINDIR PGXS_ROOT
}

# Build and install the extension (make -j2 && make install) from the
# repository root.  Output goes to the terminal.
build_and_install() {
	(
		set -e
		cd "$BLOOMIDX_REPO" || exit 1
		# PGXS does not rebuild when PG_CONFIG changes: objects built for
		# another version would link and then fail to load.
		local version
		version="$("$PG_CONFIG" --version)"
		if [[ -f .pg_build_version && "$(cat .pg_build_version)" != "$version" ]]; then
			log "build: last built for $(cat .pg_build_version): make clean"
			make clean PG_CONFIG="$PG_CONFIG" >/dev/null
		fi
		echo "$version" >.pg_build_version
		log "build: make -j2 PG_CONFIG=$PG_CONFIG"
		make -j2 PG_CONFIG="$PG_CONFIG"
		log "build: make install"
		as_root make install PG_CONFIG="$PG_CONFIG"
	)
}

# The demos' start (test/demo.sh, test/demo_shards.sh): ROWS from
# BLOOMIDX_DEMO_ROWS (default $1), what is missing installed, and the
# extension built and installed unless BLOOMIDX_DEMO_NO_BUILD=1.
demo_prepare() {
	ROWS="${BLOOMIDX_DEMO_ROWS:-$1}"
	[[ "$ROWS" =~ ^[0-9]+$ ]] || die "BLOOMIDX_DEMO_ROWS must be a number"
	deps_install
	if [[ "${BLOOMIDX_DEMO_NO_BUILD:-}" != 1 ]]; then
		build_and_install
	fi
}

# Print a file with a header, at most $2 (default 400) last lines.
print_file() {
	local f="$1" n="${2:-400}"
	[[ -f "$f" ]] || return 0
	echo "----- $f (last $n lines) -----"
	tail -n "$n" "$f" || true
	echo "----- end of $f -----"
}

# The running bench cluster's settings (scaling.sh, steady_state.sh): room
# for a whole index in shared buffers, no autovacuum, JIT, parallel query
# or synchronized scans to move a figure; then a restart.  Extra
# "name = value" settings may follow (bloomidx's too: it is loaded first).
bench_cluster_settings() {
	local args=(-c "ALTER SYSTEM SET shared_buffers = '4GB'" -c "ALTER SYSTEM SET work_mem = '256MB'"
		-c "ALTER SYSTEM SET maintenance_work_mem = '1GB'" -c "ALTER SYSTEM SET max_wal_size = '32GB'"
		-c "ALTER SYSTEM SET checkpoint_timeout = '1h'" -c "ALTER SYSTEM SET autovacuum = off"
		-c "ALTER SYSTEM SET jit = off" -c "ALTER SYSTEM SET max_parallel_workers_per_gather = 0"
		-c "ALTER SYSTEM SET synchronize_seqscans = off" -c "LOAD 'bloomidx'") setting
	for setting in "$@"; do
		args+=(-c "ALTER SYSTEM SET $setting")
	done
	cluster_psql -qAt "${args[@]}"
	(cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -l "$CLUSTER_DIR/server.log" -w restart >/dev/null)
}

# What a benchmark measures: installs what is missing, then builds and
# installs bloomidx from the working tree (BLOOMIDX_BENCH_NO_BUILD=1: the
# installed one), and sets BUILT (which) and COMMIT (the tree's commit,
# and whether src/ or sql/ had uncommitted changes) for its report.
bench_install() {
	deps_install
	if [[ "${BLOOMIDX_BENCH_NO_BUILD:-}" == 1 ]]; then
		BUILT="the installed bloomidx (not rebuilt)"
	else
		build_and_install
		BUILT="bloomidx built from the working tree"
	fi
	COMMIT="$(git -C "$BLOOMIDX_REPO" rev-parse --short HEAD 2>/dev/null || echo unknown)"
	if [[ -n "$(git -C "$BLOOMIDX_REPO" status --porcelain -- src sql 2>/dev/null)" ]]; then
		COMMIT="$COMMIT with uncommitted changes in src/ or sql/"
	fi
	if [[ "${BLOOMIDX_BENCH_NO_BUILD:-}" == 1 ]]; then
		COMMIT="unknown (the working tree is at $COMMIT)"
	fi
}
