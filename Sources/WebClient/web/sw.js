"use strict";
// The built-in page's service worker (docs/SCREENS.md, offline play): a page loaded or reloaded
// while the service cannot be reached comes up from what this keeps, and shows the images of the
// banners its plan says are coming. It answers only for the page, its files and images; the
// state, its event stream, the clock and every write go to the network as they are.
//
// Always the network first, so that a running service is always what a screen sees (a new
// version of the page, a banner's new image); what was kept only when the network fails.

const shellCache = "banner-carousel-shell";
const imageCache = "banner-carousel-images";
// The page's own files, kept when the worker is installed. The page is the same document
// whichever carousel it shows (app.js reads the address): every page address is answered with it.
const shellFiles = ["/", "/sync.js", "/swipe.js", "/app.js", "/app.css", "/favicon.svg"];
const pagePath = /^\/(carousels\/[a-z0-9][a-z0-9-]{0,63}\/)?$/;

self.addEventListener("install", (event) => {
    event.waitUntil(caches.open(shellCache).then((cache) => cache.addAll(shellFiles)).then(() => self.skipWaiting()));
});

// The page that registered the worker is served by it from now on, without a reload.
self.addEventListener("activate", (event) => event.waitUntil(self.clients.claim()));

self.addEventListener("fetch", (event) => {
    const request = event.request;
    if (request.method !== "GET") return;
    const url = new URL(request.url);
    const ownOrigin = url.origin === self.location.origin;
    if (ownOrigin && request.mode === "navigate" && pagePath.test(url.pathname)) {
        event.respondWith(networkFirst(request, shellCache, "/"));
    } else if (ownOrigin && shellFiles.includes(url.pathname) && url.search === "") {
        event.respondWith(networkFirst(request, shellCache, url.pathname));
    } else if (request.destination === "image") {
        event.respondWith(networkFirst(request, null, request.url, imageCache));
    }
});

/**
 * The network's answer (kept as `key` in `keepIn`, when given and a success), else what
 * `lookIn` (`keepIn` by default) holds as `key`, else the network's failure.
 */
async function networkFirst(request, keepIn, key, lookIn = keepIn) {
    try {
        const response = await fetch(request);
        if (keepIn && response.ok) {
            const copy = response.clone();
            caches.open(keepIn).then((cache) => cache.put(key, copy)).catch(() => {});
        }
        return response;
    } catch (failure) {
        const kept = await (await caches.open(lookIn)).match(key);
        if (kept) return kept;
        throw failure;
    }
}

// The page sends the images its plan may show (TimelinePlan in sync.js): those are kept, the
// others dropped, so that the cache holds the next hours and no more. Images of other origins are
// kept as opaque answers, which an <img> shows although no script can read them.
self.addEventListener("message", (event) => {
    const images = event.data?.cacheImages;
    if (Array.isArray(images)) event.waitUntil(keepImages(images.filter((image) => typeof image === "string")));
});

async function keepImages(images) {
    const cache = await caches.open(imageCache);
    const wanted = new Set(images.map((image) => new URL(image, self.location.href).href));
    for (const request of await cache.keys()) {
        if (!wanted.has(request.url)) await cache.delete(request);
    }
    for (const image of wanted) {
        if (await cache.match(image)) continue;
        try {
            const sameOrigin = new URL(image).origin === self.location.origin;
            const response = await fetch(image, {mode: sameOrigin ? "same-origin" : "no-cors", credentials: "omit"});
            if (response.ok || response.type === "opaque") await cache.put(image, response);
        } catch {
            // Out of reach now: asked again with the next plan.
        }
    }
}
