#!/usr/bin/env bash
# make cluster: a throwaway PostgreSQL, three banner-server replicas sharing it, and nginx
# load-balancing them on one port (CLUSTER_PORT, default 8080). Runs in the foreground; Ctrl-C
# (or SIGTERM) stops everything it started and deletes the database: nothing is left running.
#
# PostgreSQL listens on a Unix socket only, in the cluster's folder; the replicas listen on free
# loopback ports and say which in their logs; nginx is the one public port. As root, PostgreSQL
# runs as the `postgres` user (it refuses root).
set -euo pipefail

root=$(cd "$(dirname "$0")/.." && pwd)
binary="$root/.build/release/banner-server"
config="${CONFIG:-$root/config/carousel.json}"
port="${CLUSTER_PORT:-8080}"
replicas="${CLUSTER_REPLICAS:-3}"

say() { printf 'cluster: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

[ -x "$binary" ] || fail "no release binary at $binary (make cluster builds it)"
pgbin=$(ls -d /usr/lib/postgresql/*/bin 2>/dev/null | sort -V | tail -n 1)
[ -n "$pgbin" ] || fail "no PostgreSQL under /usr/lib/postgresql (make cluster installs Debian's postgresql)"
command -v nginx >/dev/null || fail "no nginx (make cluster installs Debian's nginx-light)"

folder=$(mktemp -d /tmp/banner-cluster.XXXXXX)
chmod 755 "$folder"
as_postgres=()
if [ "$(id -u)" = 0 ]; then
    as_postgres=(setpriv --reuid=postgres --regid=postgres --init-groups)
    mkdir "$folder/pg" && chown postgres:postgres "$folder/pg"
else
    mkdir "$folder/pg"
fi
pids=()

stop() {
    trap - INT TERM EXIT
    say "stopping"
    [ -f "$folder/nginx.pid" ] && kill -QUIT "$(cat "$folder/nginx.pid")" 2>/dev/null || true
    for pid in "${pids[@]}"; do kill -TERM "$pid" 2>/dev/null || true; done
    for pid in "${pids[@]}"; do wait "$pid" 2>/dev/null || true; done
    "${as_postgres[@]}" "$pgbin/pg_ctl" stop -w -m fast -D "$folder/pg/data" >/dev/null 2>&1 || true
    for _ in $(seq 100); do pgrep -f "$folder" >/dev/null || break; sleep 0.1; done
    rm -rf "$folder"
    say "stopped; nothing left running"
}
trap stop INT TERM EXIT

say "PostgreSQL in $folder/pg"
"${as_postgres[@]}" "$pgbin/initdb" -D "$folder/pg/data" -U banner --auth=trust -E UTF8 >"$folder/initdb.log" 2>&1 \
    || fail "initdb failed: $(cat "$folder/initdb.log")"
"${as_postgres[@]}" "$pgbin/pg_ctl" start -w -D "$folder/pg/data" -l "$folder/pg/server.log" \
    -o "-k $folder/pg -c listen_addresses=''" >/dev/null || fail "PostgreSQL did not start: $(cat "$folder/pg/server.log")"
"${as_postgres[@]}" "$pgbin/psql" -h "$folder/pg" -U banner -d postgres -q -c "CREATE DATABASE carousels" \
    || fail "could not create the database"
uri="postgresql://banner@/carousels?host=$folder/pg"

upstreams=""
for number in $(seq "$replicas"); do
    log="$folder/replica-$number.log"
    (cd "$folder" && exec "$binary" --config "$config" --store "$uri" --host 127.0.0.1 --port 0) >"$log" 2>&1 &
    pids+=($!)
    for _ in $(seq 200); do grep -q '^listening on ' "$log" && break; sleep 0.05; done
    replica_port=$(sed -n 's|^listening on http://127.0.0.1:\([0-9]*\).*|\1|p' "$log" | head -n 1)
    [ -n "$replica_port" ] || fail "replica $number did not start: $(cat "$log")"
    say "replica $number on 127.0.0.1:$replica_port (log: $log)"
    upstreams+="        server 127.0.0.1:$replica_port max_fails=1 fail_timeout=2s;"$'\n'
done

mkdir -p "$folder/nginx"
cat >"$folder/nginx.conf" <<CONF
worker_processes 1;
daemon on;
pid $folder/nginx.pid;
error_log $folder/nginx/error.log warn;
events { worker_connections 1024; }
http {
    access_log off;
    client_body_temp_path $folder/nginx/body;
    proxy_temp_path $folder/nginx/proxy;
    fastcgi_temp_path $folder/nginx/fastcgi;
    uwsgi_temp_path $folder/nginx/uwsgi;
    scgi_temp_path $folder/nginx/scgi;
    upstream replicas {
$upstreams        keepalive 32;
    }
    server {
        # Loopback only: behind this proxy every client looks local to the replicas, and local
        # clients may administer them when no CAROUSEL_ADMIN_TOKEN is set.
        listen 127.0.0.1:$port;
        location / {
            proxy_pass http://replicas;
            proxy_http_version 1.1;
            proxy_set_header Connection "";
            # The Host the client named, port included: without an admin token the replicas
            # trust only a request that names this host and comes from a page of its own origin
            # (docs/API.md, roles), and the admin page's Origin carries the port.
            proxy_set_header Host \$http_host;
            # Event streams: passed on as they come, held open between heartbeats.
            proxy_buffering off;
            proxy_read_timeout 1h;
        }
    }
}
CONF
nginx -c "$folder/nginx.conf" -e "$folder/nginx/error.log" || fail "nginx did not start (is port $port free?)"
say "ready: http://localhost:$port/ load-balances $replicas replicas on one PostgreSQL (Ctrl-C stops all)"
wait "${pids[@]}"
