#!/usr/bin/python3
"""The built-in web client at `/`, in a real browser: headless Chromium driven by Selenium
(both from Debian), against the real banner-server on 127.0.0.1.

Run by `make test-browser` (part of `make test`). Screenshots of every test land in
.build/browser-artifacts/. Banner images come from a small local image server, so that nothing
here needs the network.
"""

import atexit
import base64
import http.server
import json
import os
import re
import shutil
import signal
import socket
import subprocess
import tempfile
import threading
import time
import unittest
import urllib.error
import urllib.request
from pathlib import Path

from datetime import datetime, timedelta, timezone
from zoneinfo import ZoneInfo

from delaying_proxy import DelayingProxy
from offline_probes import KEPT_IMAGES, QUEUED_REPORTS, READY_OFFLINE
from selenium.common.exceptions import StaleElementReferenceException, WebDriverException
from selenium import webdriver
from selenium.webdriver.chrome.service import Service
from selenium.webdriver.common.by import By
from selenium.webdriver.common.action_chains import ActionChains
from selenium.webdriver.common.actions import interaction
from selenium.webdriver.common.actions.action_builder import ActionBuilder
from selenium.webdriver.common.actions.pointer_input import PointerInput
from selenium.webdriver.common.keys import Keys
from selenium.webdriver.support.ui import Select, WebDriverWait

ROOT = Path(__file__).resolve().parents[2]
SERVER = Path(os.environ.get("BANNER_SERVER", ROOT / ".build" / "debug" / "banner-server"))
ARTIFACTS = ROOT / ".build" / "browser-artifacts"
# Every temporary file of the run, Chromium's profiles included, goes in one folder removed at exit.
WORK = tempfile.TemporaryDirectory(prefix="carousel-browser-")
tempfile.tempdir = WORK.name
os.environ["TMPDIR"] = WORK.name
CAPTIONS = ["Welcome to the Harbour Street store", "Spring sale: up to 40% off garden furniture",
            "Free delivery on orders over 50 EUR", "New arrivals every Friday",
            "Get the app: scan, pay and skip the queue"]
COLOURS = [("#1f6feb", "#8957e5"), ("#2da44e", "#0f766e"), ("#d97706", "#b91c1c"), ("#db2777", "#7c3aed"),
           ("#0891b2", "#1d4ed8")]


def free_port():
    with socket.socket() as probe:
        probe.bind(("127.0.0.1", 0))
        return probe.getsockname()[1]


class NoRedirect(urllib.request.HTTPRedirectHandler):
    """Leaves a redirect as it came (an HTTPError with its code and Location)."""

    def redirect_request(self, *args):
        return None


class ImageServer:
    """Serves one SVG picture per banner on 127.0.0.1, quietly."""

    def __init__(self):
        self.directory = tempfile.mkdtemp(prefix="carousel-images-")
        for number, (start, end) in enumerate(COLOURS):
            Path(self.directory, f"banner-{number}.svg").write_text(
                f'<svg xmlns="http://www.w3.org/2000/svg" width="1600" height="600" viewBox="0 0 1600 600">'
                f'<defs><linearGradient id="g" x1="0" y1="0" x2="1" y2="1"><stop offset="0" stop-color="{start}"/>'
                f'<stop offset="1" stop-color="{end}"/></linearGradient></defs><rect width="1600" height="600" '
                f'fill="url(#g)"/><circle cx="1320" cy="150" r="210" fill="#ffffff" opacity="0.12"/>'
                f'<circle cx="1450" cy="480" r="140" fill="#ffffff" opacity="0.10"/></svg>')
        handler = lambda *args: http.server.SimpleHTTPRequestHandler(*args, directory=self.directory)
        http.server.SimpleHTTPRequestHandler.log_message = lambda *args: None
        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def port(self):
        return self.server.server_address[1]

    def url(self, number):
        return f"http://127.0.0.1:{self.port}/banner-{number}.svg"


class ProxiedImages:
    """The pictures of an ImageServer, addressed through a proxy in front of it."""

    def __init__(self, images, proxy):
        self.images = images
        self.proxy = proxy

    def url(self, number):
        return self.images.url(number).replace(f":{self.images.port}/", f":{self.proxy.port}/")


def epoch_ms(text):
    """An RFC 3339 time of the service's as epoch milliseconds."""
    return datetime.fromisoformat(text.replace("Z", "+00:00")).timestamp() * 1000


# Where a slide whose image failed puts its caption: over the whole banner, the image hidden.
# Arguments: the element whose shadow root holds the slide (or "document"), and three selectors.
MISSING_IMAGE_GEOMETRY = """
    const [host, slideSelector, captionSelector, imageSelector] = arguments;
    const root = host === "document" ? document : document.getElementById(host).shadowRoot;
    const slide = root.querySelector(slideSelector).getBoundingClientRect();
    const caption = root.querySelector(captionSelector).getBoundingClientRect();
    return {top: Math.round(caption.top - slide.top),
            fills: Math.abs(caption.height - slide.height) < 1 && Math.abs(caption.width - slide.width) < 1,
            image: getComputedStyle(root.querySelector(imageSelector)).visibility};
"""


class BannerServer:
    """banner-server as a child process on a fixed port (so that it can be restarted on it)."""

    def __init__(self, images, token=None, interval=3600.0, cors_origins=(), admin_token=None, environment=None):
        self.port = free_port()
        self.config = Path(tempfile.mkdtemp(prefix="carousel-web-")) / "carousel.json"
        self.config.write_text(json.dumps({
            "host": "127.0.0.1", "port": self.port, "interval": interval, "corsOrigins": list(cors_origins),
            "banners": [{"id": f"banner-{n}", "image": images.url(n), "caption": caption,
                         "link": f"https://shop.example.com/{n}"} for n, caption in enumerate(CAPTIONS)],
        }))
        self.environment = {"PATH": "/usr/bin:/bin"}
        if token:
            self.environment["CAROUSEL_CONTROL_TOKEN"] = token
        if admin_token:
            self.environment["CAROUSEL_ADMIN_TOKEN"] = admin_token
        self.environment.update(environment or {})
        self.process = None
        self.start()

    def start(self):
        # The store sits beside the configuration: a new configuration (in a new folder) starts a
        # new store, a restart keeps it.
        store = self.config.parent / "carousel.db"
        # SERVER_LOG=path keeps the service's log there, to see what a failing test did.
        with open(os.environ.get("SERVER_LOG", os.devnull), "a") as log:
            self.process = subprocess.Popen([str(SERVER), "--config", str(self.config), "--store", str(store)],
                                            env=self.environment, stdout=subprocess.PIPE, stderr=log, text=True)
        line = self.process.stdout.readline()
        self.process.stdout.close()
        if not line.startswith("listening on "):
            raise RuntimeError(f"banner-server did not start: {line!r}")

    def stop(self):
        self.process.send_signal(signal.SIGTERM)
        self.process.wait(timeout=10)

    @property
    def url(self):
        return f"http://127.0.0.1:{self.port}"

    def call(self, method, path, body=None, token=None):
        request = urllib.request.Request(self.url + path, method=method,
                                         data=None if body is None else json.dumps(body).encode())
        if body is not None:
            request.add_header("Content-Type", "application/json")
        if token:
            request.add_header("Authorization", f"Bearer {token}")
        with urllib.request.urlopen(request, timeout=5) as response:
            answer = response.read()
            return json.loads(answer) if answer else None  # a 204 has no body

    def state(self):
        return self.call("GET", "/banner")

    def engagement(self, audience=None):
        """Views and clicks by banner, from the stats of the last day (docs/STATS.md), of the
        screens of `audience` (None: of none)."""
        views, clicks = {}, {}
        query = f"?audience={audience}" if audience else ""
        for row in self.call("GET", f"/carousels/default/stats{query}")["rows"]:
            views[row["banner"]] = views.get(row["banner"], 0) + row["views"]
            clicks[row["banner"]] = clicks.get(row["banner"], 0) + row["clicks"]
        return views, clicks

    def subscribers(self):
        """Event-stream subscribers now, as (held by the service, held by libmicrohttpd), from
        GET /metrics (docs/METRICS.md)."""
        with urllib.request.urlopen(self.url + "/metrics", timeout=5) as response:
            text = response.read().decode()
        held = {}
        for holder in ("service", "libmicrohttpd"):
            found = re.search(r'^banner_event_stream_subscribers\{held_by="%s"\} (\d+)$' % holder, text, re.M)
            held[holder] = int(found.group(1)) if found else None
        return held["service"], held["libmicrohttpd"]


class ShopPage:
    """A shop's page on another origin (its own port) with the component in it, twice: the
    first element `#first`, the second `#second` (docs/EMBEDDING.md)."""

    def __init__(self):
        self.html = ""
        page = self

        class Handler(http.server.BaseHTTPRequestHandler):
            def do_GET(self):
                body = page.html.encode()
                self.send_response(200)
                self.send_header("Content-Type", "text/html; charset=utf-8")
                self.send_header("Content-Length", str(len(body)))
                self.end_headers()
                self.wfile.write(body)

            def log_message(self, *args):
                pass

        self.server = http.server.ThreadingHTTPServer(("127.0.0.1", 0), Handler)
        threading.Thread(target=self.server.serve_forever, daemon=True).start()

    @property
    def origin(self):
        return f"http://127.0.0.1:{self.server.server_address[1]}"

    def show(self, service_url, token=None, screen=None, audience=None):
        attributes = ("" if token is None else f' token="{token}"') + ("" if screen is None else f' screen="{screen}"')
        attributes += "" if audience is None else f' audience="{audience}"'
        self.html = (
            f'<!doctype html><html lang="en"><head><meta charset="utf-8"><title>A shop</title>'
            f'<script src="{service_url}/embed.js" defer></script></head><body>'
            f'<h1 id="heading">A shop on another origin</h1>'
            f'<banner-carousel id="first" src="{service_url}/carousels/default"{attributes}></banner-carousel>'
            f'<p><a id="elsewhere" href="#">Elsewhere on the page</a></p>'
            f'<banner-carousel id="second" src="{service_url}/carousels/default"></banner-carousel>'
            f'</body></html>')
        return self.origin + "/"


# One Chromium per process (a shard, Tests/browser/run_shards.py), a new tab for each test: starting
# a Chromium for each of about a hundred tests was over a minute of `make test`. A test's tab is
# fresh (its scripts, emulation and window its own), its service on a port of its own (its
# origin's storage, service worker and caches its own); cookies and the HTTP cache, which the
# browser shares between tabs, are cleared for each test.
_shared = {"browser": None}


def _launch_browser():
    options = webdriver.ChromeOptions()
    options.binary_location = "/usr/bin/chromium"
    for argument in ["--headless=new", "--no-sandbox", "--disable-gpu", "--disable-dev-shm-usage",
                     "--window-size=1280,860", "--force-device-scale-factor=1"]:
        options.add_argument(argument)
    options.set_capability("goog:loggingPrefs", {"browser": "ALL"})
    return webdriver.Chrome(service=Service("/usr/bin/chromedriver"), options=options)


def _quit_shared_browser():
    if _shared["browser"] is not None:
        _shared["browser"].quit()
        _shared["browser"] = None


atexit.register(_quit_shared_browser)


def _fresh_tab(browser):
    """`browser` on a new tab, every other closed, what the browser shares between tabs cleared.
    False when the browser no longer answers (it is then started again)."""
    try:
        old = browser.window_handles
        browser.switch_to.new_window("tab")
        fresh = browser.current_window_handle
        for handle in old:
            browser.switch_to.window(handle)
            browser.close()
        browser.switch_to.window(fresh)
        browser.execute_cdp_cmd("Network.clearBrowserCookies", {})
        browser.execute_cdp_cmd("Network.clearBrowserCache", {})
        browser.set_window_size(1280, 860)
        browser.get_log("browser")  # what the closed tabs said is not this test's
        return True
    except WebDriverException:
        return False


def _record_shown_banners(browser):
    """Every banner the tab's pages show, as they announce them (before their own scripts run)."""
    browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": """
        window.shownBanners = [];
        document.addEventListener("banner-carousel:shown", (event) =>
            window.shownBanners.push({...event.detail, element: event.target.id ?? null}));
    """})


class WebClientTest(unittest.TestCase):
    token = None
    admin_token = None
    interval = 3600.0
    cors_origins = ()
    environment = {}

    @classmethod
    def setUpClass(cls):
        ARTIFACTS.mkdir(parents=True, exist_ok=True)
        cls.images = ImageServer()

    def setUp(self):
        self.service = BannerServer(self.images, token=self.token, interval=self.interval,
                                    cors_origins=self.cors_origins, admin_token=self.admin_token,
                                    environment=self.environment)
        self.browser = self.shared_browser()
        self.prepare_browser()
        self.browser.get(self.page_url())
        self.wait_for_page()

    def shared_browser(self):
        """This process's Chromium on a fresh tab, its pages recording what they show."""
        browser = _shared["browser"]
        if browser is None or not _fresh_tab(browser):
            if browser is not None:
                try:
                    browser.quit()
                except WebDriverException:
                    pass
            browser = _shared["browser"] = _launch_browser()
        _record_shown_banners(browser)
        return browser

    def new_browser(self):
        """A headless Chromium of its own (profile, window), its pages recording what they show;
        the test quits it."""
        browser = _launch_browser()
        _record_shown_banners(browser)
        return browser

    def wait_for_page(self):
        self.wait(lambda: self.find(".slide-caption").text == self.service.state()["banner"]["caption"], 15,
                  "the page shows the service's banner")

    def prepare_browser(self):
        """What a test class needs in the browser before the page opens."""

    def page_url(self):
        return self.service.url + "/"

    def before_page_scripts(self, source):
        """Runs `source` in every page this browser opens, before the page's own scripts."""
        self.browser.execute_cdp_cmd("Page.addScriptToEvaluateOnNewDocument", {"source": source})

    def shown_banners(self, element=None):
        """What the page showed, in order; of the component `#element` only when given."""
        return [entry for entry in self.browser.execute_script("return window.shownBanners")
                if element is None or entry["element"] == element]

    def tearDown(self):
        self.browser.save_screenshot(str(ARTIFACTS / f"{self._testMethodName}.png"))
        errors = [entry for entry in self.browser.get_log("browser")
                  if entry["level"] == "SEVERE" and entry.get("source") != "network"]
        self.service.stop()
        # Failed requests while the service is down are expected (source "network"); anything
        # else SEVERE (a script error, a CSP violation, console.error) is a defect.
        self.assertEqual(errors, [], "errors in the browser console")

    # Helpers ---------------------------------------------------------------------------------

    def find(self, selector):
        return self.browser.find_element(By.CSS_SELECTOR, selector)

    def wait(self, condition, seconds=15, message=""):
        # The admin page re-renders its lists as changes arrive: an element read just as it was
        # replaced is looked at again on the next try, not a failure.
        return WebDriverWait(self.browser, seconds, ignored_exceptions=[StaleElementReferenceException]).until(
            lambda _: condition(), message)

    def let_a_second_pass(self):
        # A view needs a second on screen: a precondition of the rule, not a measurement.
        since = time.monotonic()
        self.wait(lambda: time.monotonic() - since > 1.5, 5)

    def wait_for_caption(self, caption, seconds=15):
        self.wait(lambda: self.find(".slide-caption").text == caption, seconds,
                  f"the page should show {caption!r}, shows {self.find('.slide-caption').text!r}")

    def shown_index(self):
        current = self.browser.execute_script(
            "return Array.from(document.querySelectorAll('.dot'), (dot, index) => [dot, index])"
            ".filter(([dot]) => dot.getAttribute('aria-current') === 'true').map(([, index]) => index)")
        return current[0] if len(current) == 1 else None


