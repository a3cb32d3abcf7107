#!/usr/bin/env python3
"""The fleet under load (docs/SCREENS.md, "The fleet"; docs/PERFORMANCE.md), for `make bench`.

A release banner-server on a fresh SQLite store, one carousel of the shipped banners flipping every
5 s. `bench/out/screens_load` holds N event streams named sim-00000… and, like the page, sends a
receipt for every flip each screen sees: N / 5 receipts a second. Measured:
- RSS per screen: the service with every stream open and heard, minus the service idle;
- service CPU per receipt: the service's CPU over a window with receipts, minus a window of the
  same streams without receipts (the streams' own events cost the same in both); and the same
  traffic naming no screen, a read instead of each receipt (`screens_load --anonymous`): what the
  streams and as many requests cost without the fleet;
- store: the screens' store operations a second (a write a tick; on PostgreSQL a read too), and
  their time;
- the receipts' lateness as the service judged them (banner_screen_lateness_seconds): here the
  instant a simulated screen read the event, so the stream's delivery under this load;
- GET /banner (wrk) beside the screens against the same wrk without them (bar >= 0.95), with the
  service on one CPU and wrk and the screens on the other: the service's CPU is the same in both
  runs, and what the fleet takes of it is what reads lose; a fresh service a round, warmed up,
  the run beside against the runs either side of it, median ratio. The same beside the anonymous
  traffic is the floor of this method: what reads lose to the streams and requests alone;
- PostgreSQL with 3 replicas, the screens shared out between them: the rows the database writes a
  second (pg_stat_database), and every replica listing every screen.
Prints a Markdown table; `--screens` and `--seconds` make it shorter.
"""
import argparse
import json
import os
import re
import subprocess
import sys
import time
import urllib.request

import run
from postgres import Postgres

LOAD = run.OUT / "screens_load"


def get(port, path):
    with urllib.request.urlopen(f"http://127.0.0.1:{port}{path}", timeout=30) as response:
        return response.read().decode()


def sample(text, name):
    found = re.search(r"^%s (\S+)$" % re.escape(name), text, re.M)
    return float(found.group(1)) if found else 0.0


class Load:
    """screens_load against one service: `screens` streams from number `first`, `senders`
    connections sending receipts (0: streams only), on CPU `cpu` when given; `anonymous`: the same
    traffic naming no screen, a read for each receipt (the fleet takes no part). Started paused:
    every stream is connected and has its first state when the constructor returns."""

    def __init__(self, port, screens, seconds, senders, first=0, cpu=None, anonymous=False):
        command = [str(LOAD), "--port", str(port), "--screens", str(screens), "--seconds", str(seconds),
                   "--senders", str(senders), "--first", str(first), "--pause"] + (["--anonymous"] if anonymous else [])
        self.process = subprocess.Popen(run.pinned(command, cpu), stdin=subprocess.PIPE, stdout=subprocess.PIPE,
                                        stderr=subprocess.PIPE, text=True)
        if self.process.stderr.readline().strip() != "ready":
            sys.exit(f"screens_load did not get every stream: {self.process.stderr.read()}")

    def go(self):
        self.process.stdin.write("go\n")
        self.process.stdin.flush()

    def result(self):
        """Waits for the run's seconds; its JSON. The streams stay open until `close`."""
        line = self.process.stdout.readline()
        if not line.endswith("\n"):
            sys.exit(f"screens_load stopped: {self.process.stderr.read()}")
        return json.loads(line)

    def close(self):
        self.process.stdin.write("done\n")
        self.process.stdin.flush()
        self.process.wait(timeout=60)


def window(service, screens, seconds, senders, anonymous=False):
    """One run of the screens: (its JSON, RSS with every screen connected and heard, the service's
    CPU seconds over the run)."""
    load = Load(service.port, screens, seconds, senders, anonymous=anonymous)
    # Every screen heard and written: the next ticks have them all.
    time.sleep(3)
    rss = run.rss_kib(service.pids)
    cpu_before = service.cpu_seconds()
    load.go()
    result = load.result()
    cpu = service.cpu_seconds() - cpu_before
    load.close()
    return result, rss, cpu


