#!/usr/bin/env python3
"""Offline play under an outage (docs/SCREENS.md, "Offline play"; docs/PERFORMANCE.md), for
`make bench`.

A release banner-server on a fresh SQLite store, five banners flipping every 2 s, and PAGES
windows of headless Chromium, each on the built-in page through a proxy of its own (so each is an
origin of its own: its own service worker, Cache Storage and IndexedDB). Once every page keeps its
plan and the five images, the service is killed (SIGKILL, as a crash; `--signal TERM`: a restart
or an update) for OUTAGE seconds and started again on the same port and store. Measured:
- lateness: each flip a page made while the service was away, against the instant of the
  timeline (`GET …/timeline?hours=1`, fetched before the stop) it shows: p50, p99, max of the
  distance, and any flip showing another banner than the timeline's;
- spread: for each instant every page showed, the latest page's frame minus the earliest's;
- views lost and duplicated: the carousel is paused once every page is back (no view is then in
  the making), every page's IndexedDB queue is waited empty, and the views the service counted are
  compared with those the pages made (each banner shown a second or more; a stretch within 50 ms
  of a second may be either). Bar: 0 and 0.

Every page's `performance.timeOrigin + frameTime` is on this machine's clock, which the service
reads too. Prints a Markdown table; `--pages` and `--outage` make it shorter.
"""
import argparse
import json
import signal
import statistics
import subprocess
import sys
import time
import urllib.request

import flips
import run
from delaying_proxy import DelayingProxy
from offline_probes import QUEUED_REPORTS, READY_OFFLINE

INTERVAL = 2.0


def epoch_ms(text):
    from datetime import datetime
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


def call(port, method, path):
    request = urllib.request.Request(f"http://127.0.0.1:{port}{path}", method=method)
    with urllib.request.urlopen(request, timeout=10) as response:
        body = response.read()
        return json.loads(body) if body else None


class Service:
    """banner-server on one port and one store, stopped and started again on them."""

    def __init__(self, images):
        self.port = run.free_port()
        configuration = {"host": "127.0.0.1", "port": self.port, "interval": INTERVAL, "autoplay": True,
                         "banners": flips.banners(images)}
        self.config = run.OUT / "offline.json"
        self.config.write_text(json.dumps(configuration))
        self.store = run.fresh_store("offline")
        self.log = open(run.OUT / "offline.log", "w")
        self.start()

    def start(self):
        self.process = subprocess.Popen([str(run.SERVICE), "--config", str(self.config), "--store", self.store],
                                        stdout=subprocess.DEVNULL, stderr=self.log)
        run.wait_for_port(self.port, self.process, "banner-server")

    def stop(self, how=signal.SIGTERM):
        self.process.send_signal(how)
        self.process.wait(timeout=30)


def wait(condition, seconds, what):
    """Until `condition()`, polled every half second; exits naming `what` after `seconds`."""
    deadline = time.monotonic() + seconds
    while not condition():
        if time.monotonic() > deadline:
            sys.exit(f"bench/offline.py: {what} did not happen within {seconds} s")
        time.sleep(0.5)  # polling interval, not a measurement


def percentile(ordered, share):
    return ordered[min(len(ordered) - 1, int(share * len(ordered)))]


def measure(pages, outage, how):
    images = flips.Images(5)
    service = Service(images)
    proxies = [DelayingProxy(service.port) for _ in range(pages)]
    chrome = flips.browser()
    try:
        handles = []
        for page, proxy in enumerate(proxies):
            if page > 0:
                chrome.switch_to.new_window("window")
            chrome.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": flips.RECORD_SHOWN})
            chrome.get(proxy.url + "/")
            handles.append(chrome.current_window_handle)

        def on(handle, script, asynchronous=False):
            chrome.switch_to.window(handle)
            return chrome.execute_async_script(script) if asynchronous else chrome.execute_script(script)

        wait(lambda: all(on(handle, READY_OFFLINE, True) for handle in handles), 60,
             "every page keeping its plan and images")
        plan = [(epoch_ms(entry["at"]), entry["banner"])
                for entry in call(service.port, "GET", "/carousels/default/timeline?hours=1")["entries"]]
        stopped_at = time.time() * 1000
        service.stop(how)
        wait(lambda: time.time() * 1000 - stopped_at >= outage * 1000, outage + 30, "the outage")
        service.start()
        started_at = time.time() * 1000
        wait(lambda: all(on(handle, "return document.querySelector('.offline-badge').hidden") for handle in handles),
             60, "every page back")
        call(service.port, "POST", "/banner/pause")
        wait(lambda: all(on(handle, "return document.querySelector('.pause-button').textContent") == "Resume"
                         for handle in handles), 30, "every page paused")
        wait(lambda: all(on(handle, QUEUED_REPORTS, True) == 0 for handle in handles), 60, "every page's views sent")
        shown = [on(handle, "return window.shownBanners") for handle in handles]
        stats = call(service.port, "GET", "/carousels/default/stats")["rows"]
    finally:
        chrome.quit()
        for proxy in proxies:
            proxy.close()
        service.stop()
        images.stop()
    return summarise(shown, plan, stopped_at, started_at, sum(row["views"] for row in stats))


