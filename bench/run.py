#!/usr/bin/env python3
"""`make bench`: banner-server's read path side by side with what a user would otherwise run.

In one run, on this machine:
  - banner-server (release build) on the shipped five-banner configuration, autoplay off so the
    bytes of GET /banner stay fixed;
  - nginx serving exactly those bytes as a static file, with the same number of worker processes
    as the service has threads;
  - the C reference (bench/reference/reference.c): libmicrohttpd answering one pre-built response
    with the service's daemon settings, the floor of our own stack.
wrk loads each in turn, the order rotating every round; the report gives every round and the
median ratios. The service runs on a fresh SQLite store (the embedded default). Then: POST
/banner/next throughput on SQLite and on the memory store, admin writes (add a banner, synced to
disk) per second and their latency, RSS idle (SQLite and memory) and with 1,000 idle keep-alive
connections, and latency percentiles at a fixed request rate (h2load --rps, per-request log).
Results go to bench/results.md (or bench/out/results-smoke.md with --smoke) and to stdout.
Nothing here asserts a speed: machines are shared and noisy; ratios measured in the same run are
what to read.
"""

import argparse
import datetime
import json
import os
import platform
import re
import resource
import shutil
import socket
import statistics
import subprocess
import sys
import time
from pathlib import Path

# bench/postgres.py, found however this file is loaded (Tests/allocations loads it by path).
sys.path.insert(0, str(Path(__file__).resolve().parent))
import counted  # noqa: E402
import fanout  # noqa: E402
import flips  # noqa: E402
import webhooks  # noqa: E402
import scale  # noqa: E402
from postgres import Postgres, pgbench_same_shape, post_rates, propagation  # noqa: E402

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
SERVICE = ROOT / ".build" / "release" / "banner-server"
# The same release build with request counting compiled out (`make bench-uncounted`): what counting costs.
UNCOUNTED = ROOT / ".build" / "uncounted" / "release" / "banner-server"
REFERENCE = OUT / "reference"
FANOUT = OUT / "sse_fanout"
ARRIVALS = OUT / "sse_arrivals"
SSE_REFERENCE = OUT / "sse_reference"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def wait_for_port(port, process, what, seconds=20):
    deadline = time.monotonic() + seconds
    while time.monotonic() < deadline:
        if process.poll() is not None:
            sys.exit(f"bench: {what} exited with status {process.returncode} before listening on {port}")
        try:
            with socket.create_connection(("127.0.0.1", port), timeout=0.2):
                return
        except OSError:
            time.sleep(0.05)
    sys.exit(f"bench: {what} did not listen on port {port} within {seconds} s")


def fetch(port, path="/banner", method="GET"):
    """One request; returns (status, headers, body) as bytes, without any client library."""
    with socket.create_connection(("127.0.0.1", port), timeout=5) as connection:
        connection.sendall(f"{method} {path} HTTP/1.1\r\nHost: 127.0.0.1\r\nConnection: close\r\n\r\n".encode())
        data = b""
        while chunk := connection.recv(65536):
            data += chunk
    head, _, body = data.partition(b"\r\n\r\n")
    status = int(head.split(b" ")[1])
    return status, head.decode(), body


def rss_kib(pids):
    total = 0
    for pid in pids:
        with open(f"/proc/{pid}/status") as status:
            total += int(re.search(r"VmRSS:\s+(\d+) kB", status.read()).group(1))
    return total


class Target:
    """A server under test: its process, its port, and the pids whose memory it uses."""

    def __init__(self, name, label, command, port, log, read_path="/banner"):
        self.name, self.label, self.port = name, label, port
        self.read_path = read_path  # what `get_rounds` reads
        self.log = open(log, "w")
        self.process = subprocess.Popen(command, stdout=subprocess.DEVNULL, stderr=self.log)
        wait_for_port(port, self.process, label)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}/banner"

    @property
    def pids(self):
        children = subprocess.run(["pgrep", "-P", str(self.process.pid)], capture_output=True, text=True).stdout
        return [self.process.pid] + [int(pid) for pid in children.split()]

    def cpu_seconds(self):
        """User and system time of every thread of every process so far."""
        ticks = 0
        for pid in self.pids:
            with open(f"/proc/{pid}/stat") as stat:
                fields = stat.read().rsplit(")", 1)[1].split()
            ticks += int(fields[11]) + int(fields[12])  # utime, stime
        return ticks / os.sysconf("SC_CLK_TCK")

    def stop(self):
        self.process.terminate()
        try:
            self.process.wait(timeout=10)
        except subprocess.TimeoutExpired:
            self.process.kill()
        self.log.close()


def pinned(command, cpu):
    """`command` run on CPU `cpu` only (None: wherever the scheduler puts it)."""
    return command if cpu is None else ["taskset", "-c", str(cpu)] + command


def shipped_banner_images():
    """The shipped configuration names its banners' images as files beside it (config/banners/): the
    configurations written in OUT, beside copies of them, name the same."""
    OUT.mkdir(parents=True, exist_ok=True)
    shutil.copytree(ROOT / "config" / "banners", OUT / "banners", dirs_exist_ok=True)


def start_service(threads, name="carousel", store=None, key="service", label="banner-server", binary=SERVICE,
                  cpu=None, **settings):
    """banner-server on the shipped banners, with `settings` over the file's (autoplay off unless said),
    on a fresh SQLite store unless `store` says otherwise, on CPU `cpu` when one is given."""
    shipped_banner_images()
    configuration = json.loads((ROOT / "config" / "carousel.json").read_text())
    configuration.update(host="127.0.0.1", port=free_port(), autoplay=False)
    configuration.update(settings)
    path = OUT / f"{name}.json"
    path.write_text(json.dumps(configuration))
    return Target(key, label,
                  pinned([str(binary), "--config", str(path), "--store", store or fresh_store(name),
                          "--threads", str(threads)], cpu),
                  configuration["port"], OUT / f"{name}.log")


def fresh_store(name):
    """An empty SQLite store in OUT (the embedded default), seeded from the configuration at start."""
    for suffix in ("", "-wal", "-shm", ".lock"):
        (OUT / f"{name}.db{suffix}").unlink(missing_ok=True)
    return f"sqlite:{OUT / f'{name}.db'}"


def start_nginx(threads, body, cpu=None, out=OUT, path="/banner", content_type="application/json; charset=utf-8",
                cache_control="no-store"):
    """nginx serving `body` as a static file at `path` (sendfile, open_file_cache), its files in `out`."""
    port = free_port()
    name = path.strip("/")
    (out / "www").mkdir(parents=True, exist_ok=True)
    (out / "www" / name).write_bytes(body)
    for folder in ["client_body", "proxy", "fastcgi", "uwsgi", "scgi"]:
        (out / "nginx" / folder).mkdir(parents=True, exist_ok=True)
    user = "user root;" if os.geteuid() == 0 else ""  # as root, workers must still read bench/out
    config = out / "nginx" / "nginx.conf"
    config.write_text(f"""
{user}
daemon off;
worker_processes {threads};
worker_rlimit_nofile 16384;
pid {out}/nginx/nginx.pid;
error_log {out}/nginx/error.log warn;
events {{ worker_connections 8192; }}
http {{
    access_log off;
    sendfile on;
    tcp_nopush on;
    tcp_nodelay on;
    keepalive_timeout 60s;
    keepalive_requests 100000000;
    open_file_cache max=16 inactive=60s;
    client_body_temp_path {out}/nginx/client_body;
    proxy_temp_path {out}/nginx/proxy;
    fastcgi_temp_path {out}/nginx/fastcgi;
    uwsgi_temp_path {out}/nginx/uwsgi;
    scgi_temp_path {out}/nginx/scgi;
    server {{
        listen 127.0.0.1:{port};
        location = {path} {{
            default_type "{content_type}";
            add_header Cache-Control "{cache_control}";
            alias {out}/www/{name};
        }}
    }}
}}
""")
    # The workers inherit the master's CPU.
    return Target("nginx", "nginx static file",
                  pinned(["nginx", "-c", str(config), "-e", str(out / "nginx" / "error.log")], cpu),
                  port, out / "nginx" / "stderr.log")


def reference_command(port, threads, body_file, headers):
    """The C reference answering `body_file` with `headers` (the service's own)."""
    command = [str(REFERENCE), "--port", str(port), "--threads", str(threads), "--body", str(body_file)]
    for header in headers:
        command += ["--header", header]
    return command


def start_reference(threads, body_file, headers, cpu=None):
    port = free_port()
    return Target("reference", "C libmicrohttpd", pinned(reference_command(port, threads, body_file, headers), cpu),
                  port, OUT / "reference.log")


