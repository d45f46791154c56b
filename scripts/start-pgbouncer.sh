#!/usr/bin/env bash
# Start PgBouncer in transaction pooling mode on 127.0.0.1:6432 in front of the local
# PostgreSQL, for the tests that prove ckpt needs no session state between statements.
# Usage: scripts/start-pgbouncer.sh   (needs the pgbouncer binary; idempotent)
set -euo pipefail
port="${PGBOUNCER_PORT:-6432}"
dir="${PGBOUNCER_DIR:-/tmp/ckpt-pgbouncer}"
if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
  echo "pgbouncer: already listening on 127.0.0.1:$port"
  exit 0
fi
mkdir -p "$dir"
cat > "$dir/pgbouncer.ini" <<INI
[databases]
test = host=127.0.0.1 port=5432 dbname=test
[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
max_client_conn = 1000
default_pool_size = 40
ignore_startup_parameters = extra_float_digits,options
; Server connections are short-lived: the tests create and drop thousands of schemas, and a
; server connection kept for the whole run grows its caches with each of them, until every
; CREATE and DROP on the server waits for it to catch up.
server_lifetime = 30
server_idle_timeout = 5
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
INI
echo '"postgres" ""' > "$dir/userlist.txt"
args=(-d "$dir/pgbouncer.ini")
# PgBouncer refuses to run as root; it drops to the postgres user instead.
if [ "$(id -u)" = 0 ]; then
  chown -R postgres "$dir"
  args=(-u postgres "${args[@]}")
fi
pgbouncer "${args[@]}"
for _ in $(seq 1 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "pgbouncer: listening on 127.0.0.1:$port (transaction pooling)"
    exit 0
  fi
  sleep 0.1
done
echo "pgbouncer did not start; see $dir/pgbouncer.log" >&2
exit 1