class ShowingAndFollowing(WebClientTest):
    def test_a_banner_whose_image_fails_shows_its_caption_across_the_banner(self):
        shown = self.service.state()["index"]
        self.service.call("POST", f"/carousels/default/banners?position={shown + 1}",
                          {"id": "lost", "image": self.images.url(99), "caption": "Image lost"})
        self.service.call("POST", "/banner/next")
        self.wait_for_caption("Image lost")
        self.wait(lambda: "missing-image" in self.find(".slide").get_attribute("class"), 10,
                  "the slide knows its image failed")
        self.assertEqual(self.browser.execute_script(MISSING_IMAGE_GEOMETRY, "document", ".slide", ".slide-caption",
                                                     ".slide-image"), {"top": 0, "fills": True, "image": "hidden"})

    def test_shows_the_current_banner_with_its_image_link_and_dots(self):
        state = self.service.state()
        self.assertEqual(self.find(".slide-image").get_attribute("src"), state["banner"]["image"])
        self.assertEqual(self.find(".slide-image").get_attribute("alt"), state["banner"]["caption"])
        # Through the service, which counts the click and sends the browser on to the link.
        click = f'{self.service.url}/carousels/default/banners/{state["banner"]["id"]}/click'
        self.assertEqual(self.find(".slide-link").get_attribute("href"), click)
        request = urllib.request.Request(click)
        opener = urllib.request.build_opener(NoRedirect)
        with self.assertRaises(urllib.error.HTTPError) as redirect:
            opener.open(request, timeout=5)
        self.assertEqual(redirect.exception.code, 302)
        self.assertEqual(redirect.exception.headers["Location"], state["banner"]["link"])
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, ".dot")), state["count"])
        self.assertEqual(self.shown_index(), state["index"])
        self.assertTrue(self.browser.execute_script(
            "return document.querySelector('.slide-image').complete && "
            "document.querySelector('.slide-image').naturalWidth > 0"), "the banner image loaded")

    def test_preloads_the_previous_and_next_images(self):
        state = self.service.state()
        loaded = self.browser.execute_script(
            "return performance.getEntriesByType('resource').map(entry => entry.name)")
        for neighbour in ("previous", "next"):
            self.assertIn(state[neighbour]["image"], loaded, f"the {neighbour} banner's image was fetched")

    def test_its_stream_comes_on_a_fresh_connection_which_the_service_holds(self):
        """The page's files come with Connection: close and it opens its stream first: the browser
        has no idle connection to reuse, and the service holds the stream for under 1 KiB
        (docs/SCREENS.md, "The stream first")."""
        self.wait(lambda: self.service.subscribers() == (1, 0), 15,
                  f"one stream, held by the service: {self.service.subscribers()}")

    def test_a_change_made_elsewhere_appears_live(self):
        moved = self.service.call("POST", "/banner/next")
        self.wait_for_caption(moved["banner"]["caption"])
        self.assertEqual(self.shown_index(), moved["index"])
        jumped = self.service.call("PUT", "/banner/index", {"index": 4})
        self.wait_for_caption(jumped["banner"]["caption"])

    def test_the_progress_bar_counts_down_while_playing(self):
        bar = lambda: self.browser.execute_script(
            "return new DOMMatrix(getComputedStyle(document.querySelector('.progress-bar')).transform).a")
        self.service.stop()
        self.service = BannerServer(self.images, interval=2.0)
        self.browser.get(self.service.url + "/")
        self.wait_for_caption(CAPTIONS[0])
        first = bar()
        self.wait(lambda: bar() > first, 3, "the bar grows towards the next advance")

    def test_no_banners_says_so(self):
        self.service.stop()
        empty = Path(tempfile.mkdtemp()) / "empty.json"
        empty.write_text(json.dumps({"host": "127.0.0.1", "port": self.service.port, "banners": []}))
        self.service.config = empty
        self.service.start()
        self.browser.get(self.service.url + "/")
        self.wait(lambda: self.find(".empty").is_displayed(), 5, "the empty state shows")
        self.assertFalse(self.find(".stage").is_displayed())

    def test_survives_a_service_restart(self):
        self.service.stop()
        # It has its plan of the next hours: it plays on, and says since when it is offline.
        self.wait(lambda: self.find(".offline-badge").is_displayed(), 5, "the page says it is offline")
        self.assertRegex(self.find(".offline-badge").text, r"^Offline since \d\d:\d\d$")
        self.assertFalse(self.find(".status").is_displayed())
        self.browser.save_screenshot(str(ARTIFACTS / "service-unreachable.png"))
        self.service.start()
        self.wait(lambda: not self.find(".offline-badge").is_displayed(), 10, "the page reconnects by itself")
        moved = self.service.call("POST", "/banner/next")
        self.wait_for_caption(moved["banner"]["caption"])


class CutOff(WebClientTest):
    """Pages whose network goes (docs/SCREENS.md, offline play): each reaches the service through
    a proxy of its own that can cut every connection, as a shop's network fails; the banners'
    images come through another proxy, cut with them."""

    interval = 2.0

    def setUp(self):
        self.image_proxy = DelayingProxy(type(self).images.port)
        self.addCleanup(self.image_proxy.close)
        self.images = ProxiedImages(type(self).images, self.image_proxy)
        super().setUp()

    def prepare_browser(self):
        self.proxy = DelayingProxy(self.service.port)
        self.addCleanup(self.proxy.close)

    def page_url(self):
        return self.proxy.url + "/"

    def ready_offline(self, browser):
        """Whether the page is served by its service worker and has kept its plan and the images of
        the five banners."""
        return browser.execute_async_script(READY_OFFLINE)

    def kept_plan(self, browser):
        return browser.execute_async_script("""
            const done = arguments[arguments.length - 1];
            caches.open("banner-carousel-plan").then((cache) => cache.match("/carousels/default/plan"))
                .then((kept) => kept.json()).then(done, () => done(null));
        """)

    def badge(self, browser):
        """The offline badge: shown, its text, and whether it overlaps the banner's stage."""
        return browser.execute_script("""
            const badge = document.querySelector(".offline-badge");
            const a = badge.getBoundingClientRect();
            const b = document.querySelector(".stage").getBoundingClientRect();
            return {shown: !badge.hidden && a.width > 0, text: badge.textContent,
                    overlaps: a.left < b.right && b.left < a.right && a.top < b.bottom && b.top < a.bottom};
        """)

    def shown(self, browser):
        """What the page showed since it loaded, as (real epoch ms of the frame, banner id)."""
        origin = browser.execute_script("return performance.timeOrigin")
        return [(origin + entry["frameTime"], entry["id"])
                for entry in browser.execute_script("return window.shownBanners")]

    def queued(self):
        """The reports (views, receipts) the page keeps, waiting for the service to take them."""
        return self.browser.execute_async_script(QUEUED_REPORTS)

    def cut_after_a_lost_answer(self, path):
        """Once the page keeps its plan: the answer to a request for `path` lost on its way back
        (the page keeps what it sent, and sends it again), then the page and its images cut off."""
        self.wait(lambda: self.ready_offline(self.browser), 30, "the page keeps its plan")
        self.proxy.lose_answers = path
        self.wait(lambda: self.proxy.answers_lost >= 1, 30, f"a request for {path!r} lost its answer")
        self.proxy.cut()
        self.image_proxy.cut()
        self.proxy.lose_answers = None
        self.wait(lambda: self.badge(self.browser)["shown"], 15, "the page plays offline")

    def stay_cut_off(self, seconds):
        # Reports made offline for that long: a condition of the test, not a measurement.
        offline_from = time.time()
        self.wait(lambda: time.time() - offline_from > seconds, seconds + 10)

    def restore_and_send_everything(self):
        """Back, then paused (the banner on screen stays, so every report is made), until the page
        has sent every report it kept."""
        self.proxy.restore()
        self.image_proxy.restore()
        self.wait(lambda: not self.badge(self.browser)["shown"], 15, "the page is back")
        self.service.call("POST", "/banner/pause")
        self.wait(lambda: self.find(".pause-button").text == "Resume", 10, "the page is paused")
        self.wait(lambda: self.queued() == 0, 30, "the page has sent every report it kept")

    def image_painted(self, browser):
        return browser.execute_script(
            "const image = document.querySelector('.slide-image'); return image.complete && image.naturalWidth > 0")


def planned_at(instants, at, tolerance_ms=50):
    """The change of `instants` ((epoch ms, banner id), in order) within `tolerance_ms` of `at`."""
    return next((instant for instant in instants if abs(instant[0] - at) <= tolerance_ms), None)


class OfflinePlay(CutOff):
    # A flip a second: the outage below holds as many flips in half the time.
    interval = 1.0

    def test_pages_cut_off_play_on_in_step_reload_from_the_cache_and_rejoin_in_one_step(self):
        second = self.new_browser()
        second_proxy = DelayingProxy(self.service.port)
        self.addCleanup(second_proxy.close)
        self.addCleanup(second.quit)
        second.get(second_proxy.url + "/")
        pages = {"first": self.browser, "second": second}
        for name, browser in pages.items():
            WebDriverWait(browser, 30).until(lambda _: self.ready_offline(browser),
                                             f"the {name} page keeps its plan and images for offline play")
        plan = [(epoch_ms(entry["at"]), entry["banner"])
                for entry in self.service.call("GET", "/carousels/default/timeline?hours=1")["entries"]]

        cut_at = time.time() * 1000
        for proxy in (self.proxy, second_proxy, self.image_proxy):
            proxy.cut()
        for name, browser in pages.items():
            WebDriverWait(browser, 15).until(lambda _: self.badge(browser)["shown"], f"the {name} page says it is offline")
            badge = self.badge(browser)
            self.assertRegex(badge["text"], r"^Offline since \d\d:\d\d$")
            self.assertFalse(badge["overlaps"], f"the badge covers the banner on the {name} page")
        self.browser.save_screenshot(str(ARTIFACTS / "offline-badge.png"))

        # The first page reloaded while cut off comes up from its service worker's cache and plays on,
        # with the images it kept.
        flips = {"first": self.shown(self.browser), "second": []}
        self.browser.refresh()
        self.wait(lambda: self.badge(self.browser)["shown"] and len(self.shown(self.browser)) >= 3, 15,
                  "the reloaded page plays from its plan")
        self.wait(lambda: self.image_painted(self.browser), 5, "the banner's image comes from the worker's cache")

        # A command while the pages are cut off: they learn it when they are back.
        moved = self.service.call("POST", "/banner/next")
        live = [(epoch_ms(entry["at"]), entry["banner"])
                for entry in self.service.call("GET", "/carousels/default/timeline?hours=1")["entries"]]
        # An outage of half a minute: a condition of the test, not a measurement.
        self.wait(lambda: time.time() * 1000 - cut_at >= 30000, 60)
        restored_at = time.time() * 1000
        flips["first"] += self.shown(self.browser)[1:]  # the reloaded page's first banner is no flip
        flips["second"] = self.shown(second)
        for proxy in (self.proxy, second_proxy, self.image_proxy):
            proxy.restore()

        def live_banner(at):
            return next((banner for instant, banner in reversed(live) if instant <= at), moved["banner"]["id"])

        for name, browser in pages.items():
            WebDriverWait(browser, 15).until(lambda _: not self.badge(browser)["shown"]
                                             and self.shown(browser)[-1][1] == live_banner(time.time() * 1000),
                                             f"the {name} page is back on the live banner")
            during = [flip for flip in flips[name] if cut_at <= flip[0] < restored_at]
            self.assertGreaterEqual(len(during), 25, f"the {name} page flipped all through the outage")
            for at, banner in during:
                instant = planned_at(plan, at)
                self.assertIsNotNone(instant, f"the {name} page flipped to {banner} at {at:.0f}, 50 ms or more "
                                              f"from any instant of the timeline")
                self.assertEqual(banner, instant[1], f"the {name} page showed {banner} at {at:.0f}")
            # Back: the planned flips until it knows, one step to the live banner, then the live
            # carousel's flips; no burst of the changes missed.
            after = [flip for flip in self.shown(browser) if flip[0] >= restored_at]
            unplanned = [flip for flip in after if planned_at(plan, flip[0]) is None and planned_at(live, flip[0]) is None]
            self.assertLessEqual(len(unplanned), 1, f"the {name} page came back in more than one step: {after}")
        # In step with each other: the flips of every instant both pages showed, within 50 ms.
        first = {planned_at(plan, at): at for at, _ in flips["first"] if planned_at(plan, at)}
        for at, _ in flips["second"]:
            instant = planned_at(plan, at)
            if instant in first and cut_at <= at < restored_at:
                self.assertLessEqual(abs(first[instant] - at), 50, "the pages flipped apart")
        errors = [entry for entry in second.get_log("browser")
                  if entry["level"] == "SEVERE" and entry.get("source") != "network"]
        self.assertEqual(errors, [], "errors in the second browser's console")


class OfflinePlayOfAScheduledChange(CutOff):
    def test_a_page_cut_off_makes_a_change_scheduled_before_at_its_time(self):
        """A banner added by a change scheduled for T (docs/SCHEDULED.md) is in the plan a page keeps:
        cut off before T, the page shows it, with its caption, from the instant the service planned."""
        self.wait(lambda: self.ready_offline(self.browser), 30, "the page's service worker is in charge")
        at = int(time.time()) + 20
        iso = time.strftime("%Y-%m-%dT%H:%M:%SZ", time.gmtime(at))
        self.service.call("POST", f"/carousels/default/banners?position=0&at={iso}",
                          {"id": "sale", "image": self.images.url(0), "caption": "Winter sale"})
        # The page plans afresh on every change of the carousel and every 10 minutes: reloaded, it
        # plans with the change now.
        self.browser.refresh()

        def kept_change():
            return any(entry.get("change") for entry in (self.kept_plan(self.browser) or {}).get("entries", []))
        self.wait(kept_change, 30, "the page keeps a plan with the change")
        timeline = self.service.call("GET", "/carousels/default/timeline?hours=1")["entries"]
        planned = [(epoch_ms(entry["at"]), entry["banner"]) for entry in timeline]
        self.assertIn("sale", [banner for _, banner in planned], "the service plans the banner added")
        self.assertLess(time.time(), at, "cut off before T (the page took 20 s to be ready)")
        self.proxy.cut()
        self.image_proxy.cut()
        self.browser.execute_script("""
            const caption = document.querySelector(".slide-caption");
            window.captions = [];
            new MutationObserver(() => window.captions.push(caption.textContent))
                .observe(caption, {childList: true, characterData: true, subtree: true});
        """)
        self.wait(lambda: any(banner == "sale" for _, banner in self.shown(self.browser)), 60,
                  "the cut-off page shows the banner added at T")
        self.assertTrue(self.badge(self.browser)["shown"], "it was offline all along")
        flip = next(flip for flip in self.shown(self.browser) if flip[1] == "sale")
        self.assertGreaterEqual(flip[0], at * 1000 - 50, "not before T")
        instant = planned_at(planned, flip[0])
        self.assertEqual(instant and instant[1], "sale", f"shown at {flip[0]:.0f}, as the service planned: {planned}")
        self.wait(lambda: "Winter sale" in self.browser.execute_script("return window.captions"), 15,
                  "with the caption it was added with")


class OfflinePlayToTheEnd(CutOff):
    def prepare_browser(self):
        super().prepare_browser()
        # A plan of 10 s instead of 6 hours, so that the test sees it run out: the page's requests
        # rewritten in the browser, the page itself as it ships.
        self.before_page_scripts("""
            const realFetch = window.fetch;
            window.fetch = (resource, ...rest) =>
                realFetch(typeof resource === "string" ? resource.replace("?hours=6", "?hours=0.0028") : resource, ...rest);
        """)

    def test_the_last_planned_banner_stays_and_the_badge_says_so(self):
        self.wait(lambda: self.ready_offline(self.browser), 30, "the page keeps its plan")
        self.proxy.cut()
        self.image_proxy.cut()
        plan = self.kept_plan(self.browser)
        self.assertIsNotNone(plan)
        self.wait(lambda: "nothing planned after this banner" in self.badge(self.browser)["text"], 40,
                  "the badge says the plan ran out")
        self.assertFalse(self.badge(self.browser)["overlaps"])
        last = plan["entries"][-1]
        self.assertLessEqual(last["at"], plan["until"])
        # It stays: two intervals more, and nothing else shown.
        waited_from = time.time()
        self.wait(lambda: time.time() - waited_from > 2 * self.interval + 0.5, 10)
        shown = self.shown(self.browser)
        self.assertEqual(shown[-1][1], last["banner"], "the plan's last banner stays")
        self.assertLess(shown[-1][0], plan["until"] + 50, "nothing shown after the plan ended")
        self.assertEqual(self.find(".slide").get_attribute("data-banner-id"), last["banner"])


class ViewsThroughAnOutage(CutOff):
    """Views made while cut off, and views whose flush lost its answer, are counted once each
    when the page is back (docs/STATS.md): the page keeps them in IndexedDB with ids of its own
    until the service has taken them, and the service ignores an id it knows."""


    def views_made(self):
        """The views the page made, from what it showed: a banner on screen a second or more (a
        stretch within a frame or two of a second may be either), as (certain, either)."""
        shown = self.shown(self.browser)
        stretches = [later[0] - earlier[0] for earlier, later in zip(shown, shown[1:])]
        return (sum(1 for ms in stretches if ms >= 1050), sum(1 for ms in stretches if 950 <= ms < 1050))

    def total_views(self):
        return sum(self.service.engagement()[0].values())

    def test_views_of_an_outage_and_of_a_flush_whose_answer_was_lost_count_once(self):
        # A flush reaches the service, its answer is lost: the page keeps those views and sends them again.
        self.cut_after_a_lost_answer(b"/views")
        self.stay_cut_off(10)
        self.restore_and_send_everything()
        certain, either = self.views_made()
        total = self.total_views()
        self.assertGreaterEqual(certain, 10, "views were made before, during and after the outage")
        self.assertTrue(certain <= total <= certain + either,
                        f"the service counted {total} views; the page made {certain} (+{either} borderline)")


