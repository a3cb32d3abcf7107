"""Flip spread across unequal networks, in `make bench` (docs/SCREENS.md, docs/PERFORMANCE.md).

Several headless Chromium windows follow one carousel that advances every 500 ms, each through a
local proxy of its own that delays its traffic both ways by a different amount (0, 20, 40, … ms,
plus up to 10 ms of jitter per chunk), as screens on different networks are. Each page announces
the frame in which it showed each banner (`banner-carousel:shown`, its `frameTime`); on the one
machine every page's `performance.timeOrigin + frameTime` is on the same clock. The spread of a
flip is the latest page's frame minus the earliest's.

The windows of one browser draw on one 60 Hz grid, so a spread is a whole number of frames, read
with ±0.1–0.2 ms of noise (each renderer process's `performance.timeOrigin`, coarsened timers): it
is reported in frames as well as in milliseconds. Which frame a window picks depends on where the
frames fall against the due time, and 500 ms is exactly 30 frames, so that is the same for every
flip of a service's run: the page as shipped is measured over several runs, each on a service of
its own (frames fall elsewhere against its due times).

Measured: the page as shipped (flips at `nextAdvanceAt` on its estimate of the service's clock),
and the same page with `GET /time` made to fail by a script injected before its own, so that it
never has an estimate and flips when the pushed state arrives (what it did before)."""

import datetime
import http.server
import json
import statistics
import sys
import tempfile
import threading
import urllib.request
from pathlib import Path

sys.path.insert(0, str(Path(__file__).resolve().parent.parent / "Tests" / "browser"))
from delaying_proxy import DelayingProxy  # noqa: E402

INTERVAL_MS = 500
FRAME_MS = 1000 / 60
RECORD_SHOWN = """
    window.shownBanners = [];
    document.addEventListener("banner-carousel:shown", (event) => window.shownBanners.push(
        {id: event.detail.id, at: performance.timeOrigin + event.detail.frameTime, foreseen: event.detail.foreseen,
         serviceTime: event.detail.serviceTime}));
"""
NO_CLOCK = """
    const realFetch = window.fetch;
    window.fetch = (resource, options) => /\/time(\?|$)/.test(String(resource))
        ? Promise.reject(new TypeError("GET /time is switched off for this measurement"))
        : realFetch(resource, options);
"""


class Images:
    """One small SVG per banner on 127.0.0.1, so that the pages need no network."""

    def __init__(self, count):
        self.folder = tempfile.TemporaryDirectory(prefix="banner-bench-images-")
        folder = self.folder.name
        for number in range(count):
            Path(folder, f"{number}.svg").write_text(
                f'<svg xmlns="http://www.w3.org/2000/svg" width="800" height="300">'
                f'<rect width="800" height="300" fill="hsl({number * 67 % 360} 60% 45%)"/></svg>')
        handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=folder)  # noqa: E731
        http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    def url(self, number):
        return f"http://127.0.0.1:{self.server.server_address[1]}/{number}.svg"

    def stop(self):
        self.server.shutdown()
        self.folder.cleanup()


def banners(images, count=5):
    return [{"id": f"b{number}", "image": images.url(number), "caption": f"Banner {number}"} for number in range(count)]


