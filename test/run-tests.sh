#!/usr/bin/env bash
# bloomidx: run every test suite, on every supported PostgreSQL version.
#
#   bash test/run-tests.sh              all of them: 15, 17, 18 and 19
#   bash test/run-tests.sh --pg 17      one version (repeat --pg for more)
#
# A version this machine's Debian release ships (15 on Debian 12) runs
# here; the others run in a Debian chroot that ships them (17: trixie, 18:
# forky, 19: sid with experimental), created on first use and reused
# (test/lib/chroot.sh).  For each
# version: installs what is missing (apt-get, as root), builds and installs
# the extension, then runs the suites:
#   build        make -j2 && make install
#   unit         make unittest (C++ core, GoogleTest)
#   regress      make installcheck (pg_regress, then the isolation tests;
#                first, make installcheck-readme: the SQL examples of
#                README.md and doc/, after checking that sql/readme.sql
#                holds them)
#                against a throwaway cluster, then a crash and recovery
#                that checks the run's WAL (regress_wal_check)
#   tap          prove test/t/*.pl (crash recovery, streaming replica, ...)
#   clients      a Django model and an SQLAlchemy table with bloomidx
#                indexes, as README.md spells them (test/clients/), against
#                a throwaway cluster: created, used (each lookup against a
#                sequential scan) and reflected; Debian's python3-django,
#                python3-sqlalchemy and python3-psycopg2
#   demo         the README's demos (test/demo.sh, test/demo_shards.sh) on
#                20,000 rows: they run to the end, and the shards' demo
#                checks that one node, its standby and the shards agree
#   package      prove test/package: META.json against the PGXN Meta Spec
#                and the tree (meta_check.pl, and that it refuses broken
#                ones), `make dist` in a fresh clone: the archive's
#                contents, and that it builds (no install; never as the
#                postgres user), and the documents against the tree
#                (doc_check.pl, and that it refuses broken copies)
# Each suite runs even if an earlier one failed (except that regress and tap
# need the build).  A version's run ends with "N passed, N failed" (N =
# suites), a run of several versions with the same line over versions; the
# exit status is non-zero if any suite of any version failed.  Runs as root (clusters run
# as the postgres OS user) or as an ordinary user (clusters run as that
# user; a chroot needs root or sudo).
#
# Settings (environment):
#   BLOOMIDX_REGRESS_PORT  port of the pg_regress cluster (default 5491)
#   BLOOMIDX_TAP_PORT      PGPORT given to prove (default 5493; the TAP
#                          framework picks free ports for its nodes itself)
#   BLOOMIDX_SUITES        suites to run, e.g. "build tap" (default all;
#                          in a run of several versions, unit, clients,
#                          demo and package only on the first (the clients
#                          talk to the server, not to the library's build): the C++ core unit
#                          tests includes nothing of PostgreSQL, and the
#                          build compiles it with each version's toolchain
#                          all the same; the demos' SQL is run by the other
#                          suites; the packaging is the same for every
#                          version)
#   PROVE_FLAGS            extra prove flags, e.g. --verbose
#   BLOOMIDX_TAP_TESTS     a glob of the TAP files to run, e.g. "00[37]*"
#                          (default all)
#   BLOOMIDX_TAP_JOBS      TAP files run at once (prove -j; default 2:
#                          each mostly waits on one backend at a time, so
#                          two share the machine's 2 cores; their nodes
#                          take ports through the framework's port locks)
#   BLOOMIDX_TAP_SEED      seed for the random queries of the TAP tests
#   BLOOMIDX_TAP_SKIP      TAP files not to run, by name without .pl,
#                          space-separated; in a run of several versions
#                          by default "003_verify 007_random_corruption"
#                          on the last version, and those and 004 005 006
#                          008 009 011 on the versions between the first
#                          and the last
#   BLOOMIDX_REGRESS_SKIP  pg_regress files not to run, by name,
#                          space-separated; in a run of several versions
#                          by default the long tests of our own logic
#                          (randomized randomized_types pending_filters
#                          segment_filters churn in_lists) on the versions
#                          between the first and the last
#   BLOOMIDX_TAP_QUICK     1 (by default in a run of several versions):
#                          the TAP tests' long loops shortened (fewer
#                          crash cycles and damage rounds, a 20 s soak);
#                          0 for all at full length (before a release)
#   BLOOMIDX_SUITE_TIMEOUT seconds per suite before it is killed (default 1500)
#   and those of test/lib/common.sh (PG_CONFIG, BLOOMIDX_TMPDIR, ...) and
#   test/lib/chroot.sh (BLOOMIDX_CHROOT_ROOT, BLOOMIDX_DEBIAN_MIRROR).

