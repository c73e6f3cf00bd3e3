#!/usr/bin/env bash
# The PostgreSQL backup procedure of docs/backup.md, step by step, on a
# throwaway cluster of its own (e2e/backup_pg_test.go runs it; it never
# touches the shared test server of scripts/postgres.sh):
#
#   scripts/backup-pg.sh init PGDATA PORT ARCHIVE
#       initdb a cluster in PGDATA with WAL archiving into the directory
#       ARCHIVE (wal_level=replica, archive_mode=on, archive_command that
#       never overwrites an archived segment), start it on 127.0.0.1:PORT
#   scripts/backup-pg.sh base PORT BASE
#       take a base backup of the running cluster into BASE (pg_basebackup)
#   scripts/backup-pg.sh switch PORT
#       close the current WAL segment and wait until it is archived (what
#       archive_timeout does on a schedule)
#   scripts/backup-pg.sh restore BASE ARCHIVE PGDATA PORT [TARGET_TIME]
#       copy the base backup into a fresh PGDATA, replay the archived WAL
#       (restore_command, recovery.signal) to its end or to TARGET_TIME
#       (point-in-time recovery), promote, and start it on PORT
#   scripts/backup-pg.sh stop PGDATA
#
# The clusters listen on 127.0.0.1 only with trust authentication: for tests,
# never for real data. As root, the server runs as the user shelfmark-pg (as
# in scripts/postgres.sh); its directories must be reachable by that user.
set -euo pipefail

say() { echo "backup-pg.sh: $*" >&2; }
die() { say "error: $*"; exit 1; }

find_bindir() {
	local d
	for d in $(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V -r); do
		if [[ -x $d/initdb && -x $d/pg_ctl && -x $d/pg_basebackup ]]; then
			echo "$d"
			return
		fi
	done
	if command -v pg_basebackup >/dev/null 2>&1; then
		dirname "$(readlink -f "$(command -v pg_basebackup)")"
	fi
}
bindir=$(find_bindir)
[[ -n $bindir ]] || die "initdb, pg_ctl and pg_basebackup not found"

pguser=shelfmark-pg
if [[ $(id -u) != 0 ]]; then
	pguser=$(id -un)
fi
as_owner() {
	if [[ $(id -u) == 0 ]]; then
		(cd / && runuser -u "$pguser" -- "$@")
	else
		(cd / && "$@")
	fi
}
own() {
	if [[ $(id -u) == 0 ]]; then
		chown -R "$pguser:" "$@"
	fi
}
psql_() { as_owner "$bindir/psql" -X -q -t -A -h 127.0.0.1 -p "$1" -U "$pguser" -d postgres -v ON_ERROR_STOP=1 -c "$2"; }

start() { # PGDATA PORT
	as_owner "$bindir/pg_ctl" -D "$1" -l "$1/server.log" -w -t 120 -o "-p $2" start >/dev/null ||
		{ cat "$1/server.log" >&2; die "pg_ctl start failed"; }
}

cmd=${1:-}
shift || true
case $cmd in
init)
	[[ $# == 3 ]] || die "usage: init PGDATA PORT ARCHIVE"
	data=$1 port=$2 archive=$3
	mkdir -p "$data" "$archive"
	own "$data" "$archive"
	chmod 700 "$data"
	as_owner "$bindir/initdb" -D "$data" -U "$pguser" -A trust -E UTF8 --locale=C >"$data.initdb.log" 2>&1 ||
		{ cat "$data.initdb.log" >&2; die "initdb failed"; }
	cat >>"$data/postgresql.conf" <<CONF
listen_addresses = '127.0.0.1'
unix_socket_directories = ''
wal_level = replica
archive_mode = on
archive_command = 'test ! -f $archive/%f && cp %p $archive/%f'
max_wal_senders = 4
CONF
	start "$data" "$port"
	;;
base)
	[[ $# == 2 ]] || die "usage: base PORT BASE"
	port=$1 base=$2
	mkdir -p "$(dirname "$base")"
	own "$(dirname "$base")"
	as_owner "$bindir/pg_basebackup" -h 127.0.0.1 -p "$port" -U "$pguser" -D "$base" -X stream -c fast
	;;
switch)
	[[ $# == 1 ]] || die "usage: switch PORT"
	port=$1
	seg=$(psql_ "$port" "SELECT pg_walfile_name(pg_switch_wal())")
	for _ in $(seq 600); do
		last=$(psql_ "$port" "SELECT coalesce(last_archived_wal, '') FROM pg_stat_archiver")
		if [[ -n $last && ! $last < $seg ]]; then
			exit 0
		fi
		sleep 0.1
	done
	die "WAL segment $seg was not archived within a minute"
	;;
restore)
	[[ $# == 4 || $# == 5 ]] || die "usage: restore BASE ARCHIVE PGDATA PORT [TARGET_TIME]"
	base=$1 archive=$2 data=$3 port=$4 target=${5:-}
	[[ ! -e $data ]] || die "$data exists: restore into a fresh directory"
	cp -a "$base" "$data"
	own "$data"
	chmod 700 "$data"
	rm -f "$data/postmaster.pid"
	{
		echo "restore_command = 'cp $archive/%f %p'"
		if [[ -n $target ]]; then
			echo "recovery_target_time = '$target'"
		fi
		echo "recovery_target_action = 'promote'"
		echo "archive_mode = off"
	} >>"$data/postgresql.conf"
	as_owner touch "$data/recovery.signal"
	start "$data" "$port"
	for _ in $(seq 1200); do
		if [[ $(psql_ "$port" "SELECT pg_is_in_recovery()" 2>/dev/null) == f ]]; then
			exit 0
		fi
		sleep 0.1
	done
	cat "$data/server.log" >&2
	die "recovery did not end within two minutes"
	;;
stop)
	[[ $# == 1 ]] || die "usage: stop PGDATA"
	if [[ -f $1/postmaster.pid ]]; then
		as_owner "$bindir/pg_ctl" -D "$1" -w -t 60 -m fast stop >/dev/null
	fi
	;;
*)
	die "usage: $0 init|base|switch|restore|stop …"
	;;
esac