class ReceiptsThroughAnOutage(CutOff):
    """Receipts of the flips made while cut off, and of a batch whose answer was lost, reach the
    service once the page is back, and each is measured once (docs/SCREENS.md, offline play)."""

    def page_url(self):
        return self.proxy.url + "/?screen=wall-1"

    def measured(self):
        with urllib.request.urlopen(self.service.url + "/metrics", timeout=5) as response:
            found = re.search(r"^banner_screen_lateness_seconds_count (\d+)$", response.read().decode(), re.M)
        return int(found.group(1)) if found else 0

    def test_receipts_of_an_outage_and_of_a_lost_answer_are_measured_once(self):
        self.cut_after_a_lost_answer(b"/receipts")
        measured_offline = self.measured()
        self.stay_cut_off(10)
        self.assertEqual(self.measured(), measured_offline, "nothing reached the service while cut off")
        self.restore_and_send_everything()
        # Every change shown after the first, once the page knew the service's clock, is a flip
        # with a receipt, but the one step back to the live state (if it changed the banner).
        flips = sum(1 for entry in self.shown_banners()[1:] if entry["serviceTime"] is not None)
        self.assertGreaterEqual(flips, 8)
        self.assertIn(self.measured(), (flips - 1, flips),
                      f"{self.measured()} receipts measured for {flips} changes shown")
        # Heard again before its receipts came, it may have looked frozen for a tick; its receipts
        # say it was in step all along.
        self.wait(lambda: self.screen_state() == "online", 10, "wall-1 is online once its receipts are in")

    def screen_state(self):
        return next(entry["state"] for entry in self.service.call("GET", "/screens")["screens"]
                    if entry["id"] == "wall-1")


class Driving(WebClientTest):
    def test_next_and_previous_buttons_move_the_service(self):
        self.find(".next-button").click()
        self.wait(lambda: self.service.state()["index"] == 1, 3, "Next moved the service")
        self.wait_for_caption(CAPTIONS[1])
        self.find(".previous-button").click()
        self.wait(lambda: self.service.state()["index"] == 0, 3, "Previous moved the service")

    def test_the_pause_button_toggles_the_service(self):
        pause = self.find(".pause-button")
        self.assertEqual(pause.text, "Pause")
        pause.click()
        self.wait(lambda: self.service.state()["paused"], 3, "Pause paused the service")
        self.wait(lambda: pause.get_attribute("aria-pressed") == "true" and pause.text == "Resume")
        pause.click()
        self.wait(lambda: not self.service.state()["paused"], 3, "Resume resumed it")

    def test_a_dot_jumps_to_its_banner(self):
        self.browser.find_elements(By.CSS_SELECTOR, ".dot")[3].click()
        self.wait(lambda: self.service.state()["index"] == 3, 3, "the dot jumped")
        self.wait(lambda: self.shown_index() == 3)

    def test_keyboard_pages_and_pauses(self):
        body = self.find("body")
        body.send_keys(Keys.ARROW_RIGHT)
        self.wait(lambda: self.service.state()["index"] == 1, 3, "→ moves forward")
        body.send_keys(Keys.ARROW_LEFT)
        self.wait(lambda: self.service.state()["index"] == 0, 3, "← moves back")
        body.send_keys(Keys.SPACE)
        self.wait(lambda: self.service.state()["paused"], 3, "space pauses")
        self.find(".next-button").send_keys(Keys.TAB)
        focused = self.browser.switch_to.active_element
        outline = focused.value_of_css_property("outline-style")
        self.assertNotEqual(outline, "none", "the focused control shows a focus ring")

    def test_no_slide_animation_when_reduced_motion_is_preferred(self):
        self.browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        self.browser.refresh()
        self.wait_for_caption(CAPTIONS[0])
        self.find(".next-button").click()
        self.wait_for_caption(CAPTIONS[1])
        self.assertEqual(self.find(".slide").value_of_css_property("animation-name"), "none")

    def test_slides_animate_otherwise(self):
        self.find(".next-button").click()
        self.wait_for_caption(CAPTIONS[1])
        self.assertEqual(self.find(".slide").value_of_css_property("animation-name"), "enter-forward")


class SchedulesAndTakeovers(WebClientTest):
    """One dot per rotating banner; a takeover shown as it is (docs/SCHEDULES.md)."""

    def dot_ids(self):
        # In one script: the page may replace its dots between two WebDriver calls.
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('.dot'), (dot) => dot.dataset.bannerId ?? null)")

    def test_one_dot_per_rotating_banner(self):
        self.service.call("PATCH", "/carousels/default/banners/banner-2", {"enabled": False})
        self.wait(lambda: self.dot_ids() == ["banner-0", "banner-1", "banner-3", "banner-4"], 5,
                  "banner-2 switched off leaves the rotation and its dot goes")
        self.service.call("PATCH", "/carousels/default/banners/banner-2", {"enabled": None})
        self.wait(lambda: len(self.dot_ids()) == 5, 5, "back in the rotation")

    def test_a_takeover_shows_its_banner_without_dots_or_countdown(self):
        alert = {"id": "alert", "image": self.images.url(0), "caption": "Fire drill at three"}
        self.service.call("POST", "/carousels/default/takeover", {"banner": alert, "seconds": 600})
        self.wait_for_caption("Fire drill at three")
        self.assertFalse(self.find(".dots").is_displayed(), "no dots under a takeover")
        self.assertFalse(self.find(".progress").is_displayed(), "no countdown under a takeover")
        self.assertFalse(self.find(".next-button").is_enabled(), "no paging under a takeover")
        self.browser.save_screenshot(str(ARTIFACTS / "takeover.png"))
        self.service.call("DELETE", "/carousels/default/takeover")
        self.wait_for_caption(CAPTIONS[0])
        self.assertTrue(self.find(".dots").is_displayed())
        self.assertEqual(len(self.dot_ids()), 5)


class Audiences(WebClientTest):
    """A page of an audience shows and drives that audience's rotation (docs/AUDIENCES.md):
    banner-1 is for de only, banner-2 for fr only."""

    def setUp(self):
        super().setUp()
        self.service.call("PATCH", "/carousels/default/banners/banner-1", {"audiences": ["de"]})
        self.service.call("PATCH", "/carousels/default/banners/banner-2", {"audiences": ["fr"]})

    def dot_ids(self):
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('.dot'), (dot) => dot.dataset.bannerId ?? null)")

    def test_a_page_of_an_audience_shows_and_drives_its_rotation(self):
        self.browser.get(self.service.url + "/?audience=de")
        self.wait(lambda: self.dot_ids() == ["banner-0", "banner-1", "banner-3", "banner-4"], 15,
                  f"de's rotation, shows {self.dot_ids()}")
        self.find(".next-button").click()
        self.wait_for_caption(CAPTIONS[1])
        self.assertEqual(self.service.call("GET", "/banner?audience=fr")["banner"]["id"], "banner-2",
                         "next moved fr's screens too")
        self.assertEqual(self.service.state()["banner"]["id"], "banner-3", "and those declaring no audience")
        self.find(".dot[data-banner-id='banner-4']").click()
        self.wait_for_caption(CAPTIONS[4])
        self.assertEqual(self.service.call("GET", "/banner?audience=de")["banner"]["id"], "banner-4",
                         "the dot's index is in de's rotation")

    def test_a_page_of_an_audience_counts_its_views_and_clicks_as_its_audiences(self):
        self.browser.get(self.service.url + "/?audience=de")
        self.wait(lambda: self.dot_ids() == ["banner-0", "banner-1", "banner-3", "banner-4"], 15, "de's rotation")
        self.service.call("PUT", "/banner/index?audience=de", {"index": 1})
        self.wait_for_caption(CAPTIONS[1])
        self.assertEqual(self.find(".slide-link").get_attribute("href"),
                         self.service.url + "/carousels/default/banners/banner-1/click?audience=de",
                         "its clicks count as de's")
        self.let_a_second_pass()
        self.browser.get("about:blank")
        self.wait(lambda: self.service.engagement("de")[0].get("banner-1") == 1, 10, "the beacon brings de's view")
        self.assertNotIn("banner-1", self.service.engagement()[0], "screens of no audience never see banner-1")


class AnotherCarousel(WebClientTest):
    """/carousels/NAME/ and /?carousel=NAME show and drive that carousel, not `default`."""

    def setUp(self):
        super().setUp()
        banners = [{"id": f"lobby-{n}", "image": self.images.url(n), "caption": f"Lobby {n}"} for n in range(3)]
        self.service.call("POST", "/carousels", {"name": "lobby", "interval": 3600, "banners": banners})

    def check_drives_lobby(self):
        self.wait_for_caption("Lobby 0")
        self.assertIn("lobby", self.browser.title)
        self.find(".next-button").click()
        self.wait(lambda: self.service.call("GET", "/carousels/lobby/banner")["index"] == 1, 3, "Next moved lobby")
        self.wait_for_caption("Lobby 1")
        self.assertEqual(self.service.state()["index"], 0, "default did not move")
        self.service.call("POST", "/carousels/lobby/banner/next")
        self.wait_for_caption("Lobby 2")

    def test_the_carousels_own_path(self):
        self.browser.get(self.service.url + "/carousels/lobby/")
        self.check_drives_lobby()

    def test_the_query_parameter(self):
        self.browser.get(self.service.url + "/?carousel=lobby")
        self.check_drives_lobby()

    def test_an_unknown_carousel_is_said_so(self):
        self.browser.get(self.service.url + "/?carousel=nope")
        self.wait(lambda: "no carousel named" in self.find(".status").text, 5, "the page names the missing carousel")


class WithAControlToken(WebClientTest):
    token = "s3cret-control-token"

    def test_asks_for_the_token_once_and_reports_a_wrong_one(self):
        self.find(".next-button").click()
        dialog = self.find(".token-dialog")
        self.wait(lambda: dialog.is_displayed(), 3, "the page asks for the token")
        self.assertIn("protected", self.find(".token-message").text)
        self.find(".token-input").send_keys("wrong-token")
        self.find(".token-save").click()
        self.wait(lambda: "refused" in self.find(".token-message").text, 3, "a wrong token is reported")
        self.browser.save_screenshot(str(ARTIFACTS / "token-refused.png"))
        self.find(".token-input").send_keys(self.token)
        self.find(".token-save").click()
        self.wait(lambda: self.service.state()["index"] == 1, 3, "the right token moves the service")
        self.assertFalse(dialog.is_displayed())
        self.find(".next-button").click()
        self.wait(lambda: self.service.state()["index"] == 2, 3, "kept for the tab: no second question")
        self.assertFalse(dialog.is_displayed())

    def test_cancelling_shows_why_nothing_happened(self):
        self.find(".pause-button").click()
        self.wait(lambda: self.find(".token-dialog").is_displayed(), 3)
        self.find(".token-cancel").click()
        self.wait(lambda: self.find(".error").is_displayed(), 3, "an error, not a silent failure")
        self.assertIn("control token", self.find(".error").text)
        self.assertFalse(self.service.state()["paused"])


class InStep(WebClientTest):
    """Flips at nextAdvanceAt on the service's clock (docs/SCREENS.md), whatever the browser's
    own clock says and however late the pushed state arrives."""

    interval = 2.0
    hold = 1.5  # seconds the proxy holds back the event stream
    skew = 5 * 60 * 1000  # milliseconds the browser's clock is moved

    def prepare_browser(self):
        self.proxy = DelayingProxy(self.service.port, hold_events=self.hold)
        self.addCleanup(self.proxy.close)
        # The browser's wall clock (Date and performance.timeOrigin) five minutes ahead; the real
        # origin is kept aside to place the page's frames on the real clock.
        self.before_page_scripts(f"""
            window.realTimeOrigin = performance.timeOrigin;
            const RealDate = Date;
            const skewed = () => RealDate.now() + {self.skew};
            window.Date = class extends RealDate {{
                constructor(...args) {{ if (args.length === 0) super(skewed()); else super(...args); }}
                static now() {{ return skewed(); }}
            }};
            Object.defineProperty(performance, "timeOrigin", {{value: window.realTimeOrigin + {self.skew}}});
        """)

    element = None  # the page's own slide

    def page_url(self):
        return self.proxy.url + "/"

    def test_flips_at_next_advance_on_the_service_clock_before_the_held_back_event(self):
        self.assertGreater(self.browser.execute_script("return Date.now() - performance.now() - performance.timeOrigin"),
                           -1000, "the skewed clock is in place")
        self.wait(lambda: sum(1 for shown in self.shown_banners(self.element) if shown["foreseen"]) >= 4, 30,
                  "the page flips by itself at nextAdvanceAt, four times")
        state = self.service.state()
        # The service advances every 2 s from its anchor: its due times are nextAdvanceAt − 2k s.
        next_advance = datetime.fromisoformat(state["nextAdvanceAt"].replace("Z", "+00:00")).timestamp() * 1000
        origin = self.browser.execute_script("return window.realTimeOrigin")
        shown = self.shown_banners(self.element)
        first_foreseen = next(index for index, entry in enumerate(shown) if entry["foreseen"])
        for number, entry in enumerate(shown[first_foreseen:]):
            # Every change after the first flip was foreseen: the late events only confirmed them.
            self.assertTrue(entry["foreseen"], f"{entry} came from an event, not at nextAdvanceAt")
            if number == 0:
                continue  # may be late: the page loaded just before a due time, its clock not estimated yet
            flipped_at = origin + entry["frameTime"]
            due = next_advance - round((next_advance - flipped_at) / 2000) * 2000
            # The event of this advance reaches the page `hold` seconds after it; a page that
            # trusted its own clock would be five minutes off.
            self.assertLess(abs(flipped_at - due), 0.25 * self.hold * 1000,
                            f"{entry['id']} shown {flipped_at - due:+.1f} ms from its due time")
            # The frame chosen by the page's own estimate of the service's clock, which it
            # announces: the first at most half a 60 Hz frame before the due time (advanceIsDue),
            # and an estimate close to the real clock, not five minutes off.
            self.assertGreaterEqual(entry["serviceTime"], due - 1000 / 120,
                                    f"{entry['id']} shown before its frame on the page's own estimate")
            self.assertLess(abs(entry["serviceTime"] - flipped_at), 50,
                            f"the page's estimate of the service clock is {entry['serviceTime'] - flipped_at:+.1f} ms off")
        ids = [entry["id"] for entry in shown[first_foreseen:]]
        self.assertEqual(ids, [f"banner-{(int(ids[0][-1]) + step) % 5}" for step in range(len(ids))],
                         "one banner after the other, in the service's order")


class Screens(WebClientTest):
    """The page as a screen of the fleet (docs/SCREENS.md): named by `?screen=`, reporting what it
    shows after each flip, listed by GET /screens as the service judges it."""

    interval = 2.0
    # Offline soon after the page is gone: the test waits for it, not for the default 30 s.
    environment = {"CAROUSEL_SCREEN_TIMEOUT": "3"}

    def page_url(self):
        return self.service.url + "/?screen=wall-1"

    def screen(self, screen_id="wall-1"):
        return next((entry for entry in self.service.call("GET", "/screens")["screens"]
                     if entry["id"] == screen_id), None)

    def wait_for_receipts(self):
        """Until the service lists a receipt of the page's, and returns the entry."""
        self.wait(lambda: (self.screen() or {}).get("shown") is not None, 30, "wall-1 reports what it shows")
        return self.screen()

    def test_a_page_named_wall_1_is_online_with_receipts_of_what_it_shows(self):
        entry = self.wait_for_receipts()
        self.assertEqual(entry["via"], "stream")
        self.assertEqual(entry["state"], "online", entry)
        shown = [banner["id"] for banner in self.shown_banners()]
        self.assertIn(entry["shown"]["banner"], shown, "a banner the page showed")
        # In step: flipped within the tolerance (50 ms) of the carousel's own change.
        self.assertLessEqual(abs(entry["shown"]["lateMs"]), 50, entry)
        self.assertIsNotNone(entry["offsetMs"])
        # The page claimed wall-1 with the key it keeps (docs/SCREENS.md, "A screen's own
        # reports"): a receipt sent without it is refused, and the page's key is not in the list.
        key = self.browser.execute_script("return localStorage.getItem('banner-carousel-screen-key')")
        self.assertRegex(key or "", r"^[A-Za-z0-9_-]{32}$")
        stranger = {"receipts": [{"version": self.service.state()["version"], "banner": entry["shown"]["banner"],
                                  "shownAt": entry["shown"]["at"]}]}
        with self.assertRaises(urllib.error.HTTPError) as refused:
            self.service.call("POST", "/carousels/default/screens/wall-1/receipts", stranger)
        self.assertEqual(refused.exception.code, 403)
        self.assertNotIn(key, json.dumps(self.service.call("GET", "/screens")))

    def test_a_page_that_stops_flipping_turns_out_of_step_frozen(self):
        self.wait_for_receipts()
        # The page hangs: no frame is drawn any more, its stream stays open.
        self.browser.execute_script("window.requestAnimationFrame = () => 0;")
        self.wait(lambda: (self.screen() or {}).get("reason") == "frozen", 40, "wall-1 is out of step, frozen")
        self.assertEqual(self.screen()["state"], "out-of-step")

    def test_a_closed_page_turns_offline_after_the_timeout(self):
        self.wait(lambda: (self.screen() or {}).get("state") == "online", 15, "wall-1 is online")
        # The tab closed (another one left open for the session). Navigating elsewhere is not
        # enough: Chromium may keep the page, its stream open, in its back/forward cache.
        page = self.browser.current_window_handle
        self.browser.switch_to.new_window("tab")
        other = self.browser.current_window_handle
        self.browser.switch_to.window(page)
        self.browser.close()
        self.browser.switch_to.window(other)
        self.wait(lambda: self.screen()["state"] == "offline", 30, "wall-1 is offline")


