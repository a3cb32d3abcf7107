#!/usr/bin/env bash
# make container-check: the Dockerfile's runtime stage, verified without a Docker engine.
#
# Builds a minimal Debian bookworm root filesystem with debootstrap (cached in
# .build/container), installs into it exactly the RUNTIME_PACKAGES the Dockerfile names, creates
# the same unprivileged user, copies in the static release binary and the configuration where
# the Dockerfile puts them, checks that the binary finds every library it links to, then runs the
# service in a chroot as that user and checks /healthz, GET /banner, the healthcheck subcommand,
# and that SIGTERM ends it with status 0; then starts it again on the same store (the volume) and
# finds the carousel an admin request created in the first run. Every process and mount it starts
# is cleaned up.
set -euo pipefail

root=$(cd "$(dirname "$0")/../.." && pwd)
cache="$root/.build/container"
rootfs="$cache/rootfs-bookworm"
mirror=$("$root/Tests/container/debian-mirror.sh")  # the one apt uses here; DEBIAN_MIRROR overrides it
binary="$root/.build/release/banner-server"  # make build links the Swift runtime in statically
user=carousel

say() { printf 'container-check: %s\n' "$*"; }
fail() { say "FAILED: $*"; exit 1; }

[ "$(id -u)" = 0 ] || fail "needs root (debootstrap and chroot); run: sudo make container-check"
command -v debootstrap >/dev/null || fail "debootstrap is missing (make container-check installs it)"
[ -x "$binary" ] || fail "no static binary at $binary (make container-check builds it)"

# The Dockerfile is the source of truth: its runtime packages, user and paths.
packages=$(sed -n 's/^ARG RUNTIME_PACKAGES="\(.*\)"$/\1/p' "$root/Dockerfile")
[ -n "$packages" ] || fail "no 'ARG RUNTIME_PACKAGES=\"…\"' line in the Dockerfile"
grep -q 'COPY config/carousel.json /etc/banner/carousel.json' "$root/Dockerfile" \
    || fail "the Dockerfile no longer copies the configuration to /etc/banner/carousel.json"
grep -q 'COPY config/banners/\*.jpg /etc/banner/banners/' "$root/Dockerfile" \
    || fail "the Dockerfile no longer copies the sample banners to /etc/banner/banners/"
grep -q "useradd --system --uid 10001 --user-group .* $user" "$root/Dockerfile" \
    || fail "the Dockerfile no longer creates the user $user (uid 10001)"
volume=/var/lib/banner-carousel
store="$volume/carousel.db"
grep -q "^VOLUME $volume\$" "$root/Dockerfile" || fail "the Dockerfile no longer declares VOLUME $volume"
grep -q "^ENV CAROUSEL_STORE=$store\$" "$root/Dockerfile" || fail "the Dockerfile no longer sets CAROUSEL_STORE=$store"
grep -q "install -d -o $user -g $user -m 0750 $volume" "$root/Dockerfile" \
    || fail "the Dockerfile no longer gives $volume to $user"

# --- the root filesystem, cached --------------------------------------------------------------
if [ ! -f "$rootfs/.bootstrapped" ]; then
    say "debootstrap --variant=minbase bookworm from $mirror (once; cached in $cache)"
    rm -rf "$rootfs" && mkdir -p "$cache"
    debootstrap --variant=minbase bookworm "$rootfs" "$mirror" > "$cache/debootstrap.log" 2>&1 \
        || fail "debootstrap failed; see $cache/debootstrap.log"
    touch "$rootfs/.bootstrapped"
fi
if [ "$(cat "$rootfs/.runtime-packages" 2>/dev/null)" != "$packages" ]; then
    say "installing the runtime packages: $packages"
    cp /etc/resolv.conf "$rootfs/etc/resolv.conf"
    chroot "$rootfs" /usr/bin/env DEBIAN_FRONTEND=noninteractive sh -c \
        "apt-get update -q && apt-get install -y -q --no-install-recommends $packages" > "$cache/apt.log" 2>&1 \
        || fail "apt-get install in the root filesystem failed; see $cache/apt.log"
    chroot "$rootfs" rm -rf /var/lib/apt/lists
    echo "$packages" > "$rootfs/.runtime-packages"
fi
chroot "$rootfs" id -u "$user" >/dev/null 2>&1 \
    || chroot "$rootfs" useradd --system --uid 10001 --user-group --no-create-home --shell /usr/sbin/nologin "$user"