SUPPORTED_MAJORS=(15 17 18 19)
MAJORS=()

# Whether PG_CONFIG is set to a pg_config of major version $1.
pg_config_is_major() {
	[[ -n "${PG_CONFIG:-}" && -x "$PG_CONFIG" &&
		"$("$PG_CONFIG" --version 2>/dev/null)" =~ ^PostgreSQL\ $1[.a-z] ]]
}

while (($# > 0)); do
	case "$1" in
	--pg)
		[[ "${2:-}" =~ ^[0-9]+$ ]] || { echo "usage: $0 [--pg MAJOR]..." >&2; exit 2; }
		MAJORS+=("$2")
		shift 2
		;;
	--pg=*)
		MAJORS+=("${1#--pg=}")
		shift
		;;
	*)
		echo "usage: $0 [--pg MAJOR]...  (supported: ${SUPPORTED_MAJORS[*]})" >&2
		exit 2
		;;
	esac
done
((${#MAJORS[@]} > 0)) || MAJORS=("${SUPPORTED_MAJORS[@]}")
if ((${#MAJORS[@]} == 1)); then
	# One version: its pg_config, unless the caller chose one of it.
	pg_config_is_major "${MAJORS[0]}" || PG_CONFIG="/usr/lib/postgresql/${MAJORS[0]}/bin/pg_config"
	export PG_MAJOR="${MAJORS[0]}" PG_CONFIG
fi

set -euo pipefail

# shellcheck source=SCRIPTDIR/lib/cluster.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/cluster.sh"
# shellcheck source=SCRIPTDIR/lib/chroot.sh
source "$(dirname "${BASH_SOURCE[0]}")/lib/chroot.sh"
cd "$BLOOMIDX_REPO"

# A version runs here when this machine's release ships it, or when its
# server and PGXS are installed here anyway (from Debian's directories, or
# where a PG_CONFIG of that version says); else in its chroot.
runs_here() {
	local major="$1" config="/usr/lib/postgresql/$1/bin/pg_config"
	[[ "$(debian_release_for "$major")" == "$(host_release)" ]] && return 0
	pg_config_is_major "$major" && config="$PG_CONFIG"
	[[ -x "$config" && -x "$("$config" --bindir)/postgres" && -f "$("$config" --pgxs)" ]]
}

# The settings above, passed on to a run in a chroot.
pass_on_env() {
	local v
	for v in BLOOMIDX_REGRESS_PORT BLOOMIDX_TAP_PORT BLOOMIDX_SUITES PROVE_FLAGS \
		BLOOMIDX_TAP_TESTS BLOOMIDX_TAP_SKIP BLOOMIDX_REGRESS_SKIP BLOOMIDX_TAP_JOBS BLOOMIDX_TAP_SEED BLOOMIDX_TAP_QUICK BLOOMIDX_SOAK_SECONDS \
		BLOOMIDX_SUITE_TIMEOUT BLOOMIDX_SKIP_APT CI; do
		[[ -n "${!v:-}" ]] && printf '%s=%s\n' "$v" "${!v}"
	done
	return 0
}

# failure_digest MAJOR LOG: the lines of a failed version's output that say
# what failed (test results, errors, the start of a regression diff),
# repeated at the very end, where CI's excerpt of the output shows them.
failure_digest() {
	local major="$1" f="$2"
	echo
	echo "======================================================================"
	echo "PostgreSQL $major failed; from its output ($f):"
	# What failed (test results, suites), then what the servers said
	# (the TAP logs printed above it hold many intended ERRORs).
	grep -a -n -E 'not ok|FAIL|[Ff]ailed|Dubious|timed out|Terminated|[Kk]illed|# +(got|expected)|Bailout|^\[.*\] (ERROR|WARNING):' "$f" |
		grep -a -v -E '^[0-9]+:(ok |.*\.\.\. ok)|PASS' | tail -n 40 || true
	grep -a -n -E 'PANIC|FATAL|TRAP|server process .* was terminated' "$f" | tail -n 12 || true
	awk '/^----- .*regression\.diffs/ {on = 1; n = 0} on && n++ < 40 {print} /^----- end of/ {on = 0}' "$f" | head -n 60
}

if ((${#MAJORS[@]} > 1)) || ! runs_here "${MAJORS[0]}"; then
	# Each version on its own: here (a new process, for its own PG_CONFIG)
	# or in its chroot.
	declare -a VERSION_SUMMARY=() VERSION_LOGS=()
	VERSIONS_FAILED=0
	TOTAL_START=$SECONDS
	QUICK_GIVEN="${BLOOMIDX_TAP_QUICK:-}"
	SUITES_GIVEN="${BLOOMIDX_SUITES:-}"
	SKIP_GIVEN="${BLOOMIDX_TAP_SKIP+set}"
	REGRESS_SKIP_GIVEN="${BLOOMIDX_REGRESS_SKIP+set}"
	TAP_DAMAGE="003_verify 007_random_corruption"
	TAP_OWN_LOGIC="004_dump_restore 005_promote 006_crash_cycles 008_seal_steps 009_free_list 011_shards"
	REGRESS_OWN_LOGIC="randomized randomized_types pending_filters segment_filters churn in_lists"
	# The chroots the later versions need are made in the background while
	# the first version's suites run (about 100 s each, mostly waiting on
	# the mirror and dpkg); chroot_run waits for each one's lock.
	PREPARE_PID="" PREPARE_LOG=""
	declare -a TO_PREPARE=()
	for major in "${MAJORS[@]:1}"; do runs_here "$major" || TO_PREPARE+=("$major"); done
	if ((${#TO_PREPARE[@]} > 0)); then
		chroot_need_debootstrap	# here, before the first version's apt-get
		PREPARE_LOG="$(mktemp "$BLOOMIDX_TMPDIR/bloomidx-chroots.XXXXXX")"
		log "chroot: making those of PostgreSQL ${TO_PREPARE[*]} in the background (log: $PREPARE_LOG)"
		(chroot_prepare "${TO_PREPARE[@]}") >"$PREPARE_LOG" 2>&1 </dev/null &
		PREPARE_PID=$!
		# shellcheck disable=SC2064
		trap "kill $PREPARE_PID 2>/dev/null || true" EXIT
	fi
	for major in "${MAJORS[@]}"; do
		start=$SECONDS rc=0
		if [[ -n "$PREPARE_PID" && "$major" != "${MAJORS[0]}" ]]; then
			if wait "$PREPARE_PID"; then
				grep -a '^\[' "$PREPARE_LOG" || true	# its log lines, not apt's
			else
				print_file "$PREPARE_LOG" 100
				log "chroot: making them in the background failed; each is tried again below"
			fi
			rm -f "$PREPARE_LOG"
			PREPARE_PID=""
			trap - EXIT
		fi
		# The TAP tests shortened (BLOOMIDX_TAP_QUICK=0 for full length);
		# the corruption tests only on the first version (they damage pages
		# and check what our own C++ makes of them, the same code on every
		# version); the first and the last version run every other file,
		# the ones between those whose server side differs most (crash
		# recovery, standby, durable builds, progress, upgrades, read
		# streams: 001, 002, 010, 012, 013, 014), not the tests of our own
		# logic under load (dump and restore, promotion, crash cycles, seal
		# steps, free list, shards); of pg_regress's files, the ones between
		# leave out the long ones of our own logic (random queries, pending
		# filters, segment filters, churn, IN lists: a minute a version, and
		# most of the WAL its check replays); and the unit tests only on the
		# first, unless the caller chose: so the run of every version stays
		# well under 20 minutes on 2 cores.
		if [[ -z "$QUICK_GIVEN" ]]; then export BLOOMIDX_TAP_QUICK=1; fi
		if [[ -z "$SKIP_GIVEN" ]]; then
			if [[ "$major" == "${MAJORS[0]}" ]]; then
				unset BLOOMIDX_TAP_SKIP
			elif [[ "$major" == "${MAJORS[-1]}" ]]; then
				export BLOOMIDX_TAP_SKIP="$TAP_DAMAGE"
			else
				export BLOOMIDX_TAP_SKIP="$TAP_DAMAGE $TAP_OWN_LOGIC"
			fi
		fi
		if [[ -z "$REGRESS_SKIP_GIVEN" ]]; then
			if [[ "$major" == "${MAJORS[0]}" || "$major" == "${MAJORS[-1]}" ]]; then
				unset BLOOMIDX_REGRESS_SKIP
			else
				export BLOOMIDX_REGRESS_SKIP="$REGRESS_OWN_LOGIC"
			fi
		fi
		if [[ -z "$SUITES_GIVEN" ]]; then
			if [[ "$major" == "${MAJORS[0]}" ]]; then unset BLOOMIDX_SUITES; else export BLOOMIDX_SUITES="build regress tap"; fi
		fi
		# Each version's output is kept too, so that what failed can be
		# repeated after the summary: CI shows only the end of the output.
		vlog="$BLOOMIDX_TMPDIR/bloomidx-pg$major.log"
		if runs_here "$major"; then
			set +e
			PG_MAJOR="$major" bash "$BLOOMIDX_REPO/test/run-tests.sh" --pg "$major" 2>&1 | tee "$vlog"
			rc=${PIPESTATUS[0]}
			set -e
		else
			mapfile -t chroot_env < <(pass_on_env)
			# Not in an ||-list, where bash would ignore set -e inside.
			set +e
			(
				set -euo pipefail
				chroot_run "$major" "${chroot_env[@]}"
			) 2>&1 | tee "$vlog"
			rc=${PIPESTATUS[0]}
			set -e
		fi
		if ((rc == 0)); then
			status=PASS
			rm -f "$vlog"
		else
			status=FAIL VERSIONS_FAILED=$((VERSIONS_FAILED + 1))
			VERSION_LOGS+=("$major:$vlog")
		fi
		VERSION_SUMMARY+=("$(printf '  PostgreSQL %-3s %s  %5ds' "$major" "$status" "$((SECONDS - start))")")
	done
	echo
	echo "======================================================================"
	echo "versions (total $((SECONDS - TOTAL_START))s):"
	printf '%s\n' "${VERSION_SUMMARY[@]}"
	echo "$((${#MAJORS[@]} - VERSIONS_FAILED)) passed, $VERSIONS_FAILED failed"
	for entry in "${VERSION_LOGS[@]}"; do
		failure_digest "${entry%%:*}" "${entry#*:}"
	done
	exit $((VERSIONS_FAILED > 0))
fi

REGRESS_PORT="${BLOOMIDX_REGRESS_PORT:-5491}"
TAP_PORT="${BLOOMIDX_TAP_PORT:-5493}"
SUITES="${BLOOMIDX_SUITES:-build unit regress tap clients demo package}"
SUITE_TIMEOUT="${BLOOMIDX_SUITE_TIMEOUT:-1500}"

# ---------------------------------------------------------------- suites
# Each runs in a subshell with `set -e` in force (see run_suite).

suite_build() {
	build_and_install
}

suite_demo() {
	BLOOMIDX_DEMO_NO_BUILD=1 BLOOMIDX_DEMO_ROWS=20000 timeout -k 10 "$SUITE_TIMEOUT" bash test/demo.sh
	BLOOMIDX_DEMO_NO_BUILD=1 BLOOMIDX_DEMO_ROWS=20000 timeout -k 10 "$SUITE_TIMEOUT" bash test/demo_shards.sh
}

# The clients as README.md spells them (test/clients/*.py), run as whoever
# runs this script against a cluster of their own.
CLIENTS_PORT="${BLOOMIDX_CLIENTS_PORT:-5495}"
suite_clients() {
	cluster_trap
	cluster_start "$CLIENTS_PORT" bloomidx-clients
	cluster_psql -q -c "CREATE DATABASE clients"
	cluster_psql -q -d clients -c "CREATE EXTENSION bloomidx"
	local rc=0 script
	for script in django_check sqlalchemy_check; do
		log "clients: $script"
		PGDATABASE=clients timeout -k 10 "$SUITE_TIMEOUT" /usr/bin/python3 "test/clients/$script.py" || rc=1
	done
	((rc == 0)) || cluster_print_logs
	cluster_stop
	return "$rc"
}

suite_unit() {
	timeout -k 10 "$SUITE_TIMEOUT" make -j2 unittest PG_CONFIG="$PG_CONFIG"
}

# Runs as whoever runs this script, in temp folders of its own: nothing
# here needs a server or the postgres user (who may not read the checkout).
suite_package() {
	# shellcheck disable=SC2086
	TMPDIR="$BLOOMIDX_TMPDIR" timeout -k 10 "$SUITE_TIMEOUT" /usr/bin/prove ${PROVE_FLAGS:-} test/package/
}

# The regression cluster keeps every page the tests dirty in memory and
# takes no checkpoint, so that crash recovery afterwards replays the WAL of
# the whole run onto the pages as they were before it; and it checks each
# Generic WAL record (all bloomidx writes) on replay against an image of
# the page taken when the record was made.  (The Makefile has inserts seal
# in the statement, not in background workers, but in background_seal.sql.)
REGRESS_SETTINGS="
checkpoint_timeout = 1d
max_wal_size = 64GB
shared_buffers = 1GB
bgwriter_lru_maxpages = 0
wal_consistency_checking = 'generic'
log_checkpoints = on"

regress_sql() { cluster_psql -At -c "$1" "${@:2}"; }

# A page change that is not WAL-logged makes the replay fail ("inconsistent
# page found": a later record of the page does not lead to its image) or,
# for the last change of a page, leaves an entry missing that
# bloomidx_verify reports.  So: check that no checkpoint cut the run short,
# crash, recover, and verify every bloomidx index of every database.  (A
# limit: pages read through a ring (VACUUM, bulk reads of indexes larger
# than a quarter of shared_buffers) can be written out during the run, so
# an unlogged last change to such a page could survive the crash unseen; the
# TAP crash tests and wal_consistency_checking cover those paths too.)
regress_wal_check() {
	local checkpoint="$1" wal_start="$2" start=$SECONDS
	if [[ "$(regress_sql 'SELECT checkpoint_lsn FROM pg_control_checkpoint()')" != "$checkpoint" ]]; then
		warn "wal check: a checkpoint ran during the tests, so recovery would not replay them all"
		cluster_print_logs
		return 1
	fi
	log "wal check: $(regress_sql "SELECT round(pg_wal_lsn_diff(pg_current_wal_lsn(), '$wal_start') / 1048576)") MB of WAL to replay"
	local log_size
	log_size="$(stat -c %s "$CLUSTER_DIR/server.log")"
	cluster_crash_restart || return 1
	if tail -c "+$((log_size + 1))" "$CLUSTER_DIR/server.log" | grep -E 'PANIC|FATAL|ERROR'; then
		warn "wal check: errors in recovery"
		return 1
	fi
	local db schema count total=0
	for db in $(regress_sql "SELECT datname FROM pg_database WHERE datallowconn AND NOT datistemplate"); do
		schema="$(regress_sql "SELECT extnamespace::regnamespace FROM pg_extension WHERE extname = 'bloomidx'" -d "$db")"
		[[ -n "$schema" ]] || continue
		# Indexes of temporary tables are gone, those not ready cannot be
		# verified (bloomidx_verify says why); unlogged ones are empty now.
		count="$(regress_sql "SELECT count(*) FROM pg_index i
			JOIN pg_class c ON c.oid = i.indexrelid
			JOIN pg_am am ON am.oid = c.relam AND am.amname = 'bloomidx'
			CROSS JOIN LATERAL $schema.bloomidx_verify(i.indexrelid) v
			WHERE c.relkind = 'i' AND c.relpersistence <> 't' AND i.indisready" -d "$db")" || {
			warn "wal check: an index of database $db fails bloomidx_verify after recovery"
			return 1
		}
		log "wal check: $count bloomidx indexes of database $db verified"
		total=$((total + count))
	done
	if ((total == 0)); then
		warn "wal check: the tests left no bloomidx index to verify"
		return 1
	fi
	log "wal check: recovery and verification took $((SECONDS - start))s"
}

suite_regress() {
	cluster_trap
	cluster_start "$REGRESS_PORT" bloomidx-regress "$REGRESS_SETTINGS"
	local rc=0 readme=0
	# The SQL examples of README.md and doc/ (test 'readme') must be the
	# documents' own; they run first, as their CREATE and DROP DATABASE
	# take checkpoints.
	perl test/readme/readme_sql.pl --check sql/readme.sql README.md doc/*.md || readme=1
	timeout -k 10 "$SUITE_TIMEOUT" make installcheck-readme PG_CONFIG="$PG_CONFIG" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" || readme=1
	if ((readme != 0)); then
		warn "the SQL examples of README.md and doc/ failed"
		[[ -f regression.diffs ]] && cat regression.diffs
	fi
	local checkpoint wal_start
	checkpoint="$(regress_sql 'SELECT checkpoint_lsn FROM pg_control_checkpoint()')"
	wal_start="$(regress_sql 'SELECT pg_current_wal_lsn()')"
	rm -f regression.diffs regression.out output_iso/regression.diffs
	# pg_regress is only a client here: it may run as root against the
	# server that runs as postgres.  The Makefile's files, less
	# BLOOMIDX_REGRESS_SKIP's.
	local -a regress_files=()
	local f
	for f in $(sed -n 's/^REGRESS = //p' Makefile); do
		[[ " ${BLOOMIDX_REGRESS_SKIP:-} " == *" $f "* ]] || regress_files+=("$f")
	done
	if [[ -n "${BLOOMIDX_REGRESS_SKIP:-}" ]]; then
		log "regress: leaving out ${BLOOMIDX_REGRESS_SKIP} here (BLOOMIDX_REGRESS_SKIP)"
	fi
	timeout -k 10 "$SUITE_TIMEOUT" make installcheck PG_CONFIG="$PG_CONFIG" \
		PGHOST="$PGHOST" PGPORT="$PGPORT" PGUSER="$PGUSER" REGRESS="${regress_files[*]}" || rc=$?
	if ((rc != 0)); then
		warn "pg_regress failed (exit $rc)"
		local diffs
		# pg_regress's, then pg_isolation_regress's (make installcheck runs both).
		for diffs in regression.diffs output_iso/regression.diffs; do
			if [[ -f "$diffs" ]]; then
				echo "----- $diffs -----"
				cat "$diffs"
				echo "----- end of $diffs -----"
			fi
		done
		cluster_print_logs
		return "$rc"
	fi
	regress_wal_check "$checkpoint" "$wal_start" || return 1
	return "$readme"
}

suite_tap() {
	local tapdir rc=0
	tapdir="$(make_pg_tmpdir bloomidx-tap)"
	# Whoever runs the tests (postgres) may not be able to read the checkout:
	# work on a copy.
	cp -r test/t "$tapdir/t"
	if is_root; then chown -R postgres: "$tapdir"; fi
	local tests=() f
	local skip=" ${BLOOMIDX_TAP_SKIP:-} "
	for f in "$tapdir"/t/${BLOOMIDX_TAP_TESTS:-*}.pl; do
		[[ -f "$f" ]] || continue
		local name="${f##*/}"
		if [[ "$skip" == *" ${name%.pl} "* ]]; then
			log "tap: skipping $name here (BLOOMIDX_TAP_SKIP)"
			continue
		fi
		tests+=("t/$name")
	done
	((${#tests[@]} > 0)) || {
		warn "no TAP tests in test/t"
		return 1
	}
	local jobs="${BLOOMIDX_TAP_JOBS:-2}"
	[[ "$jobs" =~ ^[1-9][0-9]*$ ]] || die "BLOOMIDX_TAP_JOBS must be a positive number, not '$jobs'"
	log "tap: running ${#tests[@]} test file(s), $jobs at a time, in $tapdir as $(pg_os_user)${BLOOMIDX_TAP_QUICK:+, quick=$BLOOMIDX_TAP_QUICK}"
	# The environment of PGXS's prove_installcheck (Makefile.global).
	# shellcheck disable=SC2086
	(cd "$tapdir" && timeout -k 10 "$SUITE_TIMEOUT" "${AS_PG[@]}" env \
		PATH="$PG_BINDIR:$tapdir:/usr/local/bin:/usr/bin:/bin" \
		TESTDIR="$tapdir" \
		PGPORT="$TAP_PORT" \
		PG_REGRESS="$PGXS_ROOT/src/test/regress/pg_regress" \
		TMPDIR="$BLOOMIDX_TMPDIR" \
		${BLOOMIDX_TAP_SEED:+BLOOMIDX_TAP_SEED="$BLOOMIDX_TAP_SEED"} \
		${BLOOMIDX_TAP_QUICK:+BLOOMIDX_TAP_QUICK="$BLOOMIDX_TAP_QUICK"} \
		${BLOOMIDX_SOAK_SECONDS:+BLOOMIDX_SOAK_SECONDS="$BLOOMIDX_SOAK_SECONDS"} \
		/usr/bin/prove -j "$jobs" -I "$PGXS_ROOT/src/test/perl/" -I "$tapdir/t" \
		${PROVE_FLAGS:-} "${tests[@]}") || rc=$?
	if ((rc != 0)); then
		# Servers a killed or crashed test left running.
		local pidfile
		while IFS= read -r pidfile; do
			warn "stopping leftover server in ${pidfile%/postmaster.pid}"
			(cd "$tapdir" && "${AS_PG[@]}" "$PG_BINDIR/pg_ctl" -D "${pidfile%/postmaster.pid}" \
				-m immediate -w -t 30 stop) || true
		done < <(find "$tapdir" -name postmaster.pid 2>/dev/null)
		# (PostgreSQL 18's test modules write them under log/, earlier ones
		# under tmp_check/log/.)
		warn "TAP tests failed (exit $rc); logs of $tapdir/tmp_check/log and $tapdir/log:"
		for f in "$tapdir"/tmp_check/log/* "$tapdir"/log/*; do
			[[ -f "$f" ]] && print_file "$f" 400
		done
		warn "kept $tapdir for inspection"
		return "$rc"
	fi
	rm -rf "$tapdir"
}

# ---------------------------------------------------------------- driver

declare -a SUMMARY=()
PASSED=0
FAILED=0
BUILD_OK=1

# run_suite NAME [need_build]: runs suite_NAME in a subshell with errexit in
# force, records the result and sets LAST_RC.  It always returns 0 and must
# never be called in an `if`/`||`/`&&` context: there bash ignores `set -e`
# in everything the call runs, subshells included.
run_suite() {
	local name="$1" start=$SECONDS rc=0 need_build="${2:-}"
	echo
	echo "======================================================================"
	log "suite $name: start"
	echo "======================================================================"
	if [[ -n "$need_build" && "$BUILD_OK" != 1 ]]; then
		warn "suite $name: not run, the build failed"
		rc=1
	else
		set +e
		(
			set -euo pipefail
			"suite_$name"
		)
		rc=$?
		set -e
	fi
	local secs=$((SECONDS - start)) status
	if ((rc == 0)); then
		status=PASS
		PASSED=$((PASSED + 1))
	else
		status=FAIL
		FAILED=$((FAILED + 1))
	fi
	SUMMARY+=("$(printf '  %-8s %s  %4ds' "$name" "$status" "$secs")")
	log "suite $name: $status (${secs}s)"
	LAST_RC=$rc
}

wants() { [[ " $SUITES " == *" $1 "* ]]; }

# The clients suite's Python libraries (Debian's, as a user would have them).
if wants clients; then
	BLOOMIDX_APT_PACKAGES+=(python3-django python3-sqlalchemy python3-psycopg2)
fi

TOTAL_START=$SECONDS
# Anything missing here (no PostgreSQL, no compiler) fails the whole run.
deps_install
log "PostgreSQL: $("$PG_CONFIG" --version), bindir $PG_BINDIR"

LAST_RC=0
if wants build; then
	run_suite build
	((LAST_RC == 0)) || BUILD_OK=0
fi
if wants unit; then run_suite unit; fi
if wants regress; then run_suite regress need_build; fi
if wants tap; then run_suite tap need_build; fi
if wants clients; then run_suite clients need_build; fi
if wants demo; then run_suite demo need_build; fi
if wants package; then run_suite package; fi

echo
echo "======================================================================"
echo "suites on PostgreSQL $PG_MAJOR (total $((SECONDS - TOTAL_START))s):"
printf '%s\n' "${SUMMARY[@]}"
echo "$PASSED passed, $FAILED failed"
((FAILED == 0 && PASSED > 0))