class HiddenTab(WebClientTest):
    def test_a_hidden_tab_jumps_to_the_live_banner_when_shown_again(self):
        seen_before = len(self.shown_banners())
        self.browser.minimize_window()
        self.wait(lambda: self.browser.execute_script("return document.visibilityState") == "hidden", 5)
        for _ in range(3):
            self.service.call("POST", "/banner/next")
        self.browser.maximize_window()
        self.wait_for_caption(CAPTIONS[3])
        shown = self.shown_banners()[seen_before:]
        self.assertEqual([entry["id"] for entry in shown], ["banner-3"], "no catch-up slideshow")
        self.assertEqual(self.find(".slide").value_of_css_property("animation-name"), "none",
                         "the live banner shows without a slide animation")


class ProofOfPlay(WebClientTest):
    """Views and clicks the page reports (docs/STATS.md)."""

    def test_a_banner_seen_for_a_second_is_a_view_sent_when_the_page_is_left(self):
        self.let_a_second_pass()
        self.assertEqual(self.service.engagement()[0].get("banner-0"), 0, "sent when the view ends, not before")
        self.browser.get("about:blank")
        self.wait(lambda: self.service.engagement()[0].get("banner-0") == 1, 10, "the beacon brings the view")

    def test_the_link_goes_through_the_service_which_counts_the_click(self):
        link = self.find(".slide-link")
        self.assertEqual(link.get_attribute("href"), self.service.url + "/carousels/default/banners/banner-0/click")
        link.click()
        self.wait(lambda: self.service.engagement()[1].get("banner-0") == 1, 10, "the click is counted")


class PreviewCountsNoViews(WebClientTest):
    """The page as the admin page's live preview shows it (`?preview`): nobody's views."""

    def page_url(self):
        return self.service.url + "/?preview"

    def test_a_banner_seen_in_the_preview_is_not_a_view(self):
        self.wait_for_caption(CAPTIONS[0])
        self.let_a_second_pass()
        self.browser.get("about:blank")  # a page that reports views sends them as it is left
        # The same page without ?preview, likewise: its view is the only one, the preview's would
        # have come first.
        self.browser.get(self.service.url + "/")
        self.wait_for_caption(CAPTIONS[0])
        self.let_a_second_pass()
        self.browser.get("about:blank")
        self.wait(lambda: self.service.engagement()[0].get("banner-0", 0) >= 1, 10, "the page's view arrives")
        self.assertEqual(self.service.engagement()[0].get("banner-0"), 1, "one view: the preview's is not counted")


class ComponentTest(WebClientTest):
    """<banner-carousel> from /embed.js on a shop's page of another origin (docs/EMBEDDING.md)."""

    shop = None

    def setUp(self):
        if ComponentTest.shop is None:
            ComponentTest.shop = ShopPage()
        self.cors_origins = (ComponentTest.shop.origin,)
        super().setUp()

    def page_url(self):
        return self.shop.show(self.service.url, token=self.page_token())

    def page_token(self):
        return None

    def wait_for_page(self):
        banner = self.service.state()["banner"]["id"]
        self.wait(lambda: self.shown_in("first") == banner and self.shown_in("second") == banner, 15,
                  "both elements show the service's banner")

    def component(self, element, script):
        """Runs `script` with `root`, the shadow root of the element `#element`."""
        return self.browser.execute_script(
            f"const root = document.getElementById(arguments[0]).shadowRoot; {script}", element)

    def shown_in(self, element):
        return self.component(element, "return root.querySelector('.slide.current').dataset.bannerId ?? null")

    def wait_shown(self, element, banner, seconds=15, message=""):
        self.wait(lambda: self.shown_in(element) == banner, seconds,
                  message or f"#{element} should show {banner}, shows {self.shown_in(element)}")

    def glides(self, element):
        return self.component(element, "return root.querySelector('.track').getAnimations().length")

    def touch_drag(self, element, fraction, steps, step_ms):
        """A finger on the middle of the banner, moved `fraction` of its width in `steps` moves
        `step_ms` apart by the events' own clock (DevTools input: the speed is exactly that)."""
        rect = self.component(element, "return root.querySelector('.viewport').getBoundingClientRect().toJSON()")
        x, y = rect["x"] + rect["width"] / 2, rect["y"] + rect["height"] / 2
        start = time.time()

        def touch(kind, step, points):
            self.browser.execute_cdp_cmd("Input.dispatchTouchEvent", {
                "type": kind, "touchPoints": points, "timestamp": start + step * step_ms / 1000})

        touch("touchStart", 0, [{"x": x, "y": y}])
        for step in range(1, steps + 1):
            touch("touchMove", step, [{"x": x + fraction * rect["width"] * step / steps, "y": y}])
        touch("touchEnd", steps, [])



class ComponentAudiences(ComponentTest):
    """An element's `audience` attribute (docs/AUDIENCES.md): #first is fr's, #second no audience's."""

    def test_an_element_shows_its_audiences_rotation(self):
        self.service.call("PATCH", "/carousels/default/banners/banner-1", {"audiences": ["de"]})
        self.service.call("PATCH", "/carousels/default/banners/banner-2", {"audiences": ["fr"]})
        self.browser.get(self.shop.show(self.service.url, audience="fr"))
        self.wait_shown("first", "banner-0")
        self.service.call("POST", "/banner/next")
        self.wait_shown("first", "banner-2", message="fr's rotation: banner-0, 2, 3, 4")
        self.wait_shown("second", "banner-3", message="no audience's: banner-0, 3, 4")
        self.service.call("POST", "/banner/next")
        self.wait_shown("first", "banner-3")
        self.wait_shown("second", "banner-4")


class ComponentScreens(ComponentTest):
    """Components as screens (docs/SCREENS.md): `#first` named by its `screen` attribute, `#second`
    by the id made for this browser; both report their flips from the shop's origin."""

    interval = 2.0

    def page_url(self):
        return self.shop.show(self.service.url, screen="shop-1")

    def test_each_element_is_a_screen_reporting_what_it_shows(self):
        def listed():
            return {entry["id"]: entry for entry in self.service.call("GET", "/screens")["screens"]}

        self.wait(lambda: len([entry for entry in listed().values() if entry["shown"]]) == 2, 30,
                  "both elements report what they show")
        screens = listed()
        self.assertIn("shop-1", screens)
        made = [screen for screen in screens if screen != "shop-1"]
        self.assertEqual(len(made), 1)
        self.assertRegex(made[0], r"^web-[a-z0-9]{12}$")
        for entry in screens.values():
            self.assertEqual(entry["state"], "online", entry)
            self.assertLessEqual(abs(entry["shown"]["lateMs"]), 50, entry)


class ComponentOffline(ComponentTest):
    """The component cut off from the service (docs/SCREENS.md, offline play): it has no worker of
    the service's on a shop's origin, and plays from the plan it holds in memory."""

    # A flip a second: the eight flips asked while cut off come in twelve seconds.
    interval = 1.0

    def prepare_browser(self):
        self.proxy = DelayingProxy(self.service.port)
        self.addCleanup(self.proxy.close)

    def page_url(self):
        return self.shop.show(self.proxy.url)

    def status(self, element):
        return self.component(element, """
            const status = root.querySelector(".status").getBoundingClientRect();
            const viewport = root.querySelector(".viewport").getBoundingClientRect();
            return {text: root.querySelector(".status").hidden ? null : root.querySelector(".status").textContent,
                    overlaps: status.left < viewport.right && viewport.left < status.right
                        && status.top < viewport.bottom && viewport.top < status.bottom};
        """)

    def test_plays_on_from_its_plan_in_step_and_rejoins(self):
        for element in ("first", "second"):
            self.wait(lambda: self.browser.execute_script(
                "return document.getElementById(arguments[0]).plan.plan !== null", element), 15,
                f"#{element} holds its plan")
        plan = [(epoch_ms(entry["at"]), entry["banner"])
                for entry in self.service.call("GET", "/carousels/default/timeline?hours=1")["entries"]]
        cut_at = time.time() * 1000
        self.proxy.cut()
        for element in ("first", "second"):
            self.wait(lambda: (self.status(element)["text"] or "").startswith("Offline since"), 15,
                      f"#{element} says it is offline")
            self.assertRegex(self.status(element)["text"], r"^Offline since \d\d:\d\d$")
            self.assertFalse(self.status(element)["overlaps"], "the status covers the banner")
        # Twelve seconds cut off (more than the eight flips asked below): a condition of the test, not
        # a measurement.
        self.wait(lambda: time.time() * 1000 - cut_at >= 12000, 30)
        # A command while cut off: the elements show it once they are back.
        moved = self.service.call("POST", "/banner/next")
        live = [(epoch_ms(entry["at"]), entry["banner"])
                for entry in self.service.call("GET", "/carousels/default/timeline?hours=1")["entries"]]
        restored_at = time.time() * 1000
        self.proxy.restore()

        def live_banner(at):
            return next((banner for instant, banner in reversed(live) if instant <= at), moved["banner"]["id"])

        origin = self.browser.execute_script("return performance.timeOrigin")
        for element in ("first", "second"):
            during = [(origin + entry["frameTime"], entry["id"]) for entry in self.shown_banners(element)
                      if cut_at <= origin + entry["frameTime"] < restored_at]
            self.assertGreaterEqual(len(during), 8, f"#{element} flipped while cut off")
            for at, banner in during:
                instant = planned_at(plan, at)
                self.assertIsNotNone(instant, f"#{element} flipped to {banner} at {at:.0f}, 50 ms or more from "
                                              f"any instant of the timeline")
                self.assertEqual(banner, instant[1])
            self.wait(lambda: self.status(element)["text"] is None
                      and self.shown_banners(element)[-1]["id"] == live_banner(time.time() * 1000), 15,
                      f"#{element} is back on the live banner")


class Component(ComponentTest):
    def test_a_banner_whose_image_fails_shows_its_caption_across_the_banner(self):
        shown = self.service.state()["index"]
        self.service.call("POST", f"/carousels/default/banners?position={shown + 1}",
                          {"id": "lost", "image": self.images.url(99), "caption": "Image lost"})
        self.service.call("POST", "/banner/next")
        self.wait_shown("first", "lost")
        self.wait(lambda: self.component("first", "return root.querySelector('.slide.current').classList"
                                                  ".contains('missing-image')"), 10, "the slide knows its image failed")
        self.assertEqual(self.browser.execute_script(MISSING_IMAGE_GEOMETRY, "first", ".slide.current",
                                                     ".slide.current figcaption", ".slide.current img"),
                         {"top": 0, "fills": True, "image": "hidden"})

    def test_follows_the_service_from_another_origin(self):
        self.assertEqual(self.component("first", "return root.querySelectorAll('.dot').length"), 5)
        self.assertTrue(self.component(
            "first", "return ['.previous-button', '.next-button', '.pause-button']"
                     ".every((selector) => root.querySelector(selector).hidden)"),
            "no paging everybody's carousel without a token")
        self.assertEqual(self.browser.execute_script(
            "return [typeof ServiceClock, typeof attachSwipe, typeof foreseeAdvance]"), ["undefined"] * 3,
            "/embed.js leaks nothing into the shop's page but the element")
        moved = self.service.call("POST", "/banner/next")
        self.wait_shown("first", moved["banner"]["id"])
        self.wait_shown("second", moved["banner"]["id"])
        self.browser.save_screenshot(str(ARTIFACTS / "component-on-a-shop-page.png"))

    def test_both_streams_come_on_fresh_connections_which_the_service_holds(self):
        self.wait(lambda: self.service.subscribers() == (2, 0), 15,
                  f"two streams, held by the service: {self.service.subscribers()}")

    def test_the_demo_page_served_by_the_service_uses_it(self):
        self.browser.get(self.service.url + "/embed-demo.html")
        self.wait(lambda: self.browser.execute_script(
            "const root = document.querySelector('banner-carousel').shadowRoot;"
            "return root.querySelector('.slide.current').dataset.bannerId ?? null") == "banner-0", 15,
            "the demo page shows the carousel default")
        self.browser.save_screenshot(str(ARTIFACTS / "embed-demo.png"))

    def test_hover_holds_that_view_only_and_it_rejoins_on_leave(self):
        host = self.browser.find_element(By.ID, "first")
        ActionChains(self.browser).move_to_element(host).perform()
        moved = self.service.call("POST", "/banner/next")
        self.wait_shown("second", moved["banner"]["id"], message="the other view follows the service")
        self.assertEqual(self.shown_in("first"), "banner-0", "the hovered view holds its banner")
        ActionChains(self.browser).move_to_element(self.browser.find_element(By.ID, "heading")).perform()
        self.wait_shown("first", moved["banner"]["id"], message="the view rejoins the live banner on leave")

    def test_a_swipe_browses_that_view_then_rejoins_the_live_banner(self):
        self.touch_drag("first", -0.45, steps=8, step_ms=40)
        self.wait_shown("first", "banner-1", message="a swipe past a third of the width shows the next banner")
        self.assertEqual(self.service.state()["index"], 0, "a visitor's swipe pages nobody else")
        self.assertEqual(self.shown_in("second"), "banner-0")
        self.wait_shown("first", "banner-0", message="the view rejoins the live banner after the last touch")

    def test_a_short_slow_swipe_springs_back_and_a_flick_moves_on(self):
        self.touch_drag("first", -0.25, steps=10, step_ms=100)  # about 0.3 px/ms: slow
        self.wait(lambda: self.glides("first") == 0, 5, "the track springs back")
        self.assertEqual(self.shown_in("first"), "banner-0", "short of a third of the width: springs back")
        self.touch_drag("first", 0.12, steps=3, step_ms=16)  # about 3 px/ms: a flick
        self.wait_shown("first", "banner-4", message="a fast flick to the right shows the previous banner")

    def test_keyboard_browses_that_view_without_animation_under_reduced_motion(self):
        self.browser.execute_cdp_cmd("Emulation.setEmulatedMedia", {
            "features": [{"name": "prefers-reduced-motion", "value": "reduce"}]})
        self.component("first", "root.querySelector('.carousel').focus()")
        ActionChains(self.browser).send_keys(Keys.ARROW_RIGHT).perform()
        self.wait_shown("first", "banner-1", message="→ shows the next banner in that view")
        self.assertEqual(self.component(
            "first", "return getComputedStyle(root.querySelector('.slide.current')).animationName"), "none")
        self.assertEqual(self.service.state()["index"], 0, "a visitor's keys page nobody else")
        ActionChains(self.browser).send_keys(Keys.ARROW_LEFT, Keys.ARROW_LEFT).perform()
        self.wait_shown("first", "banner-4")
        self.assertEqual(self.component(
            "first", "return root.querySelector('.dot[aria-current=\"true\"]').dataset.bannerId"), "banner-4")
        self.browser.find_element(By.ID, "elsewhere").click()
        self.wait_shown("first", "banner-0", message="focus gone: the view rejoins the live banner")


class ComponentProofOfPlay(ComponentTest):
    def test_each_element_on_screen_reports_its_views_and_links_through_the_service(self):
        on_screen = self.browser.execute_script("""
            return ["first", "second"].filter((id) => {
                const box = document.getElementById(id).getBoundingClientRect();
                const visible = Math.min(box.bottom, innerHeight) - Math.max(box.top, 0);
                return visible >= box.height / 2;
            }).length""")
        self.assertGreaterEqual(on_screen, 1)
        self.assertEqual(
            self.component("first", "return root.querySelector('.slide.current a').href"),
            self.service.url + "/carousels/default/banners/banner-0/click")
        self.let_a_second_pass()
        self.browser.get("about:blank")
        self.wait(lambda: self.service.engagement()[0].get("banner-0") == on_screen, 10,
                  f"one view from each of the {on_screen} elements at least half on screen")


class ComponentInStep(InStep, ComponentTest):
    """The same, for the component on a shop's page: flips in step too."""

    element = "first"

    def page_url(self):
        return self.shop.show(self.proxy.url)


class ComponentWithAToken(ComponentTest):
    token = "shop-secret-control"

    def page_token(self):
        return self.token

    def test_its_buttons_page_every_screen(self):
        self.component("first", "root.querySelector('.next-button').click()")
        self.wait(lambda: self.service.state()["index"] == 1, 5, "Next paged the shared carousel")
        self.wait_shown("second", "banner-1")
        self.wait_shown("first", "banner-1")
        self.component("first", "root.querySelector('.pause-button').click()")
        self.wait(lambda: self.service.state()["paused"], 5, "Pause paused the shared carousel")


class SwipeOnThePage(WebClientTest):
    def test_a_swipe_on_the_built_in_page_is_the_global_command(self):
        stage = self.find(".stage")
        ActionChains(self.browser).move_to_element(stage).click_and_hold() \
            .move_by_offset(-100, 0).move_by_offset(-200, 0).move_by_offset(-200, 0).release().perform()
        self.wait(lambda: self.service.state()["index"] == 1, 5, "a swipe to the left pages every screen")
        self.wait_for_caption(CAPTIONS[1])
        ActionChains(self.browser).move_to_element(stage).click_and_hold().pause(0.2) \
            .move_by_offset(40, 0).pause(0.2).move_by_offset(40, 0).pause(0.2).release().perform()
        self.wait(lambda: not self.browser.execute_script(
            "return document.querySelector('.track').getAnimations().length"), 5, "the track springs back")
        self.assertEqual(self.service.state()["index"], 1, "a short swipe pages nothing")