def wrk(target, path, seconds, connections, script=None, cpu=None):
    """Returns (requests per second, server CPU microseconds per request, requests completed)."""
    url = f"http://127.0.0.1:{target.port}{path}"
    command = pinned(["wrk", "-t1", f"-c{connections}", f"-d{seconds}s"], cpu)
    if script:
        command += ["-s", str(script)]
    cpu_before = target.cpu_seconds()
    output = subprocess.run(command + [url], capture_output=True, text=True, check=True).stdout
    cpu = target.cpu_seconds() - cpu_before
    rate = float(re.search(r"Requests/sec:\s+([\d.]+)", output).group(1))
    completed = int(re.search(r"(\d+) requests in", output).group(1))
    bad = re.search(r"Non-2xx or 3xx responses: (\d+)", output)
    errors = re.search(r"Socket errors: (.*)", output)
    if bad or errors:
        print(f"bench: warning: {url}: {bad.group(0) if bad else ''} {errors.group(0) if errors else ''}",
              file=sys.stderr)
    return rate, cpu * 1e6 / max(completed, 1), completed


def get_rounds(targets, arguments, cpu=None, label=""):
    """GET /banner on each target in turn, `arguments.rounds` times, the order rotating every round
    (after a warm-up of a second each): req/s and server CPU µs per request, by target name."""
    for target in targets:
        wrk(target, target.read_path, 1, arguments.connections, cpu=cpu)
    rates = {target.name: [] for target in targets}
    microseconds_used = {target.name: [] for target in targets}
    for round_number in range(arguments.rounds):
        order = targets[round_number % len(targets):] + targets[:round_number % len(targets)]
        for target in order:
            rate, microseconds, _ = wrk(target, target.read_path, arguments.seconds, arguments.connections, cpu=cpu)
            rates[target.name].append(rate)
            microseconds_used[target.name].append(microseconds)
            print(f"  {label}round {round_number + 1} {target.label:18} {rate:>10,.0f} req/s  "
                  f"{microseconds:5.2f} µs CPU/request", flush=True)
    return rates, microseconds_used


def latency_percentiles(url, clients, rate_per_client, seconds):
    """Constant request rate with h2load; percentiles from its per-request log."""
    log = OUT / "h2load.log"
    log.unlink(missing_ok=True)
    subprocess.run(
        ["h2load", "--h1", "-c", str(clients), "--rps", str(rate_per_client), "-D", str(seconds),
         "--warm-up-time", "1", "--log-file", str(log), url],
        capture_output=True, text=True, check=True)
    samples = []
    for line in log.read_text().splitlines():
        fields = line.split("\t")
        if len(fields) >= 3 and fields[1] == "200":
            samples.append(int(fields[2]) / 1000)
    samples.sort()
    if not samples:
        sys.exit(f"bench: h2load logged no successful request against {url}")

    def percentile(fraction):
        return samples[min(len(samples) - 1, int(fraction * len(samples)))]

    return {"count": len(samples), "p50": percentile(0.5), "p99": percentile(0.99), "p999": percentile(0.999)}


