"""What one request or one automatic advance costs the service in user-space instructions, counted
by valgrind's callgrind (exact: this machine's noise does not move it; docs/PERFORMANCE.md,
"Costs counted"). Used by `make bench` (bench/run.py) and by hand:

    python3 bench/counted.py [--requests N]    # after `make build`

Each count starts the release binary under callgrind with one HTTP thread, sends a warm-up of the
same requests (first-use work, such as a thread's copies of the responses, is not per request),
switches the counting on, sends the counted requests one after another on one keep-alive
connection, each answer read whole before the next is sent, and switches it off. An automatic
advance is counted over a window with the carousel advancing every 50 ms and no client, less the
same window with autoplay off (the control: the timers and ticks that run anyway); a screen the
fleet keeps, a second, over a window after 1,000 screens were heard once, less a service that
heard none.
"""

import argparse
import json
import re
import socket
import subprocess
import sys
import time
from pathlib import Path

ROOT = Path(__file__).resolve().parent.parent
OUT = ROOT / "bench" / "out"
SERVICE = ROOT / ".build" / "release" / "banner-server"


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


def exchange(connection, request):
    """Sends `request` and reads its answer whole: (status line, body)."""
    connection.sendall(request)
    received = b""
    while True:
        chunk = connection.recv(65536)
        if not chunk:
            raise ConnectionError(f"closed before the answer to {request[:60]!r} was read")
        received += chunk
        head, separator, rest = received.partition(b"\r\n\r\n")
        if not separator:
            continue
        length = 0
        for line in head.split(b"\r\n")[1:]:
            name, _, value = line.partition(b":")
            if name.strip().lower() == b"content-length":
                length = int(value)
        if len(rest) >= length:
            return head.split(b"\r\n")[0].decode(), rest[:length]


def configuration(port, banners=None, **settings):
    """The shipped carousel (its five banners unless `banners` are given) on `port`, autoplay off
    unless `settings` say otherwise. Images named as files are named by a URL of the same length
    instead, as bench/run.py does under valgrind: seeding would decode them with libvips, for
    minutes under valgrind, and a request's cost is that of its bytes."""
    OUT.mkdir(parents=True, exist_ok=True)
    document = json.loads((ROOT / "config" / "carousel.json").read_text())
    document["banners"] = banners or document["banners"]
    for banner in document["banners"]:
        if not banner["image"].startswith(("http://", "https://", "/")):
            banner["image"] = "https://cdn.example.com/" + "i" * (len("/media/") + 64 - len("https://cdn.example.com/"))
    document.update(host="127.0.0.1", port=port, autoplay=False)
    document.update(settings)
    path = OUT / f"counted-{port}.json"
    path.write_text(json.dumps(document))
    return path


class Counted:
    """The service under callgrind, counting only between `on()` and `off()`."""

    def __init__(self, name, store="memory", binary=SERVICE, **settings):
        self.port = free_port()
        self.name = name
        self.out = OUT / f"callgrind-{name}.out"
        self.out.unlink(missing_ok=True)
        store_argument = store
        if store == "sqlite":
            database = OUT / f"counted-{name}.db"
            for path in OUT.glob(f"counted-{name}.db*"):
                path.unlink()
            store_argument = f"sqlite:{database}"
        self.config = configuration(self.port, **settings)
        self.process = subprocess.Popen(
            ["valgrind", "--tool=callgrind", "--instr-atstart=no", f"--callgrind-out-file={self.out}", str(binary),
             "--config", str(self.config), "--store", store_argument, "--threads", "1"],
            stdout=subprocess.DEVNULL, stderr=open(OUT / f"callgrind-{name}.log", "w"), cwd=OUT)
        deadline = time.monotonic() + 120
        while True:
            if self.process.poll() is not None:
                sys.exit(f"counted: {name} exited with {self.process.returncode} under valgrind; "
                         f"see {OUT / f'callgrind-{name}.log'}")
            try:
                socket.create_connection(("127.0.0.1", self.port), timeout=1).close()
                break
            except OSError:
                if time.monotonic() > deadline:
                    sys.exit(f"counted: {name} did not listen within 120 s under valgrind")
                time.sleep(0.1)

    def connect(self):
        return socket.create_connection(("127.0.0.1", self.port), timeout=60)

    def state(self):
        with self.connect() as connection:
            status, body = exchange(connection, b"GET /banner HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n")
        assert status.endswith("200 OK"), status
        return json.loads(body)

    def switch(self, on):
        subprocess.run(["callgrind_control", "-i", "on" if on else "off", str(self.process.pid)],
                       capture_output=True, check=True)

    def total(self):
        """Stops the service and returns the instructions counted."""
        self.process.terminate()
        self.process.wait(timeout=120)
        self.config.unlink(missing_ok=True)
        listing = subprocess.run(["callgrind_annotate", str(self.out)], capture_output=True, text=True,
                                 check=True).stdout
        return int(re.search(r"([\d,]+) \S*\s*PROGRAM TOTALS", listing).group(1).replace(",", ""))