class AdminPageTest(WebClientTest):
    """The admin page at /admin (docs/ADMIN.md), driven as a user would, checked over the API."""

    def page_url(self):
        return self.service.url + "/admin"

    def wait_for_page(self):
        self.wait(lambda: self.listed() == ["default"], 15, "the page lists the carousel default")

    def listed(self):
        # Read in one script: the page rebuilds its rows when the list changes.
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#carousels tbody tr'), (row) => row.dataset.carousel)")

    def definition(self, name):
        return self.service.call("GET", f"/carousels/{name}", token=self.admin_token)

    def assert_missing(self, name):
        with self.assertRaises(urllib.error.HTTPError) as missing:
            self.definition(name)
        self.assertEqual(missing.exception.code, 404, f"{name} should not exist")

    def create(self, name, interval=None, time_zone=None):
        self.find("#create-name").send_keys(name)
        if interval is not None:
            field = self.find("#create-interval")
            field.clear()
            field.send_keys(interval)
        if time_zone:
            self.find("#create-time-zone").send_keys(time_zone)
        self.find("#create button[type=submit]").click()

    def order(self):
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#banners li'), (item) => item.dataset.banner)")

    def fill(self, form, **values):
        for name, value in values.items():
            field = self.find(f"#{form} [name={name}]")
            field.clear()
            field.send_keys(value)

    def shown_error(self, field):
        error = self.find(f"#create-{field}-error")
        self.wait(error.is_displayed, 10, f"an error shown beside {field}")
        return error.text

    def open_view(self, view):
        """Goes to a view by the navigation, as a user would."""
        self.find(f'nav.views a[data-view="{view}"]').click()
        self.wait(lambda: self.shown_view() == view, 5, f"the {view} view is shown")

    def shown_view(self):
        """The view shown, or None when not exactly one is (and the navigation marks that one)."""
        return self.browser.execute_script("""
            const shown = Array.from(document.querySelectorAll('main > [data-view]')).filter((view) => !view.hidden);
            const current = document.querySelector('nav.views a[aria-current="page"]');
            return shown.length === 1 && current?.dataset.view === shown[0].dataset.view ? shown[0].dataset.view : null""")


class AdminPage(AdminPageTest):
    def test_creates_a_carousel_and_lists_it(self):
        self.create("lobby", "7.5", "Europe/Berlin")
        self.wait(lambda: "lobby" in self.listed(), 10, "the new carousel is listed")
        definition = self.definition("lobby")
        self.assertEqual((definition["interval"], definition["timeZone"], definition["autoplay"]),
                         (7.5, "Europe/Berlin", True))
        self.assertEqual(self.find("#create-name").get_attribute("value"), "", "the form is ready for the next one")
        link = self.find('#carousels tr[data-carousel="lobby"] a')
        self.assertEqual(link.get_attribute("href"), self.service.url + "/carousels/lobby/", "a preview link")

    def test_the_list_is_read_a_page_of_100_at_a_time(self):
        # default and 104 more: two pages, by name.
        names = sorted(["default"] + [f"store-{n:03d}" for n in range(104)])
        for name in names[1:]:
            self.service.call("POST", "/carousels", {"name": name, "banners": []}, token=self.admin_token)
        self.browser.refresh()
        self.wait(lambda: self.listed() == names[:100], 15, "the first page: the first 100 by name")
        self.assertEqual(self.find("#list-page").text, f"Page 1: {names[0]} to {names[99]}")
        self.assertFalse(self.find("#list-previous").is_enabled())
        self.find("#list-next").click()
        self.wait(lambda: self.listed() == names[100:], 15, "the second page: the rest")
        self.assertFalse(self.find("#list-next").is_enabled(), "the last page")
        # Emptied by deletions meanwhile: the page before is shown.
        for name in names[100:]:
            self.service.call("DELETE", f"/carousels/{name}", token=self.admin_token)
        self.wait(lambda: self.listed() == names[:100], 20, "back to the first page")
        self.assertFalse(self.find("#list-pages").is_displayed(), "one page: no page buttons")

    def test_the_list_says_what_each_carousel_shows_now(self):
        now = lambda: self.browser.execute_script("""
            const cell = document.querySelector('#carousels tr[data-carousel="default"] td.now');
            return cell && [cell.firstChild.textContent, ...Array.from(cell.querySelectorAll('.badge'), (b) => b.textContent)]""")
        self.wait(lambda: now() == ["banner-0"], 10, "the banner on now")
        self.service.call("POST", "/carousels/default/takeover", {"banner": "banner-3"}, token=self.admin_token)
        self.service.call("POST", "/banner/pause")
        self.browser.refresh()
        self.wait(lambda: now() == ["banner-3", "takeover", "paused"], 15, "the takeover's banner, said to be one, paused")

    def test_an_invalid_value_is_shown_beside_its_field_and_creates_nothing(self):
        self.create("lobby", "0")
        self.assertIn("greater than 0", self.shown_error("interval"))
        self.assertEqual(self.find("#create-interval").get_attribute("aria-invalid"), "true")
        self.assertEqual(self.find("#create-name").get_attribute("value"), "lobby", "what was typed stays")
        self.assert_missing("lobby")
        # Corrected, the same form goes through, and the field's error goes.
        field = self.find("#create-interval")
        field.clear()
        field.send_keys("4")
        self.find("#create button[type=submit]").click()
        self.wait(lambda: "lobby" in self.listed(), 10, "the corrected carousel is listed")
        self.assertFalse(self.find("#create-interval-error").is_displayed())
        self.assertEqual(self.definition("lobby")["interval"], 4)

    def test_a_bad_name_and_an_unknown_time_zone_are_shown_at_their_fields(self):
        self.create("Lobby!")
        self.assertIn("a-z 0-9", self.shown_error("name"))
        self.find("#create-name").clear()
        self.create("lobby", time_zone="Europe/Berlinn")
        self.assertIn("unknown time zone", self.shown_error("time-zone"))
        self.assertFalse(self.find("#create-name-error").is_displayed(), "the name's error went")
        self.assert_missing("lobby")

    def test_a_name_taken_is_said_under_the_form(self):
        self.create("default")
        error = self.find("#create-error")
        self.wait(error.is_displayed, 10, "the conflict is said")
        self.assertIn("default", error.text)

    def test_deletes_a_carousel_only_once_confirmed(self):
        self.service.call("POST", "/carousels", {"name": "lobby"}, token=self.admin_token)
        self.browser.refresh()
        self.wait(lambda: "lobby" in self.listed(), 15, "the page lists lobby")
        dialog = self.find("#confirm-delete")
        self.find('#carousels button[aria-label="Delete lobby"]').click()
        self.wait(dialog.is_displayed, 5, "a confirmation is asked")
        self.assertEqual(self.browser.switch_to.active_element.text, "Keep it", "keeping it is the default")
        self.browser.switch_to.active_element.send_keys(Keys.ENTER)
        self.wait(lambda: not dialog.is_displayed(), 5, "the dialog closes")
        self.assertEqual(self.definition("lobby")["name"], "lobby", "kept")
        self.find('#carousels button[aria-label="Delete lobby"]').click()
        self.wait(dialog.is_displayed, 5, "a confirmation is asked again")
        dialog.find_element(By.CSS_SELECTOR, 'button[value="delete"]').click()
        self.wait(lambda: "lobby" not in self.listed(), 10, "lobby leaves the list")
        self.assert_missing("lobby")


class AdminScreens(AdminPageTest):
    """The Screens view (docs/ADMIN.md): every screen, what needs an operator first, kept live."""

    def rows(self):
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#screens tbody tr'), (row) => ({screen: row.dataset.screen,"
            " state: row.querySelector('.state').textContent, image: row.querySelector('.shows img')?.src ?? null,"
            " carousel: row.querySelector('.carousel').textContent,"
            " lateness: row.querySelector('.lateness').textContent}))")

    def test_lists_screens_out_of_step_first_with_what_they_show(self):
        self.open_view("screens")
        # desk-2 polls; wall-9 reports banner-0 shown now, an hour after the carousel showed it: late.
        urllib.request.urlopen(self.service.url + "/banner?screen=desk-2", timeout=5).close()
        state = self.service.state()
        shown_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.service.call("POST", "/carousels/default/screens/wall-9/receipts", {"receipts": [
            {"version": state["version"], "banner": state["banner"]["id"], "shownAt": shown_at}]})
        self.wait(lambda: [row["screen"] for row in self.rows()] == ["wall-9", "desk-2"], 20,
                  "both screens listed, the one out of step first")
        wall, desk = self.rows()
        self.assertEqual(wall["state"], "out-of-step: late")
        self.assertEqual(wall["image"], state["banner"]["image"], "the thumbnail of what it shows")
        self.assertRegex(wall["lateness"], r"^\+\d+ ms$")
        self.assertEqual((desk["state"], desk["image"], desk["lateness"]), ("online", None, "—"))
        self.assertEqual(self.find("#screens-status").text, "", "no 'no screen yet' beside the screens")
        # A screen heard from now appears without a reload.
        urllib.request.urlopen(self.service.url + "/banner?screen=lobby-3", timeout=5).close()
        self.wait(lambda: "lobby-3" in [row["screen"] for row in self.rows()], 20, "a new screen appears")
        self.assertEqual(desk["carousel"], "default")
        # A screen of an audience (docs/AUDIENCES.md) says so beside its carousel.
        urllib.request.urlopen(self.service.url + "/banner?screen=hall-de&audience=de", timeout=5).close()
        self.wait(lambda: {row["screen"]: row["carousel"] for row in self.rows()}.get("hall-de") == "default · de", 20,
                  "the screen's audience")
        self.browser.save_screenshot(str(ARTIFACTS / "admin-screens.png"))

    def test_forgets_a_screen_once_confirmed_and_its_new_key_claims_it(self):
        """A kiosk whose storage was wiped lost its key (docs/SCREENS.md, "A screen's own reports"):
        forgotten here, its new key claims its id."""
        self.open_view("screens")
        urllib.request.urlopen(self.service.url + "/banner?screen=kiosk-7&screenKey=lost-key-0123456789",
                               timeout=5).close()
        self.wait(lambda: "kiosk-7" in [row["screen"] for row in self.rows()], 20, "the screen is listed")
        dialog = self.find("#confirm-delete")
        self.find('#screens button[aria-label="Forget kiosk-7 of default"]').click()
        self.wait(dialog.is_displayed, 5, "a confirmation is asked")
        dialog.find_element(By.CSS_SELECTOR, 'button[value="delete"]').click()
        self.wait(lambda: "kiosk-7" not in [row["screen"] for row in self.rows()], 10, "the row goes")
        listed = self.service.call("GET", "/screens", token=self.admin_token)["screens"]
        self.assertNotIn("kiosk-7", [entry["id"] for entry in listed])
        audit = self.service.call("GET", "/audit", token=self.admin_token)["entries"]
        self.assertEqual((audit[0]["action"], audit[0]["target"]), ("screen.forget", "kiosk-7"))
        # Its new key claims it: receipts with it are taken.
        state = self.service.state()
        shown_at = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.service.call("POST", "/carousels/default/screens/kiosk-7/receipts?screenKey=new-key-0123456789",
                          {"receipts": [{"version": state["version"], "banner": state["banner"]["id"],
                                         "shownAt": shown_at}]})
        self.wait(lambda: "kiosk-7" in [row["screen"] for row in self.rows()], 20, "listed again, its new key's")


