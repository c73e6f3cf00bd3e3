#!/usr/bin/env bash
# A throwaway PostgreSQL server for Shelfmark's tests and benchmarks.
#
#   scripts/postgres.sh start   install PostgreSQL if absent, init a cluster once,
#                               start it if it is not running, create shelfmark_test
#   scripts/postgres.sh url     print the DSN (for SHELFMARK_TEST_DATABASE_URL)
#   scripts/postgres.sh stop    stop the server (and its replica) if running
#   scripts/postgres.sh replica-start
#                               a streaming replica (hot standby) of the running
#                               server: pg_basebackup -R once (with the
#                               replication slot shelfmark_replica, so a
#                               stopped replica can catch up; made again when
#                               its slot was lost), then started
#   scripts/postgres.sh replica-url   print the replica's DSN
#   scripts/postgres.sh replica-stop  stop the replica if it is running
#
# The cluster lives in ${SHELFMARK_BUILD_DIR:-<repo>/.build}/pg and listens on
# 127.0.0.1:${SHELFMARK_PG_PORT:-55432} only, with trust authentication: it is
# for local tests, never for real data. The replica lives in <build>/pg-replica
# and listens on ${SHELFMARK_PG_REPLICA_PORT:-<port + 1>}; another build
# directory and port give another, independent primary and replica pair. fsync and synchronous_commit stay on,
# because the benchmarks measure durable commits (rule R10).
#
# initdb and postgres refuse to run as root; as root the script runs them as
# the unprivileged system user shelfmark-pg (created when missing). Every
# subcommand is idempotent, and concurrent invocations are serialised by a lock.
set -euo pipefail

repo=$(cd "$(dirname "${BASH_SOURCE[0]}")/.." && pwd)
build=${SHELFMARK_BUILD_DIR:-$repo/.build}
port=${SHELFMARK_PG_PORT:-55432}
rport=${SHELFMARK_PG_REPLICA_PORT:-$((port + 1))}
dbname=shelfmark_test
pguser=shelfmark-pg

say() { echo "postgres.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

# find_bindir prints the directory holding initdb and pg_ctl, or nothing.
find_bindir() {
	local d
	# Debian keeps the server binaries out of PATH: prefer the newest there.
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x $d/initdb && -x $d/pg_ctl ]]; then
			echo "$d"
			return
		fi
	done
	if command -v initdb >/dev/null 2>&1 && command -v pg_ctl >/dev/null 2>&1; then
		dirname "$(readlink -f "$(command -v pg_ctl)")"
	fi
}

bindir=$(find_bindir)

# as_owner runs a command as the cluster's owner, from a directory the owner
# can read.
as_owner() {
	if [[ $(id -u) == 0 ]]; then
		(cd / && runuser -u "$pguser" -- "$@")
	else
		(cd / && "$@")
	fi
}

# The cluster's superuser is the OS user that owns it.
if [[ $(id -u) != 0 ]]; then
	pguser=$(id -un)
fi

datadir() {
	if [[ -n ${SHELFMARK_PG_DATA:-} ]]; then
		echo "$SHELFMARK_PG_DATA"
	elif [[ -f $build/pg.location ]]; then
		cat "$build/pg.location"
	else
		echo "$build/pg"
	fi
}

install_postgres() {
	if [[ -n $bindir ]]; then
		return
	fi
	[[ $(id -u) == 0 ]] || die "PostgreSQL is not installed and installing it needs root (apt-get install postgresql)"
	say "installing PostgreSQL (apt-get install postgresql)"
	apt-get update -qq >&2
	DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
	bindir=$(find_bindir)
	[[ -n $bindir ]] || die "initdb/pg_ctl not found after installing postgresql"
}

ensure_user() {
	[[ $(id -u) == 0 ]] || return 0
	if ! id -u "$pguser" >/dev/null 2>&1; then
		say "creating system user $pguser"
		useradd --system --user-group --no-create-home --home-dir /nonexistent \
			--shell /usr/sbin/nologin "$pguser" 2>/dev/null || id -u "$pguser" >/dev/null
	fi
}