def summarise(shown, plan, stopped_at, started_at, counted):
    """The flips of every page while the service was away against `plan`; views made against counted."""
    lateness, wrong, by_instant = [], 0, {}
    for page, records in enumerate(shown):
        for record in records:
            if not stopped_at <= record["at"] < started_at:
                continue
            instant, banner = min(plan, key=lambda entry: abs(entry[0] - record["at"]))
            lateness.append(record["at"] - instant)
            wrong += banner != record["id"]
            by_instant.setdefault(instant, {})[page] = record["at"]
    distances = sorted(abs(value) for value in lateness)
    spreads = sorted(max(times.values()) - min(times.values())
                     for times in by_instant.values() if len(times) == len(shown))
    certain = either = 0
    for records in shown:
        for earlier, later in zip(records, records[1:]):
            stretch = later["at"] - earlier["at"]
            certain += stretch >= 1050
            either += 950 <= stretch < 1050
    return {"flips": len(lateness), "wrong": wrong, "late_p50": statistics.median(distances),
            "late_p99": percentile(distances, 0.99), "late_max": distances[-1],
            "spread_p50": statistics.median(spreads), "spread_p99": percentile(spreads, 0.99),
            "spread_max": spreads[-1], "instants": len(spreads), "made": certain, "borderline": either,
            "counted": counted, "lost": max(0, certain - counted), "duplicated": max(0, counted - certain - either)}


def render(figures, pages, outage, how):
    return "\n".join([
        f"Offline play: {pages} pages, each through a proxy of its own, a {INTERVAL:g} s carousel, the service "
        f"stopped ({how.name}) for {outage} s and started again (bench/offline.py)",
        "",
        "| measure | value |",
        "|---|---|",
        f"| flips while the service was away | {figures['flips']} ({figures['wrong']} showing another banner "
        f"than the timeline's) |",
        f"| lateness against the timeline's instants, p50 / p99 / max | {figures['late_p50']:.1f} / "
        f"{figures['late_p99']:.1f} / {figures['late_max']:.1f} ms |",
        f"| spread across the pages, p50 / p99 / max ({figures['instants']} instants every page showed) | "
        f"{figures['spread_p50']:.1f} / {figures['spread_p99']:.1f} / {figures['spread_max']:.1f} ms |",
        f"| views made by the pages / counted by the service | {figures['made']} (+{figures['borderline']} "
        f"borderline) / {figures['counted']} |",
        f"| views lost / duplicated (bar: 0 / 0) | {figures['lost']} / {figures['duplicated']} |",
    ])


def main():
    parser = argparse.ArgumentParser(description=__doc__.splitlines()[0])
    parser.add_argument("--pages", type=int, default=4)
    parser.add_argument("--outage", type=int, default=120, help="seconds the service is away")
    parser.add_argument("--signal", default="KILL", choices=["TERM", "KILL"],
                        help="how the service is stopped: TERM (a restart, an update) or KILL (a crash)")
    arguments = parser.parse_args()
    how = signal.Signals["SIG" + arguments.signal]
    run.OUT.mkdir(parents=True, exist_ok=True)
    figures = measure(arguments.pages, arguments.outage, how)
    print(render(figures, arguments.pages, arguments.outage, how))
    if figures["lost"] or figures["duplicated"] or figures["wrong"]:
        sys.exit("bench/offline.py: views were lost or duplicated, or a page showed another banner than planned")


if __name__ == "__main__":
    main()
