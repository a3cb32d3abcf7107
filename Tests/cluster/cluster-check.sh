#!/usr/bin/env bash
# make cluster-check: `make cluster` as a user meets it. Starts deploy/cluster.sh on a free port,
# asks nginx in front of the three replicas for the carousel until every answer agrees, pauses it
# and moves it through nginx and waits until every replica shows that, then stops the cluster
# with SIGTERM (a background job ignores SIGINT) and checks that nothing it started is left.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
say() { printf 'cluster-check: %s\n' "$*"; }
fail() { say "FAILED: $*"; [ -f "${log:-}" ] && cat "$log"; exit 1; }

port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log=$(mktemp /tmp/cluster-check.XXXXXX.log)
CLUSTER_PORT=$port "$root/deploy/cluster.sh" >"$log" 2>&1 &
cluster=$!
trap 'kill -TERM $cluster 2>/dev/null || true; wait $cluster 2>/dev/null || true; rm -f "$log"' EXIT

for _ in $(seq 600); do grep -q '^cluster: ready' "$log" && break; kill -0 $cluster 2>/dev/null || break; sleep 0.1; done
grep -q '^cluster: ready' "$log" || fail "the cluster did not say it was ready within 60 s"
folder=$(sed -n 's|^cluster: PostgreSQL in \(.*\)/pg$|\1|p' "$log")
[ -n "$folder" ] || fail "no PostgreSQL folder in the cluster's output"
base="http://127.0.0.1:$port"

# "index paused" when six answers in a row agree (nginx spreads them over the replicas).
agreed() {
    local first="" answer
    for _ in 1 2 3 4 5 6; do
        answer=$(curl -sf "$base/banner" | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["index"], s["paused"])') \
            || return 1
        [ -z "$first" ] && first=$answer
        [ "$answer" = "$first" ] || return 1
    done
    echo "$first"
}
# Waits (30 s at most) until the replicas agree on "$1".
wait_for() {
    for _ in $(seq 300); do [ "$(agreed)" = "$1" ] && return; sleep 0.1; done
    fail "the replicas behind nginx did not all show '$1' within 30 s (last: $(agreed || true))"
}

[ "$(curl -sf "$base/carousels" | python3 -c 'import json, sys; print(len(json.load(sys.stdin)["carousels"]))')" = 1 ] \
    || fail "GET /carousels does not show one carousel"
read -r index count < <(curl -sf -X POST "$base/banner/pause" \
    | python3 -c 'import json, sys; s = json.load(sys.stdin); print(s["index"], s["count"])') \
    || fail "POST /banner/pause through nginx failed"
wait_for "$index True"
say "paused through nginx: every replica shows banner $index, paused"
curl -sf -X POST "$base/banner/next" >/dev/null || fail "POST /banner/next through nginx failed"
wait_for "$(( (index + 1) % count )) True"
say "moved through nginx: every replica shows banner $(( (index + 1) % count ))"
curl -sf "$base/readyz" >/dev/null || fail "GET /readyz is not 200"
# Admin without a token through nginx: the admin page's own origin may, another origin or a
# rebound DNS name may not.
admin() { curl -s -o /dev/null -w '%{http_code}' -X PATCH "$base/carousels/default" --json '{"interval": 3600}' "$@"; }
[ "$(admin -H "Origin: $base")" = 200 ] || fail "an admin write from the page's own origin through nginx was refused"
[ "$(admin -H 'Origin: http://evil.example')" = 403 ] || fail "an admin write from another origin was not refused"
[ "$(admin -H 'Host: evil.example')" = 403 ] || fail "an admin write naming another host was not refused"
say "admin through nginx: this host's page may write, another origin or host may not"

kill -TERM $cluster
for _ in $(seq 300); do kill -0 $cluster 2>/dev/null || break; sleep 0.1; done
kill -0 $cluster 2>/dev/null && fail "the cluster did not stop within 30 s of SIGTERM"
wait $cluster || true
grep -q '^cluster: stopped; nothing left running' "$log" || fail "the cluster did not say it stopped"
if pgrep -af "$folder" >/dev/null; then fail "still running: $(pgrep -af "$folder")"; fi
[ ! -e "$folder" ] || fail "$folder is still there"
curl -s -o /dev/null "$base/banner" && fail "something still answers on port $port"
say "passed"
