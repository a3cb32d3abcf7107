#!/usr/bin/env python3
"""The media library (docs/MEDIA.md; docs/PERFORMANCE.md), for `make bench`.

A release banner-server on a fresh SQLite store, its images made by libvips' command-line tools
(photo-like: smoothed noise, so that they compress as photographs do, not as flat colour):
- upload: a 4000 × 3000 JPEG, POSTed until the 201 (decode, four WebP variants, the store's
  synced write): the median of ROUNDS different files (a file already stored would be answered
  at once). Bar: ≤ 1.5 s on 2 cores.
- serving: GET /media/ID/960.webp (keep-alive, wrk -t1 -c64) beside nginx serving the same bytes
  from a file (sendfile, open_file_cache), SERVING_ROUNDS rounds alternating (medians); then again with wrk on one CPU and
  each server (one thread, one worker) on another, so that wrk's own core does not bound both.
  Also wrk's own CPU per answer (what receiving one costs the client, which bounds the rate).
  Bar: ≥ 1.0×.
- memory: the service's RSS sampled every 20 ms while four ~10 MiB uploads run at once, against
  its RSS before.
- reads while uploading: GET /banner (wrk -c64) alone, while uploads follow one another without a
  pause, and beside a spinner at SCHED_IDLE on every core (the control: what any use of the cycles
  the reads leave costs them on this machine, with no work of the service's), SERVING_ROUNDS
  rounds rotating (medians). Bar: unchanged (≥ 0.95× alone).
Prints a Markdown table.
"""
import argparse
import json
import os
import resource
import statistics
import subprocess
import sys
import threading
import time
import urllib.request
from pathlib import Path

import run

OUT = run.OUT / "media"
# A process that only spins, scheduled only when a core would otherwise idle, as the decoders are.
SPINNER = "import os\nos.sched_setscheduler(0, os.SCHED_IDLE, os.sched_param(0))\nwhile True: pass"


def photo(path, width, height, seed, quality=90):
    """A photo-like JPEG of `seed`: two fields of noise blurred (detail and colour) as a camera's
    sensor and lens would leave them; a 4000 × 3000 one is about 4 MB, as a phone's."""
    work = path.parent
    for band, (offset, blur) in enumerate([(0, "1.5"), (1, "3")]):
        subprocess.run(["vips", "gaussnoise", work / f"noise{band}.v", str(width), str(height), "--sigma", "60",
                        "--mean", "128", "--seed", str(2 * seed + offset)], check=True)
        subprocess.run(["vips", "gaussblur", work / f"noise{band}.v", work / f"blur{band}.v", blur], check=True)
    subprocess.run(["vips", "bandjoin", f"{work / 'blur0.v'} {work / 'blur1.v'} {work / 'blur0.v'}",
                    work / "colour.v"], check=True)
    subprocess.run(["vips", "cast", work / "colour.v", work / "photo.v", "uchar"], check=True)
    subprocess.run(["vips", "jpegsave", work / "photo.v", path, "--Q", str(quality)], check=True)
    return path


def unique(jpeg, number):
    """The JPEG `jpeg` with a comment segment saying `number` after its start: other bytes, so
    another image to the library (which answers bytes it has at once), the same pixels to decode."""
    comment = f"upload {number}".encode()
    return jpeg[:2] + b"\xff\xfe" + (len(comment) + 2).to_bytes(2, "big") + comment + jpeg[2:]


def upload(port, path, timeout=120, data=None):
    """POST /media of the file at `path` (or of `data`); (status, answer, seconds until the answer)."""
    data = data if data is not None else Path(path).read_bytes()
    request = urllib.request.Request(f"http://127.0.0.1:{port}/media", method="POST", data=data)
    request.add_header("Content-Type", "image/jpeg")
    started = time.monotonic()
    with urllib.request.urlopen(request, timeout=timeout) as response:
        answer = json.loads(response.read())
        return response.status, answer, time.monotonic() - started