rm -rf "${rootfs:?}$volume"  # a fresh volume for every check
chroot "$rootfs" install -d -o "$user" -g "$user" -m 0750 "$volume"
install -D -m 0755 "$binary" "$rootfs/usr/local/bin/banner-server"
install -D -m 0644 "$root/config/carousel.json" "$rootfs/etc/banner/carousel.json"
rm -rf "$rootfs/etc/banner/banners"
install -D -m 0644 -t "$rootfs/etc/banner/banners" "$root"/config/banners/*.jpg

# --- libraries ----------------------------------------------------------------------------------
missing=$(chroot "$rootfs" ldd /usr/local/bin/banner-server | grep 'not found' || true)
[ -z "$missing" ] || fail "the binary needs libraries the runtime stage does not install: $missing"
say "every library the binary links to is in the runtime filesystem"

# --- run it -------------------------------------------------------------------------------------
port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
log="$cache/service.log"
server=""
receiver=""
cleanup() {
    [ -n "$server" ] && kill -KILL "$server" 2>/dev/null || true
    [ -n "$receiver" ] && kill -KILL "$receiver" 2>/dev/null || true
    mountpoint -q "$rootfs/proc" && umount "$rootfs/proc" || true
}
trap cleanup EXIT
mount -t proc proc "$rootfs/proc"
uid=$(chroot "$rootfs" id -u "$user")
gid=$(chroot "$rootfs" id -g "$user")
# As the Dockerfile runs it: its user, its configuration path, nothing else from this environment
# (but webhooks allowed to reach this host's loopback, where the check's receiver listens).
in_container=(chroot --userspec="$uid:$gid" "$rootfs" /usr/bin/env -i PATH=/usr/bin:/bin
    CAROUSEL_CONFIG=/etc/banner/carousel.json CAROUSEL_STORE="$store" CAROUSEL_HOST=127.0.0.1
    CAROUSEL_PORT="$port" CAROUSEL_WEBHOOK_ALLOW_PRIVATE=true)
start_service() {
    "${in_container[@]}" /usr/local/bin/banner-server > "$log" 2>&1 &
    server=$!
    for _ in $(seq 300); do grep -q '^listening on ' "$log" && break; kill -0 "$server" 2>/dev/null || break; sleep 0.1; done
    grep -q "^listening on http://127.0.0.1:$port" "$log" || fail "the service did not start; see $log"
}
stop_service() {
    kill -TERM "$server"
    status=0
    wait "$server" || status=$?
    server=""
    [ "$status" = 0 ] || fail "SIGTERM ended the service with status $status; see $log"
}
start_service
[ "$(ps -o user= -p "$server")" != root ] || fail "the service runs as root"
say "running as $(ps -o user= -p "$server" | tr -d ' ') (uid $(ps -o uid= -p "$server" | tr -d ' ')), port $port"

fetch() { python3 -c 'import sys, urllib.request; print(urllib.request.urlopen(sys.argv[1], timeout=5).read().decode(), end="")' "$1"; }
[ "$(fetch "http://127.0.0.1:$port/healthz")" = '{"status":"ok"}' ] || fail "GET /healthz"
fetch "http://127.0.0.1:$port/banner" | grep -q '"count":5' || fail "GET /banner"
say "GET /healthz and GET /banner answer"
image=$(fetch "http://127.0.0.1:$port/banner" | python3 -c 'import json, sys; print(json.load(sys.stdin)["banner"]["image"])')
case "$image" in /media/*) ;; *) fail "the first banner's image is $image, not one of the library's" ;; esac
python3 -c 'import sys, urllib.request; sys.exit(urllib.request.urlopen(sys.argv[1], timeout=5).headers["Content-Type"] != "image/webp")' \
    "http://127.0.0.1:$port$image/480.webp" || fail "GET $image/480.webp: the sample banner's variant"
say "the sample banners are in the media library, with their variants"
"${in_container[@]}" /usr/local/bin/banner-server healthcheck || fail "banner-server healthcheck inside the root filesystem"
say "banner-server healthcheck exits 0"

post() {
    python3 -c 'import sys, urllib.request
request = urllib.request.Request(sys.argv[1], data=sys.argv[2].encode(), headers={"Content-Type": "application/json"})
print(urllib.request.urlopen(request, timeout=10).status)' "$1" "$2"
}
[ "$(post "http://127.0.0.1:$port/carousels" '{"name": "lobby", "timeZone": "Europe/Berlin", "banners": [{"id": "hi", "image": "https://cdn.example.com/hi.png", "windows": [{"from": "00:00", "to": "24:00"}]}]}')" = 201 ] \
    || fail "POST /carousels (an admin change from this host, in a named time zone: tzdata must be in the image)"
[ -f "$rootfs$store" ] || fail "no store at $store in the volume"
[ "$(stat -c %u "$rootfs$store")" = "$uid" ] || fail "the store is not owned by $user (uid $uid)"
say "an admin change is in the store $store, owned by $user"

# An upload decoded by the runtime filesystem's libvips: JPEG (its own loader) and AVIF (libvips'
# HEIF module and libheif), each with its WebP variants (libwebp).
upload() {
    python3 -c 'import json, sys, urllib.request
request = urllib.request.Request(sys.argv[1], data=open(sys.argv[2], "rb").read(), headers={"Content-Type": sys.argv[3]})
with urllib.request.urlopen(request, timeout=60) as response:
    answer = json.load(response)
    print(response.status, answer["type"], answer["width"], [variant["width"] for variant in answer["variants"]])' "$@"
}
fixtures="$root/Tests/MediaTests/Fixtures"
[ "$(upload "http://127.0.0.1:$port/media" "$fixtures/wide.jpg" image/jpeg)" = "201 image/jpeg 1000 [480, 960]" ] \
    || fail "POST /media of a JPEG: libvips (libvips42) must be in the runtime image; see $log"
[ "$(upload "http://127.0.0.1:$port/media" "$fixtures/quadrant.avif" image/avif)" = "201 image/avif 80 []" ] \
    || fail "POST /media of an AVIF: libvips' HEIF module and libheif must be in the runtime image; see $log"
python3 -c 'import sys, urllib.request; sys.exit(urllib.request.urlopen(sys.argv[1], timeout=5).read()[8:12] != b"WEBP")' \
    "http://127.0.0.1:$port/media/$(sha256sum "$fixtures/wide.jpg" | cut -c1-64)/960.webp" || fail "GET of a WebP variant"
say "uploads are decoded and their WebP variants made inside the runtime filesystem"

# A webhook delivery sent with the runtime filesystem's libcurl to a receiver on this host.
hook_log="$cache/webhook.log"
rm -f "$hook_log"
hook_port=$(python3 -c 'import socket; s = socket.socket(); s.bind(("127.0.0.1", 0)); print(s.getsockname()[1])')
python3 -c 'import http.server, sys
class Receiver(http.server.BaseHTTPRequestHandler):
    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        with open(sys.argv[2], "a") as log:
            log.write(self.headers["X-Carousel-Event"] + "\n")
        self.send_response(204)
        self.end_headers()
    def log_message(self, *args):
        pass
http.server.HTTPServer(("127.0.0.1", int(sys.argv[1])), Receiver).serve_forever()' "$hook_port" "$hook_log" &
receiver=$!
[ "$(post "http://127.0.0.1:$port/webhooks" '{"url": "http://127.0.0.1:'"$hook_port"'/hooks", "events": ["carousel.changed"], "secret": "container-check-0123456789"}')" = 201 ] \
    || fail "POST /webhooks; see $log"
[ "$(post "http://127.0.0.1:$port/carousels" '{"name": "hall"}')" = 201 ] || fail "POST /carousels hall"
for _ in $(seq 300); do grep -q '^carousel.changed$' "$hook_log" 2>/dev/null && break; sleep 0.1; done
kill "$receiver"
receiver=""
grep -q '^carousel.changed$' "$hook_log" 2>/dev/null \
    || fail "no webhook delivery arrived: libcurl (libcurl4) must be in the runtime image; see $log"
say "a webhook delivery is sent with the runtime filesystem's libcurl"

stop_service
grep -q 'received SIGTERM; stopping' "$log" || fail "no stop message in $log"
say "SIGTERM: exit status 0"

start_service
fetch "http://127.0.0.1:$port/carousels/lobby" | grep -q '"id":"hi"' || fail "the restarted service lost the admin change"
python3 -c 'import json, sys, urllib.request; media = json.load(urllib.request.urlopen(sys.argv[1], timeout=5))["media"]; sys.exit(len(media) != 5 + 2)' \
    "http://127.0.0.1:$port/media" || fail "the restarted service lost the uploads (expected the five sample banners and two uploads)"
say "restarted on the same volume: the admin change and the uploads are there"
stop_service
say "passed"