def rss_with_idle_connections(target, count):
    """Opens `count` keep-alive connections, uses each once, and reads RSS while they sit idle."""
    connections = []
    try:
        for _ in range(count):
            connection = socket.create_connection(("127.0.0.1", target.port), timeout=5)
            connection.sendall(b"GET /banner HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
            connections.append(connection)
        for connection in connections:
            received = b""
            while b"\r\n\r\n" not in received:
                received += connection.recv(65536)
        time.sleep(0.5)
        return rss_kib(target.pids)
    finally:
        for connection in connections:
            connection.close()


def post_next(target, seconds, connections):
    """POST /banner/next under wrk: rate, CPU per request, completed, and how much `version` grew."""
    version_before = json.loads(fetch(target.port)[2])["version"]
    rate, cpu, completed = wrk(target, "/banner/next", seconds, connections, script=ROOT / "bench" / "post.lua")
    version_after = json.loads(fetch(target.port)[2])["version"]
    return {"rate": rate, "cpu": cpu, "completed": completed, "applied": version_after - version_before}


def admin_writes(target, clients, writes_per_client, prefix="admin"):
    """Each client adds `writes_per_client` banners, one after another, to a carousel of its own
    (`PREFIX-N`; every write synced to disk before its 201). Returns the rate over all and latency
    percentiles."""
    import threading
    import urllib.request

    def send(method, path, body):
        request = urllib.request.Request(f"http://127.0.0.1:{target.port}{path}", method=method,
                                         data=json.dumps(body).encode(), headers={"Content-Type": "application/json"})
        with urllib.request.urlopen(request, timeout=30) as response:
            return response.status

    for client in range(clients):
        send("POST", "/carousels", {"name": f"{prefix}-{client}", "autoplay": False})
    times, failures = [], []

    def run(client):
        for number in range(writes_per_client):
            body = {"id": f"b{number}", "image": f"https://cdn.example.com/{number}.png", "caption": "bench"}
            started = time.perf_counter()
            status = send("POST", f"/carousels/{prefix}-{client}/banners", body)
            times.append(time.perf_counter() - started)
            if status != 201:
                failures.append(status)

    threads = [threading.Thread(target=run, args=(client,)) for client in range(clients)]
    started = time.perf_counter()
    for thread in threads:
        thread.start()
    for thread in threads:
        thread.join()
    elapsed = time.perf_counter() - started
    if failures:
        sys.exit(f"bench: admin writes failed: {failures[:5]}")
    times.sort()
    return {"count": len(times), "rate": len(times) / elapsed, "p50": times[len(times) // 2] * 1000,
            "p99": times[int(len(times) * 0.99)] * 1000, "clients": clients}


def audit_cost(audited, unaudited, clients, writes_per_client, rounds=3):
    """Admin writes on `audited` (this build) and on `unaudited` (the bench build, whose stores
    append no audit entry), alternating, `rounds` times: the median of each round's ratio of rates,
    and the rates."""
    ratios, rates = [], {"audited": [], "unaudited": []}
    for number in range(rounds):
        with_log = admin_writes(audited, clients, writes_per_client, prefix=f"audit{number}")
        without = admin_writes(unaudited, clients, writes_per_client, prefix=f"audit{number}")
        rates["audited"].append(with_log["rate"])
        rates["unaudited"].append(without["rate"])
        ratios.append(with_log["rate"] / without["rate"])
    return {"ratio": statistics.median(ratios), "ratios": ratios, "rounds": rounds, "clients": clients,
            "writes": clients * writes_per_client, "audited": statistics.median(rates["audited"]),
            "unaudited": statistics.median(rates["unaudited"])}


def arrivals(service, events, seconds=600):
    """The first `events` events of the service's /banner/events (those within `seconds`) with their
    arrival times, taken by bench/tools/sse_arrivals.c as recv returns (a Python client's own
    wake-up would count otherwise)."""
    result = subprocess.run([str(ARRIVALS), "--port", str(service.port), "--events", str(events),
                             "--seconds", str(seconds)], capture_output=True, text=True, timeout=seconds + 60)
    if result.returncode != 0:
        sys.exit(f"bench: sse_arrivals failed: {result.stderr.strip()}")
    return [(float(arrival), json.loads(data))
            for arrival, data in (line.split(" ", 1) for line in result.stdout.splitlines())]


def advance_timing(threads, advances, interval):
    """One subscriber, automatic advances every `interval` s: each event's arrival against the
    nextAdvanceAt the previous state promised, and the schedule's drift over the run."""
    banners = json.loads((ROOT / "config" / "carousel.json").read_text())["banners"]
    for banner in banners:
        banner.pop("duration", None)  # a uniform interval, so that the schedule is first + k × interval
    service = start_service(threads, name="timing", autoplay=True, interval=interval, banners=banners)
    errors, promised = [], []
    try:
        for arrival, state in arrivals(service, advances + 1):
            if promised:
                errors.append((arrival - promised[-1]) * 1000)
            promised.append(datetime.datetime.fromisoformat(state["nextAdvanceAt"]).timestamp())
    finally:
        service.stop()
    first = promised[0]
    drift = max(abs((at - first) - k * interval) for k, at in enumerate(promised)) * 1000
    errors.sort()
    return {"advances": len(errors), "p50": errors[len(errors) // 2], "p99": errors[int(len(errors) * 0.99)],
            "max": errors[-1], "drift_ms": drift, "span_s": promised[-1] - first}


def boundary_timing(threads, boundaries, spacing_ms=100):
    """One subscriber, autoplay off; banner k joins the rotation at startsAt = start + k × spacing
    (schedule boundaries, not advances): each event's arrival minus the instants of the boundaries
    it reports. Boundaries that passed before the subscriber was connected are not counted."""
    start_ms = int(time.time() * 1000) + 3000  # time to start the service and subscribe
    instants = [(start_ms + k * spacing_ms) / 1000 for k in range(1, boundaries + 1)]
    iso = lambda seconds: datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")
    banners = [{"id": "always", "image": "https://cdn.example.com/banners/always.jpg"}] + [
        {"id": f"joins-{k}", "image": f"https://cdn.example.com/banners/{k}.jpg", "startsAt": iso(instants[k - 1])}
        for k in range(1, boundaries + 1)]
    service = start_service(threads, name="boundaries", banners=banners)
    errors, joined = [], None
    try:
        # One event per boundary, and the first; fewer when boundaries passed before it connected,
        # so it listens until a second after the last boundary.
        listen = instants[-1] - time.time() + 1
        for arrival, state in arrivals(service, boundaries + 1, seconds=listen):
            now_joined = state["count"] - 1
            if joined is not None:
                errors += [(arrival - instants[k]) * 1000 for k in range(joined, now_joined)]
            joined = now_joined
    finally:
        service.stop()
    errors.sort()
    return {"boundaries": len(errors), "p50": errors[len(errors) // 2], "p99": errors[int(len(errors) * 0.99)],
            "max": errors[-1], "early": sum(error < 0 for error in errors)}


def scheduled_change_timing(threads, changes, spacing_ms=100):
    """Scheduled changes (docs/SCHEDULED.md) on a SQLite store: `changes` PATCHes of the default
    carousel's interval asked with `?at=` 100 ms apart, then one subscriber. For each: when it took
    effect (its audit entry's `at`, the engine's now as it made the change) minus its time, and the
    arrival of the event that reports it minus its time (the synced write included)."""
    import urllib.request
    banners = json.loads((ROOT / "config" / "carousel.json").read_text())["banners"]
    for banner in banners:
        banner.pop("duration", None)  # the state's interval is then the carousel's, which each change sets
    service = start_service(threads, name="scheduled-changes", banners=banners)
    iso = lambda seconds: datetime.datetime.fromtimestamp(seconds, datetime.timezone.utc).isoformat(
        timespec="milliseconds").replace("+00:00", "Z")
    # Time to ask for every change (each a synced write) and to subscribe before the first is due.
    first = time.time() + 1.5 + changes * 0.02
    instants = {10 + k: round(first + k * spacing_ms / 1000, 3) for k in range(changes)}
    try:
        for interval, at in instants.items():
            request = urllib.request.Request(
                f"http://127.0.0.1:{service.port}/carousels/default?at={iso(at)}", method="PATCH",
                data=json.dumps({"interval": interval}).encode(),
                headers={"Content-Type": "application/json", "X-Request-Id": f"late-{interval}"})
            with urllib.request.urlopen(request, timeout=30) as response:
                if response.status != 202:
                    sys.exit(f"bench: scheduling a change answered {response.status}")
        if time.time() >= first:
            sys.exit("bench: the changes were asked for too slowly to subscribe before the first is due")
        listen = first + changes * spacing_ms / 1000 - time.time() + 2
        arrived = [(arrival, state["interval"]) for arrival, state in arrivals(service, changes + 1, seconds=listen)]
        audit = json.loads(fetch(service.port, f"/audit?carousel=default&limit={changes + 10}")[2])["entries"]
    finally:
        service.stop()
    made = {int(entry["requestId"][5:]): datetime.datetime.fromisoformat(entry["at"]).timestamp()
            for entry in audit if entry["action"] == "carousel.patch" and entry["requestId"].startswith("late-")}
    effect = sorted((made[interval] - at) * 1000 for interval, at in instants.items() if interval in made)
    seen = sorted((arrival - instants[interval]) * 1000 for arrival, interval in arrived[1:] if interval in instants)
    if len(effect) != changes or len(seen) != changes:
        sys.exit(f"bench: {len(effect)} of {changes} scheduled changes made, {len(seen)} seen by the subscriber")
    summary = lambda errors: {"p50": errors[len(errors) // 2], "p99": errors[int(len(errors) * 0.99)],
                              "max": errors[-1], "early": sum(error < 0 for error in errors)}
    return {"changes": changes, "effect": summary(effect), "seen": summary(seen)}


def scheduled_banners(count):
    """`count` banners, each with two daily windows that cover the whole day (so all of them rotate):
    what a shop with a schedule on every banner serves."""
    return [{"id": f"scheduled-{n}", "image": f"https://cdn.example.com/banners/scheduled-{n}-1600x600.jpg",
             "caption": f"Scheduled banner {n}", "link": f"https://shop.example.com/{n}",
             "windows": [{"days": ["mon", "tue", "wed", "thu", "fri"], "from": "00:00", "to": "24:00"},
                         {"days": ["sat", "sun"], "from": "00:00", "to": "24:00"}]}
            for n in range(count)]


def audience_banners(count):
    """The shipped banners, for every audience, and one banner for each of `count` audiences
    (docs/AUDIENCES.md): a carousel with as many audiences as one may have."""
    shipped = json.loads((ROOT / "config" / "carousel.json").read_text())["banners"]
    return shipped + [{"id": f"audience-{n}", "image": f"https://cdn.example.com/banners/a{n}-1600x600.jpg",
                       "caption": f"For audience a{n}", "audiences": [f"a{n}"]} for n in range(count)]


def banner_only_configuration(port, banners=None):
    """A configuration file for a server under valgrind: `banners` (by default the shipped ones),
    autoplay off. Images named as files are named by a URL of the same length instead: seeding would
    decode them with libvips, for minutes under valgrind, and a read's cost is that of its bytes."""
    path = OUT / "valgrind.json"
    banners = banners or json.loads((ROOT / "config" / "carousel.json").read_text())["banners"]
    for banner in banners:
        if not banner["image"].startswith(("http://", "https://", "/")):
            banner["image"] = "https://cdn.example.com/" + "i" * (len("/media/") + 64 - len("https://cdn.example.com/"))
    path.write_text(json.dumps({"host": "127.0.0.1", "port": port, "autoplay": False, "banners": banners}))
    return path


def read_banner(connection, times, path="/banner"):
    """`times` keep-alive GET `path` on `connection`, one after another, each answer read whole."""
    request = f"GET {path} HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n".encode()
    for _ in range(times):
        connection.sendall(request)
        received = b""
        while not received.endswith(b"}\n"):
            received += connection.recv(65536)


def client_and_server_cpus():
    """The CPUs a run keeping the load generator and the server apart uses (the first usable and
    the last), or None on a single CPU."""
    usable = sorted(os.sched_getaffinity(0))
    return (usable[0], usable[-1]) if len(usable) >= 2 else None


def one_core_each(arguments, body, headers):
    """GET /banner with the load generator and the server kept apart: wrk on the first usable CPU,
    each server with one thread (nginx: one worker) on the last. On a 2-core machine the rounds
    above share both cores between wrk and the server, and how the scheduler interleaves three
    busy threads sways them; here each server has one core to itself, so its rate is its own
    speed per core. None on a single CPU."""
    cpus = client_and_server_cpus()
    if cpus is None:
        return None
    client, server = cpus
    targets = [start_service(1, name="carousel-one-core", key="service", label="banner-server", cpu=server)]
    try:
        targets.append(start_nginx(1, body, cpu=server))
        targets.append(start_reference(1, OUT / "banner.json", headers, cpu=server))
        # What the read loops buy a read, on one core (docs/ARCHITECTURE.md, "The fast paths").
        targets.append(start_service(1, name="carousel-one-core-plain", key="plain",
                                     label="banner-server, fast paths off", fastPaths=False, cpu=server))
        rates, cpu = get_rounds(targets, arguments, cpu=client, label="one core, ")
        commands = command_rounds([targets[0], targets[3]], arguments, cpu=client)
    finally:
        for target in targets:
            target.stop()
    return {"targets": [(target.name, target.label) for target in targets], "rates": rates, "cpu": cpu,
            "commands": commands, "client": client, "server": server}


def command_rounds(targets, arguments, cpu):
    """POST /banner/next on each target (SQLite, one thread on its own CPU) in turn,
    `arguments.rounds` times, the order rotating, after a second each to warm up: server CPU µs per
    command, by target name (docs/PERFORMANCE.md, "What a command costs"; the bar is 30 µs)."""
    script = ROOT / "bench" / "post.lua"
    for target in targets:
        wrk(target, "/banner/next", 1, arguments.connections, script=script, cpu=cpu)
    microseconds_used = {target.name: [] for target in targets}
    for round_number in range(arguments.rounds):
        order = targets[round_number % len(targets):] + targets[:round_number % len(targets)]
        for target in order:
            _, microseconds, _ = wrk(target, "/banner/next", arguments.seconds, arguments.connections,
                                     script=script, cpu=cpu)
            microseconds_used[target.name].append(microseconds)
    print("  one core, POST /banner/next (SQLite) µs CPU per command: " + ", ".join(
        f"{target.label} {statistics.median(microseconds_used[target.name]):.1f}" for target in targets), flush=True)
    return microseconds_used


def instructions_per_read(requests, headers):
    """User-space instructions per keep-alive GET /banner, counted by valgrind's callgrind (exact,
    unlike any timing) in the service and in the C reference, each with one thread: counted only
    while `requests` reads are sent one after another on one connection, after as many to warm up.
    The service answers them in a read loop, outside libmicrohttpd (docs/ARCHITECTURE.md)."""
    def count(name, command, port, path="/banner"):
        out = OUT / f"callgrind-{name}.out"
        out.unlink(missing_ok=True)
        process = subprocess.Popen(["valgrind", "--tool=callgrind", "--instr-atstart=no",
                                    f"--callgrind-out-file={out}"] + command,
                                   stdout=subprocess.DEVNULL, stderr=open(OUT / f"callgrind-{name}.log", "w"))
        try:
            wait_for_port(port, process, f"{name} under valgrind", seconds=60)
            with socket.create_connection(("127.0.0.1", port), timeout=30) as connection:
                read_banner(connection, requests, path)
                subprocess.run(["callgrind_control", "-i", "on", str(process.pid)], capture_output=True, check=True)
                read_banner(connection, requests, path)
                subprocess.run(["callgrind_control", "-i", "off", str(process.pid)], capture_output=True, check=True)
        finally:
            process.terminate()
            process.wait(timeout=60)
        listing = subprocess.run(["callgrind_annotate", str(out)],
                                 capture_output=True, text=True, check=True).stdout
        return int(re.search(r"([\d,]+) \S*\s*PROGRAM TOTALS", listing).group(1).replace(",", "")) / requests

    port = free_port()
    service = count("service", [str(SERVICE), "--config", str(banner_only_configuration(port)), "--store", "memory",
                                "--threads", "1"], port)
    # The same reads answered by libmicrohttpd: what the read loops buy (docs/ARCHITECTURE.md, "The
    # fast paths").
    port = free_port()
    fast_paths_off = count("service-fast-paths-off", [str(SERVICE), "--config", str(banner_only_configuration(port)),
                                                      "--store", "memory", "--threads", "1", "--fast-paths", "off"],
                           port)
    # The read of one audience of 64 (docs/AUDIENCES.md): what its query and its copies cost more.
    port = free_port()
    audience = count("audience", [str(SERVICE), "--config", str(banner_only_configuration(port, audience_banners(64))),
                                  "--store", "memory", "--threads", "1"], port, path="/banner?audience=a17")
    port = free_port()
    reference = count("reference", reference_command(port, 1, OUT / "banner.json", headers), port)
    return {"service": service, "fast_paths_off": fast_paths_off, "audience": audience, "reference": reference,
            "requests": requests}


def heap_blocks_per_read(requests, warm_up=20, path="/banner", banners=None):
    """Heap allocations per keep-alive GET `path` of a carousel of `banners` (the shipped ones by
    default), counted by valgrind's dhat: the difference between a run with `warm_up` +
    `requests` reads and one with `warm_up` (what the first reads make once — a worker thread's
    copies of the responses, docs/ARCHITECTURE.md — is not per read). Exact, unlike any timing."""
    totals = []
    for count in (warm_up, warm_up + requests):
        port = free_port()
        log = OUT / f"dhat-{count}.log"
        process = subprocess.Popen(["valgrind", "--tool=dhat", f"--dhat-out-file={OUT / 'dhat.out'}", str(SERVICE),
                                    "--config", str(banner_only_configuration(port, banners)),
                                    "--store", fresh_store("dhat"),
                                    "--threads", "1"],
                                   stdout=subprocess.DEVNULL, stderr=open(log, "w"))
        wait_for_port(port, process, "banner-server under valgrind", seconds=60)
        with socket.create_connection(("127.0.0.1", port), timeout=10) as connection:
            read_banner(connection, count, path)
        process.terminate()
        process.wait(timeout=60)
        totals.append(int(re.search(r"Total:\s+[\d,]+ bytes in ([\d,]+) blocks", log.read_text())
                          .group(1).replace(",", "")))
    return (totals[1] - totals[0]) / requests


def command_version(command, pattern=r"[\d]+\.[\d.]+"):
    try:
        result = subprocess.run(command, capture_output=True, text=True)
    except FileNotFoundError:
        return "not installed"
    match = re.search(pattern, result.stdout + result.stderr)
    return match.group(0) if match else "unknown"


def machine():
    model = "unknown"
    with open("/proc/cpuinfo") as cpuinfo:
        for line in cpuinfo:
            if line.startswith("model name"):
                model = line.split(":", 1)[1].strip()
                break
    return {
        "cores": os.cpu_count(),
        "cpu": model,
        "kernel": platform.release(),
        "swift": command_version(["swift", "--version"]),
        "nginx": command_version(["nginx", "-v"]),
        "libmicrohttpd": command_version(["pkg-config", "--modversion", "libmicrohttpd"]),
        "wrk": command_version(["wrk", "-v"]),
        "h2load": command_version(["h2load", "--version"]),
    }


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--rounds", type=int, default=5)
    parser.add_argument("--seconds", type=int, default=10, help="length of each wrk run")
    parser.add_argument("--connections", type=int, default=64, help="wrk connections")
    parser.add_argument("--threads", type=int, default=len(os.sched_getaffinity(0)),
                        help="threads of all three servers (nginx: worker processes); default: usable cores")
    parser.add_argument("--idle-connections", type=int, default=1000)
    parser.add_argument("--latency-clients", type=int, default=32)
    parser.add_argument("--latency-rate", type=int, default=500, help="requests per second per client")
    parser.add_argument("--subscribers", type=lambda text: [int(count) for count in text.split(",")],
                        default=[5000, 10000, 16000], help="event-stream subscriber counts in the fan-out, comma-separated")
    parser.add_argument("--changes", type=int, default=5, help="changes broadcast in the fan-out")
    parser.add_argument("--fanout-rounds", type=int, default=5, help="runs of each target at each fan-out count")
    parser.add_argument("--flip-pages", type=int, default=8, help="browser windows in the flip-spread measurement")
    parser.add_argument("--flips", type=int, default=100, help="flips timed in the flip-spread measurement")
    parser.add_argument("--flip-runs", type=int, default=3,
                        help="services (each with its own frame phase) the shipped page's flip spread is measured on")
    parser.add_argument("--advances", type=int, default=200, help="automatic advances timed")
    parser.add_argument("--boundaries", type=int, default=200, help="schedule boundaries timed")
    parser.add_argument("--reads-counted", type=int, default=2000, help="reads whose heap allocations are counted")
    parser.add_argument("--requests-counted", type=int, default=1000,
                        help="commands and receipts whose instructions are counted (bench/counted.py)")
    parser.add_argument("--advance-seconds", type=float, default=20.0,
                        help="window the instructions of automatic advances are counted in (bench/counted.py)")
    parser.add_argument("--admin-clients", type=int, default=4, help="clients adding banners at once")
    parser.add_argument("--admin-writes", type=int, default=100, help="banners each admin client adds")
    parser.add_argument("--propagation-commands", type=int, default=300,
                        help="commands timed from one replica to the subscribers of two others")
    parser.add_argument("--scheduled-changes", type=int, default=200,
                        help="scheduled changes timed at their instant")
    parser.add_argument("--webhook-events", type=int, default=200, help="webhook deliveries timed one by one")
    parser.add_argument("--webhook-drain", type=int, default=1000,
                        help="queued webhook deliveries drained after a restart")
    parser.add_argument("--scale-carousels", type=int, default=10_000,
                        help="carousels advancing every 5 s for CPU per advance and memory per carousel")
    parser.add_argument("--scale-audiences", type=lambda text: [int(count) for count in text.split("x")],
                        default=[1_000, 10], help="CAROUSELSxAUDIENCES: the same with audiences (docs/AUDIENCES.md)")
    parser.add_argument("--smoke", action="store_true", help="a quick run that checks the harness, not the speed")
    arguments = parser.parse_args()
    if arguments.smoke:
        arguments.rounds, arguments.seconds, arguments.idle_connections = 1, 1, 200
        arguments.latency_clients, arguments.latency_rate = 4, 100
        arguments.subscribers, arguments.changes, arguments.advances, arguments.boundaries = [200], 2, 20, 20
        arguments.fanout_rounds = 1
        arguments.reads_counted = 200
        arguments.requests_counted, arguments.advance_seconds = 20, 0.5
        arguments.admin_clients, arguments.admin_writes = 2, 10
        arguments.propagation_commands = 20
        arguments.scheduled_changes = 10
        arguments.webhook_events, arguments.webhook_drain = 10, 100
        arguments.scale_carousels, arguments.scale_audiences = 200, [50, 10]
        arguments.flip_pages, arguments.flips, arguments.flip_runs = 2, 10, 1
    results_file = OUT / "results-smoke.md" if arguments.smoke else ROOT / "bench" / "results.md"

    OUT.mkdir(parents=True, exist_ok=True)
    soft, hard = resource.getrlimit(resource.RLIMIT_NOFILE)
    resource.setrlimit(resource.RLIMIT_NOFILE, (hard, hard))  # 1,000 sockets here; the servers inherit it

    postgres = Postgres()
    replica_database = postgres.create_database()
    service = start_service(arguments.threads)
    replica = start_service(arguments.threads, name="carousel-pg", store=postgres.uri(replica_database),
                            key="postgres", label="banner-server, PostgreSQL")
    targets = [service, replica]
    # Not a comparison of bytes (its banners are other): the same reads with a schedule on each banner.
    scheduled = start_service(arguments.threads, name="scheduled", key="scheduled",
                              label="banner-server, 100 scheduled banners", banners=scheduled_banners(100))
    # The reads of one audience of 64 (docs/AUDIENCES.md): its own pre-built responses.
    audiences = start_service(arguments.threads, name="audiences", key="audiences",
                              label="banner-server, GET /banner?audience=a17 of 64", banners=audience_banners(64))
    audiences.read_path = "/banner?audience=a17"
    # The smoke proves the harness, not the numbers: the release binary stands in (CI's time).
    uncounted = start_service(arguments.threads, name="carousel-uncounted", key="uncounted",
                              label="banner-server, no request counting",
                              binary=SERVICE if arguments.smoke else UNCOUNTED)
    # libmicrohttpd alone (docs/ARCHITECTURE.md, "The fast paths"): what the acceptor and read loops buy.
    plain = start_service(arguments.threads, name="carousel-plain", key="plain",
                          label="banner-server, fast paths off", fastPaths=False)
    try:
        idle_rss = {service.name: rss_kib(service.pids), replica.name: rss_kib(replica.pids)}
        status, head, body = fetch(service.port)
        if status != 200:
            sys.exit(f"bench: GET /banner answered {status}")
        # The headers the application chose; the daemon adds Date, Content-Length, Connection itself.
        service_headers = [line for line in head.split("\r\n")[1:]
                           if line.split(":")[0].lower() not in ("date", "content-length", "connection")]
        (OUT / "banner.json").write_bytes(body)
        targets.append(start_nginx(arguments.threads, body))
        targets.append(start_reference(arguments.threads, OUT / "banner.json", service_headers))
        for target in targets[2:]:
            idle_rss[target.name] = rss_kib(target.pids)
        sizes = {}
        for target in targets + [uncounted, plain]:
            status, head, answer = fetch(target.port)
            if status != 200 or answer != body:
                sys.exit(f"bench: {target.label} does not serve the service's bytes (status {status})")
            sizes[target.name] = len(head) + 4 + len(answer)

        print(f"GET /banner ({len(body)}-byte body), wrk -t1 -c{arguments.connections} -d{arguments.seconds}s, "
              f"{arguments.rounds} rounds", flush=True)
        sizes[scheduled.name] = (lambda answer: len(answer[1]) + 4 + len(answer[2]))(fetch(scheduled.port))
        status, head, answer = fetch(audiences.port, audiences.read_path)
        if status != 200 or b'"audience-17"' not in answer:
            sys.exit(f"bench: GET {audiences.read_path} answered {status} without the audience's banner")
        sizes[audiences.name] = len(head) + 4 + len(answer)
        timed = targets + [scheduled, audiences, uncounted, plain]
        rates, cpu = get_rounds(timed, arguments)

        latency = {}
        for target in targets:
            latency[target.name] = latency_percentiles(
                target.url, arguments.latency_clients, arguments.latency_rate, arguments.seconds)
            print(f"  latency {target.label:18} p50 {latency[target.name]['p50']:.3f} ms, "
                  f"p99 {latency[target.name]['p99']:.3f} ms, p99.9 {latency[target.name]['p999']:.3f} ms", flush=True)

        loaded_rss = {target.name: rss_with_idle_connections(target, arguments.idle_connections) for target in targets}

        post = post_next(service, arguments.seconds, arguments.connections)
        print(f"  POST /banner/next (SQLite) {post['rate']:,.0f} req/s, {post['completed']:,} completed, "
              f"{post['applied']:,} applied", flush=True)
        admin = admin_writes(service, arguments.admin_clients, arguments.admin_writes)
        print(f"  admin writes (SQLite, synced) {admin['rate']:,.0f} req/s, p50 {admin['p50']:.2f} ms, "
              f"p99 {admin['p99']:.2f} ms", flush=True)
        audit = audit_cost(service, uncounted, arguments.admin_clients, arguments.admin_writes,
                           rounds=1 if arguments.smoke else 3)
        print(f"  admin writes with the audit log / without: {audit['ratio']:.2f} "
              f"({', '.join(f'{ratio:.2f}' for ratio in audit['ratios'])})", flush=True)
        admin["audit"] = audit
    finally:
        scheduled.stop()
        audiences.stop()
        uncounted.stop()
        plain.stop()
        for target in targets:
            if target is not replica:
                target.stop()

    one_core = one_core_each(arguments, body, service_headers)
    shared = replicated(arguments, postgres, replica, replica_database)
    postgres.stop()

    memory = start_service(arguments.threads, name="carousel-memory", store="memory")
    try:
        idle_rss["memory"] = rss_kib(memory.pids)
        post_memory = post_next(memory, arguments.seconds, arguments.connections)
        print(f"  POST /banner/next (memory) {post_memory['rate']:,.0f} req/s", flush=True)
    finally:
        memory.stop()

    def sse_reference():
        port = free_port()
        return Target("sse-reference", "C epoll reference", [str(SSE_REFERENCE), "--port", str(port)], port,
                      OUT / "sse-reference.log")

    fanned = fanout.fan_out(arguments.subscribers, arguments.changes, arguments.fanout_rounds,
                            lambda: start_service(arguments.threads, name="fanout", store="memory"),
                            sse_reference, FANOUT, rss_kib,
                            start_plain=lambda: start_service(arguments.threads, name="fanout-plain", key="plain",
                                                              label="banner-server, fast paths off", store="memory",
                                                              fastPaths=False))
    # One change reaching subscribers spread over 64 audiences (docs/AUDIENCES.md): 65 events encoded,
    # each sent to its own subscribers; beside the same subscribers all on the carousel's own state.
    spread = {}
    for audiences_count in (0, 64):
        target = start_service(arguments.threads, name="fanout-audiences", store="memory",
                               banners=audience_banners(64))
        try:
            spread[audiences_count] = fanout.measure(target, max(arguments.subscribers), arguments.changes, FANOUT,
                                                     rss_kib, audiences=audiences_count)
        finally:
            target.stop()
        print(f"  fan-out to {max(arguments.subscribers):,} over {audiences_count or 'no'} audiences: "
              f"p50 {spread[audiences_count]['p50_ms']:.1f} ms, p99 {spread[audiences_count]['p99_ms']:.1f} ms",
              flush=True)
    fanned_audiences = spread
    flipped = flips.flip_spread(
        lambda banners: start_service(arguments.threads, name="flips", store="memory", autoplay=True, interval=0.5,
                                      banners=banners),
        arguments.flip_pages, arguments.flips, arguments.flip_runs)
    allocations = heap_blocks_per_read(arguments.reads_counted)
    print(f"  heap allocations per GET /banner: {allocations:.3f}", flush=True)
    instructions = instructions_per_read(arguments.reads_counted, service_headers)
    print(f"  instructions per GET /banner: service {instructions['service']:,.0f} "
          f"(fast paths off {instructions['fast_paths_off']:,.0f}), "
          f"C reference {instructions['reference']:,.0f}, GET /banner?audience=a17 of 64 "
          f"{instructions['audience']:,.0f}", flush=True)
    instructions["costs"] = costs = counted.measure(arguments.requests_counted, arguments.advance_seconds,
                                                    smoke=arguments.smoke)
    print("  instructions per request: " + ", ".join(
        f"{key} {value:,.0f}" for key, value in costs.items() if key not in ("requests", "advances")), flush=True)
    timing = advance_timing(arguments.threads, arguments.advances, 0.1)
    print(f"  advance timing over {timing['advances']} advances: p50 {timing['p50']:.2f} ms, "
          f"p99 {timing['p99']:.2f} ms, max {timing['max']:.2f} ms, drift {timing['drift_ms']:.3f} ms", flush=True)

    boundary = boundary_timing(arguments.threads, arguments.boundaries)
    print(f"  boundary timing over {boundary['boundaries']} boundaries: p50 {boundary['p50']:.2f} ms, "
          f"p99 {boundary['p99']:.2f} ms, max {boundary['max']:.2f} ms, {boundary['early']} early", flush=True)

    changes = scheduled_change_timing(arguments.threads, arguments.scheduled_changes)
    print(f"  scheduled changes, lateness at T over {changes['changes']}: in effect p50 {changes['effect']['p50']:.2f} ms, "
          f"p99 {changes['effect']['p99']:.2f} ms; seen by a subscriber p50 {changes['seen']['p50']:.2f} ms, "
          f"p99 {changes['seen']['p99']:.2f} ms", flush=True)

    def webhook_service(name, store=None):
        return start_service(arguments.threads, name=name, store=store, webhookAllowPrivate=True)
    hooks = webhooks.summary(webhooks.latency(webhook_service, arguments.webhook_events))
    hooks["drain"] = webhooks.drain(webhook_service, OUT / "webhook-drain.db", arguments.webhook_drain)
    print(f"  webhook deliveries: latency p50 {hooks['p50']:.2f} ms, p99 {hooks['p99']:.2f} ms; "
          f"{arguments.webhook_drain} queued drained in {hooks['drain']:.2f} s after a restart", flush=True)

    scaled = [scale.measure(arguments.scale_carousels, seconds=2 if arguments.smoke else 10),
              scale.measure(arguments.scale_audiences[0], seconds=2 if arguments.smoke else 10,
                            audiences=arguments.scale_audiences[1])]
    for result in scaled:
        print(f"  {result['carousels']:,} carousels × {result['audiences']} audiences: "
              f"{result['cpu_us_per_advance']:.1f} µs of CPU per advance, {result['kib_per_carousel']:.1f} KiB per "
              f"carousel, {result['kib_per_state']:.1f} KiB per state", flush=True)

    report = render(arguments, machine(), targets + [scheduled, audiences, plain], rates, cpu, sizes, latency, idle_rss, loaded_rss,
                    post, len(body), fanned, timing, allocations, post_memory, admin, shared, boundary,
                    flipped, one_core, instructions, changes, hooks, scaled, fanned_audiences)
    results_file.write_text(report)
    print()
    print(report)
    print(f"written to {results_file.relative_to(ROOT)}")


def replicated(arguments, postgres, replica, database):
    """Replicas on PostgreSQL: POST /banner/next with one replica (`replica`, already running on
    `database`) and with three, each beside pgbench at the same concurrency (one commands
    connection per replica), then the propagation of a change between replicas."""
    def post_load(target, seconds, connections):
        return wrk(target, "/banner/next", seconds, connections, script=ROOT / "bench" / "post.lua")

    # pgbench gets a database of its own, seeded the same way, so that its NOTIFYs reach no replica.
    pgbench_database = postgres.create_database()
    seeder = start_service(arguments.threads, name="carousel-pgbench", store=postgres.uri(pgbench_database))
    seeder.stop()
    replicas = [replica]
    try:
        one = post_rates(replicas, arguments.seconds, arguments.connections, post_load)
        one["pgbench"] = pgbench_same_shape(postgres, pgbench_database, 1, arguments.seconds)
        print(f"  POST /banner/next (PostgreSQL, 1 replica) {one['rate']:,.0f} req/s; pgbench -c1 "
              f"{one['pgbench']:,.0f} tps", flush=True)
        for number in (2, 3):
            replicas.append(start_service(arguments.threads, name=f"carousel-pg-{number}",
                                          store=postgres.uri(database), key=f"postgres-{number}"))
        three = post_rates(replicas, arguments.seconds, arguments.connections, post_load)
        three["pgbench"] = pgbench_same_shape(postgres, pgbench_database, 3, arguments.seconds)
        print(f"  POST /banner/next (PostgreSQL, 3 replicas) {three['rate']:,.0f} req/s; pgbench -c3 "
              f"{three['pgbench']:,.0f} tps", flush=True)
        spread = propagation(replicas, arguments.propagation_commands)
        print(f"  propagation A → B and C over {spread['received']} commands: p50 {spread['p50']:.2f} ms, "
              f"p99 {spread['p99']:.2f} ms, max {spread['max']:.2f} ms", flush=True)
    finally:
        for target in replicas:
            target.stop()
    return {"one": one, "three": three, "propagation": spread, "version": postgres.version()}


def rounds_table(leading, last, number, rows):
    """Markdown rows: the leading columns, one column per round, and the median in bold."""
    rounds = len(rows[0][1])
    lines = ["| " + " | ".join(leading + [f"round {r + 1}" for r in range(rounds)] + [last]) + " |",
             "|---|" + "---:|" * (len(leading) - 1 + rounds + 1)]
    for cells, values in rows:
        median = number.format(statistics.median(values))
        lines.append("| " + " | ".join(cells + [number.format(v) for v in values] + [f"**{median}**"]) + " |")
    return lines


def ratios(rates, key, other):
    """Round by round, the rate of `key` over that of `other`."""
    return [s / o for s, o in zip(rates[key], rates[other])]


def one_core_section(arguments, one_core):
    """The report's lines for `one_core_each`."""
    if one_core is None:
        return ["One core each: not measured (a single usable CPU).", ""]
    rates, cpu = one_core["rates"], one_core["cpu"]

    def versus(key, other):
        return ratios(rates, key, other)
    return [
        "### One core each",
        "",
        f"The same reads with the load generator and the server apart: wrk on CPU {one_core['client']}, each "
        f"server with one thread (nginx: one worker process) on CPU {one_core['server']}, the order rotating "
        "every round. Above, wrk and the server's two threads share both cores and the scheduler's "
        "interleaving of three busy threads sways every figure; here a server's rate is its own speed on one "
        "core, as it is when its clients are elsewhere.",
        "",
        *rounds_table(["server"], "median req/s", "{:,.0f}",
                      [([label], rates[name]) for name, label in one_core["targets"]]),
        "",
        *rounds_table(["ratio"], "median", "{:.2f}", [
            (["banner-server / nginx"], versus("service", "nginx")),
            (["banner-server / C libmicrohttpd"], versus("service", "reference")),
            (["banner-server / banner-server, fast paths off (what they buy)"], versus("service", "plain"))]),
        "",
        *rounds_table(["server"], "median µs CPU/request", "{:.2f}",
                      [([label], cpu[name]) for name, label in one_core["targets"]]),
        "",
        *rounds_table(["ratio"], "median", "{:.2f}", [
            (["CPU per read: fast paths off / on (what they buy)"],
             [off / on for on, off in zip(cpu["service"], cpu["plain"])])]),
        "",
        f"`POST /banner/next` on SQLite, the same servers, wrk -c{arguments.connections} (the bar: 30 µs of CPU "
        "per command):",
        "",
        *rounds_table(["server"], "median µs CPU/command", "{:.2f}", [
            (["banner-server"], one_core["commands"]["service"]),
            (["banner-server, fast paths off"], one_core["commands"]["plain"]),
            (["ratio: off / on (what they buy)"],
             [off / on for on, off in zip(one_core["commands"]["service"], one_core["commands"]["plain"])])]),
        "",
    ]


def counted_costs(costs):
    """The paragraph of bench/counted.py's counts (the SQLite command's only in a full run)."""
    sqlite = (f", **{costs['command_sqlite']:,.0f}** on SQLite (its transaction, with the command's audit entry)"
              if "command_sqlite" in costs else "")
    receipt_off = (f" ({costs['receipt_fast_paths_off']:,.0f} with `--fast-paths off`: "
                   f"{costs['receipt_fast_paths_off'] / costs['receipt']:.2f}×, what the read loops buy a receipt)"
                   if "receipt_fast_paths_off" in costs else "")
    return [
        f"User-space instructions per request of the other kinds, counted the same way over {costs['requests']:,} "
        "requests on one connection after as many to warm up (`bench/counted.py`, docs/PERFORMANCE.md \"Costs "
        f"counted\"): `POST /banner/next` **{costs['command_memory']:,.0f}** on the memory store{sqlite}; a "
        f"screen's receipt (100 screens with their keys, each answered 204) **{costs['receipt']:,.0f}**{receipt_off}; an "
        f"automatic advance (every 50 ms, no client; {costs['advances']:,} of them, less the same window with "
        f"autoplay off, {costs['idle_per_second']:,.0f} a second) **{costs['advance']:,.0f}**"
        + (f"; a screen the fleet keeps, a second (1,000 screens heard once, the ticks that judge them, less a "
           f"service with none) **{costs['screen_second']:,.0f}**" if "screen_second" in costs else "")
        + (f"; the fleet's own per receipt, all in (1,000 streams on SQLite sending a receipt a flip, "
           f"{costs['fleet_receipts']:,} receipts, less the same traffic naming no screen: docs/PERFORMANCE.md, "
           f"\"The fleet's own cost\") **{costs['fleet_receipt']:,.0f}**" if "fleet_receipt" in costs else "") + ".",
        "",
    ]


def render(arguments, host, timed, rates, cpu, sizes, latency, idle_rss, loaded_rss, post, body_size, fanned,
           timing, allocations, post_memory, admin, shared, boundary, flipped, one_core, instructions, changes,
           hooks, scaled, fanned_audiences):
    def versus(key, other):
        return ratios(rates, key, other)
    targets = [target for target in timed if target.name not in ("scheduled", "audiences", "uncounted", "plain")]
    rounds = arguments.rounds
    lines = [
        "# Benchmark results",
        "",
        f"Measured {datetime.datetime.now(datetime.timezone.utc):%Y-%m-%d %H:%M} UTC by `make bench` "
        f"({'smoke run, numbers meaningless' if arguments.smoke else 'full run'}).",
        "",
        f"Machine: {host['cores']} cores, {host['cpu']}, Linux {host['kernel']}. "
        f"Swift {host['swift']}, libmicrohttpd {host['libmicrohttpd']}, nginx {host['nginx']}, "
        f"wrk {host['wrk']}, h2load {host['h2load']}. Load generator and servers share the machine.",
        "",
        f"## GET /banner throughput",
        "",
        f"wrk -t1 -c{arguments.connections} -d{arguments.seconds}s, keep-alive, {body_size}-byte JSON body; "
        f"every server with {arguments.threads} threads (nginx: worker processes); the order of the servers "
        f"rotates every round. banner-server runs on a fresh SQLite store, and again as a replica on PostgreSQL "
        f"(reads never touch the store: the figures should match). The C reference has the service's daemon settings (epoll thread pool, "
        "16 KiB per connection, no MHD_USE_TURBO) and sends the service's headers (ETag included).",
        "",
        *rounds_table(["server", "response bytes"], "median req/s", "{:,.0f}",
                      [([target.label, str(sizes[target.name])], rates[target.name]) for target in timed]),
        "",
        *rounds_table(["ratio"], "median", "{:.2f}", [
            (["banner-server / nginx"], versus("service", "nginx")),
            (["banner-server / C libmicrohttpd"], versus("service", "reference")),
            (["banner-server, PostgreSQL / nginx"], versus("postgres", "nginx")),
            (["banner-server, PostgreSQL / C libmicrohttpd"], versus("postgres", "reference")),
            (["banner-server, 100 scheduled banners / banner-server"], versus("scheduled", "service")),
            (["banner-server, 100 scheduled banners / nginx"], versus("scheduled", "nginx")),
            (["banner-server, one audience of 64 / banner-server (bar 0.95)"], versus("audiences", "service")),
            (["banner-server / the same build without request counting"], versus("service", "uncounted")),
            (["banner-server, fast paths off / C libmicrohttpd"], versus("plain", "reference")),
            (["banner-server / banner-server, fast paths off (what they buy)"], versus("service", "plain"))]),
        "",
        "Request counting (`GET /metrics`, docs/METRICS.md) is measured against the same release build with it "
        "compiled out (`make bench-uncounted`: `-DNO_REQUEST_METRICS`), in the same rounds; issue 15's bar is 0.95.",
        "",
        "The scheduled carousel has 100 banners, each with two weekly windows covering the whole day "
        "(docs/SCHEDULES.md): reads are answered from the same pre-encoded responses, so the schedule costs "
        "them nothing; its body is longer (its banners carry their windows), which nginx is not asked to serve.",
        "",
        "The audience carousel has the shipped banners for every audience and one banner for each of 64 "
        "audiences (docs/AUDIENCES.md); wrk reads `GET /banner?audience=a17`, that audience's own state, from "
        "its own pre-built responses: the query costs a scan of the target, no lookup of more than the name.",
        "",
        "Server CPU time (user + system, all threads and processes) per request in the same runs, a figure "
        "less swayed by what else the machine is doing than req/s:",
        "",
        *rounds_table(["server"], "median µs/request", "{:.2f}",
                      [([target.label], cpu[target.name]) for target in timed]),
        "",
        *one_core_section(arguments, one_core),
        f"Heap allocations per keep-alive `GET /banner` in the service, counted by valgrind's dhat over "
        f"{arguments.reads_counted:,} reads (the difference from a run with 20, which makes what the first "
        f"reads make once): **{allocations:.3f}**.",
        "",
        f"User-space instructions per keep-alive `GET /banner`, counted by valgrind's callgrind over "
        f"{instructions['requests']:,} reads on one connection, one thread each: banner-server "
        f"**{instructions['service']:,.0f}**, the C reference {instructions['reference']:,.0f} "
        f"({instructions['reference'] / instructions['service']:.1f}×). Most of the reference's is "
        "libmicrohttpd clearing the connection's 16 KiB memory pool between requests, which the service's "
        "read loops, answering keep-alive reads outside libmicrohttpd, do not need. "
        f"`GET /banner?audience=a17` of a carousel of 64 audiences: {instructions['audience']:,.0f} "
        f"({instructions['audience'] / instructions['service']:.2f}× the plain read's: its query read, its "
        "name checked, its copies found). With `--fast-paths off` (libmicrohttpd answers): "
        f"{instructions['fast_paths_off']:,.0f} "
        f"({instructions['fast_paths_off'] / instructions['service']:.1f}× the read loop's: what the fast path buys).",
        "",
        *counted_costs(instructions["costs"]),
        "## Latency at a fixed rate",
        "",
        f"h2load --h1 -c {arguments.latency_clients} --rps {arguments.latency_rate} (per client, so "
        f"{arguments.latency_clients * arguments.latency_rate:,} req/s in all) for {arguments.seconds} s after a 1 s "
        "warm-up; percentiles of the per-request times in h2load's --log-file (request sent to response "
        "received).",
        "",
        "| server | requests | p50 ms | p99 ms | p99.9 ms |",
        "|---|---:|---:|---:|---:|",
    ]
    for target in targets:
        figures = latency[target.name]
        lines.append(f"| {target.label} | {figures['count']:,} | {figures['p50']:.3f} | {figures['p99']:.3f} | "
                     f"{figures['p999']:.3f} |")
    lines += [
        "",
        "## Memory",
        "",
        f"Resident set size (VmRSS; nginx: master and workers), idle after start and with "
        f"{arguments.idle_connections:,} idle keep-alive connections that each made one request.",
        "",
        f"| server | idle | {arguments.idle_connections:,} idle connections |",
        "|---|---:|---:|",
    ]
    for target in targets:
        lines.append(f"| {target.label} | {idle_rss[target.name] / 1024:.1f} MiB | "
                     f"{loaded_rss[target.name] / 1024:.1f} MiB |")
    lines += [
        f"| banner-server, memory store | {idle_rss['memory'] / 1024:.1f} MiB | |",
        "",
        "banner-server runs on a fresh SQLite store (the embedded default) unless the row says memory.",
        "",
        "## POST /banner/next",
        "",
        f"wrk -t1 -c{arguments.connections} -d{arguments.seconds}s: a read loop reads each request and its connection "
        f"waits there while the command runs on the carousel's engine queue, which applies it, writes the new anchor "
        f"to the store (SQLite: one "
        f"transaction in WAL mode, not synced: it survives `kill -9`; the commands that arrived meanwhile are "
        f"written by the next transaction, together: group commit), publishes the new state (the reads' responses "
        f"are built by the next read), logs one line (to bench/out/carousel.log), and the loop writes the answer.",
        "",
        "| store | req/s | µs CPU per request | completed | version grew by |",
        "|---|---:|---:|---:|---:|",
        f"| SQLite | **{post['rate']:,.0f}** | {post['cpu']:.2f} | {post['completed']:,} | {post['applied']:,} |",
        f"| memory | {post_memory['rate']:,.0f} | {post_memory['cpu']:.2f} | {post_memory['completed']:,} | "
        f"{post_memory['applied']:,} |",
        "",
        "Nothing lost: the version grows by at least the number of requests completed (requests still in "
        "flight when wrk stops can make it grow by a few more).",
        "",
        "## Replicas on PostgreSQL",
        "",
        f"PostgreSQL {shared['version']} from Debian, on a Unix socket, durable as shipped (fsync and "
        "synchronous_commit on), on the same machine. `POST /banner/next` under wrk on every replica at once "
        f"({arguments.connections} connections shared out, {arguments.seconds} s), on the replica's commands "
        "connection: the commands waiting for a carousel are written together (group commit), as one "
        "compare-and-set statement with its NOTIFY, or, when another replica changed the row meanwhile, one "
        "transaction (lock the row, read it, update it, NOTIFY, commit); each command still gets its own "
        "state. Beside it, pgbench runs one such transaction per command on a copy of the row, at the same "
        "concurrency (one connection per replica), against the same server.",
        "",
        "| replicas | req/s | completed | version grew by | all agree after | pgbench tps | ratio |",
        "|---:|---:|---:|---:|---|---:|---:|",
        *[f"| {count} | **{figures['rate']:,.0f}** | {figures['completed']:,} | {figures['applied']:,} | "
          f"{'yes' if figures['agreed'] else 'NO'} | {figures['pgbench']:,.0f} | "
          f"**{figures['rate'] / figures['pgbench']:.2f}** |"
          for count, figures in ((1, shared["one"]), (3, shared["three"]))],
        "",
        f"**Propagation**: {shared['propagation']['commands']} times `POST /banner/next` on replica A, one after "
        "another, and the time from sending it until the event of its version has reached a subscriber of "
        f"replica B and one of replica C ({shared['propagation']['received']} of "
        f"{shared['propagation']['commands']} arrived): p50 **{shared['propagation']['p50']:.2f} ms**, p99 "
        f"**{shared['propagation']['p99']:.2f} ms**, max {shared['propagation']['max']:.2f} ms.",
        "",
        "## Admin writes",
        "",
        f"{admin['clients']} clients, each adding banners one after another to a carousel of its own "
        f"(`POST /carousels/NAME/banners`; each one in the SQLite store and synced to disk before its 201): "
        f"{admin['count']:,} writes, **{admin['rate']:,.0f} req/s**, p50 {admin['p50']:.2f} ms, "
        f"p99 {admin['p99']:.2f} ms.",
        "",
        f"**The audit log's cost** ([AUDIT.md](../docs/AUDIT.md)): the same writes ({admin['audit']['writes']:,} "
        f"a round, fresh carousels) on this build and on the bench build whose stores append no entry "
        f"(`-DNO_AUDIT_LOG`), alternating, {admin['audit']['rounds']} rounds: "
        f"{admin['audit']['audited']:,.0f} against {admin['audit']['unaudited']:,.0f} req/s (medians), ratio "
        f"**{admin['audit']['ratio']:.2f}** (rounds: {', '.join(f'{r:.2f}' for r in admin['audit']['ratios'])}); "
        "issue 30's bar is 0.9.",
        "",
        "## Server-Sent Events",
        "",
        *fanout.render(fanned, arguments.changes),
        "",
        *flips.render(flipped),
        "",
        f"**Timing**: interval 100 ms, every banner the same; one subscriber (bench/tools/sse_arrivals.c, "
        f"which notes each arrival as recv returns); for each of {timing['advances']} "
        "automatic advances, the event's arrival minus the `nextAdvanceAt` the previous event promised; drift: the "
        f"largest distance of any promised time from first + k × 100 ms over the {timing['span_s']:.1f} s run "
        "(times are sent with millisecond precision).",
        "",
        "| advances | p50 ms | p99 ms | max ms | drift ms |",
        "|---:|---:|---:|---:|---:|",
        f"| {timing['advances']} | {timing['p50']:.2f} | {timing['p99']:.2f} | {timing['max']:.2f} | "
        f"{timing['drift_ms']:.3f} |",
        "",
        f"**Schedule boundaries**: autoplay off; {arguments.boundaries} banners joining the rotation 100 ms apart "
        "(`startsAt`); one subscriber (sse_arrivals); for each boundary, the arrival of the event that reports it minus the "
        "boundary's instant (docs/SCHEDULES.md: the engine's one timer is armed for it, nothing polls).",
        "",
        "| boundaries | p50 ms | p99 ms | max ms | early |",
        "|---:|---:|---:|---:|---:|",
        f"| {boundary['boundaries']} | {boundary['p50']:.2f} | {boundary['p99']:.2f} | {boundary['max']:.2f} | "
        f"{boundary['early']} |",
        "",
        f"**Scheduled changes** (docs/SCHEDULED.md): {changes['changes']} PATCHes of the carousel's interval asked "
        "with `?at=` 100 ms apart, SQLite store; in effect: the audit entry's `at` (the engine's now as it made the "
        "change, millisecond precision) minus the change's time (bar: p99 ≤ 5 ms); seen: the arrival of the event "
        "that reports it at one subscriber minus the change's time (the synced write included).",
        "",
        "| lateness at T | p50 ms | p99 ms | max ms | early |",
        "|---|---:|---:|---:|---:|",
        *(f"| {name} | {changes[key]['p50']:.2f} | {changes[key]['p99']:.2f} | {changes[key]['max']:.2f} | "
          f"{changes[key]['early']} |" for key, name in (("effect", "in effect"), ("seen", "seen by a subscriber"))),
        "",
        f"**Webhook deliveries** (docs/WEBHOOKS.md): SQLite store, a receiver on 127.0.0.1 (Python's threaded HTTP "
        f"server, 204). Latency: {hooks['count']} PATCHes one after another, each delivery's arrival minus its event's "
        f"`at` (the write's time). Drain: {arguments.webhook_drain} deliveries (10 webhooks) queued while the receiver "
        "was down and each refused once, the service stopped; once all are due, receiver and service started: the "
        "service's start to the last arrival.",
        "",
        "| delivery latency p50 ms | p99 ms | max ms | drain of queued deliveries s | per second |",
        "|---:|---:|---:|---:|---:|",
        f"| {hooks['p50']:.2f} | {hooks['p99']:.2f} | {hooks['max']:.2f} | {hooks['drain']:.2f} | "
        f"{arguments.webhook_drain / hooks['drain']:.0f} |",
        "",
        f"**Fan-out over audiences** (docs/AUDIENCES.md): {max(arguments.subscribers):,} subscribers of one carousel "
        f"whose banners name 64 audiences, memory store, {arguments.changes} times `POST /banner/next`: every "
        "subscriber on the carousel's own state, then the same subscribers spread evenly over the 64 audiences "
        "(each change is then 65 events, each encoded once and sent to its own subscribers).",
        "",
        "| subscribers on | p50 ms | p99 ms | max ms | CPU µs per delivery | lost |",
        "|---|---:|---:|---:|---:|---:|",
        *(f"| {'64 audiences' if count else 'no audience'} | {row['p50_ms']:.1f} | {row['p99_ms']:.1f} | "
          f"{row['max_ms']:.1f} | {row['cpu_us_per_delivery']:.2f} | {row['lost']} |"
          for count, row in sorted(fanned_audiences.items())),
        "",
        "**Carousels at scale** (bench/scale.py): carousels of 3 banners, interval 5 s, playing, SQLite store, no "
        "client; with audiences (docs/AUDIENCES.md), one more banner per audience, so that each audience rotates 4 "
        "banners and every state (the carousel's own and each audience's) advances every 5 s. CPU: user + system "
        "time over the window divided by the advances due in it (bar ≤ 50 µs); memory: RSS minus that of the same "
        "service holding one carousel, per carousel and per state (bar ≤ 8 KiB per carousel, or per audience).",
        "",
        "| carousels | audiences each | advances/s | share of a core | CPU µs per advance | RSS MiB "
        "| KiB per carousel | KiB per state | start s | GET /carousels KB | ms |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|---:|",
        *(f"| {result['carousels']:,} | {result['audiences']} | {result['advances_per_s']:,.0f} | "
          f"{result['core_share'] * 100:.1f}% | {result['cpu_us_per_advance']:.1f} | {result['rss_mib']:.0f} | "
          f"{result['kib_per_carousel']:.1f} | {result['kib_per_state']:.1f} | {result['start_s']:.2f} | "
          f"{result['list_kb']:.0f} | {result['list_ms']:.0f} |" for result in scaled),
        "",
    ]
    return "\n".join(lines)


if __name__ == "__main__":
    main()
