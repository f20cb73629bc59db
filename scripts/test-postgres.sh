#!/usr/bin/env bash
# Starts a throwaway PostgreSQL cluster for the test suite (unless DATABASE_URL
# is already set) and prints the DATABASE_URL to use. The cluster lives in
# $SLIPWAY_TEST_PG (default /tmp/slipway-test-pg) and listens on a unix socket
# there and on 127.0.0.1:$PGPORT (default 55432).
set -euo pipefail
dir=${SLIPWAY_TEST_PG:-/tmp/slipway-test-pg}
port=${PGPORT:-55432}
bin=$(ls -d /usr/lib/postgresql/*/bin | sort -V | tail -1)
run() { if [ "$(id -u)" = 0 ]; then runuser -u postgres -- "$@"; else "$@"; fi; }

if ! pg_isready -q -h 127.0.0.1 -p "$port" 2>/dev/null; then
  mkdir -p "$dir"
  [ "$(id -u)" = 0 ] && chown postgres:postgres "$dir"
  if [ ! -f "$dir/data/PG_VERSION" ]; then
    run "$bin/initdb" -D "$dir/data" -U postgres -A trust --no-sync >/dev/null
  fi
  run "$bin/pg_ctl" -D "$dir/data" -l "$dir/log" -w -o "-p $port -k $dir -c listen_addresses=127.0.0.1 -c fsync=off -c full_page_writes=off -c synchronous_commit=off -c max_connections=400" start >/dev/null
fi
echo "postgres://postgres@127.0.0.1:$port/postgres?sslmode=disable"
