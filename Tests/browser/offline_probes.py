"""Scripts that look into a page's offline play from outside (docs/SCREENS.md, "Offline play"),
for the browser tests and bench/offline.py. Each is run with Selenium's execute_async_script."""

# Whether the page is served by its service worker and keeps its plan and the images of the five
# banners the tests and the benchmark use.
READY_OFFLINE = """
    const done = arguments[arguments.length - 1];
    (async () => {
        if (!navigator.serviceWorker.controller) return false;
        const plans = await (await caches.open("banner-carousel-plan")).keys();
        const images = await (await caches.open("banner-carousel-images")).keys();
        return plans.length === 1 && images.length === 5;
    })().then(done, () => done(false));
"""

# How many reports (views, receipts) the page keeps in IndexedDB, waiting for the service to take them.
QUEUED_REPORTS = """
    const done = arguments[arguments.length - 1];
    const request = indexedDB.open("banner-carousel-reports", 1);
    request.onsuccess = () => {
        const count = request.result.transaction("reports").objectStore("reports").count();
        count.onsuccess = () => done(count.result);
    };
    request.onerror = () => done(null);
"""

# The paths of the images the service worker keeps for offline play.
KEPT_IMAGES = """
    const done = arguments[arguments.length - 1];
    caches.open("banner-carousel-images").then((cache) => cache.keys())
        .then((requests) => done(requests.map((request) => new URL(request.url).pathname)), () => done([]));
"""