def per_request(name, requests, make, expected, store="memory", **settings):
    """Instructions per request `make(service, i)` (i from 0), counted over `requests` after as
    many to warm up; every answer's status line must end with `expected`."""
    service = Counted(name, store=store, **settings)
    try:
        with service.connect() as connection:
            for phase in ("warm-up", "counted"):
                if phase == "counted":
                    service.switch(True)
                for i in range(requests):
                    status, _ = exchange(connection, make(service, i))
                    if not status.endswith(expected):
                        sys.exit(f"counted: {name}: request {i} of the {phase} answered '{status}', not '{expected}'")
                if phase == "counted":
                    service.switch(False)
    except BaseException:
        service.process.kill()
        raise
    return service.total() / requests


def read(service, i):
    return b"GET /banner HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n"


def command(service, i):
    return b"POST /banner/next HTTP/1.1\r\nHost: 127.0.0.1\r\nContent-Length: 0\r\n\r\n"


def receipts_of(state, screens=100):
    """A receipt of `state` from screen `sim-NNNNN` (of `screens`, in turn) with its own key, as
    the page sends one after a flip (docs/SCREENS.md)."""
    def receipt(service, i):
        screen = f"sim-{i % screens:05d}"
        shown_at = time.strftime("%Y-%m-%dT%H:%M:%S", time.gmtime()) + ".000Z"
        body = json.dumps({"receipts": [{"version": state["version"], "banner": state["banner"]["id"],
                                         "shownAt": shown_at, "offsetMs": 3, "rttMs": 1}]},
                          separators=(",", ":")).encode()
        return (f"POST /carousels/default/screens/{screen}/receipts HTTP/1.1\r\nHost: 127.0.0.1\r\n"
                f"X-Screen-Key: key-of-{screen}-0123456789\r\nContent-Type: application/json\r\n"
                f"Content-Length: {len(body)}\r\n\r\n").encode() + body
    return receipt


def per_receipt(requests, binary=SERVICE, name="receipt", **settings):
    service = Counted(f"{name}-state", store="memory", binary=binary, **settings)
    try:
        state = service.state()
    finally:
        service.process.kill()
        service.process.wait()
        service.config.unlink(missing_ok=True)
    return per_request(name, requests, receipts_of(state), "204 No Content", binary=binary, **settings)


def per_advance(seconds, interval=0.05, binary=SERVICE):
    """Instructions per automatic advance: a window of `seconds` advancing every `interval` s with
    no client, less the same window with autoplay off; and how many advances it made."""
    counts = {}
    advances = 0
    for autoplay in (True, False):
        # Every banner at the same interval: the schedule is a plain tick.
        banners = json.loads((ROOT / "config" / "carousel.json").read_text())["banners"]
        for banner in banners:
            banner.pop("duration", None)
        service = Counted(f"advance-{'on' if autoplay else 'off'}", binary=binary, autoplay=autoplay,
                          interval=interval, banners=banners)
        try:
            before = service.state()["version"]
            service.switch(True)
            time.sleep(seconds)  # a window of time is what is measured here
            service.switch(False)
            if autoplay:
                advances = service.state()["version"] - before
        except BaseException:
            service.process.kill()
            raise
        counts[autoplay] = service.total()
    if advances <= 0:
        sys.exit(f"counted: no automatic advance in {seconds} s at {interval} s")
    return {"advance": (counts[True] - counts[False]) / advances, "advances": advances,
            "idle_per_second": counts[False] / seconds}