def reads_beside(screens, seconds, connections, rounds, anonymous=False):
    """GET /banner without the screens, beside them (streams and receipts), and without them
    again, on a fresh service each round, the service on one CPU and wrk and the screens on
    another: [(without, beside, without again) req/s] by round. A service's first seconds of
    reads run faster than the rest (by 8 % on this machine, screens or not): a warm-up of as long
    goes first, and each run beside the screens is set against the runs either side of it."""
    usable = sorted(os.sched_getaffinity(0))
    client, server = usable[0], usable[-1]
    results = []
    for _ in range(rounds):
        service = run.start_service(2, name="screens-reads", autoplay=True, interval=5.0, cpu=server)
        try:
            run.wrk(service, "/banner", seconds, connections, cpu=client)
            alone, _, _ = run.wrk(service, "/banner", seconds, connections, cpu=client)
            load = Load(service.port, screens, seconds + 10, 4, cpu=client, anonymous=anonymous)
            load.go()
            time.sleep(3)  # receipts flowing: a flip has come and gone
            beside, _, _ = run.wrk(service, "/banner", seconds, connections, cpu=client)
            load.result()
            load.close()
            time.sleep(3)  # the streams' ends heard and written
            again, _, _ = run.wrk(service, "/banner", seconds, connections, cpu=client)
        finally:
            service.stop()
        results.append((alone, beside, again))
    return results


def rows_written(postgres, database):
    """Rows inserted and updated in `database` so far (pg_stat_database)."""
    out = postgres.run("psql", "-h", postgres.folder, "-U", "banner", "-d", "postgres", "-At", "-c",
                       f"SELECT tup_inserted + tup_updated FROM pg_stat_database WHERE datname = '{database}'",
                       capture=True)
    return int(out.strip())


