"""Event-stream fan-out in `make bench` (docs/PERFORMANCE.md): the service beside the floor of the
job, a minimal single-threaded C epoll server (bench/reference/sse_reference.c), both measured by
the same client (bench/tools/sse_fanout.c) in the same run, at several subscriber counts.

For each count and each target: N subscribers connect and get their first event; the target's
memory with all of them idle, less its memory before they came, per subscriber; then `changes`
times `POST /banner/next` and the time from sending it until each subscriber has the new event,
and the target's CPU time over those changes per event delivered (steadier than the delays, which
depend on how the kernel places the client beside the server on the same two cores).
The service runs on the memory store here: what is measured is delivery (a command's SQLite
write is timed elsewhere)."""

import json
import subprocess


def measure(target, subscribers, changes, client, rss_kib, audiences=0):
    """One fan-out run against `target`, with its idle memory per subscriber; with `audiences`, the
    subscribers are spread over that many audiences (docs/AUDIENCES.md), `a0` to `a{audiences - 1}`."""
    before = rss_kib(target.pids)
    process = subprocess.Popen([str(client), "--port", str(target.port), "--subscribers", str(subscribers),
                                "--changes", str(changes), "--pause", "--audiences", str(audiences)],
                               stdin=subprocess.PIPE, stdout=subprocess.PIPE, stderr=subprocess.PIPE, text=True)
    ready = process.stderr.readline()  # "ready" once every subscriber has its first event
    idle = rss_kib(target.pids)
    cpu_before = target.cpu_seconds()
    try:
        process.stdin.write("\n")
        process.stdin.flush()
        output = process.stdout.readline()  # once every change has reached every subscriber
        cpu = target.cpu_seconds() - cpu_before
        _, errors = process.communicate("\n", timeout=600)  # then it closes the connections
    except subprocess.TimeoutExpired:
        process.kill()
        raise
    if not output.strip():
        raise RuntimeError(f"sse_fanout against {target.label} printed nothing ({ready.strip()} {errors.strip()})")
    figures = json.loads(output)
    figures["idle_kib_per_subscriber"] = (idle - before) / max(1, figures["connected"])
    figures["cpu_us_per_delivery"] = cpu * 1e6 / max(1, figures["deliveries"])
    return figures


