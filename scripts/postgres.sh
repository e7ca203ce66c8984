#!/usr/bin/env bash
# A throwaway PostgreSQL server for the store tests (CI and developers).
#   scripts/postgres.sh start   install (Debian packages) if needed, start, create user + database;
#                               prints the URL to use as A2A_TRIO_TEST_PG_URL on stdout
#   scripts/postgres.sh stop    stop the server, if "start" was the one that started it (a server
#                               already running, e.g. shared by developers, is left running)
# A2A_TRIO_PG_STARTED_MARKER names the file that remembers "start started it"; a caller that
# pairs its own start and stop (.ci/run) passes a file of its own, so it never stops a server
# that an earlier, unrelated "start" brought up.
# Runs as root (uses `su postgres`) or as a user allowed to run pg_ctlcluster.
set -euo pipefail

PG_USER="${A2A_TRIO_PG_USER:-a2a_trio}"
PG_PASSWORD="${A2A_TRIO_PG_PASSWORD:-a2a_trio}"
PG_DB="${A2A_TRIO_PG_DB:-a2a_trio_test}"
PG_PORT="${A2A_TRIO_PG_PORT:-5432}"
STARTED_MARKER="${A2A_TRIO_PG_STARTED_MARKER:-${TMPDIR:-/tmp}/a2a_trio_postgres.started}"

log() { echo "postgres.sh: $*" >&2; }

as_postgres() {
  if [ "$(id -u)" = 0 ]; then su postgres -c "$*"; else sh -c "$*"; fi
}

ensure_installed() {
  if ! command -v pg_ctlcluster >/dev/null 2>&1 || ! ls /usr/lib/postgresql/*/bin/postgres >/dev/null 2>&1; then
    log "installing PostgreSQL from Debian's packages"
    apt-get update -qq >&2
    DEBIAN_FRONTEND=noninteractive apt-get install -y -qq postgresql >&2
  fi
}

# The first cluster pg_lsclusters knows ("VERSION NAME"), created when there is none.
cluster() {
  local line
  line="$(pg_lsclusters --no-header 2>/dev/null | head -n1 || true)"
  if [ -z "$line" ]; then
    local version
    version="$(ls /usr/lib/postgresql | sort -V | tail -n1)"
    log "creating cluster $version/main"
    pg_createcluster --port "$PG_PORT" "$version" main >&2
    line="$(pg_lsclusters --no-header | head -n1)"
  fi
  echo "$line" | awk '{print $1, $2}'
}

start() {
  ensure_installed
  read -r version name <<<"$(cluster)"
  if ! pg_lsclusters --no-header | awk -v v="$version" -v n="$name" '$1==v && $2==n {print $4}' | grep -q online; then
    log "starting cluster $version/$name"
    pg_ctlcluster "$version" "$name" start >&2
    touch "$STARTED_MARKER"
  fi
  local port
  port="$(pg_lsclusters --no-header | awk -v v="$version" -v n="$name" '$1==v && $2==n {print $3}')"
  for _ in $(seq 1 50); do
    pg_isready -q -h 127.0.0.1 -p "$port" && break
    sleep 0.2
  done
  pg_isready -q -h 127.0.0.1 -p "$port" || { log "server did not become ready"; exit 1; }
  as_postgres "psql -q -p $port -v ON_ERROR_STOP=1 -d postgres" >&2 <<SQL
DO \$\$ BEGIN
  IF NOT EXISTS (SELECT FROM pg_roles WHERE rolname = '$PG_USER') THEN
    CREATE ROLE $PG_USER LOGIN PASSWORD '$PG_PASSWORD';
  END IF;
END \$\$;
SQL
  if ! as_postgres "psql -qtA -p $port -d postgres -c \"SELECT 1 FROM pg_database WHERE datname = '$PG_DB'\"" | grep -q 1; then
    as_postgres "createdb -p $port -O $PG_USER $PG_DB" >&2
  fi
  echo "postgresql://$PG_USER:$PG_PASSWORD@127.0.0.1:$port/$PG_DB"
}

stop() {
  if [ ! -e "$STARTED_MARKER" ]; then
    log "leaving the server running: it was running before start"
    return
  fi
  rm -f "$STARTED_MARKER"
  read -r version name <<<"$(cluster)"
  log "stopping cluster $version/$name"
  pg_ctlcluster "$version" "$name" stop >&2
}

case "${1:-}" in
  start) start ;;
  stop) stop ;;
  *) echo "usage: $0 start|stop" >&2; exit 2 ;;
esac