def serving_rows(service, url, body, arguments, threads, cpu=None, client=None, label=""):
    """GET `url` of `service` and the same bytes from nginx (sendfile, open_file_cache; `threads`
    workers, on `cpu` when given), rounds alternating, wrk on `client`: the table's row."""
    nginx = run.start_nginx(threads, body, cpu=cpu, out=OUT, path="/file.webp", content_type="image/webp",
                            cache_control="public, max-age=31536000, immutable")
    try:
        for target, path in [(service, url), (nginx, "/file.webp")]:
            run.wrk(target, path, 1, 64, cpu=client)
        rates = {"service": [], "nginx": []}
        used = {"service": [], "nginx": []}
        received = {"service": [], "nginx": []}
        for round_number in range(arguments.serving_rounds):
            order = [(service, url), (nginx, "/file.webp")]
            for target, path in order if round_number % 2 == 0 else reversed(order):
                before = resource.getrusage(resource.RUSAGE_CHILDREN)
                rate, microseconds, completed = run.wrk(target, path, arguments.seconds, 64, cpu=client)
                after = resource.getrusage(resource.RUSAGE_CHILDREN)
                # wrk's own CPU per answer: what receiving one costs the client, which bounds the rate.
                client_seconds = after.ru_utime + after.ru_stime - before.ru_utime - before.ru_stime
                rates[target.name].append(rate)
                used[target.name].append(microseconds)
                received[target.name].append(client_seconds * 1e6 / max(completed, 1))
                print(f"  {label}round {round_number + 1} {target.label:18} {rate:>10,.0f} req/s "
                      f"{microseconds:6.1f} µs CPU/request, wrk {received[target.name][-1]:5.1f} µs/answer",
                      flush=True)
    finally:
        nginx.stop()
    service_rate, nginx_rate = statistics.median(rates["service"]), statistics.median(rates["nginx"])
    service_cpu, nginx_cpu = statistics.median(used["service"]), statistics.median(used["nginx"])
    service_client, nginx_client = statistics.median(received["service"]), statistics.median(received["nginx"])
    return (f"GET /media/ID/960.webp ({len(body) / 1000:.0f} KB), keep-alive, req/s{label and ', ' + label.strip(', ')}",
            f"{service_rate:,.0f} vs nginx {nginx_rate:,.0f}: {service_rate / nginx_rate:.2f}× "
            f"(server CPU {service_cpu:.1f} vs {nginx_cpu:.1f} µs/request; wrk's {service_client:.1f} vs "
            f"{nginx_client:.1f} µs/answer)", "≥ 1.0×")


def one_core_each(body, photo_path, arguments):
    """The serving rounds with wrk on the first usable CPU and each server, one thread (nginx: one
    worker), on the last (as bench/run.py's one_core_each): on two cores wrk otherwise takes one
    core's worth from both servers and bounds both rates. A service of its own, the same photo
    uploaded to it. None on a single CPU."""
    cpus = run.client_and_server_cpus()
    if cpus is None:
        return None
    client, server = cpus
    service = run.start_service(1, name="media-one-core", cpu=server)
    try:
        status, answer, _ = upload(service.port, photo_path)
        assert status == 201, answer
        variant = next(variant for variant in answer["variants"] if variant["width"] == 960)
        with urllib.request.urlopen(f"http://127.0.0.1:{service.port}{variant['url']}") as response:
            assert response.read() == body, "the same photo made another 960.webp"
        return serving_rows(service, variant["url"], body, arguments, threads=1, cpu=server, client=client,
                            label=f"one core each (wrk on CPU {client}, servers on CPU {server}), ")
    finally:
        service.stop()