class AdminEditor(AdminPageTest):
    """One carousel's settings and banners on the admin page, with If-Match on every write."""

    def setUp(self):
        super().setUp()
        self.find('#carousels button[aria-label="Edit default"]').click()
        self.wait(lambda: self.order() == [f"banner-{n}" for n in range(5)], 10, "the editor shows the banners")

    def stored_order(self):
        return [banner["id"] for banner in self.definition("default")["banners"]]

    def banner_button(self, label):
        return self.find(f'#banners button[aria-label="{label}"]')

    def test_adds_a_banner_with_a_preview_and_edits_it(self):
        self.fill("banner-form", id="summer", image=self.images.url(1), caption="Summer sale", link="https://shop.example.com/summer")
        self.wait(lambda: self.find("#banner-preview").is_displayed(), 5, "the image URL shows a thumbnail")
        self.find("#banner-submit").click()
        self.wait(lambda: "summer" in self.order(), 10, "the new banner is listed")
        self.wait(lambda: self.find("#editor-status").text == "Added summer.", 10, "the page says it was added")
        added = self.definition("default")["banners"][-1]
        self.assertEqual((added["id"], added["caption"], added["link"]), ("summer", "Summer sale", "https://shop.example.com/summer"))
        self.banner_button("Edit summer").click()
        self.assertEqual(self.find("#banner-caption").get_attribute("value"), "Summer sale", "the form holds the banner")
        self.fill("banner-form", caption="Summer sale, last days", duration="12", weight="3")
        self.find("#banner-submit").click()
        self.wait(lambda: self.definition("default")["banners"][-1]["caption"] == "Summer sale, last days", 10,
                  "the edit reaches the service")
        self.assertEqual(self.definition("default")["banners"][-1]["duration"], 12)
        self.assertEqual(self.definition("default")["banners"][-1]["weight"], 3, "three turns per cycle")
        self.wait(lambda: self.find('#banners li[data-banner="summer"] .badge.weight').text == "weight 3", 10,
                  "the list shows the weight")

    def preview_instant(self, audience, hours_from_now):
        at = datetime.now(timezone.utc) + timedelta(hours=hours_from_now)
        self.fill("instant-preview", audience=audience)
        self.browser.execute_script("arguments[0].value = arguments[1]", self.find("#instant-at"),
                                    at.strftime("%Y-%m-%dT%H:%M:%S"))
        self.find("#instant-show").click()

    def previewed_banner(self):
        return self.browser.execute_script(
            "return document.querySelector('#instant-result [data-banner]')?.dataset.banner ?? null")

    def test_audiences_are_edited_and_an_audience_is_previewed_at_an_instant(self):
        self.banner_button("Edit banner-1").click()
        self.fill("banner-form", audiences="de, store-berlin")
        self.find("#banner-submit").click()
        self.wait(lambda: self.definition("default")["banners"][1].get("audiences") == ["de", "store-berlin"], 10,
                  "the audiences reach the service")
        self.wait(lambda: self.find('#banners li[data-banner="banner-1"] .badge.audiences').text
                  == "for de, store-berlin", 10, "the list shows them")
        # An hour each, from banner-0: in an hour and a half de's screens (every banner) show
        # banner-1, and screens of no audience (banner-1 is not theirs) banner-2.
        self.preview_instant("de", 1.5)
        self.wait(lambda: self.previewed_banner() == "banner-1", 10, f"de: {self.find('#instant-result').text}")
        self.assertIn("A screen of de will show banner-1", self.find("#instant-result").text)
        self.preview_instant("", 1.5)
        self.wait(lambda: self.previewed_banner() == "banner-2", 10, "no audience")
        self.preview_instant("DE", 1.5)
        self.wait(lambda: "audience 'DE' is invalid" in self.find("#instant-result").text, 10, "a bad name is said")
        self.assertIsNone(self.previewed_banner())
        # The stats of de's screens: their banners (banner-1 among them), their views.
        now = datetime.now(timezone.utc).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.service.call("POST", "/carousels/default/views?audience=de", {"views": [
            {"banner": "banner-1", "at": now, "ms": 3000}]})
        audiences = lambda: [option.get_attribute("value")
                             for option in self.browser.find_elements(By.CSS_SELECTOR, "#stats-audience option")]
        self.wait(lambda: audiences() == ["", "de", "store-berlin"], 10, "the stats offer each audience")
        Select(self.find("#stats-audience")).select_by_value("de")
        self.find("#stats-show").click()
        views = lambda: self.browser.execute_script(
            "const row = document.querySelector('#stats-table tbody tr[data-banner=\"banner-1\"]');"
            " return row && row.querySelectorAll('td')[2].dataset.value")
        self.wait(lambda: views() == "1", 10, "de's view of banner-1")

    def test_a_weight_out_of_range_is_shown_beside_the_field(self):
        self.banner_button("Edit banner-1").click()
        self.fill("banner-form", weight="0")
        self.find("#banner-submit").click()
        error = self.find("#banner-weight-error")
        self.wait(error.is_displayed, 10, "the weight's error shown beside it")
        self.assertIn("1 to 100", error.text)
        self.assertNotIn("weight", self.definition("default")["banners"][1])

    def test_an_invalid_image_url_is_shown_beside_the_field(self):
        self.fill("banner-form", id="broken", image="ftp://example.com/a.png")
        self.find("#banner-submit").click()
        error = self.find("#banner-image-error")
        self.wait(error.is_displayed, 10, "the image's error shown beside it")
        self.assertIn("http", error.text)
        self.assertNotIn("broken", self.stored_order())

    def focused_label(self):
        return self.browser.execute_script("return document.activeElement.getAttribute('aria-label')")

    def test_reorders_by_keyboard_and_keeps_the_focus(self):
        self.banner_button("Move banner-2 up").send_keys(Keys.ENTER)
        self.wait(lambda: self.stored_order()[:3] == ["banner-0", "banner-2", "banner-1"], 10, "moved up once")
        self.wait(lambda: self.order()[:3] == ["banner-0", "banner-2", "banner-1"], 10, "the list follows")
        self.wait(lambda: self.focused_label() == "Move banner-2 up", 10,
                  "the focus stays on the moved banner's button")
        self.browser.switch_to.active_element.send_keys(Keys.ENTER)
        self.wait(lambda: self.stored_order()[:2] == ["banner-2", "banner-0"], 10, "moved up again, to the top")
        self.wait(lambda: self.focused_label() == "Move banner-2 down", 10,
                  "at the top, the focus moves to the button that still works")

    def test_reorders_by_drag_and_drop(self):
        # HTML5 drag and drop, as the browser dispatches it (WebDriver's own drag does not).
        self.browser.execute_script("""
            const [source, target] = [arguments[0], arguments[1]].map(
                (id) => document.querySelector(`#banners li[data-banner="${id}"]`));
            const data = new DataTransfer();
            for (const [element, type] of [[source, "dragstart"], [target, "dragover"], [target, "drop"],
                                           [source, "dragend"]]) {
                element.dispatchEvent(new DragEvent(type, {bubbles: true, cancelable: true, dataTransfer: data}));
            }""", "banner-4", "banner-1")
        self.wait(lambda: self.stored_order() == ["banner-0", "banner-4", "banner-1", "banner-2", "banner-3"], 10,
                  "banner-4 dropped at banner-1's place")

    def test_deletes_a_banner_once_confirmed(self):
        self.banner_button("Delete banner-3").click()
        dialog = self.find("#confirm-delete")
        self.wait(dialog.is_displayed, 5, "a confirmation is asked")
        dialog.find_element(By.CSS_SELECTOR, 'button[value="delete"]').click()
        self.wait(lambda: "banner-3" not in self.order(), 10, "banner-3 leaves the list")
        self.assertNotIn("banner-3", self.stored_order())

    def test_a_concurrent_edit_is_412_and_keeps_what_was_typed(self):
        self.fill("settings", interval="9")
        # Someone else changes the carousel meanwhile, over the API.
        self.service.call("PATCH", "/carousels/default", {"interval": 20}, token=self.admin_token)
        self.find("#settings button[type=submit]").click()
        conflict = self.find("#conflict")
        self.wait(conflict.is_displayed, 10, "the page says someone else changed the carousel")
        self.assertEqual(self.definition("default")["interval"], 20, "nothing of ours was written")
        self.find("#conflict-reload").click()
        self.wait(lambda: not conflict.is_displayed(), 10, "their version is loaded")
        self.assertEqual(self.find("#settings-interval").get_attribute("value"), "9", "what was typed is kept")
        self.find("#settings button[type=submit]").click()
        self.wait(lambda: self.definition("default")["interval"] == 9, 10, "saved on their version")

    def test_starts_and_ends_a_takeover_shown_prominently(self):
        now = self.find("#takeover-now")
        self.wait(lambda: "No takeover" in now.text, 10, "no takeover at first")
        Select(self.find("#takeover-banner")).select_by_value("banner-3")
        self.fill("takeover-form", seconds="600")
        self.find("#takeover-form button[type=submit]").click()
        self.wait(lambda: "banner-3 is on every screen until" in now.text, 10, "the takeover is said")
        self.assertIn("active", now.get_attribute("class"))
        takeover = self.service.state()["takeover"]
        self.assertEqual(takeover["banner"], "banner-3")
        self.assertIsNotNone(takeover["until"])
        self.find("#takeover-end").click()
        self.wait(lambda: "No takeover" in now.text, 10, "ended")
        self.assertIsNone(self.service.state()["takeover"])

    def test_a_takeover_error_is_shown_beside_its_field(self):
        self.fill("takeover-form", seconds="0")
        self.find("#takeover-form button[type=submit]").click()
        error = self.find("#takeover-seconds-error")
        self.wait(error.is_displayed, 10, "the seconds' error beside the field")
        self.assertIsNone(self.service.state()["takeover"])

    def test_fits_a_375_px_wide_screen(self):
        self.browser.execute_cdp_cmd("Emulation.setDeviceMetricsOverride",
                                     {"width": 375, "height": 800, "deviceScaleFactor": 1, "mobile": True})
        self.wait(lambda: self.browser.execute_script("return document.documentElement.clientWidth") == 375, 5,
                  "the screen is a phone's")
        overflow = self.browser.execute_script(
            "return document.documentElement.scrollWidth - document.documentElement.clientWidth")
        wide = self.browser.execute_script(
            "return Array.from(document.querySelectorAll('body *'), (e) => [e.tagName + '#' + e.id + '.' + e.className,"
            " e.getBoundingClientRect().right]).filter(([, right]) => right > 375)")
        self.assertLessEqual(overflow, 0, f"nothing sticks out sideways: {wide}")
        self.assertTrue(self.banner_button("Edit banner-0").is_displayed())
        caption_width = self.browser.execute_script(
            "return document.querySelector('#banners li .banner-text').getBoundingClientRect().width")
        self.assertGreater(caption_width, 200, "a banner's caption keeps the width to be read")

    def set_date(self, field, value):
        # Filled as the browser's date picker leaves it: what typing into one takes depends on the locale.
        self.browser.execute_script(
            "arguments[0].value = arguments[1]; arguments[0].dispatchEvent(new Event('input', {bubbles: true}))",
            self.find(field), value)

    def stored_banner(self, banner_id):
        return next(banner for banner in self.definition("default")["banners"] if banner["id"] == banner_id)

    def test_schedules_a_banner_for_later_and_it_leaves_the_rotation(self):
        self.service.call("PATCH", "/carousels/default", {"timeZone": "Europe/Berlin"}, token=self.admin_token)
        self.browser.refresh()
        self.wait(lambda: self.order() == [f"banner-{n}" for n in range(5)], 15, "the editor shows the banners")
        self.assertEqual(self.find("#banner-form .zone-name").text, "Europe/Berlin", "the form says its time zone")
        berlin = ZoneInfo("Europe/Berlin")
        tomorrow = (datetime.now(berlin) + timedelta(days=1)).replace(hour=8, minute=30, second=0, microsecond=0)
        self.banner_button("Edit banner-1").click()
        self.set_date("#banner-starts-at", tomorrow.strftime("%Y-%m-%dT%H:%M"))
        self.find("#window-add").click()
        window = self.find("#banner-windows li")
        for day in ("mon", "tue", "wed", "thu", "fri"):
            window.find_element(By.CSS_SELECTOR, f'input[value="{day}"]').click()
        self.find("#banner-submit").click()
        self.wait(lambda: "startsAt" in self.stored_banner("banner-1"), 10, "the schedule reaches the service")
        stored = self.stored_banner("banner-1")
        starts = datetime.fromisoformat(stored["startsAt"].replace("Z", "+00:00"))
        self.assertEqual(starts, tomorrow, "8:30 tomorrow in Berlin, whatever the browser's own zone")
        self.assertEqual(stored["windows"], [{"days": ["mon", "tue", "wed", "thu", "fri"], "from": "09:00", "to": "17:00"}])
        self.assertNotIn("banner-1", self.service.state()["rotation"], "not in the rotation before it starts")
        item = '#banners li[data-banner="banner-1"]'
        self.wait(lambda: "not on now" in self.find(item).text, 15, "the list says the banner is not on now")
        self.wait(lambda: f"from {tomorrow:%Y-%m-%d %H:%M}" in self.find(item).text, 15,
                  "the list says when it starts, in Berlin time")
        # Edited again, the form holds the schedule as saved; the start removed, the banner is back.
        self.banner_button("Edit banner-1").click()
        self.assertEqual(self.find("#banner-starts-at").get_attribute("value"), tomorrow.strftime("%Y-%m-%dT%H:%M"))
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, "#banner-windows li")), 1)
        self.set_date("#banner-starts-at", "")
        self.find('#banner-windows button[aria-label="Remove time window 1"]').click()
        self.assertEqual(self.focused_label(), None, "the focus goes to the add button")
        self.assertEqual(self.browser.switch_to.active_element.get_attribute("id"), "window-add")
        self.find("#banner-submit").click()
        self.wait(lambda: "startsAt" not in self.stored_banner("banner-1"), 10, "the schedule is removed")
        self.assertNotIn("windows", self.stored_banner("banner-1"))
        self.wait(lambda: "banner-1" in self.service.state()["rotation"], 10, "back in the rotation")

    def test_a_time_window_error_is_shown_beside_the_windows(self):
        self.banner_button("Edit banner-2").click()
        self.find("#window-add").click()
        self.browser.execute_script("document.querySelector('#banner-windows input.from').value = ''")
        self.find("#banner-submit").click()
        error = self.find("#banner-windows-error")
        self.wait(error.is_displayed, 10, "the windows' error shown beside them")
        self.assertIn("Time window 1, from: not a time of day", error.text)
        self.assertEqual(self.browser.switch_to.active_element.get_attribute("id"), "banner-windows",
                         "the focus goes to the windows")
        self.assertNotIn("windows", self.stored_banner("banner-2"), "nothing was saved")

    def test_a_concurrent_edit_of_a_banner_is_412_and_keeps_what_was_typed(self):
        self.banner_button("Edit banner-0").click()
        self.fill("banner-form", caption="Ours")
        self.service.call("PATCH", "/carousels/default/banners/banner-3", {"caption": "Theirs"}, token=self.admin_token)
        self.find("#banner-submit").click()
        conflict = self.find("#conflict")
        self.wait(conflict.is_displayed, 10, "the page says someone else changed the carousel")
        self.assertNotEqual(self.stored_banner("banner-0").get("caption"), "Ours", "nothing of ours was written")
        self.find("#conflict-reload").click()
        self.wait(lambda: not conflict.is_displayed(), 10, "their version is loaded")
        self.assertEqual(self.find("#banner-caption").get_attribute("value"), "Ours", "what was typed is kept")
        self.find("#banner-submit").click()
        self.wait(lambda: self.stored_banner("banner-0").get("caption") == "Ours", 10, "saved on their version")
        self.assertEqual(self.stored_banner("banner-3")["caption"], "Theirs", "their change is kept too")

    def test_the_timeline_shows_what_plays_when_over_the_next_hours(self):
        # Hourly turns: the changes of the next six hours are the first six the service plans
        # (the first comes within the hour, the seventh after six hours).
        planned = self.service.call("GET", "/carousels/default/timeline?limit=100")["entries"]
        self.assertGreater(len(planned), 7, "the carousel advances by itself")
        listed = lambda: self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#timeline-next li'),"
            " (item) => [item.dataset.banner, item.querySelector('time').dateTime])")
        self.wait(lambda: listed() == [[entry["banner"], entry["at"]] for entry in planned[:5]], 10,
                  "the next five changes listed, as the service plans them")
        lanes = self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#timeline-strip .lane-row[data-banner]'),"
            " (row) => [row.dataset.banner, row.querySelectorAll('rect.shown').length])")
        self.assertEqual([banner for banner, _ in lanes], [f"banner-{n}" for n in range(5)], "a lane per banner")
        on_now = self.service.state()["banner"]["id"]
        for banner, bars in lanes:
            turns = sum(entry["banner"] == banner for entry in planned[:6]) + (banner == on_now)
            self.assertEqual(bars, turns, f"a bar per turn of {banner} in the next six hours, the one on now included")
        self.assertEqual(self.find("#timeline-span").text, "The next 6 hours (UTC): 6 changes.")
        self.assertEqual(len(self.browser.find_elements(By.CSS_SELECTOR, "#timeline-strip .scale-times span")), 4,
                         "times under the strip: now and every two hours")

    def test_shows_stats_per_banner_as_charts_and_downloads_them_as_csv(self):
        now = datetime.now(timezone.utc)
        at = lambda ago: (now - timedelta(seconds=ago)).isoformat(timespec="milliseconds").replace("+00:00", "Z")
        self.service.call("POST", "/carousels/default/views", {"views": [
            {"banner": "banner-0", "at": at(60), "ms": 4000}, {"banner": "banner-0", "at": at(50), "ms": 4000},
            {"banner": "banner-2", "at": at(40), "ms": 2000}]})
        report = self.service.call("GET", "/carousels/default/stats", token=self.admin_token)
        expected = {}
        for row in report["rows"]:
            sums = expected.setdefault(row["banner"], [0, 0.0, 0, 0])
            for position, key in enumerate(["plays", "shownSeconds", "views", "clicks"]):
                sums[position] += row[key]
        self.assertEqual((expected["banner-0"][2], expected["banner-2"][2]), (2, 1), "the views reported")
        self.find("#stats-show").click()
        shown = lambda: self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#stats-table tbody tr'), (row) => [row.dataset.banner,"
            " ...Array.from(row.querySelectorAll('td'), (cell) => cell.dataset.value)])")
        self.wait(lambda: len(shown()) == len(expected), 10, "a row per banner in the stats")
        for banner, *values in shown():
            sums = expected[banner]
            numbers = [float(value) for value in values[:4]]
            self.assertEqual(numbers[0::2] + numbers[3:], sums[0::2] + sums[3:],
                             f"{banner}'s plays, views and clicks as the API has them")
            # The banner on screen keeps adding seconds: read later, the page's are not fewer.
            self.assertGreaterEqual(numbers[1], sums[1], f"{banner}'s seconds shown")
            self.assertEqual(float(values[4]) if values[4] else None, sums[3] / sums[2] if sums[2] else None,
                             f"{banner}'s clicks per view")
        columns = self.browser.execute_script("return document.querySelectorAll('#stats-chart rect.column').length")
        self.assertEqual(columns, len({row["start"] for row in report["rows"]}), "a column per hour with a row")
        self.assertIn("3 in all", self.find("#stats-caption").text)
        # The CSV the page saves, as a file in the browser's downloads, is the service's own.
        downloads = Path(tempfile.mkdtemp(prefix="carousel-test-downloads-"))
        self.addCleanup(shutil.rmtree, downloads, True)
        self.browser.execute_cdp_cmd("Browser.setDownloadBehavior", {"behavior": "allow", "downloadPath": str(downloads)})
        self.find("#stats-csv").click()
        status = self.find("#stats-status")
        self.wait(lambda: status.text == "Downloaded default-stats-by-hour.csv.", 10, "the page says it saved the file")
        file = downloads / "default-stats-by-hour.csv"
        self.wait(file.exists, 10, "the file is saved")
        saved = file.read_text()
        request = urllib.request.Request(self.service.url + "/carousels/default/stats", headers={"Accept": "text/csv"})
        with urllib.request.urlopen(request, timeout=5) as response:
            served = response.read().decode()
        # The same rows, but for the seconds the banner on screen has added since.
        without_seconds = lambda text: [
            [field for position, field in enumerate(line.split(",")) if position != text.split(",").index("shownSeconds")]
            for line in text.splitlines()]
        self.assertEqual(without_seconds(saved), without_seconds(served))
        self.assertEqual(saved.splitlines()[0], served.splitlines()[0], "a header row")

    def test_a_change_made_later_is_listed_planned_on_the_timeline_and_cancelled(self):
        """"Make changes at" (docs/SCHEDULED.md): the banner added waits under Scheduled changes, the
        timeline marks its time, nothing changes now; Cancel drops it."""
        at = datetime.now(timezone.utc).replace(microsecond=0) + timedelta(hours=2)
        self.browser.execute_script("document.getElementById('pending-at').value = arguments[0]",
                                    at.strftime("%Y-%m-%dT%H:%M:%S"))  # the carousel's zone is UTC
        self.fill("banner-form", id="sale", image=self.images.url(1), caption="Winter sale")
        self.find("#banner-submit").click()
        self.wait(lambda: self.find("#editor-status").text.startswith("Scheduled for "), 10, "the page says when")
        self.assertIn("as change 1: nothing changes until then.", self.find("#editor-status").text)
        listed = lambda: self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#pending-list li'), (item) =>"
            " [item.dataset.change, item.querySelector('time').dateTime, item.querySelector('code').textContent])")
        self.wait(lambda: len(listed()) == 1, 10, "the change listed")
        self.assertEqual(listed(), [["1", at.isoformat(timespec="milliseconds").replace("+00:00", "Z"),
                                     "POST /carousels/default/banners"]])
        self.assertEqual(self.stored_order(), [f"banner-{n}" for n in range(5)], "nothing changed now")
        self.assertEqual(self.order(), [f"banner-{n}" for n in range(5)])
        marks = lambda: self.browser.execute_script("return document.querySelectorAll('#timeline-strip line.change-mark').length")
        self.wait(lambda: marks() >= 5, 10, "the timeline marks the change's time on every lane")

        # A second one: both will be made (no If-Match, which the first would make stale).
        self.fill("settings", interval="60")
        self.find("#settings button[type=submit]").click()
        self.wait(lambda: "as change 2:" in self.find("#editor-status").text, 10, "the second is scheduled")
        self.wait(lambda: [change for change, _, _ in listed()] == ["1", "2"], 10, "both listed")
        pending = lambda: self.service.call("GET", "/carousels/default/pending", token=self.admin_token)["pending"]
        self.assertEqual([change["ifMatch"] for change in pending()], [None, None])
        self.assertEqual(self.definition("default")["interval"], 3600.0, "nothing changed now")

        self.find('#pending-list button[aria-label="Cancel change 1"]').click()
        self.wait(lambda: self.find("#pending-status").text == "Change 1 cancelled: it will not be made.", 10,
                  "the page says it is cancelled")
        self.assertEqual([change for change, _, _ in listed()], ["2"])
        self.assertEqual([change["id"] for change in pending()], [2])
        self.wait(lambda: len(self.browser.find_elements(By.CSS_SELECTOR, '#timeline-strip .lane-row[data-banner="sale"]')) == 0,
                  10, "the timeline no longer plans the banner")

    def test_the_history_shows_each_change_field_by_field_and_restores_one(self):
        self.fill("settings", interval="7")
        self.find("#settings button[type=submit]").click()
        self.wait(lambda: self.find("#editor-status").text == "Settings saved.", 10, "the settings are saved")
        self.find("#history-show").click()
        listed = lambda: self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#history-list li'), (item) =>"
            " [Number(item.dataset.revision), item.querySelector('.summary').textContent])")
        self.wait(lambda: [number for number, _ in listed()] == [2, 1], 10, "both revisions, newest first")
        self.assertEqual([summary for _, summary in listed()], ["interval 3600.0 s → 7.0 s", "created with 5 banners"])
        self.assertIn("seed", self.find('#history-list li[data-revision="1"] .revision-head').text)
        self.find('#history-list button[aria-label="Show the changes of revision 2"]').click()
        rows = lambda: self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#history-list li[data-revision=\"2\"] table.diff tbody tr'),"
            " (row) => Array.from(row.children, (cell) => cell.textContent))")
        self.wait(lambda: rows() == [["interval", "3600", "7"]], 10, "revision 2's one change, before and after")
        self.assertEqual(self.browser.execute_script(
            "return document.querySelectorAll('#history-list button[aria-label=\"Restore revision 2\"]').length"), 0,
            "the current revision has no Restore")

        # Someone else changes it meanwhile: the restore is refused (412), nothing is changed.
        self.service.call("PATCH", "/carousels/default", {"autoplay": False}, token=self.admin_token)
        self.find('#history-list button[aria-label="Restore revision 1"]').click()
        self.wait(lambda: self.find("#conflict").is_displayed(), 10, "the page says someone else changed it")
        self.assertEqual((self.definition("default")["revision"], self.definition("default")["interval"]), (3, 7.0))

        self.find("#conflict-reload").click()
        self.wait(lambda: [number for number, _ in listed()] == [3, 2, 1], 10, "their revision is listed too")
        self.find('#history-list button[aria-label="Restore revision 1"]').click()
        self.wait(lambda: self.definition("default")["revision"] == 4, 10, "the restore reaches the service")
        restored = self.definition("default")
        self.assertEqual((restored["interval"], restored["autoplay"]), (3600.0, True))
        self.wait(lambda: [number for number, _ in listed()][:1] == [4], 10, "the restore is listed")
        self.assertEqual(listed()[0][1], "restored revision 1: interval 7.0 s → 3600.0 s; autoplay on")
        self.assertEqual(self.find("#editor-status").text, "Revision 1 restored: the carousel is at revision 4.")
        self.assertEqual(self.find("#settings-interval").get_attribute("value"), "3600", "the form shows the restored settings")

    def test_the_live_preview_follows_the_service(self):
        frame = self.find("#preview")
        self.assertEqual(frame.get_attribute("src"), self.service.url + "/carousels/default/?preview")
        self.assertEqual(frame.get_attribute("title"), "Live preview of default")
        images = [banner["image"] for banner in self.definition("default")["banners"]]
        self.browser.switch_to.frame(frame)
        try:
            shown = lambda: self.browser.execute_script("return document.querySelector('.slide-image')?.src")
            self.wait(lambda: shown() == images[0], 15, "the preview shows the carousel's banner")
            self.service.call("POST", "/banner/next")
            self.wait(lambda: shown() == images[1], 10, "the preview follows a command made elsewhere")
        finally:
            self.browser.switch_to.default_content()

    def test_a_settings_error_is_shown_beside_its_field(self):
        self.fill("settings", interval="-1")
        self.find("#settings button[type=submit]").click()
        error = self.find("#settings-interval-error")
        self.wait(error.is_displayed, 10, "the interval's error beside it")
        self.assertEqual(self.definition("default")["interval"], 3600)