def fan_out(counts, changes, rounds, start_service, start_reference, client, rss_kib, start_plain=None):
    """Rows of {subscribers, service, reference, ratios} for each subscriber count: `rounds` runs of
    each target, alternating and the order rotating (the one client shares the cores with them, so
    one run says little); `service` and `reference` are the run of the median ratio. With
    `start_plain` (the service with fast paths off), it runs in every round too: `plain` and
    `plain_ratios` say what libmicrohttpd alone does, and so what the fast paths buy."""
    rows = []
    for count in counts:
        runs = []
        for number in range(rounds):
            targets = [("service", start_service), ("reference", start_reference)]
            if start_plain:
                targets.append(("plain", start_plain))
            number %= len(targets)
            run = {}
            for key, start in targets[number:] + targets[:number]:
                target = start()
                try:
                    run[key] = measure(target, count, changes, client, rss_kib)
                finally:
                    target.stop()
                figures = run[key]
                if figures["deliveries"] != figures["expected"]:
                    print(f"bench: warning: {target.label} delivered {figures['deliveries']} of "
                          f"{figures['expected']} events ({figures['connected']} of {count} subscribers connected; "
                          "is the open-file limit too low?)", flush=True)
            run["ratio"] = run["service"]["p99_ms"] / run["reference"]["p99_ms"]
            if start_plain:
                run["plain_ratio"] = run["plain"]["p99_ms"] / run["reference"]["p99_ms"]
            runs.append(run)
        median = sorted(runs, key=lambda run: run["ratio"])[len(runs) // 2]
        row = {"subscribers": count, "service": median["service"], "reference": median["reference"],
               "ratios": [run["ratio"] for run in runs],
               "delivered": sum(run["service"]["deliveries"] for run in runs),
               "expected": sum(run["service"]["expected"] for run in runs)}
        if start_plain:
            plain = sorted(runs, key=lambda run: run["plain_ratio"])[len(runs) // 2]
            row.update(plain=plain["plain"], plain_ratios=[run["plain_ratio"] for run in runs],
                       plain_delivered=sum(run["plain"]["deliveries"] for run in runs))
            print(f"  fan-out to {count:,}, fast paths off: p50 {plain['plain']['p50_ms']:.1f} "
                  f"p99 {plain['plain']['p99_ms']:.1f} ms, {plain['plain']['idle_kib_per_subscriber']:.1f} "
                  f"KiB/subscriber, median ratio {plain['plain_ratio']:.2f}", flush=True)
        rows.append(row)
        service, reference = row["service"], row["reference"]
        print(f"  fan-out to {count:,}: service p50 {service['p50_ms']:.1f} p99 {service['p99_ms']:.1f} ms, "
              f"{service['cpu_us_per_delivery']:.1f} µs CPU per event, "
              f"{service['idle_kib_per_subscriber']:.1f} KiB/subscriber; C reference p50 {reference['p50_ms']:.1f} "
              f"p99 {reference['p99_ms']:.1f} ms, {reference['cpu_us_per_delivery']:.1f} µs CPU per event; "
              f"ratios {ratios_text(row)}, median {median['ratio']:.2f}", flush=True)
    return rows


def ratios_text(row):
    return " ".join(f"{ratio:.2f}" for ratio in row["ratios"])


def render(rows, changes):
    """The section of bench/results.md."""
    lines = [
        "**Fan-out** (bench/tools/sse_fanout.c, one epoll loop in C, measuring both): N subscribers of "
        f"`GET /banner/events`, then {changes} times `POST /banner/next` and the time from sending it until "
        "each subscriber has the event with the new id; beside the floor of the job, a single-threaded C epoll "
        "server writing the same event to every subscriber (bench/reference/sse_reference.c). Bars: p99 at "
        "10,000 ≤ 1.0× the reference; at most 8 KiB of service memory per idle subscriber (RSS with every "
        "subscriber connected, less RSS before). Each count is run several times, the service and the "
        "reference alternating (the one client shares the two cores with them): the row shows the run of the "
        "median ratio, the ratios of every run, and the service's deliveries over all of them. CPU per event: "
        "the server's CPU time over the changes (all its threads, user and kernel) per event delivered.",
        "",
        "| subscribers | service p50 ms | p99 ms | max ms | delivered | C reference p50 ms | p99 ms | max ms "
        "| p99 ratio (median) | ratios of the runs | CPU µs per event: service | reference "
        "| service KiB per idle subscriber | reference KiB |",
        "|---:|---:|---:|---:|---:|---:|---:|---:|---:|---|---:|---:|---:|---:|",
    ]
    for row in rows:
        service, reference = row["service"], row["reference"]
        lines.append(
            f"| {row['subscribers']:,} | {service['p50_ms']:.1f} | {service['p99_ms']:.1f} | {service['max_ms']:.1f} "
            f"| {row['delivered']:,}/{row['expected']:,} | {reference['p50_ms']:.1f} "
            f"| {reference['p99_ms']:.1f} | {reference['max_ms']:.1f} "
            f"| {service['p99_ms'] / reference['p99_ms']:.2f}× | {ratios_text(row)} "
            f"| {service['cpu_us_per_delivery']:.1f} | {reference['cpu_us_per_delivery']:.1f} "
            f"| {service['idle_kib_per_subscriber']:.1f} "
            f"| {reference['idle_kib_per_subscriber']:.1f} |")
    if rows and "plain" in rows[0]:
        lines += [
            "",
            "The same service with fast paths off (`--fast-paths off`: libmicrohttpd holds every stream), in "
            "the same rounds: what the acceptor's streams buy.",
            "",
            "| subscribers | p50 ms | p99 ms | max ms | delivered | p99 ratio to the C reference (median) "
            "| ratios of the runs | CPU µs per event | KiB per idle subscriber |",
            "|---:|---:|---:|---:|---:|---:|---|---:|---:|",
        ]
        for row in rows:
            plain = row["plain"]
            ratios = sorted(row["plain_ratios"])
            lines.append(
                f"| {row['subscribers']:,} | {plain['p50_ms']:.1f} | {plain['p99_ms']:.1f} | {plain['max_ms']:.1f} "
                f"| {row['plain_delivered']:,}/{row['expected']:,} | {ratios[len(ratios) // 2]:.2f}× "
                f"| {' '.join(f'{ratio:.2f}' for ratio in row['plain_ratios'])} "
                f"| {plain['cpu_us_per_delivery']:.1f} | {plain['idle_kib_per_subscriber']:.1f} |")
    return lines
