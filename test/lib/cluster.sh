# shellcheck shell=bash
# A throwaway PostgreSQL cluster for tests and the demo.  Source it.
#
#   cluster_start <port> [name] [settings]
#                                 initdb + start in a fresh temp folder, owned
#                                 by the postgres OS user; sets and exports
#                                 PGHOST (the socket folder), PGPORT, PGDATA,
#                                 PGUSER, PGDATABASE, CLUSTER_DIR; settings
#                                 (postgresql.conf lines) override the defaults;
#                                 CLUSTER_INITDB_FLAGS: more initdb options
#   cluster_crash_restart         stop it as a crash would (immediate) and
#                                 start it again: crash recovery
#   cluster_psql [psql args]      psql -X -v ON_ERROR_STOP=1 against it
#   cluster_stop                  stop it (fast, then immediate) and remove the
#                                 folder; safe to call twice or with no cluster
#   cluster_print_logs            print the server log
#   cluster_settings <port> <dir> the postgresql.conf lines it writes
#   cluster_trap                  stop the cluster on exit, Ctrl-C or TERM
#
# The server listens on a Unix socket in its own folder only
# (listen_addresses = ''), so the port never clashes with another server;
# it is still a real port number for the socket name.  Set
# BLOOMIDX_KEEP_CLUSTER=1 to keep the folder after stopping.
# Callers should call cluster_trap (or `trap cluster_stop EXIT`) first.

# shellcheck source=SCRIPTDIR/common.sh
source "$(dirname "${BASH_SOURCE[0]}")/common.sh"

CLUSTER_DIR=""

# The postgresql.conf lines of a throwaway server on port $1, its Unix
# socket in folder $2 (test/demo_shards.sh starts several with them).
cluster_settings() {
	cat <<-EOF

		# throwaway cluster (test/lib/cluster.sh)
		port = $1
		listen_addresses = ''
		unix_socket_directories = '$2'
		fsync = off
		synchronous_commit = off
		full_page_writes = off
		max_connections = 20
		shared_buffers = 128MB
		max_wal_size = 1GB
		lc_messages = 'C'
		log_min_messages = warning
		log_line_prefix = '%m [%p] '
	EOF
}

cluster_print_logs() {
	[[ -n "$CLUSTER_DIR" ]] || return 0
	print_file "$CLUSTER_DIR/server.log" 300
}

cluster_trap() {
	trap cluster_stop EXIT
	trap 'exit 130' INT
	trap 'exit 143' TERM
}

cluster_start() {
	local port="${1:?cluster_start: port required}" name="${2:-bloomidx}" settings="${3:-}"
	[[ "$port" =~ ^[0-9]+$ ]] || die "cluster_start: bad port '$port'"
	[[ -z "$CLUSTER_DIR" ]] || die "cluster_start: a cluster is already running in $CLUSTER_DIR"
	[[ -n "${PG_BINDIR:-}" ]] || pg_env_init

	CLUSTER_DIR="$(make_pg_tmpdir "$name-pg")"
	export CLUSTER_DIR
	export PGDATA="$CLUSTER_DIR/data"
	export PGHOST="$CLUSTER_DIR"
	export PGPORT="$port"
	PGUSER="$(pg_os_user)"
	export PGUSER
	export PGDATABASE=postgres
	unset PGSERVICE PGHOSTADDR PGPASSWORD PGOPTIONS

	log "cluster: initdb in $PGDATA (as $(pg_os_user))"
	# shellcheck disable=SC2086
	if ! (cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/initdb" -D "$PGDATA" -U "$PGUSER" \
		--auth=trust --no-sync --encoding=UTF8 --locale=C ${CLUSTER_INITDB_FLAGS:-} \
		>"$CLUSTER_DIR/initdb.log" 2>&1); then
		warn "initdb failed"
		print_file "$CLUSTER_DIR/initdb.log" 100
		return 1
	fi
	cluster_settings "$port" "$CLUSTER_DIR" >>"$PGDATA/postgresql.conf"
	printf '%s\n' "$settings" >>"$PGDATA/postgresql.conf"
	log "cluster: starting on socket $PGHOST port $PGPORT"
	cluster_pg_ctl_start || return 1
	log "cluster: up (PGHOST=$PGHOST PGPORT=$PGPORT PGUSER=$PGUSER)"
}

cluster_pg_ctl_start() {
	if ! (cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" \
		-l "$CLUSTER_DIR/server.log" -w -t 120 start >"$CLUSTER_DIR/pg_ctl.log" 2>&1); then
		warn "pg_ctl start failed"
		print_file "$CLUSTER_DIR/pg_ctl.log" 50
		cluster_print_logs
		return 1
	fi
	"$PG_BINDIR/pg_isready" -q -t 30 || {
		warn "server not ready"
		cluster_print_logs
		return 1
	}
}

cluster_crash_restart() {
	[[ -n "$CLUSTER_DIR" ]] || die "cluster_crash_restart: no cluster"
	log "cluster: immediate stop, then crash recovery"
	(cd "$CLUSTER_DIR" && as_pg "$PG_BINDIR/pg_ctl" -D "$PGDATA" -m immediate -w -t 60 stop \
		>"$CLUSTER_DIR/pg_ctl.log" 2>&1) || {
		warn "immediate stop failed"
		print_file "$CLUSTER_DIR/pg_ctl.log" 50
		return 1
	}
	cluster_pg_ctl_start
}

cluster_psql() {
	"$PG_BINDIR/psql" -X -v ON_ERROR_STOP=1 "$@"
}

cluster_stop() {
	[[ -n "$CLUSTER_DIR" ]] || return 0
	local dir="$CLUSTER_DIR"
	if [[ -f "$dir/data/postmaster.pid" ]]; then
		log "cluster: stopping ($dir)"
		if ! (cd "$dir" && as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m fast -w -t 60 stop >/dev/null 2>&1); then
			warn "fast stop failed, trying immediate"
			(cd "$dir" && as_pg "$PG_BINDIR/pg_ctl" -D "$dir/data" -m immediate -w -t 30 stop) || true
		fi
	fi
	CLUSTER_DIR=""
	if [[ "${BLOOMIDX_KEEP_CLUSTER:-}" == 1 ]]; then
		log "cluster: kept $dir"
	else
		rm -rf "$dir"
	fi
	return 0
}