def replicas_on_postgres(screens, seconds):
    """The screens shared out between 3 replicas on one PostgreSQL database, each replica's screens
    streaming from it and sending receipts to it: the rows the database writes a second over
    `seconds`, each replica's store operations for screens, and how many screens each lists."""
    postgres = Postgres()
    services = []
    loads = []
    try:
        database = postgres.create_database()
        for number in range(3):
            services.append(run.start_service(2, name=f"screens-pg-{number}", store=postgres.uri(database),
                                              autoplay=True, interval=5.0))
        share = screens // 3
        for number, service in enumerate(services):
            loads.append(Load(service.port, share, seconds, 2, first=number * share))
        time.sleep(3)
        before = rows_written(postgres, database)
        metrics_before = [get(service.port, "/metrics") for service in services]
        for load in loads:
            load.go()
        results = [load.result() for load in loads]
        after = rows_written(postgres, database)
        metrics_after = [get(service.port, "/metrics") for service in services]
        listed = [len(json.loads(get(service.port, "/screens"))["screens"]) for service in services]
        for load in loads:
            load.close()
        loads = []
        operations = 'banner_store_operation_duration_seconds_%s{operation="screens"}'
        count = sum(sample(a, operations % "count") - sample(b, operations % "count")
                    for a, b in zip(metrics_after, metrics_before))
        spent = sum(sample(a, operations % "sum") - sample(b, operations % "sum")
                    for a, b in zip(metrics_after, metrics_before))
        return {"rows": (after - before) / seconds,
                "receipts": sum(result["answered"]["ok"] for result in results) / seconds,
                "other": sum(result["answered"]["other"] for result in results),
                "lost": sum(result["lost"] for result in results),
                "operations": count / seconds / 3, "operation_ms": spent * 1000 / max(count, 1),
                "listed": listed, "screens": share * 3, "version": postgres.version()}
    finally:
        for load in loads:
            load.process.kill()
        for service in services:
            service.stop()
        postgres.stop()


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--screens", type=int, default=10000)
    parser.add_argument("--seconds", type=int, default=30, help="each window with the screens")
    parser.add_argument("--wrk-seconds", type=int, default=10)
    parser.add_argument("--connections", type=int, default=64)
    parser.add_argument("--rounds", type=int, default=3, help="of GET /banner without and beside the screens")
    arguments = parser.parse_args()
    run.OUT.mkdir(parents=True, exist_ok=True)
    service = run.start_service(2, name="screens", autoplay=True, interval=5.0)
    try:
        time.sleep(1)
        idle = run.rss_kib(service.pids)
        _, rss, streams_cpu = window(service, arguments.screens, arguments.seconds, 0)
        before = get(service.port, "/metrics")
        with_receipts, _, receipts_cpu = window(service, arguments.screens, arguments.seconds, 4)
        after = get(service.port, "/metrics")
        anonymous, _, anonymous_cpu = window(service, arguments.screens, arguments.seconds, 4, anonymous=True)
    finally:
        service.stop()
    reads = reads_beside(arguments.screens, arguments.wrk_seconds, arguments.connections, arguments.rounds)
    floor = reads_beside(arguments.screens, arguments.wrk_seconds, arguments.connections, arguments.rounds,
                         anonymous=True)
    # The same with one screen: what the method itself reads when the fleet costs nothing.
    control = reads_beside(1, arguments.wrk_seconds, arguments.connections, arguments.rounds)
    shared = replicas_on_postgres(arguments.screens, arguments.seconds)

    receipts = with_receipts["answered"]["ok"]
    per_receipt_us = (receipts_cpu - streams_cpu) * 1e6 / max(receipts, 1)
    # Both windows' CPU by request: a 30 s window may hold five flips or six.
    fleet_us = (receipts_cpu / max(receipts, 1) - anonymous_cpu / max(anonymous["answered"]["ok"], 1)) * 1e6

    def delta(name):
        return sample(after, name) - sample(before, name)

    store_count = delta('banner_store_operation_duration_seconds_count{operation="screens"}')
    store_seconds = delta('banner_store_operation_duration_seconds_sum{operation="screens"}')
    late_count = delta("banner_screen_lateness_seconds_count")
    bounds = ("0.005", "0.01", "0.025", "0.05")
    within = {bound: delta('banner_screen_lateness_seconds_bucket{le="%s"}' % bound) / max(late_count, 1)
              for bound in bounds}
    def ratios(rounds):
        return sorted(beside * 2 / (alone + again) for alone, beside, again in rounds)

    def by_round(rounds):
        return "; ".join(f"{alone:,.0f} / {beside:,.0f} / {again:,.0f} ({beside * 2 / (alone + again):.2f}×)"
                         for alone, beside, again in rounds)
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
        f"| service CPU, the same traffic naming no screen (a read for each receipt: "
        f"{anonymous['answered']['ok']:,} answered) | {anonymous_cpu:.2f} s; the fleet's own "
        f"CPU, by request: {fleet_us:.1f} µs a receipt |",
        f"| store operations for screens | {store_count / arguments.seconds:.1f}/s, "
        f"{store_seconds * 1000 / max(store_count, 1):.2f} ms each |",
        "| receipts' lateness as judged, within 5 / 10 / 25 / 50 ms | "
        + " / ".join(f"{within[bound] * 100:.1f} %" for bound in bounds) + " |",
        f"| GET /banner, service on one CPU, without / beside / without the screens, by round | "
        f"{by_round(reads)} req/s; median **{ratios(reads)[len(reads) // 2]:.2f}×** |",
        f"| … the same beside that traffic naming no screen (its floor: no fleet) | {by_round(floor)} req/s; "
        f"median **{ratios(floor)[len(floor) // 2]:.2f}×** |",
        f"| … the same beside 1 screen (the method's noise) | {by_round(control)} req/s; median "
        f"{ratios(control)[len(control) // 2]:.2f}× |",
        f"| PostgreSQL {shared['version']}, 3 replicas, {shared['screens']:,} screens shared out: receipts | "
        f"{shared['receipts']:,.0f}/s answered 204 ({shared['other']} other), {shared['lost']} streams lost |",
        f"| … rows the database wrote | {shared['rows']:,.0f}/s |",
        f"| … each replica's store operations for screens | {shared['operations']:.1f}/s, "
        f"{shared['operation_ms']:.2f} ms each |",
        f"| … screens each replica lists | {', '.join(f'{count:,}' for count in shared['listed'])} |",
    ]
    print("\n".join(lines))


if __name__ == "__main__":
    main()
