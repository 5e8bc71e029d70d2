#!/usr/bin/env bash
# A PgBouncer in transaction mode in front of a PostgreSQL server, for CI and for trying the service behind a
# pooler: `scripts/pgbouncer.sh start [PORT] [POOL_SIZE]`, then point DATABASE_URL at
# postgresql://postgres@127.0.0.1:PORT/<database>; `scripts/pgbouncer.sh stop [PORT]`.
#
# Debian's pgbouncer (1.18 on bookworm) is installed when missing and this runs as root. Its configuration is the
# strict one the service must live with: pool_mode = transaction, no ignore_startup_parameters (a client sending
# statement_timeout at connect is refused) and no prepared-statement support. Any database name is forwarded to
# the server (`*`), so each test file's own database works. PgBouncer refuses to run as root: as root it is
# started with `-u postgres` (`-u nobody` without that user). Listens on 127.0.0.1 only; trust authentication (users listed in the auth file).
#
# Environment: PGBOUNCER_UPSTREAM_HOST / PGBOUNCER_UPSTREAM_PORT (default 127.0.0.1:5432), PGBOUNCER_USER (the
# database user allowed through, default postgres), PGBOUNCER_DIR (default /tmp/fleet-pgbouncer-PORT).
set -euo pipefail

cmd="${1:-start}"
port="${2:-6432}"
pool_size="${3:-5}"
dir="${PGBOUNCER_DIR:-/tmp/fleet-pgbouncer-$port}"
bin="$(command -v pgbouncer || echo /usr/sbin/pgbouncer)"

stop() {
  if [ -f "$dir/pgbouncer.pid" ]; then
    local pid
    pid="$(cat "$dir/pgbouncer.pid")"
    kill "$pid" 2>/dev/null || true
    for _ in $(seq 1 50); do kill -0 "$pid" 2>/dev/null || break; sleep 0.1; done
  fi
  rm -rf "$dir"
}

case "$cmd" in
  stop)
    stop
    exit 0
    ;;
  start) ;;
  *)
    echo "usage: $0 start|stop [PORT] [POOL_SIZE]" >&2
    exit 2
    ;;
esac

if [ ! -x "$bin" ]; then
  if [ "$(id -u)" = 0 ]; then
    apt-get update -qq && DEBIAN_FRONTEND=noninteractive apt-get install -y -qq pgbouncer >/dev/null
    bin=/usr/sbin/pgbouncer
  else
    echo "pgbouncer is not installed and this is not root (apt-get install -y pgbouncer)" >&2
    exit 1
  fi
fi

stop
mkdir -p "$dir"
user="${PGBOUNCER_USER:-postgres}"
printf '"%s" ""\n' "$user" >"$dir/userlist.txt"
cat >"$dir/pgbouncer.ini" <<EOF
[databases]
* = host=${PGBOUNCER_UPSTREAM_HOST:-127.0.0.1} port=${PGBOUNCER_UPSTREAM_PORT:-5432}

[pgbouncer]
listen_addr = 127.0.0.1
listen_port = $port
unix_socket_dir =
auth_type = trust
auth_file = $dir/userlist.txt
pool_mode = transaction
default_pool_size = $pool_size
max_client_conn = 2000
logfile = $dir/pgbouncer.log
pidfile = $dir/pgbouncer.pid
EOF

run_as=()
if [ "$(id -u)" = 0 ]; then
  # PgBouncer refuses to run as root: it drops to postgres (or nobody where there is no such user).
  owner=postgres
  id postgres >/dev/null 2>&1 || owner=nobody
  chown -R "$owner" "$dir"
  run_as=(-u "$owner")
fi
"$bin" -d "${run_as[@]}" "$dir/pgbouncer.ini"
for _ in $(seq 1 50); do
  if (exec 3<>"/dev/tcp/127.0.0.1/$port") 2>/dev/null; then
    echo "pgbouncer $("$bin" --version | head -1 | awk '{print $2}') on 127.0.0.1:$port (transaction mode, pool $pool_size per database; log $dir/pgbouncer.log)"
    exit 0
  fi
  sleep 0.1
done
echo "pgbouncer did not start; its log:" >&2
cat "$dir/pgbouncer.log" >&2 || true
exit 1