def browser():
    from selenium import webdriver
    from selenium.webdriver.chrome.service import Service

    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=480,320", "--disable-background-timer-throttling",
                     "--disable-renderer-backgrounding", "--disable-backgrounding-occluded-windows"]:
        options.add_argument(argument)
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def spread(service_port, pages, flips, on_arrival, step_ms=20, jitter_ms=10):
    """Opens `pages` windows, each through its own delaying proxy, and waits for `flips` flips
    seen by all of them after a warm-up; returns the per-flip spreads (ms) and their summary."""
    proxies = [DelayingProxy(service_port, delay=page * step_ms / 1000, jitter=jitter_ms / 1000, seed=page)
               for page in range(pages)]
    chrome = browser()
    try:
        handles = []
        for page, proxy in enumerate(proxies):
            if page > 0:
                chrome.switch_to.new_window("window")
            chrome.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument",
                                   {"source": RECORD_SHOWN + (NO_CLOCK if on_arrival else "")})
            # Screens in a lobby need no slide animation, and eight software-rendered windows on two
            # cores would otherwise measure the rasteriser.
            chrome.execute_cdp_cmd("Emulation.setEmulatedMedia", {
                "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
            chrome.get(proxy.url + "/")
            handles.append(chrome.current_window_handle)

        def shown(handle):
            chrome.switch_to.window(handle)
            return chrome.execute_script("return window.shownBanners")

        # Warm-up: every page has an estimate (or, without one, follows the stream) after 5 s; the
        # flips counted are those after it, until each page has `flips` more.
        warm = [len(shown(handle)) + int(5000 / INTERVAL_MS) for handle in handles]
        from selenium.webdriver.support.ui import WebDriverWait
        for handle, start in zip(handles, warm):
            WebDriverWait(chrome, flips * INTERVAL_MS / 1000 + 120, poll_frequency=0.5).until(
                lambda _: len(shown(handle)) >= start + flips)
        records = [shown(handle)[start:] for handle, start in zip(handles, warm)]
    finally:
        chrome.quit()
        for proxy in proxies:
            proxy.close()
    return summarise(records, due_time(service_port))


def due_time(port):
    """One of the service's advance times, epoch milliseconds: with autoplay and one interval for
    every banner, the others are it ± k × INTERVAL_MS."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/banner", timeout=5) as response:
        state = json.loads(response.read())
    return datetime.datetime.fromisoformat(state["nextAdvanceAt"].replace("Z", "+00:00")).timestamp() * 1000


LATENESS_BOUNDS = ("0.005", "0.01", "0.025", "0.05")


def judged_lateness(port):
    """The pages' own receipts as the service judged them (`banner_screen_lateness_seconds`: how
    far each reported flip was from the carousel's change, either side): their count, and the
    share within each of LATENESS_BOUNDS seconds."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=10) as response:
        text = response.read().decode()

    def value(name):
        for line in text.splitlines():
            if line.startswith(name + " "):
                return float(line.split()[1])
        return 0.0

    count = value("banner_screen_lateness_seconds_count")
    return {"count": int(count), "within": {bound: value(f'banner_screen_lateness_seconds_bucket{{le="{bound}"}}')
                                            for bound in LATENESS_BOUNDS}}


def summarise(records, due):
    """Groups the pages' records by the advance they show (the one due up to 150 ms after the
    record or 350 ms before it: a page that waits for the pushed state is late by its network)
    and takes the spread of every advance that all pages showed, with each page's clock estimate
    against the real one (the same machine's clock)."""
    slots = {}
    for page, page_records in enumerate(records):
        for record in page_records:
            slot = int((record["at"] - due + 150) // INTERVAL_MS)
            slots.setdefault(slot, {})[page] = record["at"]
    spreads = sorted(max(times.values()) - min(times.values())
                     for times in slots.values() if len(times) == len(records))
    if not spreads:
        raise RuntimeError("no flip was seen by every page")
    errors = [statistics.median(record["serviceTime"] - record["at"] for record in page)
              for page in records if page and all(record["serviceTime"] is not None for record in page)]
    foreseen = sum(1 for page in records for record in page if record["foreseen"])
    return {**summary(spreads), "estimates": (min(errors), max(errors)) if len(errors) == len(records) else None,
            "foreseen_share": foreseen / sum(len(page) for page in records)}


def summary(spreads):
    """The figures of sorted flip spreads."""
    frames = [round(value / FRAME_MS) for value in spreads]
    return {"spreads": spreads, "flips": len(spreads), "same_frame": frames.count(0) / len(frames),
            "one_frame": frames.count(1) / len(frames), "p50": statistics.median(spreads),
            "p99": percentile(spreads, 0.99), "max": spreads[-1], "p99_frames": percentile(sorted(frames), 0.99)}


def pooled(runs):
    """The flips of every run together: frames fall against the due times at one phase for a whole
    run, so one run is one sample of that phase; screens in the field meet every phase."""
    estimates = [figures["estimates"] for figures in runs if figures["estimates"]]
    receipts = {"count": sum(figures["receipts"]["count"] for figures in runs),
                "within": {bound: sum(figures["receipts"]["within"][bound] for figures in runs)
                           for bound in LATENESS_BOUNDS}}
    return {**summary(sorted(value for figures in runs for value in figures["spreads"])), "receipts": receipts,
            "estimates": (min(low for low, _ in estimates), max(high for _, high in estimates))
            if len(estimates) == len(runs) else None,
            "foreseen_share": statistics.mean(figures["foreseen_share"] for figures in runs)}


def percentile(ordered, share):
    return ordered[min(len(ordered) - 1, int(len(ordered) * share))]


def flip_spread(start_service, pages, flips, rounds):
    """The page as shipped over `rounds` services started by `start_service(banners)`, then the
    page flipping on arrival over one more; the figures of every round."""
    images = Images(5)

    def measure(on_arrival):
        service = start_service(banners(images))
        try:
            figures = spread(service.port, pages, flips, on_arrival=on_arrival)
            # Read once the pages are closed: hidden, each sent what it still held.
            return {**figures, "receipts": judged_lateness(service.port)}
        finally:
            service.stop()

    try:
        in_step = [measure(on_arrival=False) for _ in range(rounds)]
        on_arrival = measure(on_arrival=True)
    finally:
        images.stop()
    together = pooled(in_step)
    for label, figures in [(f"at nextAdvanceAt, run {run + 1}", figures) for run, figures in enumerate(in_step)] + [
            (f"at nextAdvanceAt, {len(in_step)} runs together", together), ("on arrival", on_arrival)]:
        estimates = figures["estimates"]
        print(f"  flip spread over {pages} pages, {figures['flips']} flips, {label}: "
              f"{figures['same_frame']:.0%} in the same frame, {figures['one_frame']:.0%} one frame apart, "
              f"p50 {figures['p50']:.1f} ms, p99 {figures['p99']:.1f} ms, max {figures['max']:.1f} ms"
              + (f"; estimates {estimates[0]:+.2f}…{estimates[1]:+.2f} ms" if estimates else "")
              + f"; receipts judged: {judged(figures['receipts'])}", flush=True)
    return {"pages": pages, "in_step": in_step, "together": together, "on_arrival": on_arrival}


def judged(receipts):
    """`312, 98 / 100 / 100 / 100 %`: the receipts, and the shares within 5 / 10 / 25 / 50 ms."""
    if receipts["count"] == 0:
        return "none (a page sends receipts once it has an estimate of the service's clock)"
    shares = " / ".join(f"{receipts['within'][bound] * 100 / max(receipts['count'], 1):.0f}"
                        for bound in LATENESS_BOUNDS)
    return f"{receipts['count']:,}, {shares} %"


def render(result, step_ms=20):
    pages = result["pages"]
    delays = ", ".join(str(page * step_ms) for page in range(pages))
    runs = result["in_step"]
    lines = [
        f"**Flip spread across unequal networks** (bench/flips.py): {pages} headless Chromium windows follow one "
        f"carousel advancing every {INTERVAL_MS} ms, each through a proxy of its own delaying its traffic both "
        f"ways by {delays} ms plus up to 10 ms of jitter per chunk; for every flip all of them showed, the frame "
        "of the latest page minus that of the earliest. The windows share one 60 Hz grid, so a spread is a whole "
        "number of frames (read with ±0.2 ms of noise); whether a window whose estimate is a little off picks the "
        "others' frame or the next depends on where the frames fall against the due times, the same for a whole "
        f"run (500 ms is 30 frames), so the page as shipped is measured over {len(runs)} run{'s' if len(runs) != 1 else ''} on services of "
        "their own, and over all its flips together (screens in the field meet every phase). Estimates: each "
        "window's offset to the service clock minus the real one (median over its flips), the lowest and highest "
        "of the windows. Receipts: what the pages themselves reported of their flips (docs/SCREENS.md, receipts), "
        "as the service judged them against its own history: how many, and the share within 5 / 10 / 25 / 50 ms "
        "of the carousel's change (50 ms is the in-step tolerance). Bar: p99 ≤ 16.7 ms (one frame at 60 Hz).",
        "",
        "| page flips | flips | same frame | one frame apart | p50 ms | p99 ms | max ms | p99 frames "
        "| estimates ms | flips foreseen | receipts, within 5 / 10 / 25 / 50 ms |",
        "|---|---:|---:|---:|---:|---:|---:|---:|---|---:|---|",
    ]
    rows = [(f"at `nextAdvanceAt` on the estimated service clock (shipped), run {run + 1}", figures)
            for run, figures in enumerate(runs)]
    rows.append((f"the same, {len(runs)} runs together", result["together"]))
    rows.append(("when the pushed state arrives (`GET /time` switched off)", result["on_arrival"]))
    for label, figures in rows:
        estimates = figures["estimates"]
        lines.append(f"| {label} | {figures['flips']} | {figures['same_frame']:.0%} | {figures['one_frame']:.0%} | "
                     f"{figures['p50']:.1f} | {figures['p99']:.1f} | {figures['max']:.1f} | {figures['p99_frames']} | "
                     + (f"{estimates[0]:+.2f} … {estimates[1]:+.2f}" if estimates else "–")
                     + f" | {figures['foreseen_share']:.0%} | {judged(figures['receipts'])} |")
    return lines
