"""Carousels at scale (docs/PERFORMANCE.md, issue 31's bars), on the release build and a SQLite
store, with no client at all:

- `count` carousels of 3 banners, interval 5 s, playing (count / 5 automatic advances a second),
  imported with `banner-server import` (up to 1,000 a file) before the service starts;
- CPU per advance: the process's user + system time over `seconds` (after one whole interval
  has passed since the start), divided by the advances due in that time;
- memory per carousel: the process's RSS then, minus the RSS of the same service holding only
  the default carousel, divided by `count`;
- the start (to the port answering) and `GET /carousels` (size, time) at that count.

With `audiences` (docs/AUDIENCES.md), each carousel also has one banner for each of that many
audiences: every audience rotates 4 banners, and the carousel's own state (screens of no
audience) the 3; advances and memory are then also given per state (the carousel's and each
audience's).

Run alone: `python3 bench/scale.py [COUNT [AUDIENCES]]` after `make build`."""

import json
import os
import pathlib
import socket
import subprocess
import sys
import time
import urllib.request

ROOT = pathlib.Path(__file__).resolve().parent.parent
SERVICE = ROOT / ".build" / "release" / "banner-server"
OUT = ROOT / "bench" / "out" / "scale"
TICKS = os.sysconf("SC_CLK_TCK")


def definitions(first, count, audiences=0):
    return [{"name": f"store-{n:05d}", "interval": 5, "banners": [
        {"id": f"b{b}", "image": f"https://cdn.example.com/{n}/{b}.png", "caption": f"Store {n}, banner {b}"}
        for b in range(3)] + [
        {"id": f"a{a}", "image": f"https://cdn.example.com/{n}/a{a}.png", "caption": f"Store {n}, audience {a}",
         "audiences": [f"aud-{a}"]} for a in range(audiences)]} for n in range(first, first + count)]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def fresh_store(name):
    OUT.mkdir(parents=True, exist_ok=True)
    for suffix in ("", "-wal", "-shm", ".lock"):
        (OUT / f"{name}.db{suffix}").unlink(missing_ok=True)
    return f"sqlite:{OUT / f'{name}.db'}"


def start(store, name):
    """The service on `store`; returns the process, its port and the seconds until it answered."""
    port = free_port()
    config = OUT / f"{name}.json"
    config.write_text(json.dumps({"host": "127.0.0.1", "port": port}))
    log = open(OUT / f"{name}.log", "w")
    began = time.time()
    process = subprocess.Popen([str(SERVICE), "--config", str(config), "--store", store, "--log-level", "warning"],
                               stdout=log, stderr=subprocess.STDOUT)
    deadline = began + 120
    while time.time() < deadline:
        try:
            with urllib.request.urlopen(f"http://127.0.0.1:{port}/healthz", timeout=5):
                return process, port, time.time() - began
        except OSError:
            time.sleep(0.02)
    process.kill()
    raise SystemExit(f"bench: the service on {store} did not answer within 120 s (see {OUT / name}.log)")


def cpu_seconds(pid):
    fields = pathlib.Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return (int(fields[11]) + int(fields[12])) / TICKS


def rss_kib(pid):
    for line in pathlib.Path(f"/proc/{pid}/status").read_text().splitlines():
        if line.startswith("VmRSS:"):
            return int(line.split()[1])
    return 0


def stop(process):
    process.terminate()
    process.wait(timeout=30)


def measure(count=10_000, seconds=10.0, audiences=0):
    idle, _, _ = start(fresh_store("scale-idle"), "scale-idle")
    try:
        time.sleep(2)  # settled: the start's allocations done (a fixed pause is fine in a benchmark)
        idle_rss = rss_kib(idle.pid)
    finally:
        stop(idle)

    store = fresh_store("scale")
    per_file = 1000 // (1 + audiences // 2)  # a file to import is at most 1 MiB
    for first in range(0, count, per_file):
        path = OUT / f"scale-{first}.json"
        path.write_text(json.dumps({"carousels": definitions(first, min(per_file, count - first), audiences)}))
        subprocess.run([str(SERVICE), "import", str(path), "--store", store], check=True,
                       stdout=subprocess.DEVNULL, stderr=subprocess.DEVNULL)

    process, port, started = start(store, "scale")
    try:
        time.sleep(6)  # past the first interval: every carousel advances from here on
        cpu_before, wall_before = cpu_seconds(process.pid), time.time()
        time.sleep(seconds)
        cpu, wall = cpu_seconds(process.pid) - cpu_before, time.time() - wall_before
        rss = rss_kib(process.pid)
        began = time.time()
        with urllib.request.urlopen(f"http://127.0.0.1:{port}/carousels", timeout=60) as response:
            listed = response.read()
        list_ms = (time.time() - began) * 1000
    finally:
        stop(process)
    states = count * (audiences + 1)  # each carousel's own and each audience's: all advance every 5 s
    advances = states / 5 * wall
    return {"carousels": count, "audiences": audiences, "advances_per_s": states / 5, "core_share": cpu / wall,
            "cpu_us_per_advance": cpu / advances * 1e6, "rss_mib": rss / 1024, "idle_rss_mib": idle_rss / 1024,
            "kib_per_carousel": (rss - idle_rss) / count, "kib_per_state": (rss - idle_rss) / states,
            "start_s": started, "list_kb": len(listed) / 1000, "list_ms": list_ms}


if __name__ == "__main__":
    result = measure(int(sys.argv[1]) if len(sys.argv) > 1 else 10_000,
                     audiences=int(sys.argv[2]) if len(sys.argv) > 2 else 0)
    print(json.dumps(result, indent=2))