def main():
    parser = argparse.ArgumentParser()
    parser.add_argument("--rounds", type=int, default=3, help="uploads timed")
    parser.add_argument("--serving-rounds", type=int, default=7,
                        help="rounds of each rate compared (their medians: one round's noise is ±5 %%)")
    parser.add_argument("--seconds", type=int, default=10)
    parser.add_argument("--threads", type=int, default=2)
    arguments = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    service = run.start_service(arguments.threads, name="media")
    rows = []
    try:
        # Upload time of a 4000 × 3000 photo.
        seconds = []
        for round_number in range(arguments.rounds):
            path = photo(OUT / f"photo-{round_number}.jpg", 4000, 3000, seed=round_number + 1)
            status, answer, took = upload(service.port, path)
            assert status == 201, answer
            seconds.append(took)
            print(f"  upload {round_number + 1}: {path.stat().st_size / 1e6:.1f} MB → "
                  f"{[variant['width'] for variant in answer['variants']]} in {took:.2f} s", flush=True)
        rows.append(("upload of a 4000 × 3000 JPEG with 4 WebP variants (median)", f"{statistics.median(seconds):.2f} s",
                     "≤ 1.5 s"))
        variant = next(variant for variant in answer["variants"] if variant["width"] == 960)
        with urllib.request.urlopen(f"http://127.0.0.1:{service.port}{variant['url']}") as response:
            body = response.read()
        print(f"  960.webp: {len(body) / 1000:.0f} KB", flush=True)

        # Serving beside nginx: both sharing the two cores with wrk, then each apart from it.
        rows.append(serving_rows(service, variant["url"], body, arguments, threads=arguments.threads))
        apart = one_core_each(body, path, arguments)
        if apart:
            rows.append(apart)

        # RSS during four ~10 MiB uploads at once.
        big = [photo(OUT / f"big-{n}.jpg", 6000, 4500, seed=100 + n) for n in range(4)]
        sizes = [path.stat().st_size for path in big]
        before = run.rss_kib(service.pids)
        peak = [before]
        done = threading.Event()

        def sample():
            while not done.is_set():
                peak[0] = max(peak[0], run.rss_kib(service.pids))
                time.sleep(0.02)

        sampler = threading.Thread(target=sample)
        sampler.start()
        results = []
        uploads = [threading.Thread(target=lambda path=path: results.append(upload(service.port, path, 300)))
                   for path in big]
        for thread in uploads:
            thread.start()
        for thread in uploads:
            thread.join()
        done.set()
        sampler.join()
        statuses = sorted(status for status, _, _ in results)
        rows.append((f"RSS during 4 uploads at once ({min(sizes) / 2**20:.1f}–{max(sizes) / 2**20:.1f} MiB each, "
                     f"answers {statuses})", f"{before / 1024:.0f} → peak {peak[0] / 1024:.0f} MiB "
                     f"(+{(peak[0] - before) / 1024:.0f} MiB)", "bounded"))

        # GET /banner alone, while uploads follow one another, and beside spinners at SCHED_IDLE
        # that take every cycle the reads leave (the control: what using idle cores at all costs
        # reads on this machine, with no work of the service's), the order rotating each round.
        # Each upload is other bytes of a photo made before (libvips' tools would take the cores
        # the reads are measured on): a whole decode each time.
        run.wrk(service, "/banner", 1, 64)
        base = photo(OUT / "busy.jpg", 4000, 3000, seed=1000).read_bytes()
        uploaded = [0]

        def reads():
            return run.wrk(service, "/banner", arguments.seconds, 64)[0]

        def during_uploads():
            stop = threading.Event()

            def keep_uploading():
                while not stop.is_set():
                    upload(service.port, None, data=unique(base, uploaded[0]))
                    uploaded[0] += 1

            uploader = threading.Thread(target=keep_uploading)
            uploader.start()
            time.sleep(1)  # the first upload under way: a precondition, not a measurement
            try:
                return reads()
            finally:
                stop.set()
                uploader.join()

        def beside_spinners():
            spinners = [subprocess.Popen([sys.executable, "-c", SPINNER]) for _ in range(os.cpu_count() or 1)]
            try:
                return reads()
            finally:
                for spinner in spinners:
                    spinner.kill()
                    spinner.wait()

        conditions = {"alone": reads, "during uploads": during_uploads, "beside idle spinners": beside_spinners}
        rates = {name: [] for name in conditions}
        for round_number in range(arguments.serving_rounds):
            names = list(conditions)
            for name in names[round_number % len(names):] + names[:round_number % len(names)]:
                rates[name].append(conditions[name]())
            print(f"  round {round_number + 1} GET /banner " + ", ".join(
                f"{name} {rates[name][-1]:,.0f}" for name in conditions) + " req/s", flush=True)
        alone_rate, busy_rate, spun_rate = (statistics.median(rates[name]) for name in conditions)
        rows.append((f"GET /banner req/s alone vs during uploads (median of {arguments.serving_rounds} rounds; "
                     f"{uploaded[0]} uploads)", f"{alone_rate:,.0f} vs {busy_rate:,.0f}: {busy_rate / alone_rate:.2f}×",
                     "≥ 0.95×"))
        rows.append(("GET /banner req/s during uploads vs beside a spinner at SCHED_IDLE on every core (what "
                     "using the cycles reads leave costs them on this machine)",
                     f"{busy_rate:,.0f} vs {spun_rate:,.0f}: {busy_rate / spun_rate:.2f}× "
                     f"(beside spinners vs alone: {spun_rate / alone_rate:.2f}×)", "—"))
    finally:
        service.stop()
        for scratch in OUT.glob("*.v"):  # libvips' raw images: hundreds of MB
            scratch.unlink()
    print("\n| measurement | result | bar |\n|---|---|---|")
    for row in rows:
        print(f"| {row[0]} | {row[1]} | {row[2]} |")


if __name__ == "__main__":
    main()
