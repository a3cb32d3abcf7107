"""Webhook deliveries in `make bench` (docs/WEBHOOKS.md, docs/PERFORMANCE.md), on the release build
and a SQLite store, with a receiver on 127.0.0.1 (Python's threaded HTTP server, answering 204).

- Latency: `events` PATCHes of the default carousel, one after another; for each, the arrival of
  its delivery at the receiver minus the event's `at` (the write's time, as the service stamps
  it; the same machine's clock).
- Drain: `deliveries` deliveries queued (10 webhooks, a tenth as many PATCHes) while the receiver
  is down, each tried once and refused; the service stopped; once every one is due again, the
  receiver and the service started: the time from the service's start to the last arrival.

Run alone: `python3 bench/webhooks.py` after `make build`."""

import datetime
import http.server
import json
import socket
import threading
import time
import urllib.request


class Receiver:
    """Takes every POST (204) and keeps when each arrived and its body."""

    def __init__(self, port=0):
        arrivals = self.arrivals = []

        class Handler(http.server.BaseHTTPRequestHandler):
            protocol_version = "HTTP/1.1"

            def do_POST(self):
                body = self.rfile.read(int(self.headers["Content-Length"]))
                arrivals.append((time.time(), json.loads(body), self.path))
                self.send_response(204)
                self.send_header("Content-Length", "0")
                self.end_headers()

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", port), Handler)
        self.server.daemon_threads = True
        self.port = self.server.server_address[1]
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def stop(self):
        self.server.shutdown()
        self.server.server_close()


def call(port, method, path, body=None, content_type="application/json"):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method,
                                     data=None if body is None else json.dumps(body).encode(),
                                     headers={"Content-Type": content_type})
    with urllib.request.urlopen(request, timeout=30) as response:
        answer = response.read()
        return json.loads(answer) if answer else None


def hook(port, receiver_port, path="/hooks"):
    created = call(port, "POST", "/webhooks", {"url": f"http://127.0.0.1:{receiver_port}{path}",
                                               "events": ["carousel.changed"], "secret": "0123456789abcdef-bench"})
    return created["id"]


def patch(port, interval):
    call(port, "PATCH", "/carousels/default", {"interval": interval}, "application/merge-patch+json")


def wait_until(condition, seconds, what):
    deadline = time.time() + seconds
    while time.time() < deadline:
        if condition():
            return
        time.sleep(0.01)
    raise SystemExit(f"bench: {what} within {seconds} s")


def seconds_of(rfc3339):
    return datetime.datetime.fromisoformat(rfc3339.replace("Z", "+00:00")).timestamp()


def latency(start_service, events):
    """Each delivery's arrival minus its event's time, in ms, sorted."""
    receiver = Receiver()
    service = start_service(name="webhooks")
    try:
        hook(service.port, receiver.port)
        for n in range(events):
            patch(service.port, 10 + n)
        wait_until(lambda: len(receiver.arrivals) >= events, 60, f"{events} deliveries arrived")
    finally:
        service.stop()
        receiver.stop()
    return sorted((arrival - seconds_of(body["at"])) * 1000 for arrival, body, _ in receiver.arrivals)


def drain(start_service, store_path, deliveries):
    """Seconds from the service's start to the last of `deliveries` queued ones arriving."""
    with socket.socket() as probe:  # a port nothing listens on until the receiver starts
        probe.bind(("127.0.0.1", 0))
        receiver_port = probe.getsockname()[1]
    for suffix in ("", "-wal", "-shm", ".lock"):
        store_path.with_name(store_path.name + suffix).unlink(missing_ok=True)
    store = f"sqlite:{store_path}"
    service = start_service(name="webhook-drain", store=store)
    try:
        webhooks = [hook(service.port, receiver_port, f"/hooks/{n}") for n in range(10)]
        for n in range(deliveries // 10):
            patch(service.port, 10 + n)

        def listed():
            return [delivery for webhook in webhooks
                    for delivery in call(service.port, "GET", f"/webhooks/{webhook}/deliveries?limit=1000")["deliveries"]]
        wait_until(lambda: all(delivery["attempts"] >= 1 for delivery in listed()), 120,
                   f"{deliveries} deliveries tried once")
        due = max(seconds_of(delivery["nextAttemptAt"]) for delivery in listed())
    finally:
        service.stop()
    time.sleep(max(0.0, due - time.time()) + 0.1)  # every one due again: the drain is the service's own pace
    receiver = Receiver(receiver_port)
    started = time.time()
    service = start_service(name="webhook-drain", store=store)
    try:
        # An event goes to each of the 10 webhooks with one id: a delivery is its id and its path.
        wait_until(lambda: len({(body["id"], path) for _, body, path in receiver.arrivals}) >= deliveries, 120,
                   f"{deliveries} queued deliveries drained")
        last = max(arrival for arrival, _, _ in receiver.arrivals)
    finally:
        service.stop()
        receiver.stop()
    return last - started


def summary(latencies):
    return {"p50": latencies[len(latencies) // 2], "p99": latencies[int(len(latencies) * 0.99)],
            "max": latencies[-1], "count": len(latencies)}


if __name__ == "__main__":
    import importlib.util
    from pathlib import Path

    spec = importlib.util.spec_from_file_location("run", Path(__file__).with_name("run.py"))
    run = importlib.util.module_from_spec(spec)
    spec.loader.exec_module(run)
    run.OUT.mkdir(parents=True, exist_ok=True)

    def start(name, store=None):
        return run.start_service(2, name=name, store=store, webhookAllowPrivate=True)
    figures = summary(latency(start, 200))
    print(f"delivery latency over {figures['count']}: p50 {figures['p50']:.2f} ms, p99 {figures['p99']:.2f} ms, "
          f"max {figures['max']:.2f} ms")
    seconds = drain(start, run.OUT / "webhook-drain.db", 1000)
    print(f"1000 queued deliveries drained in {seconds:.2f} s after a restart ({1000 / seconds:.0f}/s)")