# choose_datadir picks the data directory on first start: <build>/pg when the
# cluster's owner can reach it, else a directory under /var/tmp (for example
# when the repository sits below root's private home directory). The choice is
# remembered in <build>/pg.location.
choose_datadir() {
	local d=$build/pg
	if [[ -n ${SHELFMARK_PG_DATA:-} || -f $build/pg.location || -f $d/PG_VERSION ]]; then
		return
	fi
	if [[ $(id -u) == 0 ]] && ! (cd / && runuser -u "$pguser" -- test -x "$build"); then
		d=/var/tmp/shelfmark-pg-$port
		say "$pguser cannot reach $build; keeping the cluster in $d"
		echo "$d" >"$build/pg.location"
	fi
}

init_cluster() {
	local data=$1
	if [[ -f $data/PG_VERSION ]]; then
		return
	fi
	say "initialising a cluster in $data"
	mkdir -p "$data"
	if [[ $(id -u) == 0 ]]; then
		chown "$pguser:" "$data"
	fi
	chmod 700 "$data"
	as_owner "$bindir/initdb" -D "$data" -U "$pguser" -A trust -E UTF8 --locale=C.UTF-8 >"$build/initdb.log" 2>&1 ||
		as_owner "$bindir/initdb" -D "$data" -U "$pguser" -A trust -E UTF8 --locale=C >"$build/initdb.log" 2>&1 ||
		{
			cat "$build/initdb.log" >&2
			die "initdb failed"
		}
	# Unix socket inside the data directory when its path fits the 107-byte
	# limit of socket addresses; TCP on 127.0.0.1 is what clients use anyway.
	local sockdir="'$data'"
	if ((${#data} > 80)); then
		sockdir="''"
	fi
	cat >>"$data/postgresql.conf" <<EOF

# --- added by scripts/postgres.sh (local test server) ---
listen_addresses = '127.0.0.1'
port = $port
unix_socket_directories = $sockdir
max_connections = 200
shared_buffers = 256MB
wal_level = replica
max_wal_senders = 10
fsync = on
synchronous_commit = on
logging_collector = off
EOF
}

running() {
	local data=$1
	[[ -f $data/PG_VERSION ]] && as_owner "$bindir/pg_ctl" -D "$data" status >/dev/null 2>&1
}

# start_server DATA PORT WHAT SECONDS starts the cluster in DATA on PORT
# unless it runs already, and waits up to SECONDS until it accepts
# connections. WHAT (server, replica) names it in messages.
start_server() {
	local data=$1 p=$2 what=$3 secs=$4
	if running "$data"; then
		say "$what already running on 127.0.0.1:$p"
	else
		say "starting the $what on 127.0.0.1:$p (data $data)"
		# 9>&-: the server must not inherit (and so hold forever) the lock.
		if ! as_owner "$bindir/pg_ctl" -D "$data" -l "$data/server.log" -w -t "$secs" -o "-p $p" start >/dev/null 9>&-; then
			tail -n 30 "$data/server.log" >&2 || true
			die "pg_ctl start of the $what failed"
		fi
	fi
	local i
	for ((i = 0; i < secs * 2; i++)); do
		if "$bindir/pg_isready" -q -h 127.0.0.1 -p "$p" -U "$pguser" -d postgres; then
			return
		fi
		sleep 0.5
	done
	die "$what not ready on 127.0.0.1:$p"
}

cmd_start() {
	install_postgres
	ensure_user
	mkdir -p "$build"
	exec 9>"$build/pg.lock"
	flock 9
	choose_datadir
	local data
	data=$(datadir)
	init_cluster "$data"
	start_server "$data" "$port" server 60
	local psql=("$bindir/psql" -X -q -h 127.0.0.1 -p "$port" -U "$pguser" -d postgres -v ON_ERROR_STOP=1)
	if [[ -z $("${psql[@]}" -tAc "SELECT 1 FROM pg_database WHERE datname = '$dbname'") ]]; then
		say "creating database $dbname"
		"${psql[@]}" -c "CREATE DATABASE $dbname" >/dev/null
	fi
	say "ready: $(cmd_url)"
}

cmd_stop() {
	[[ -n $bindir ]] || {
		say "PostgreSQL is not installed; nothing to stop"
		return
	}
	local data
	data=$(datadir)
	if running "$data"; then
		say "stopping the server in $data"
		# A fast stop ends with a checkpoint that writes every changed page
		# with fsync; after a full test run on a loaded machine that can take
		# longer than pg_ctl's default minute. If even three minutes do not
		# do, stop it at once: it recovers from its WAL on the next start,
		# and this cluster holds only test data.
		if ! as_owner "$bindir/pg_ctl" -D "$data" -m fast -w -t 180 stop >/dev/null; then
			say "the server did not stop within 180 s; stopping it at once (it recovers on its next start)"
			as_owner "$bindir/pg_ctl" -D "$data" -m immediate -w stop >/dev/null
		fi
	else
		say "not running"
	fi
}

cmd_url() {
	local data user=$pguser
	data=$(datadir)
	if [[ -d $data ]]; then
		user=$(stat -c %U "$data")
	fi
	echo "postgres://$user@127.0.0.1:$port/$dbname?sslmode=disable"
}

# cmd_fresh NAME: an empty database NAME (dropped first if it exists) on the
# running server, for a benchmark that must start from nothing; prints its URL.
cmd_fresh() {
	local name=${1:-}
	[[ $name =~ ^[a-z][a-z0-9_]*$ ]] || die "fresh: give a database name of lower-case letters, digits and _"
	[[ -n $bindir ]] || die "PostgreSQL is not installed; run: $0 start"
	local psql=("$bindir/psql" -X -q -h 127.0.0.1 -p "$port" -U "$pguser" -d postgres -v ON_ERROR_STOP=1)
	PGOPTIONS="-c client_min_messages=warning" "${psql[@]}" -c "DROP DATABASE IF EXISTS $name" >/dev/null
	"${psql[@]}" -c "CREATE DATABASE $name" >/dev/null
	cmd_url | sed "s#/$dbname?#/$name?#"
}

# replica_datadir prints the replica's data directory: <build>/pg-replica, or
# the directory remembered in <build>/pg-replica.location (chosen as
# choose_datadir chooses the primary's).
replica_datadir() {
	if [[ -f $build/pg-replica.location ]]; then
		cat "$build/pg-replica.location"
	else
		echo "$build/pg-replica"
	fi
}

# ensure_replication makes sure the running primary accepts replication
# connections from 127.0.0.1. initdb's pg_hba.conf allows them (trust) and
# PostgreSQL's defaults (wal_level = replica, max_wal_senders = 10) suffice;
# a primary configured otherwise is reported, not restarted behind the
# back of the tests using it.
ensure_replication() {
	local data=$1
	local psql=("$bindir/psql" -X -q -h 127.0.0.1 -p "$port" -U "$pguser" -d postgres -v ON_ERROR_STOP=1)
	local level senders
	level=$("${psql[@]}" -tAc "SHOW wal_level")
	senders=$("${psql[@]}" -tAc "SHOW max_wal_senders")
	if [[ $level == minimal || $senders == 0 ]]; then
		die "the primary on port $port has wal_level=$level and max_wal_senders=$senders: set wal_level = replica and max_wal_senders = 10 in $data/postgresql.conf and restart it"
	fi
	if ! grep -Eq '^[[:space:]]*host[[:space:]]+replication[[:space:]]+all[[:space:]]+127\.0\.0\.1/32' "$data/pg_hba.conf"; then
		say "allowing replication connections from 127.0.0.1"
		echo "host    replication     all             127.0.0.1/32            trust" >>"$data/pg_hba.conf"
		"${psql[@]}" -c "SELECT pg_reload_conf()" >/dev/null
	fi
}

cmd_replica_start() {
	[[ -n $bindir ]] || die "PostgreSQL is not installed; run: $0 start"
	mkdir -p "$build"
	exec 9>"$build/pg.lock"
	flock 9
	local data rdata
	data=$(datadir)
	running "$data" || die "the primary is not running; run: $0 start"
	ensure_replication "$data"
	if [[ ! -f $build/pg-replica.location && ! -f $build/pg-replica/PG_VERSION && $(id -u) == 0 ]] &&
		! (cd / && runuser -u "$pguser" -- test -x "$build"); then
		echo "/var/tmp/shelfmark-pg-replica-$rport" >"$build/pg-replica.location"
	fi
	rdata=$(replica_datadir)
	local psql=("$bindir/psql" -X -q -h 127.0.0.1 -p "$port" -U "$pguser" -d postgres -v ON_ERROR_STOP=1)
	# The replica keeps its place on the primary with a replication slot, so
	# that the WAL it has not replayed while stopped is kept for it (up to
	# max_slot_wal_keep_size). A stopped replica whose slot is missing or
	# lost (the primary wrote more meanwhile) can never catch up: it is
	# made again from the primary.
	"${psql[@]}" -c "ALTER SYSTEM SET max_slot_wal_keep_size = '4GB'" -c "SELECT pg_reload_conf()" >/dev/null
	if [[ -f $rdata/PG_VERSION ]] && ! running "$rdata"; then
		local slot
		slot=$("${psql[@]}" -tAc "SELECT wal_status FROM pg_replication_slots WHERE slot_name = 'shelfmark_replica'")
		if [[ -z $slot || $slot == lost ]]; then
			say "the replica in $rdata is too far behind the primary (slot: ${slot:-none}): making it again"
			rm -rf "$rdata"
		fi
	fi
	if [[ ! -f $rdata/PG_VERSION ]]; then
		say "copying the primary into $rdata (pg_basebackup)"
		"${psql[@]}" -tAc "SELECT pg_drop_replication_slot(slot_name) FROM pg_replication_slots WHERE slot_name = 'shelfmark_replica' AND NOT active" >/dev/null
		rm -rf "$rdata"
		mkdir -p "$rdata"
		if [[ $(id -u) == 0 ]]; then
			chown "$pguser:" "$rdata"
		fi
		chmod 700 "$rdata"
		if ! as_owner "$bindir/pg_basebackup" -h 127.0.0.1 -p "$port" -U "$pguser" -D "$rdata" -R -X stream -c fast -C -S shelfmark_replica >"$build/pg-replica-basebackup.log" 2>&1; then
			cat "$build/pg-replica-basebackup.log" >&2
			rm -rf "$rdata"
			die "pg_basebackup failed"
		fi
		local sockdir="'$rdata'"
		if ((${#rdata} > 80)); then
			sockdir="''"
		fi
		{
			echo
			echo "# --- added by scripts/postgres.sh (streaming replica of port $port) ---"
			echo "port = $rport"
			echo "unix_socket_directories = $sockdir"
			echo "hot_standby = on"
			echo "hot_standby_feedback = on"
		} >>"$rdata/postgresql.conf"
	fi
	start_server "$rdata" "$rport" replica 120
	say "replica ready: $(cmd_replica_url)"
}

cmd_replica_stop() {
	[[ -n $bindir ]] || return 0
	local rdata
	rdata=$(replica_datadir)
	if running "$rdata"; then
		say "stopping the replica in $rdata"
		if ! as_owner "$bindir/pg_ctl" -D "$rdata" -m fast -w -t 180 stop >/dev/null; then
			as_owner "$bindir/pg_ctl" -D "$rdata" -m immediate -w stop >/dev/null
		fi
	fi
}

cmd_replica_url() {
	cmd_url | sed "s#@127.0.0.1:$port/#@127.0.0.1:$rport/#"
}

case ${1:-} in
start) cmd_start ;;
stop)
	cmd_replica_stop
	cmd_stop
	;;
url) cmd_url ;;
fresh) cmd_fresh "${2:-}" ;;
replica-start) cmd_replica_start ;;
replica-stop) cmd_replica_stop ;;
replica-url) cmd_replica_url ;;
*)
	echo "usage: $0 start|stop|url|fresh NAME|replica-start|replica-stop|replica-url" >&2
	exit 2
	;;
esac