FIXTURES = ROOT / "Tests" / "MediaTests" / "Fixtures"


def wide_photo(width=2000, height=1500):
    """A JPEG `width` × `height`, white with its top-left quarter red, made with libvips' tools."""
    folder = Path(tempfile.mkdtemp(prefix="carousel-photo-"))
    steps = [["vips", "black", folder / "red.v", width // 2, height // 2, "--bands", "3"],
             ["vips", "linear", folder / "red.v", folder / "red2.v", "1 1 1", "255 0 0", "--uchar"],
             ["vips", "black", folder / "all.v", width, height, "--bands", "3"],
             ["vips", "linear", folder / "all.v", folder / "white.v", "1 1 1", "255 255 255", "--uchar"],
             ["vips", "insert", folder / "white.v", folder / "red2.v", folder / "photo.v", "0", "0"],
             ["vips", "jpegsave", folder / "photo.v", folder / "photo.jpg", "--Q", "85"]]
    for step in steps:
        subprocess.run([str(part) for part in step], check=True)
    return folder / "photo.jpg"


def upload(service, path, content_type="image/jpeg"):
    """POST /media with the file's bytes, as from this host (the admin role); the answer's JSON."""
    request = urllib.request.Request(service.url + "/media", method="POST", data=Path(path).read_bytes())
    request.add_header("Content-Type", content_type)
    with urllib.request.urlopen(request, timeout=60) as response:
        return json.loads(response.read())


class MediaOnThePage(WebClientTest):
    """A banner of the media library on the built-in page (docs/MEDIA.md): the browser picks a
    variant from its srcset, and the next banner's is fetched and decoded before its flip."""

    def test_the_next_library_image_is_decoded_before_the_flip_shows_it(self):
        image = upload(self.service, wide_photo())
        self.assertEqual([variant["width"] for variant in image["variants"]], [480, 960, 1600])
        shown = self.service.state()["index"]
        self.service.call("POST", f"/carousels/default/banners?position={shown + 1}",
                          {"id": "photo", "image": image["url"], "caption": "From the library"})
        # The neighbour after the current slide holds the library image, by the variant that
        # fits a 1280-pixel window (sizes: 100vw), decoded.
        neighbour = ".neighbour-next img"
        self.wait(lambda: self.browser.execute_script(
            f"const image = document.querySelector('{neighbour}');"
            "return image.complete && image.naturalWidth > 0 && image.currentSrc.endsWith('/1600.webp')"), 20,
            "the next banner's variant is loaded ahead")
        self.assertIn("/1600.webp 1600w", self.find(neighbour).get_attribute("srcset"))
        self.service.call("POST", "/banner/next")
        self.wait_for_caption("From the library")
        slide = self.browser.execute_script(
            "const image = document.querySelector('.slide-image');"
            "return {src: image.currentSrc, complete: image.complete, width: image.naturalWidth,"
            " sizes: image.sizes}")
        self.assertTrue(slide["src"].endswith(f"/media/{image['id']}/1600.webp"), slide)
        # The 1600-pixel file drawn at the window's 1280 (naturalWidth is per CSS pixel with srcset).
        self.assertEqual((slide["complete"], slide["width"], slide["sizes"]), (True, 1280, "100vw"))
        # The one file both used, from the browser's memory: fetched once.
        fetched = self.browser.execute_script(
            "return performance.getEntriesByType('resource').filter((entry) =>"
            f" entry.name.endsWith('/media/{image['id']}/1600.webp')).length")
        self.assertEqual(fetched, 1)


class MediaOffline(CutOff):
    """A library image on a page cut off (docs/MEDIA.md, "Offline"): the worker keeps the image's
    original, the file the plan's banners name, and a page reloaded offline paints it from there."""

    def test_a_library_image_shows_from_the_kept_original_on_a_page_reloaded_offline(self):
        image = upload(self.service, wide_photo())
        self.service.call("PATCH", "/carousels/default/banners/banner-2", {"image": image["url"]})
        self.wait(lambda: self.ready_offline(self.browser) and self.browser.execute_async_script(KEPT_IMAGES)
                  .count(image["url"]) == 1, 30, "the page keeps its plan and the library image's original")
        self.proxy.cut()
        self.image_proxy.cut()
        self.wait(lambda: self.badge(self.browser)["shown"], 15, "the page plays offline")
        # Reloaded: nothing in the browser's memory, every image through the worker.
        self.browser.refresh()
        self.wait(lambda: self.badge(self.browser)["shown"] and self.shown(self.browser)
                  and self.shown(self.browser)[-1][1] == "banner-2", 30, "the reloaded page shows the library banner")
        slide = ("const image = document.querySelector('.slide-image');"
                 "return {src: image.currentSrc, complete: image.complete, width: image.naturalWidth}")
        self.wait(lambda: self.browser.execute_script(slide)["width"] > 0, 10,
                  "the library image is painted from the kept original")
        shown = self.browser.execute_script(slide)
        # Offline the page plays from its plan, whose banners name the image by its original.
        self.assertTrue(shown["src"].endswith(image["url"]) and shown["complete"], shown)


class ComponentMedia(ComponentTest):
    """A library image in <banner-carousel> on a shop's page of another origin: its paths are the
    service's, and each element picks the variant of its own width, decoded ahead of the flip."""

    def test_a_library_image_is_loaded_from_the_service_at_the_elements_width(self):
        image = upload(self.service, wide_photo())
        shown = self.service.state()["index"]
        self.service.call("POST", f"/carousels/default/banners?position={shown + 1}",
                          {"id": "photo", "image": image["url"], "caption": "From the library"})
        expected = f"{self.service.url}/media/{image['id']}/"

        def next_slide(element):
            return self.component(element, "const image = root.querySelector('.slide.next img');"
                                  "return {src: image.currentSrc, complete: image.complete,"
                                  " width: image.naturalWidth, sizes: image.sizes}")

        self.wait(lambda: all(next_slide(element)["src"].startswith(expected) and next_slide(element)["complete"]
                              and next_slide(element)["width"] > 0 for element in ("first", "second")), 20,
                  "both elements load the next banner's variant from the service ahead of its flip")
        for element in ("first", "second"):
            width = self.component(element, "return Math.round(root.host.getBoundingClientRect().width)")
            self.assertEqual(next_slide(element)["sizes"], f"{width}px")
        self.service.call("POST", "/banner/next")
        self.wait_shown("first", "photo")
        current = self.component("first", "const image = root.querySelector('.slide.current img');"
                                 "return {src: image.currentSrc, complete: image.complete}")
        self.assertTrue(current["src"].startswith(expected), current)
        self.assertTrue(current["complete"])


class AdminMedia(AdminPageTest):
    """The media library on the admin page: an upload from a file picker or dropped with its
    progress, refused files said so, the library's thumbnails, and a banner given a library image."""

    def setUp(self):
        super().setUp()
        self.find('#carousels button[aria-label="Edit default"]').click()
        self.wait(lambda: self.find("#banner-form").is_displayed(), 10, "the editor is open")

    def open_library(self):
        self.find("#media-open").click()
        self.wait(lambda: self.find("#media-dialog").is_displayed(), 5, "the library opens")

    def test_uploads_a_file_and_gives_it_to_a_new_banner(self):
        self.open_library()
        self.wait(lambda: "empty" in self.find("#media-status").text, 10, "an empty library says so")
        photo = wide_photo(1200, 900)
        self.find("#media-file").send_keys(str(photo))
        # Uploaded, it is the banner form's image: the dialog closes on it.
        self.wait(lambda: self.find("[name=image]").get_attribute("value").startswith("/media/"), 30,
                  "the uploaded image is put in the banner form")
        url = self.find("[name=image]").get_attribute("value")
        library = self.service.call("GET", "/media")["media"]
        self.assertEqual([entry["url"] for entry in library], [url])
        self.assertEqual((library[0]["width"], library[0]["height"]), (1200, 900))
        self.wait(lambda: self.find("#banner-preview").is_displayed(), 10, "the form shows the library image")
        self.fill("banner-form", id="photo", caption="From the library")
        self.find("#banner-submit").click()
        self.wait(lambda: "photo" in self.order(), 10, "the banner is listed")
        stored = [banner for banner in self.definition("default")["banners"] if banner["id"] == "photo"]
        self.assertEqual(stored[0]["image"], url)

        # The library lists it with its thumbnail, the narrowest variant, drawn.
        self.open_library()
        thumbnail = f'#media-grid img[src="{library[0]["variants"][0]["url"]}"]'
        self.wait(lambda: self.browser.execute_script(
            f"const image = document.querySelector('{thumbnail}'); return !!image && image.complete"
            " && image.naturalWidth === 480"), 10, "the thumbnail is shown")
        self.assertIn("1 banner", self.find("#media-grid button").text)

    def test_a_dropped_file_is_uploaded_with_its_progress_shown(self):
        self.open_library()
        photo = wide_photo(1600, 1200)
        # What a drop from the desktop gives the page: a DataTransfer holding the file. The
        # progress bar's states are recorded as they change.
        self.browser.execute_script("""
            const progress = document.getElementById("media-progress");
            window.progressSeen = [];
            new MutationObserver(() => window.progressSeen.push({hidden: progress.hidden, value: progress.value}))
                .observe(progress, {attributes: true});
            const bytes = Uint8Array.from(atob(arguments[0]), (character) => character.charCodeAt(0));
            const transfer = new DataTransfer();
            transfer.items.add(new File([bytes], "dropped.jpg", {type: "image/jpeg"}));
            const zone = document.getElementById("media-drop");
            for (const type of ["dragenter", "dragover", "drop"]) {
                zone.dispatchEvent(new DragEvent(type, {dataTransfer: transfer, bubbles: true, cancelable: true}));
            }
        """, base64.b64encode(photo.read_bytes()).decode())
        self.wait(lambda: self.find("[name=image]").get_attribute("value").startswith("/media/"), 30,
                  "the dropped image is put in the banner form")
        library = self.service.call("GET", "/media")["media"]
        self.assertEqual([entry["url"] for entry in library], [self.find("[name=image]").get_attribute("value")])
        self.assertEqual((library[0]["width"], library[0]["height"]), (1600, 1200))
        self.assertIn("dropped.jpg is in the library (1600 × 1200)", self.find("#media-status").get_attribute("textContent"))
        seen = self.browser.execute_script("return window.progressSeen")
        shown = [state["value"] for state in seen if not state["hidden"]]
        self.assertTrue(shown and shown[-1] == 1, f"the progress bar went to the end while shown: {seen}")
        self.assertTrue(seen[-1]["hidden"], "the progress bar is hidden once the upload is answered")

    def test_a_refused_file_is_said_so_and_changes_nothing(self):
        self.open_library()
        svg = Path(tempfile.mkdtemp()) / "logo.svg"
        svg.write_text('<svg xmlns="http://www.w3.org/2000/svg"><script>alert(1)</script></svg>')
        self.find("#media-file").send_keys(str(svg))
        self.wait(lambda: self.find("#media-error").is_displayed(), 15, "the refusal is shown")
        self.assertIn("logo.svg was not uploaded", self.find("#media-error").text)
        self.assertIn("SVG", self.find("#media-error").text)
        self.assertEqual(self.service.call("GET", "/media")["media"], [])

    def test_picks_an_image_of_the_library_for_a_banner(self):
        first = upload(self.service, FIXTURES / "wide.jpg")
        second = upload(self.service, FIXTURES / "quadrant.png", "image/png")
        self.open_library()
        self.wait(lambda: len(self.browser.find_elements(By.CSS_SELECTOR, "#media-grid button")) == 2, 10,
                  "both images are listed")
        self.find(f'#media-grid button[data-media="{first["id"]}"]').click()
        self.wait(lambda: not self.find("#media-dialog").is_displayed(), 5, "picking closes the library")
        self.assertEqual(self.find("[name=image]").get_attribute("value"), first["url"])
        self.assertNotEqual(first["id"], second["id"])


class AdminLibrary(AdminPageTest):
    """The Media view (#/media, docs/ADMIN.md): every image of the library with the banners that show
    it, uploaded there, deleted once confirmed; one a banner shows is not, and the page says why."""

    def library(self):
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#library-grid li'), (item) =>"
            " ({id: item.dataset.media, text: item.textContent}))")

    def test_uploads_lists_and_deletes_images_of_the_library(self):
        self.open_view("media")
        self.wait(lambda: "empty" in self.find("#library-status").text, 10, "an empty library says so")
        self.find("#library-file").send_keys(str(wide_photo(1200, 900)))
        self.wait(lambda: len(self.library()) == 1, 30, "the upload is listed")
        uploaded = self.service.call("GET", "/media")["media"][0]
        self.assertEqual(self.library()[0]["id"], uploaded["id"])
        self.assertIn("1200 × 900 · unused", self.library()[0]["text"])
        # Shown by a banner: listed so, and its deletion refused with the reason.
        self.service.call("PATCH", "/carousels/default/banners/banner-1", {"image": uploaded["url"]},
                          token=self.admin_token)
        self.browser.refresh()
        self.wait(lambda: "default: banner-1" in (self.library() or [{"text": ""}])[0]["text"], 15,
                  "the banner that shows it is named")
        self.find(f'#library-grid li[data-media="{uploaded["id"]}"] button').click()
        self.find('#confirm-delete button[value="delete"]').click()
        self.wait(lambda: self.find("#library-error").is_displayed(), 10, "the refusal is shown")
        self.assertIn("banner 'banner-1' of carousel 'default'", self.find("#library-error").text)
        self.assertEqual(len(self.service.call("GET", "/media")["media"]), 1)
        # Unused again, it goes.
        self.service.call("PATCH", "/carousels/default/banners/banner-1", {"image": self.images.url(1)},
                          token=self.admin_token)
        self.find(f'#library-grid li[data-media="{uploaded["id"]}"] button').click()
        self.find('#confirm-delete button[value="delete"]').click()
        self.wait(lambda: self.library() == [], 10, "the image is gone from the view")
        self.assertEqual(self.service.call("GET", "/media")["media"], [])


