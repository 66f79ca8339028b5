#!/usr/bin/env bash
# bloomidx: pg_regress files against a server run under Valgrind's memcheck,
# failing if Valgrind reports an error of bloomidx's: a read or write of
# memory not allocated or already freed, or a decision on uninitialised
# bytes, in a stack that passes through bloomidx; or uninitialised bytes
# written out (to WAL or a data file) that bloomidx allocated.
#
#   bash test/valgrind.sh                       helpers, basics, maintenance,
#                                               segments, in_lists, verify
#   bash test/valgrind.sh basics seal           those files (helpers first)
#   bash test/valgrind.sh vacuum_scan           an isolation spec (specs/) too
#
# Not one of the suites: under Valgrind a file takes 20 to 100 times as
# long (about 15 minutes for the default files here).  Run it after
# changing code that writes pages or WAL.  It found a read of the Generic
# WAL copy of a page after GenericXLogFinish had freed it (vacuum.cpp).
#
# Uses the PostgreSQL whose pg_config is PG_CONFIG (default: the newest
# installed), with bloomidx built and installed (make install); installs
# valgrind with apt-get if it is missing.  As root, the server runs as the
# postgres OS user, in a temporary folder, on port BLOOMIDX_VALGRIND_PORT
# (default 5495).  PostgreSQL's own reports are left out: uninitialised
# padding that core code put in WAL records, written out by whatever
# backend flushes WAL (bloomidx's too), and the dynamic loader's.
#
# What it cannot see: Debian's server is not built with USE_VALGRIND, so
# memcheck knows malloc'd blocks, not palloc'd chunks within them.  A read
# past a palloc'd chunk or of a pfree'd one goes unseen unless the block
# itself is malloc'd apart (large chunks, GenericXLogState).
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
port=${BLOOMIDX_VALGRIND_PORT:-5495}
files=()
specs=()
for f in "$@"; do
	if [ -f "$here/specs/$f.spec" ]; then
		specs+=("$f")
	elif [ "$f" != helpers ]; then
		files+=("$f")
	fi
done
[ ${#files[@]} -gt 0 ] || [ ${#specs[@]} -gt 0 ] || files=(basics maintenance segments in_lists verify)

if [ -z "${PG_CONFIG:-}" ]; then
	PG_CONFIG=$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -1 || true)
fi
if [ -z "$PG_CONFIG" ] || [ ! -x "$PG_CONFIG" ]; then
	echo "valgrind.sh: no pg_config (install postgresql-server-dev-N, or set PG_CONFIG)" >&2
	exit 2
fi
bindir=$("$PG_CONFIG" --bindir)
if ! command -v valgrind >/dev/null; then
	if [ "$(id -u)" != 0 ]; then
		echo "valgrind.sh: valgrind is not installed (apt-get install valgrind)" >&2
		exit 2
	fi
	apt-get update -q >/dev/null
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind >/dev/null
fi

as_server=()
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
	as_server=(runuser -u postgres --)
	user=postgres
fi

work=$(mktemp -d "${TMPDIR:-/tmp}/bloomidx-valgrind.XXXXXX")
chmod 755 "$work"
[ "$(id -u)" = 0 ] && chown postgres "$work"
cleanup() {
	"${as_server[@]}" "$bindir/pg_ctl" stop -D "$work/data" -m immediate >/dev/null 2>&1 || true
}
trap cleanup EXIT

"${as_server[@]}" "$bindir/initdb" -D "$work/data" -A trust -U "$user" >/dev/null
cat >>"$work/data/postgresql.conf" <<EOF
port = $port
unix_socket_directories = '$work'
listen_addresses = ''
autovacuum = off
jit = off
max_parallel_workers_per_gather = 0
shared_buffers = 128MB
EOF
# The postmaster and every backend under memcheck, a log each; where
# uninitialised bytes come from, so that those bloomidx wrote are told
# from core's.
"${as_server[@]}" valgrind --quiet --trace-children=yes --error-limit=no --num-callers=40 \
	--track-origins=yes --log-file="$work/valgrind.%p.log" "$bindir/postgres" -D "$work/data" \
	>"$work/server.log" 2>&1 &
ready=no
for _ in $(seq 1 180); do
	if "$bindir/pg_isready" -q -h "$work" -p "$port"; then
		ready=yes
		break
	fi
	sleep 1
done
if [ $ready = no ]; then
	cat "$work/server.log" >&2
	echo "valgrind.sh: the server did not start (logs in $work)" >&2
	exit 2
fi

status=0
make -C "$here" -s installcheck PG_CONFIG="$PG_CONFIG" PGHOST="$work" PGPORT="$port" \
	PGUSER="$user" REGRESS="helpers ${files[*]}" ISOLATION="${specs[*]}" || status=$?
cleanup

# Each report is a block of lines of one log (one process): its stack,
# then where the memory or the uninitialised bytes came from.  Uninitialised
# bytes handed to a system call count only if bloomidx allocated them (a
# stack through bloomidx may only have flushed core's WAL); any other
# report counts if bloomidx is anywhere in it.
reports=$(awk '
	function judge() {
		if (block == "") return
		if (head ~ /Syscall param/ ? origin ~ /bloomidx/ : block ~ /bloomidx/) print block
		block = ""; origin = ""; head = ""; in_origin = 0
	}
	FNR == 1 { judge() }
	/^==[0-9]+== [A-Z]/ && !/^==[0-9]+== +(at|by) / {
		if (/Uninitialised value was created|Address 0x|Block was alloc/) { in_origin = 1 }
		else { judge(); head = $0 }
	}
	/^==[0-9]+==/ { block = block $0 "\n"; if (in_origin) origin = origin $0 "\n" }
	END { judge() }' "$work"/valgrind.*.log)
if [ -n "$reports" ]; then
	echo "$reports"
	echo "valgrind: errors through bloomidx (logs in $work)"
	exit 1
fi
if [ "$status" != 0 ]; then
	echo "valgrind: the regression files failed (logs in $work)"
	exit "$status"
fi
echo "valgrind: no error through bloomidx in ${files[*]} ${specs[*]}"
rm -rf "$work"
