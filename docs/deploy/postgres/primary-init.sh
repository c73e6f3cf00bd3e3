#!/bin/bash
# Run once by the postgres image when the primary's data directory is new
# (/docker-entrypoint-initdb.d): a role that may stream the WAL, and the
# pg_hba.conf line that lets it connect for replication.
set -euo pipefail
psql -v ON_ERROR_STOP=1 --username "$POSTGRES_USER" --dbname "$POSTGRES_DB" \
	-v password="$REPLICATION_PASSWORD" <<'SQL'
CREATE ROLE replicator WITH REPLICATION LOGIN PASSWORD :'password';
SQL
echo "host replication replicator all scram-sha-256" >>"$PGDATA/pg_hba.conf"
