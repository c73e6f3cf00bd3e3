#!/bin/bash
# The replica's entry point: on its first start it copies the primary with
# pg_basebackup (-R writes primary_conninfo and standby.signal, -C -S makes
# a replication slot so that the primary keeps the WAL the replica still
# needs), then it runs as a hot standby that streams from the primary.
set -euo pipefail
if [[ ! -s $PGDATA/PG_VERSION ]]; then
	until pg_basebackup --host="$PRIMARY_HOST" --username=replicator --pgdata="$PGDATA" \
		--write-recovery-conf --wal-method=stream --create-slot --slot="$REPLICATION_SLOT" \
		--checkpoint=fast --progress; do
		echo "replica.sh: the primary is not ready yet; trying again" >&2
		rm -rf "${PGDATA:?}"/*
		sleep 2
	done
	chmod 700 "$PGDATA"
fi
exec postgres -c hot_standby=on -c max_connections=200