def per_screen_second(screens, seconds, binary=SERVICE):
    """Instructions a second per screen the fleet keeps (docs/SCREENS.md): `screens` screens heard
    once each by a poll with its key, then a window of `seconds` with no client (the fleet's tick
    judges every screen each second; none goes offline within the 30 s timeout), less the same
    window of a service that heard none."""
    counts = {}
    for count in (screens, 0):
        service = Counted(f"fleet-{count}", binary=binary)
        try:
            with service.connect() as connection:
                for i in range(count):
                    status, _ = exchange(connection, (f"GET /banner?screen=sim-{i:05d}&screenKey=key-of-sim-{i:05d}-0123 "
                                                      "HTTP/1.1\r\nHost: 127.0.0.1\r\n\r\n").encode())
                    if not status.endswith("200 OK"):
                        sys.exit(f"counted: fleet: poll {i} answered '{status}'")
            time.sleep(2)  # the next tick writes and judges them all once
            service.switch(True)
            time.sleep(seconds)  # a window of time is what is measured here
            service.switch(False)
        except BaseException:
            service.process.kill()
            raise
        counts[count] = service.total()
    return (counts[screens] - counts[0]) / seconds / screens


def per_fleet_receipt(screens, seconds, binary=SERVICE):
    """Instructions of the fleet's own per receipt, all in (docs/SCREENS.md, "The fleet"): on a
    SQLite store and a carousel flipping every 5 s, `screens` event streams each sending a receipt
    for every flip it sees (`bench/out/screens_load`, as `bench/screens.py` runs it), counted
    over a window of `seconds`, less the same traffic naming no screen (a read for each receipt,
    the streams anonymous): the handling, the checks, the rows written and the judging. Returns
    (instructions per receipt, receipts counted)."""
    import screens as screens_bench  # bench/screens.py: the load's driver

    counts = {}
    answered = {}
    for anonymous in (False, True):
        name = f"fleet-receipts-{'anonymous' if anonymous else 'named'}"
        # A tolerance of 1 s: under valgrind the service sends each flip late, and verdicts going
        # from late to in step and back would count transitions a screen in step never makes.
        service = Counted(name, store="sqlite", binary=binary, autoplay=True, interval=5.0, stepTolerance=1.0)
        try:
            load = screens_bench.Load(service.port, screens, seconds, 4, anonymous=anonymous)
            time.sleep(3)  # every stream heard and written: the window starts with all of them known
            service.switch(True)
            load.go()
            result = load.result()
            service.switch(False)
            load.close()
        except BaseException:
            service.process.kill()
            raise
        counts[anonymous] = service.total()
        answered[anonymous] = result["answered"]["ok"]
        if result["answered"]["other"] or not answered[anonymous]:
            sys.exit(f"counted: {name}: {result}")
    return (counts[False] / answered[False] - counts[True] / answered[True]), answered[False]


def measure(requests, advance_seconds, smoke=False, binary=SERVICE):
    """Every count, by name: instructions per read, per command (memory and SQLite store), per
    receipt (also with the fast paths off), per automatic advance, per screen kept a second and the
    fleet's own per receipt, all in. `smoke`: the harness checked, not the numbers (the read and
    the SQLite command left out: the same code as the memory command's)."""
    results = {"requests": requests}
    if not smoke:
        results["read"] = per_request("read", requests, read, "200 OK", binary=binary)
    results["command_memory"] = per_request("command-memory", requests, command, "200 OK", binary=binary)
    if not smoke:
        results["command_sqlite"] = per_request(
            "command-sqlite", requests, command, "200 OK", store="sqlite", binary=binary)
    results["receipt"] = per_receipt(requests, binary=binary)
    if not smoke:
        # libmicrohttpd answers it (docs/ARCHITECTURE.md, "The fast paths"): what the read loops buy a receipt.
        results["receipt_fast_paths_off"] = per_receipt(
            requests, binary=binary, name="receipt-fast-paths-off", fastPaths=False)
    results.update(per_advance(advance_seconds, binary=binary))
    if not smoke:
        results["screen_second"] = per_screen_second(1000, advance_seconds / 2, binary=binary)
        results["fleet_receipt"], results["fleet_receipts"] = per_fleet_receipt(1000, advance_seconds, binary=binary)
    return results


def main():
    parser = argparse.ArgumentParser(description=__doc__, formatter_class=argparse.RawDescriptionHelpFormatter)
    parser.add_argument("--requests", type=int, default=1000, help="requests counted of each kind")
    parser.add_argument("--advance-seconds", type=float, default=20.0, help="window the advances are counted in")
    parser.add_argument("--binary", type=Path, default=SERVICE, help="the banner-server to count")
    arguments = parser.parse_args()
    OUT.mkdir(parents=True, exist_ok=True)
    results = measure(arguments.requests, arguments.advance_seconds, binary=arguments.binary)
    for key, value in results.items():
        print(f"{key:>16}: {value:,.0f}")


if __name__ == "__main__":
    main()
