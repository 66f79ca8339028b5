#!/usr/bin/env bash
# bloomidx: pg_regress files against a server run under Valgrind's memcheck,
# failing if Valgrind reports an error whose stack passes through bloomidx.
#
#   bash test/valgrind.sh                       helpers, basics, maintenance,
#                                               segments, in_lists, verify
#   bash test/valgrind.sh basics seal           those files (helpers first)
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
# (default 5495).  PostgreSQL's own reports (uninitialised padding in WAL
# buffers, the dynamic loader) do not pass through bloomidx and are left
# out.
set -euo pipefail

here=$(cd "$(dirname "$0")/.." && pwd)
port=${BLOOMIDX_VALGRIND_PORT:-5495}
files=("$@")
[ ${#files[@]} -gt 0 ] || files=(basics maintenance segments in_lists verify)

if [ -z "${PG_CONFIG:-}" ]; then
	PG_CONFIG=$(ls -d /usr/lib/postgresql/*/bin/pg_config 2>/dev/null | sort -V | tail -1)
fi
bindir=$("$PG_CONFIG" --bindir)
if ! command -v valgrind >/dev/null; then
	DEBIAN_FRONTEND=noninteractive apt-get install -y -q valgrind >/dev/null
fi

as_server=()
user=$(id -un)
if [ "$(id -u)" = 0 ]; then
	as_server=(runuser -u postgres --)
	user=postgres
fi

work=$(mktemp -d /tmp/bloomidx-valgrind.XXXXXX)
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
# The postmaster and every backend under memcheck, a log each.
"${as_server[@]}" valgrind --quiet --trace-children=yes --error-limit=no --num-callers=30 \
	--log-file="$work/valgrind.%p.log" "$bindir/postgres" -D "$work/data" \
	>"$work/server.log" 2>&1 &
for _ in $(seq 1 120); do
	"$bindir/pg_isready" -q -h "$work" -p "$port" && break
	sleep 1
done

status=0
make -C "$here" -s installcheck PG_CONFIG="$PG_CONFIG" PGHOST="$work" PGPORT="$port" \
	PGUSER="$user" REGRESS="helpers ${files[*]}" ISOLATION= || status=$?
cleanup

# Each report is a block of lines of one process; keep those through bloomidx.
reports=$(awk '/^==[0-9]+== [A-Z]/ { if (block ~ /bloomidx/) print block; block = $0 "\n"; next }
	/^==[0-9]+==/ { block = block $0 "\n" }
	END { if (block ~ /bloomidx/) print block }' "$work"/valgrind.*.log)
if [ -n "$reports" ]; then
	echo "$reports"
	echo "valgrind: errors through bloomidx (logs in $work)"
	exit 1
fi
if [ "$status" != 0 ]; then
	echo "valgrind: the regression files failed (logs in $work)"
	exit "$status"
fi
echo "valgrind: no error through bloomidx in ${files[*]}"
rm -rf "$work"