class AdminViews(AdminPageTest):
    """The admin page as an application (docs/ADMIN.md): a navigation, each view at an address of its
    own that a reload and the back button keep, a carousel's editor at its own, "New carousel" at the
    top of the carousels view."""

    views = ["carousels", "screens", "media", "tokens", "webhooks", "audit"]

    def address(self):
        return self.browser.current_url.split("#", 1)[1] if "#" in self.browser.current_url else ""

    def test_each_view_has_its_address_and_a_reload_keeps_it(self):
        self.assertEqual((self.shown_view(), self.address()), ("carousels", "/carousels"), "the first view")
        for view in self.views[1:] + ["carousels"]:
            self.open_view(view)
            self.assertEqual(self.address(), f"/{view}")
            self.browser.refresh()
            self.wait(lambda: self.shown_view() == view, 10, f"the {view} view after a reload")
        # An address typed or shared opens its view.
        self.browser.get(self.service.url + "/admin#/webhooks")
        self.wait(lambda: self.shown_view() == "webhooks", 10, "the webhooks view from its address")

    def test_the_back_button_goes_to_the_view_before(self):
        self.open_view("tokens")
        self.open_view("audit")
        self.browser.back()
        self.wait(lambda: self.shown_view() == "tokens", 10, "back: the tokens view")
        self.browser.back()
        self.wait(lambda: self.shown_view() == "carousels", 10, "back again: the carousels view")

    def test_a_carousel_is_edited_at_its_own_address(self):
        self.find('#carousels button[aria-label="Edit default"]').click()
        self.wait(lambda: self.find("#editor").is_displayed(), 10, "the editor opens")
        self.assertEqual(self.address(), "/carousels/default")
        self.browser.refresh()
        self.wait(lambda: self.find("#editor").is_displayed()
                  and self.find("#editor .carousel-name").text == "default", 10, "a reload keeps the editor")
        self.open_view("screens")
        self.assertFalse(self.find("#editor").is_displayed())
        self.browser.back()
        self.wait(lambda: self.find("#editor").is_displayed(), 10, "back: the editor again")
        # The address of the page before views opens the same editor, at its address now.
        self.browser.get(self.service.url + "/admin#carousel=default")
        self.wait(lambda: self.address() == "/carousels/default" and self.find("#editor").is_displayed(), 10,
                  "an old address still opens the editor")

    def test_new_carousel_comes_first_in_the_carousels_view(self):
        first = self.browser.execute_script(
            "return Array.from(document.querySelectorAll('main input, main select')).find((field) =>"
            " field.offsetParent !== null)?.id")
        self.assertEqual(first, "create-name", "the first field a user meets names a new carousel")
        self.assertFalse(self.find("#tokens-name").is_displayed(), "the new token's form is in its own view")


class AdminTokens(AdminPageTest):
    """Named tokens on the admin page (docs/ADMIN.md, docs/TOKENS.md): created with the secret shown
    once, refused by the service once revoked. Commands need a token here, so a secret is seen to work."""

    token = "env-control-token"

    def command_with(self, secret):
        request = urllib.request.Request(self.service.url + "/banner/next", method="POST",
                                         headers={"Authorization": f"Bearer {secret}"})
        try:
            with urllib.request.urlopen(request, timeout=5) as response:
                return response.status
        except urllib.error.HTTPError as error:
            return error.code

    def test_creates_a_token_shows_its_secret_once_and_revokes_it(self):
        self.open_view("tokens")
        self.find("#tokens-show").click()
        self.wait(lambda: self.find("#tokens-status").text == "No named tokens yet.", 10, "none yet")
        self.fill("tokens-form", name="Lobby Kiosk")
        self.find("#tokens-form button[type=submit]").click()
        error = self.find("#tokens-name-error")
        self.wait(error.is_displayed, 10, "the bad name is said beside its field")
        self.assertIn("is not a token name", error.text)
        self.assertEqual(self.service.call("GET", "/tokens")["tokens"], [], "nothing was created")

        self.fill("tokens-form", name="lobby-kiosk", carousels="default")
        Select(self.find("#tokens-role")).select_by_value("control")
        self.find("#tokens-form button[type=submit]").click()
        secret_box = self.find("#tokens-secret")
        self.wait(secret_box.is_displayed, 10, "the secret is shown")
        secret = self.find("#tokens-secret-value").text
        self.assertTrue(secret.startswith("bct_") and len(secret) == 47, secret)
        self.wait(lambda: self.browser.find_elements(By.CSS_SELECTOR, '#tokens tr[data-token="lobby-kiosk"]'), 10,
                  "the token is listed")
        row = self.find('#tokens tr[data-token="lobby-kiosk"]').text
        self.assertIn("control", row)
        self.assertIn("default", row)
        self.assertNotIn(secret, self.find("#tokens").text, "the list has no secret")
        listed = self.service.call("GET", "/tokens")["tokens"]
        self.assertEqual([(token["name"], token["role"], token["carousels"]) for token in listed],
                         [("lobby-kiosk", "control", ["default"])])
        self.assertEqual(self.command_with(secret), 200, "the secret pages the carousel")

        dialog = self.find("#confirm-delete")
        self.find('#tokens button[aria-label="Revoke lobby-kiosk"]').click()
        self.wait(dialog.is_displayed, 5, "a confirmation is asked")
        dialog.find_element(By.CSS_SELECTOR, 'button[value="delete"]').click()
        self.wait(lambda: self.find("#tokens-status").text == "lobby-kiosk revoked.", 10, "the page says so")
        self.assertFalse(secret_box.is_displayed(), "the revoked token's secret is no longer shown")
        self.assertEqual(self.service.call("GET", "/tokens")["tokens"], [])
        self.assertEqual(self.command_with(secret), 401, "refused once revoked")


class AdminWebhooks(AdminPageTest):
    """Webhooks on the admin page (docs/ADMIN.md, docs/WEBHOOKS.md): a URL leading to this machine
    refused beside its field, one to a public address created with the secret the page drew,
    listed without it, deleted once confirmed."""

    def test_creates_a_webhook_with_a_drawn_secret_refuses_a_private_address_and_deletes_it(self):
        self.open_view("webhooks")
        self.find("#webhooks-show").click()
        self.wait(lambda: self.find("#webhooks-status").text == "No webhooks yet.", 10, "none yet")
        secret = self.find("#webhooks-secret").get_attribute("value")
        self.assertRegex(secret, r"^[0-9a-f]{64}$", "a secret drawn by the page")
        self.fill("webhooks-form", url="http://localhost:9000/hook")
        self.find("#webhooks-form button[type=submit]").click()
        error = self.find("#webhooks-url-error")
        self.wait(error.is_displayed, 10, "the refused URL is said beside its field")
        self.assertIn("leads to a non-public address: localhost resolves to", error.text)
        self.assertIn("webhookAllowPrivate", error.text)
        self.assertEqual(self.service.call("GET", "/webhooks", token=self.admin_token)["webhooks"], [])

        self.fill("webhooks-form", url="https://93.184.216.34/hooks/carousel")
        self.find('#webhooks-form input[value="takeover.started"]').click()
        self.find("#webhooks-form button[type=submit]").click()
        self.wait(lambda: self.find("#webhooks-status").text.startswith("Webhook 1 to https://93.184.216.34/"), 10,
                  "the page says it is created")
        listed = self.service.call("GET", "/webhooks", token=self.admin_token)["webhooks"]
        self.assertEqual([(webhook["url"], webhook["events"]) for webhook in listed],
                         [("https://93.184.216.34/hooks/carousel", ["carousel.changed", "takeover.started"])])
        row = self.find('#webhooks tr[data-webhook="1"]').text
        self.assertIn("carousel.changed, takeover.started", row)
        self.assertNotIn(secret, self.find("#webhooks").text, "the list has no secret")
        self.assertNotEqual(self.find("#webhooks-secret").get_attribute("value"), secret, "a new secret is drawn")

        dialog = self.find("#confirm-delete")
        self.find('#webhooks button[aria-label="Delete webhook 1"]').click()
        self.wait(dialog.is_displayed, 5, "a confirmation is asked")
        dialog.find_element(By.CSS_SELECTOR, 'button[value="delete"]').click()
        self.wait(lambda: self.find("#webhooks-status").text
                  == "The webhook to https://93.184.216.34/hooks/carousel is deleted.", 10, "the page says so")
        self.assertEqual(self.service.call("GET", "/webhooks", token=self.admin_token)["webhooks"], [])


class WebhookReceiver(http.server.BaseHTTPRequestHandler):
    """Takes every delivery (204) and keeps its event type (docs/WEBHOOKS.md)."""
    received = []

    def do_POST(self):
        self.rfile.read(int(self.headers["Content-Length"]))
        WebhookReceiver.received.append(self.headers["X-Carousel-Event"])
        self.send_response(204)
        self.end_headers()

    def log_message(self, *args):
        pass


class AdminWebhookDeliveries(AdminPageTest):
    """Each webhook's last deliveries on the admin page (docs/ADMIN.md, docs/WEBHOOKS.md): one taken
    by its receiver is delivered with its status; one whose receiver is gone waits for its next
    attempt and says why."""
    environment = {"CAROUSEL_WEBHOOK_ALLOW_PRIVATE": "true"}

    def test_shows_each_webhooks_last_deliveries(self):
        receiver = http.server.ThreadingHTTPServer(("127.0.0.1", 0), WebhookReceiver)
        threading.Thread(target=receiver.serve_forever, daemon=True).start()
        self.addCleanup(receiver.server_close)
        self.addCleanup(receiver.shutdown)  # cleanups run last first: shut down, then closed
        with socket.socket() as probe:  # a port nothing listens on once closed
            probe.bind(("127.0.0.1", 0))
            gone = probe.getsockname()[1]
        secret = "0123456789abcdef0123"
        for port in (receiver.server_address[1], gone):
            self.service.call("POST", "/webhooks", {"url": f"http://127.0.0.1:{port}/hooks",
                                                    "events": ["takeover.started"], "secret": secret},
                              token=self.admin_token)
        banner = self.definition("default")["banners"][1]["id"]
        self.service.call("POST", "/carousels/default/takeover", {"banner": banner}, token=self.admin_token)
        self.wait(lambda: WebhookReceiver.received == ["takeover.started"], 15, "the receiver took it")
        self.open_view("webhooks")

        def summaries(webhook):
            return self.browser.execute_script(
                "return Array.from(document.querySelectorAll("
                f"'#webhooks tr[data-webhook=\"{webhook}\"] td.deliveries li'), (item) => item.textContent)")

        def shown():
            self.find("#webhooks-show").click()
            return (any(item.startswith("delivered · takeover.started") for item in summaries(1))
                    and any(item.startswith("pending · takeover.started") for item in summaries(2)))
        self.wait(shown, 20, "both webhooks' deliveries are shown")
        self.assertTrue(summaries(1)[0].endswith("HTTP 204"), summaries(1))
        self.assertRegex(summaries(2)[0], r"attempt \d+ failed: ")
        self.assertIn(f"port {gone}", summaries(2)[0], "why: the connection was refused")
        self.assertIn("; next ", summaries(2)[0])


class AdminAudit(AdminPageTest):
    """The audit log on the admin page (docs/ADMIN.md, docs/AUDIT.md): every write with who made it,
    newest first, filtered by actor, downloadable as CSV."""

    def audit_rows(self):
        return self.browser.execute_script(
            "return Array.from(document.querySelectorAll('#audit tbody tr'), (row) =>"
            " Array.from(row.cells, (cell) => cell.textContent))")

    def test_lists_every_write_with_its_actor_and_filters_by_actor(self):
        self.create("lobby")
        self.wait(lambda: "lobby" in self.listed(), 10, "the carousel is created")
        self.service.call("POST", "/banner/next")
        self.open_view("audit")
        self.find("#audit-form button[type=submit]").click()
        self.wait(lambda: len(self.audit_rows()) >= 3, 10, "the entries are listed")
        rows = self.audit_rows()
        # When, Actor, Action, Carousel, Target, Revision, Request
        self.assertEqual([row[1:4] for row in rows[:2]],
                         [["anonymous", "command.next", "default"], ["loopback", "carousel.create", "lobby"]])
        self.assertTrue(rows[0][4].startswith("banner-"), "a command's target is the banner it put on screen")
        self.assertEqual(rows[1][4:6], ["", "1"], "the revision the write left")
        self.assertTrue(all(len(row[6]) == 36 for row in rows[:2]), "each with its request's id")
        self.assertEqual(self.find("#audit-status").text, f"{len(rows)} entries.")
        self.assertFalse(self.find("#audit-older").is_displayed(), "one page holds them all")

        self.fill("audit-form", actor="loopback")
        self.find("#audit-form button[type=submit]").click()
        self.wait(lambda: all(row[1] == "loopback" for row in self.audit_rows()), 10, "only loopback's")
        self.assertEqual([row[2] for row in self.audit_rows()], ["carousel.create"])

        self.find("#audit-csv").click()
        self.wait(lambda: self.find("#audit-status").text == "Downloaded audit.csv.", 10, "the CSV is saved")


class AdminPageWithAToken(AdminPageTest):
    """The page when the service has an admin token: it asks for it once per tab."""

    admin_token = "admin-secret-token"

    def give_token(self, token):
        dialog = self.find("#token-dialog")
        self.wait(dialog.is_displayed, 10, "the page asks for the admin token")
        field = self.find("#token-input")
        field.clear()
        field.send_keys(token)
        dialog.find_element(By.CSS_SELECTOR, 'button[value="use"]').click()

    def test_a_wrong_token_is_said_to_be_wrong_and_the_right_one_kept_for_the_tab(self):
        self.create("lobby")
        self.wait(self.find("#token-dialog").is_displayed, 10, "the page asks for the admin token")
        self.assertIn("needs its admin token", self.find("#token-message").text)
        self.give_token("not-the-token")
        message = self.find("#token-message")
        self.wait(lambda: self.find("#token-dialog").is_displayed() and "refused" in message.text, 10,
                  "the page says the token was refused and asks again")
        self.assert_missing("lobby")
        self.give_token(self.admin_token)
        self.wait(lambda: "lobby" in self.listed(), 10, "with the right token the carousel is created")
        # Kept for the tab: the next change asks nothing.
        self.create("hall")
        self.wait(lambda: "hall" in self.listed(), 10, "the next carousel is created without asking")
        self.assertEqual(self.definition("hall")["name"], "hall")


class Serving(unittest.TestCase):
    """The page's own responses, without a browser."""

    @classmethod
    def setUpClass(cls):
        cls.service = BannerServer(ImageServer())

    @classmethod
    def tearDownClass(cls):
        cls.service.stop()

    def test_assets_have_types_tags_and_a_strict_policy(self):
        for path, kind in [("/", "text/html"), ("/sync.js", "text/javascript"), ("/swipe.js", "text/javascript"),
                           ("/app.js", "text/javascript"), ("/app.css", "text/css"), ("/favicon.svg", "image/svg+xml"),
                           ("/embed.js", "text/javascript"), ("/embed-demo.html", "text/html"),
                           ("/embed-demo.css", "text/css"), ("/admin", "text/html"),
                           ("/admin.js", "text/javascript"), ("/admin-editor.js", "text/javascript"),
                           ("/admin.css", "text/css"), ("/sw.js", "text/javascript")]:
            with urllib.request.urlopen(self.service.url + path) as response:
                self.assertTrue(response.headers["Content-Type"].startswith(kind), path)
                policy = response.headers["Content-Security-Policy"]
                # The service worker runs no other script: its policy says only what it may fetch.
                self.assertIn("connect-src 'self' http: https:" if path == "/sw.js" else "script-src 'self'", policy)
                self.assertNotIn("unsafe-inline", policy)
                tag = response.headers["ETag"]
            request = urllib.request.Request(self.service.url + path, headers={"If-None-Match": tag})
            with self.assertRaises(urllib.error.HTTPError) as refused:
                urllib.request.urlopen(request)
            self.assertEqual(refused.exception.code, 304, path)

    def test_the_pages_have_no_inline_script_or_style(self):
        for path in ["/", "/embed-demo.html", "/admin"]:
            with urllib.request.urlopen(self.service.url + path) as response:
                page = response.read().decode()
            self.assertIsNone(re.search(r"<script>|<style|\sstyle=|\son[a-z]+=", page), path)


if __name__ == "__main__":
    unittest.main(verbosity=2)
