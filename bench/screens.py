#!/usr/bin/env python3
"""The fleet under load (docs/SCREENS.md, "The fleet"; docs/PERFORMANCE.md), for `make bench`.

A release banner-server on a fresh SQLite store, one carousel of the shipped banners flipping every
5 s. `bench/out/screens_load` holds N event streams named sim-00000… and, like the page, sends a
receipt for every flip each screen sees: N / 5 receipts a second. Measured:
- RSS per screen: the service with every stream open and heard, minus the service idle;
- service CPU per receipt: the service's CPU over a window with receipts, minus a window of the
  same streams without receipts (the streams' own events cost the same in both);
- store: write-and-read transactions a second, and their time;
- GET /banner (wrk) with the screens' load beside the same without it (bar >= 0.95);
- lateness as the receipts report it (banner_screen_lateness_seconds), beside bench/flips.py's.
Prints a Markdown table; `--screens` and `--seconds` make it shorter.
"""
import argparse
import json
import re
import subprocess
import sys
import time
import urllib.request

import run

LOAD = run.OUT / "screens_load"


def metrics(port):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        return response.read().decode()


def sample(text, name):
    found = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(found.group(1)) if found else 0.0


def load(service, screens, seconds, senders):
    """Runs screens_load; returns (its JSON, RSS with every screen connected, service CPU seconds
    over its window, the window's wrk result or None)."""
    process = subprocess.Popen([str(LOAD), "--port", str(service.port), "--screens", str(screens), "--seconds",
                                str(seconds), "--senders", str(senders), "--pause"],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    if process.stderr.readline().strip() != "ready":
        sys.exit(f"screens_load did not get every stream: {process.stderr.read()}")
    # Every screen heard and written: the next ticks have them all.
    time.sleep(3)
    rss = run.rss_kib(service.pids)
    cpu_before = service.cpu_seconds()
    process.stdin.write("go\n")
    process.stdin.flush()
    line = process.stdout.readline()
    cpu = service.cpu_seconds() - cpu_before
    process.stdin.write("done\n")
    process.stdin.flush()
    process.wait(timeout=60)
    return json.loads(line), rss, cpu


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--screens", type=int, default=10000)
    parser.add_argument("--seconds", type=int, default=30, help="each window with the screens")
    parser.add_argument("--wrk-seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    arguments = parser.parse_args()
    run.OUT.mkdir(parents=True, exist_ok=True)
    service = run.start_service(2, name="screens", autoplay=True, interval=5.0)
    try:
        time.sleep(1)
        idle = run.rss_kib(service.pids)
        streams_only, rss, streams_cpu = load(service, arguments.screens, arguments.seconds, 0)
        before = metrics(service.port)
        with_receipts, _, receipts_cpu = load(service, arguments.screens, arguments.seconds, 4)
        after = metrics(service.port)
        # GET /banner alone, then beside the screens (streams and receipts), the same wrk.
        alone, _, _ = run.wrk(service, "/banner", arguments.wrk_seconds, arguments.connections)
        process = subprocess.Popen([str(LOAD), "--port", str(service.port), "--screens", str(arguments.screens),
                                    "--seconds", str(arguments.wrk_seconds + 10), "--pause"],
                                   stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
        process.stderr.readline()
        process.stdin.write("go\n")
        process.stdin.flush()
        time.sleep(2)
        beside, _, _ = run.wrk(service, "/banner", arguments.wrk_seconds, arguments.connections)
        process.stdout.readline()
        process.stdin.write("done\n")
        process.stdin.flush()
        process.wait(timeout=60)
    finally:
        service.stop()

    receipts = with_receipts["answered"]["204"]
    per_receipt_us = (receipts_cpu - streams_cpu) * 1e6 / max(receipts, 1)
    store_count = sample(after, 'banner_store_operation_duration_seconds_count{operation="screens"}') - sample(
        before, 'banner_store_operation_duration_seconds_count{operation="screens"}')
    store_seconds = sample(after, 'banner_store_operation_duration_seconds_sum{operation="screens"}') - sample(
        before, 'banner_store_operation_duration_seconds_sum{operation="screens"}')
    late_count = sample(after, "banner_screen_lateness_seconds_count") - sample(
        before, "banner_screen_lateness_seconds_count")
    within = {}
    for bound in ("0.005", "0.01", "0.025", "0.05"):
        name = 'banner_screen_lateness_seconds_bucket{le="%s"}' % bound
        within[bound] = (sample(after, name) - sample(before, name)) / max(late_count, 1)
    lines = [
        f"Screens: {arguments.screens:,} streams, a receipt per flip of a 5 s carousel, "
        f"{arguments.seconds} s windows (SQLite store, release build).",
        "",
        "| measure | value |",
        "|---|---|",
        f"| streams connected, lost | {with_receipts['connected']:,}, {with_receipts['lost']} |",
        f"| receipts answered 204 (other) | {receipts:,} ({with_receipts['answered']['other']}), "
        f"{receipts / arguments.seconds:,.0f}/s |",
        f"| RSS per screen (streams open and heard) | {(rss - idle) / arguments.screens:.2f} KiB |",
        f"| service CPU, streams only / with receipts | {streams_cpu:.2f} s / {receipts_cpu:.2f} s |",
        f"| service CPU per receipt | {per_receipt_us:.1f} µs |",
        f"| store operations for screens | {store_count / arguments.seconds:.1f}/s, "
        f"{store_seconds * 1000 / max(store_count, 1):.2f} ms each |",
        f"| receipts' lateness within 5 / 10 / 25 / 50 ms | "
        + " / ".join(f"{within[bound] * 100:.1f} %" for bound in ("0.005", "0.01", "0.025", "0.05")) + " |",
        f"| GET /banner alone / beside the screens | {alone:,.0f} / {beside:,.0f} req/s "
        f"({beside / alone:.2f}×) |",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
