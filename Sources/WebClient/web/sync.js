"use strict";
// Screens in step (docs/SCREENS.md): the service's clock as this page estimates it, and what the
// carousel will show at `nextAdvanceAt`. Shared by the page at / (app.js) and the component
// (embed.js, which the service serves as this file followed by the element's code).

/**
 * The service's clock, estimated from `GET /time` exchanges (docs/SCREENS.md). Each exchange bounds
 * the offset from both sides: the answer was written after the request left and before it came
 * back. The estimate takes the fastest way out and the fastest way back over the recent exchanges,
 * each on its own: a network that delays each packet by its own random amount rarely delays both
 * of one exchange little, but soon delays some request little and some answer little. Exchanges:
 * a round at start (and when the page is shown again), one more every few seconds; those older
 * than a minute are dropped (clocks drift). Kept as an offset to this page's monotonic clock
 * (`performance.now()`), so a wrong or adjusted system clock (`Date.now()`) does not matter.
 *
 * With `rememberAs` (a localStorage key), the estimate is also kept against `Date.now()`, so that
 * a page reloaded while the service cannot be reached can go on from it (`recall`).
 */
class ServiceClock {
    static exchangeNumber = 0;

    constructor(timeURL, {exchanges = 16, sampleEveryMs = 2000, windowMs = 60 * 1000, retryMs = 2000,
        rememberAs = null} = {}) {
        this.timeURL = timeURL;
        this.rememberAs = rememberAs;
        this.exchanges = exchanges;
        this.sampleEveryMs = sampleEveryMs;
        this.windowMs = windowMs;
        this.retryMs = retryMs;
        this.samples = []; // {sentAt, serviceAt, receivedAt}, oldest first
        this.offsetMs = null; // service epoch milliseconds minus performance.now()
        this.estimating = null;
        // Resource Timing entries by URL, as they come: an observer still gets them once the
        // page's timing buffer (250 entries) is full.
        this.timings = new Map();
        if (typeof PerformanceObserver === "function") {
            new PerformanceObserver((list) => {
                for (const entry of list.getEntries()) this.timings.get(entry.name)?.(entry);
            }).observe({type: "resource"});
        }
    }

    get ready() {
        return this.offsetMs !== null;
    }

    /** The fastest round trip of the recent exchanges, in whole milliseconds; null before the first. */
    get rttMs() {
        if (this.samples.length === 0) return null;
        return Math.round(Math.min(...this.samples.map((sample) => sample.receivedAt - sample.sentAt)));
    }

    /** The service's epoch milliseconds at `local`, a `performance.now()` time. */
    at(local = performance.now()) {
        return local + this.offsetMs;
    }

    /** A round now and whenever the page is shown again; one exchange every `sampleEveryMs`. Once. */
    start() {
        if (this.started) return;
        this.started = true;
        this.round();
        setInterval(() => this.estimate(1).catch(() => {}), this.sampleEveryMs);
        document.addEventListener("visibilitychange", () => {
            if (document.visibilityState === "visible") this.round();
        });
    }

    /** A round of exchanges, tried again until one gets through (the service is back). */
    round() {
        if (this.rounding) return;
        this.rounding = true;
        this.estimate(this.exchanges).then(() => {
            this.rounding = false;
        }, () => setTimeout(() => {
            this.rounding = false;
            this.round();
        }, this.retryMs));
    }

    /**
     * Before any exchange got through (a page reloaded while the service is away): the estimate
     * this browser remembered, kept against its wall clock. Whether there is one now.
     */
    recall() {
        if (this.ready || !this.rememberAs) return this.ready;
        try {
            const kept = localStorage.getItem(this.rememberAs);
            if (kept !== null && Number.isFinite(Number(kept))) this.offsetMs = Date.now() + Number(kept) - performance.now();
        } catch {
            // Storage refused: nothing remembered.
        }
        return this.ready;
    }

    /** `count` exchanges in a row, the estimate updated after each. */
    estimate(count) {
        this.estimating ??= (async () => {
            try {
                for (let exchange = 0; exchange < count; exchange++) {
                    this.samples.push(await this.exchange());
                    this.update();
                }
            } finally {
                this.estimating = null;
            }
        })();
        return this.estimating;
    }

    update() {
        const now = performance.now();
        this.samples = this.samples.filter((sample) => now - sample.receivedAt <= this.windowMs);
        // outbound = offset + the request's delay; inbound = the answer's delay - offset. Their
        // smallest values hold the smallest delays; half their difference is the offset, wrong by
        // half the difference of those two delays.
        let outbound = Infinity;
        let inbound = Infinity;
        for (const {sentAt, serviceAt, receivedAt} of this.samples) {
            outbound = Math.min(outbound, serviceAt - sentAt);
            inbound = Math.min(inbound, receivedAt - serviceAt);
        }
        this.offsetMs = (outbound - inbound) / 2;
        if (this.rememberAs) {
            try {
                localStorage.setItem(this.rememberAs, String(Math.round(this.at() - Date.now())));
            } catch {
                // Storage refused: a reload while the service is away starts without an estimate.
            }
        }
    }

    async exchange() {
        // A URL of its own, to find this exchange's resource timing.
        const url = new URL(`${this.timeURL}?exchange=${++ServiceClock.exchangeNumber}`, location.href).href;
        const timed = new Promise((resolve) => {
            this.timings.set(url, resolve);
            setTimeout(() => resolve(null), 1000);
        });
        let sentAt = performance.now();
        let receivedAt;
        let epochMillis;
        let timing;
        try {
            const response = await fetch(url, {cache: "no-store"});
            if (!response.ok) throw new Error(`GET ${this.timeURL}: ${response.status}`);
            ({epochMillis} = await response.json());
            receivedAt = performance.now();
            timing = await timed;
        } finally {
            this.timings.delete(url);
        }
        // The network stack's own times, when it gives them (the service sends
        // Timing-Allow-Origin): a busy main thread does not delay them.
        if (timing && timing.requestStart > 0 && timing.responseStart >= timing.requestStart) {
            sentAt = timing.requestStart;
            receivedAt = timing.responseStart;
        }
        return {sentAt, serviceAt: epochMillis, receivedAt};
    }
}

/**
 * The state the carousel will be in at `state.nextAdvanceAt` if nothing else happens first, as
 * `{due, state}` (`due` in service epoch milliseconds), or null when it cannot be told from here
 * (paused, a takeover, one banner, or a state that was itself foreseen: one step ahead only, the
 * pushed state confirms or corrects it). The foreseen state keeps the version it came from and is
 * marked `foreseen`.
 *
 * `defaultInterval` is the carousel's interval in seconds when known (the state's `interval` of a
 * banner without a `duration` of its own): it gives the countdown of a next banner without one.
 */
function foreseeAdvance(state, defaultInterval) {
    if (!state || state.foreseen || state.paused || state.takeover || state.nextAdvanceAt === null
        || !state.banner || !state.next || state.next.id === state.banner.id) {
        return null;
    }
    const due = Date.parse(state.nextAdvanceAt);
    if (Number.isNaN(due)) return null;
    const rotationIndex = state.rotation ? state.rotation.indexOf(state.next.id) : -1;
    const interval = state.next.duration ?? defaultInterval;
    return {
        due,
        state: {
            ...state,
            index: rotationIndex >= 0 ? rotationIndex : (state.index + 1) % state.count,
            banner: state.next,
            previous: state.banner,
            next: state.count === 2 ? state.banner : null,
            interval: interval ?? state.interval,
            nextAdvanceAt: interval == null ? null : new Date(due + interval * 1000).toISOString(),
            foreseen: true,
        },
    };
}

/**
 * Whether a state received should replace `current`, the latest one held. Not when it is older (a
 * command's answer overtook the stream), nor when it is the state a foreseen flip came from (a
 * poll answered just before the advance): no flicker back. After a lost stream (`restart`) the
 * first state is taken whatever its version: the carousel may have been deleted and created again.
 * So is any state that comes while the page plays from its plan (it was cut off): the service's
 * word replaces the page's guess.
 */
function supersedes(next, current, restart = false) {
    return restart || !current || current.planned === true || !(next.version < current.version
        || (current.foreseen && next.version === current.version));
}

/**
 * Whether the frame drawn at `frameTime` (a `requestAnimationFrame` time) is the one to show the
 * foreseen advance in: the first whose time is at most half a 60 Hz frame before `due`, on the
 * service's clock. A constant, not this screen's own frame length: screens whose frames fall at
 * the same instants then pick the same frame.
 */
function advanceIsDue(upcoming, clock, frameTime) {
    return upcoming !== null && clock.ready && clock.at(frameTime) >= upcoming.due - 1000 / 120;
}

/** The carousel's own interval, learnt from a state whose banner has none of its own. */
function learnDefaultInterval(state, known) {
    return state && state.banner && state.banner.duration === null && !state.takeover ? state.interval : known;
}

/**
 * What the carousel will show over the next hours, for playing on while the service cannot be
 * reached (docs/SCREENS.md, offline play): `GET …/timeline?hours=6` (the changes planned, and `until`, the
 * instant before which every change is listed) with each banner's content from `GET …/banners`,
 * and the state shown when they came, which the first change follows. Fetched again on every
 * `changed()` (a state of a new version: a command, an edit, a takeover) and every 10 minutes.
 *
 * `current()` gives the state shown now; `onPlanned(urls)` gets the images the plan may show.
 * With `keepAs` (a URL of this origin), the plan is also kept in the Cache Storage, so that a
 * page reloaded while the service is away can `recall` it.
 */
class TimelinePlan {
    static cacheName = "banner-carousel-plan";

    constructor(base, {current, onPlanned = () => {}, keepAs = null, hours = 6, refreshEveryMs = 10 * 60 * 1000,
        audience = null}) {
        this.base = base;
        this.audience = audience; // the screens' audience (docs/AUDIENCES.md): its timeline and shares
        this.current = current;
        this.onPlanned = onPlanned;
        this.keepAs = keepAs;
        this.hours = hours;
        this.refreshEveryMs = refreshEveryMs;
        // {from: the state shown when it came, entries: [{at (epoch ms), banner (id), index,
        // count}], until (epoch ms), banners: {id: banner}}
        this.plan = null;
        this.fetching = null;
        this.again = false;
    }

    /** Plans afresh every `refreshEveryMs`; the first plan comes with the first `changed()`. */
    start() {
        setInterval(() => this.refresh(), this.refreshEveryMs);
    }

    /** The carousel changed (a state of a new version was received): plans afresh. */
    changed() {
        this.refresh();
    }

    /** Fetches the plan, one request at a time: a change meanwhile fetches it once more after. */
    refresh() {
        if (this.fetching) {
            this.again = true;
            return;
        }
        this.fetching = this.fetchPlan().catch(() => {}).finally(() => {
            this.fetching = null;
            if (this.again) {
                this.again = false;
                this.refresh();
            }
        });
    }

    async fetchPlan() {
        const [timeline, listed] = await Promise.all([
            this.getJSON(`${this.base}/timeline${queryOf({hours: this.hours, audience: this.audience})}`),
            this.getJSON(`${this.base}/banners${queryOf({audience: this.audience})}`)]);
        const from = this.current();
        if (!from || from.planned) return;
        const banners = {};
        const content = ({id, image, caption, link, duration}) => ({id, image, caption, link, duration});
        for (const banner of listed.banners) banners[banner.id] = content(banner);
        // A takeover's own banner is in no list: the state has it.
        for (const banner of [from.banner, from.previous, from.next]) if (banner) banners[banner.id] ??= content(banner);
        this.plan = {from, banners, until: Date.parse(timeline.until),
            entries: timeline.entries.map((entry) => ({...entry, at: Date.parse(entry.at)}))};
        this.onPlanned(this.imageURLs());
        await this.keep();
    }

    async getJSON(url) {
        const response = await fetch(url, {cache: "no-store"});
        if (!response.ok) throw new Error(`GET ${url}: ${response.status}`);
        return response.json();
    }

    /** Every image the plan may show. */
    imageURLs() {
        const {from, entries, banners} = this.plan;
        const images = [banners[from.banner?.id]?.image, ...entries.map((entry) => this.bannerOf(entry)?.image)];
        return [...new Set(images)].filter((image) => image);
    }

    async keep() {
        if (!this.keepAs || typeof caches === "undefined") return;
        const cache = await caches.open(TimelinePlan.cacheName);
        await cache.put(this.keepAs, new Response(JSON.stringify(this.plan), {headers: {"Content-Type": "application/json"}}));
    }

    /** The plan kept by an earlier load of this page, unless one was fetched since. Whether there is one. */
    async recall() {
        if (this.plan || !this.keepAs || typeof caches === "undefined") return this.plan !== null;
        try {
            const kept = await (await caches.open(TimelinePlan.cacheName)).match(this.keepAs);
            const plan = kept ? await kept.json() : null;
            // A plan fetched meanwhile is newer than the one kept.
            if (plan && !this.plan) this.plan = plan;
        } catch {
            // Nothing usable kept.
        }
        return this.plan !== null;
    }

    /**
     * What the plan says is shown at `serviceMs` (service epoch milliseconds), as
     * `{state, step, ended}`: `step` numbers the entry it comes from (-1: the state the plan started
     * from), `ended` says that `serviceMs` is past `until`, where the plan can say no more (the
     * state is then the last one known). Null without a plan. The state is marked `planned`.
     */
    stateAt(serviceMs) {
        if (!this.plan) return null;
        const {entries, until} = this.plan;
        let low = 0;
        let high = entries.length;
        while (low < high) {
            const middle = (low + high) >> 1;
            if (entries[middle].at <= serviceMs) low = middle + 1;
            else high = middle;
        }
        const step = low - 1;
        return {step, ended: serviceMs >= until, state: this.stateOf(step)};
    }

    /** The banner an entry shows: its own content when the plan's banners do not have it as it
     * will be (a scheduled change adds or edits it, docs/SCHEDULED.md), else theirs. */
    bannerOf(entry) {
        const id = entry.banner;
        if (id == null) return null;
        const content = ({image, caption, link, duration}) => ({id, image, caption, link, duration});
        if (entry.content) return content(entry.content);
        return this.plan.banners[id] ?? {id, image: "", caption: "", link: null, duration: null};
    }

    stateOf(step) {
        const {from, entries} = this.plan;
        if (step < 0) return {...from, planned: true, foreseen: true};
        const entry = entries[step];
        const following = entries[step + 1] ?? null;
        return {
            ...from,
            banner: this.bannerOf(entry),
            index: entry.index,
            count: entry.count,
            previous: this.bannerOf(step > 0 ? entries[step - 1] : {banner: from.banner?.id}),
            next: following ? this.bannerOf(following) : null,
            paused: false,
            pausedUntil: null,
            takeover: null,
            interval: following ? (following.at - entry.at) / 1000 : from.interval,
            nextAdvanceAt: following ? new Date(following.at).toISOString() : null,
            planned: true,
            foreseen: true,
        };
    }
}

/**
 * Follows the carousel at `base` (its URL, or "" for the bare paths of the page's own service):
 * its event stream, and ETag polls of `GET …/banner` while the stream cannot get through (the
 * browser reconnects the stream by itself; a proxy may hold it back).
 *
 * The stream comes first, on a connection of its own (docs/SCREENS.md): the first poll and the
 * clock's exchanges start once it has opened or failed, or after a second. Calls
 * `onState(state, {restart})` with every state received (`restart`: the first one after the
 * stream was lost, taken whatever its version), and `onStatus(status)` when the carousel becomes
 * "live", "unreachable" or "missing" (the service does not know it).
 */
class CarouselFeed {
    constructor(base, clock, {onState, onStatus, screen = null, key = null, audience = null}) {
        this.base = base;
        // The screen this page is, with its key (docs/SCREENS.md), and its audience
        // (docs/AUDIENCES.md), named on the stream and the polls: in the query, which needs no
        // CORS preflight and which EventSource can send.
        this.query = queryOf({screen, screenKey: screen ? key : null, audience});
        this.clock = clock;
        this.onState = onState;
        this.onStatus = onStatus;
        this.status = null;
        this.etag = null;
        this.events = null;
        this.pollTimer = null;
        this.running = false;
    }

    start() {
        this.running = true;
        this.streamStarted = false;
        this.follow(false);
        this.streamTimer = setTimeout(() => this.afterStreamStarts(), 1000);
    }

    stop() {
        this.running = false;
        this.events?.close();
        this.events = null;
        this.stopPolling();
        clearTimeout(this.streamTimer);
    }

    /** Asks for the state afresh (a tab shown again). */
    refresh() {
        this.etag = null;
        this.poll();
    }

    follow(reconnected) {
        if (!this.running) return;
        if (!("EventSource" in window)) {
            this.afterStreamStarts();
            this.startPolling();
            return;
        }
        const events = new EventSource(`${this.base}/banner/events${this.query}`);
        this.events = events;
        events.addEventListener("open", () => {
            this.report("live");
            this.stopPolling();
            this.afterStreamStarts();
        });
        events.addEventListener("state", (event) => {
            this.report("live");
            this.onState(JSON.parse(event.data), {restart: reconnected});
            reconnected = false;
        });
        events.addEventListener("error", () => {
            reconnected = true;
            this.afterStreamStarts();
            this.startPolling();
            // Closed for good (an answer that is not a stream): a new one in a while.
            if (events.readyState === EventSource.CLOSED) {
                setTimeout(() => this.events === events && this.follow(true), 2000);
            }
        });
    }

    afterStreamStarts() {
        if (this.streamStarted || !this.running) return;
        this.streamStarted = true;
        this.poll();
        this.clock.start();
    }

    startPolling() {
        if (this.pollTimer === null) this.pollTimer = setInterval(() => this.poll(), 1000);
    }

    stopPolling() {
        clearInterval(this.pollTimer);
        this.pollTimer = null;
    }

    async poll() {
        try {
            const response = await fetch(`${this.base}/banner${this.query}`, {
                headers: this.etag ? {"If-None-Match": this.etag} : {}, cache: "no-store"});
            if (response.status === 304) return this.report("live");
            if (response.status === 404) return this.report("missing");
            if (!response.ok) throw new Error(`status ${response.status}`);
            this.etag = response.headers.get("ETag");
            this.report("live");
            this.onState(await response.json(), {restart: false});
        } catch {
            this.report("unreachable");
            this.startPolling();
        }
    }

    report(status) {
        if (status === this.status) return;
        this.status = status;
        this.onStatus(status);
    }
}

/**
 * Views for proof of play (docs/STATS.md): a banner shown while the page is visible and
 * `element` at least half on screen, for a second or more without a break, is one view, whose
 * `ms` is how long that lasted. Each view has an id made here and waits in a `ReportQueue` until
 * the service has taken it: sent to `${base}/views` (a carousel's URL) every 10 s, and with
 * `navigator.sendBeacon` when the page is hidden or left. A view sent twice counts once (the
 * service keeps ids 48 hours). With `keepIn` (the built-in page), the queue survives a reload.
 * With `audience`, the views count as that audience's screens' (docs/AUDIENCES.md).
 */
class ViewReporter {
    constructor(base, clock, element, {keepIn = null, everyMs = 10000, audience = null} = {}) {
        this.clock = clock;
        this.element = element;
        this.everyMs = everyMs;
        // The service takes views of the last day: older ones can never count.
        this.reports = new ReportQueue(`${base}/views${queryOf({audience})}`, "views", {keepIn, maxAgeMs: 23 * 3600 * 1000,
            timeOf: (view) => view.at});
        this.bannerId = null; // shown now
        this.visibleSince = null; // performance.now() since when it has been visible
        this.onScreen = false;
        this.observer = new IntersectionObserver((entries) => {
            this.onScreen = entries[entries.length - 1].intersectionRatio >= 0.5;
            this.update();
        }, {threshold: [0, 0.5, 1]});
        this.onVisibility = () => {
            this.update();
            if (document.visibilityState === "hidden") this.reports.send(true);
        };
        this.onLeave = () => {
            this.end();
            this.reports.send(true);
        };
    }

    start() {
        this.observer.observe(this.element);
        document.addEventListener("visibilitychange", this.onVisibility);
        addEventListener("pagehide", this.onLeave);
        this.timer = setInterval(() => this.reports.send(false), this.everyMs);
        this.reports.recall();
    }

    /** Sends what waits now (the service is back). */
    sendNow() {
        this.reports.send(false);
    }

    stop() {
        this.observer.disconnect();
        document.removeEventListener("visibilitychange", this.onVisibility);
        removeEventListener("pagehide", this.onLeave);
        clearInterval(this.timer);
        this.onLeave();
    }

    /**
     * The banner `id` is shown from `frameTime` (null: none), the frame that painted it: a view's
     * stretch runs from frame to frame, as the screen showed it, however late the callback that
     * tells of it runs on a busy page.
     */
    shown(id, frameTime = performance.now()) {
        if (id === this.bannerId) return;
        this.end(frameTime);
        this.bannerId = id;
        this.update(frameTime);
    }

    get visible() {
        return this.bannerId !== null && this.onScreen && document.visibilityState === "visible";
    }

    update(now = performance.now()) {
        if (this.visible && this.visibleSince === null) this.visibleSince = now;
        else if (!this.visible) this.end(now);
    }

    /** The visible stretch ends (at `now`): a view when it lasted a second. */
    end(now = performance.now()) {
        if (this.visibleSince === null) return;
        if (now - this.visibleSince >= 1000) {
            const at = this.clock.ready ? this.clock.at(this.visibleSince) : Date.now() - (now - this.visibleSince);
            this.reports.add({id: reportId(), banner: this.bannerId, at: new Date(Math.floor(at)).toISOString(),
                ms: Math.round(now - this.visibleSince)});
        }
        this.visibleSince = null;
    }
}

/**
 * Reports (views, receipts) waiting for the service to take them, oldest first, each with an id
 * made here: sent to `url` as `{[field]: [...]}` in batches of at most 100, forgotten once the
 * service answers 2xx — or a 4xx other than 429, which a retry cannot change (said in the
 * console) —, kept otherwise and sent again, which is safe: the service counts a report once
 * however often it comes. `send(true)` (the page going away) uses `navigator.sendBeacon` and
 * keeps what it sent, since whether a beacon arrived is not known. Reports older than `maxAgeMs`
 * (by `timeOf(report)`), which the service refuses, are dropped; past `limit`, the oldest.
 * `wire(report)` is what goes to the service. The body is text: a page of another origin sends it
 * without a preflight.
 *
 * With `keepIn` (an IndexedDB database name: the built-in page), the queue is also kept there
 * (`KeptReports`), so that it survives a reload or a closed browser; otherwise (the component, on
 * a shop's origin) it lives in memory until it can be sent.
 */
class ReportQueue {
    constructor(url, field, {keepIn = null, maxAgeMs, timeOf, limit = Infinity, wire = (report) => report}) {
        this.url = url;
        this.field = field;
        this.maxAgeMs = maxAgeMs;
        this.timeOf = timeOf;
        this.limit = limit;
        this.wire = wire;
        this.kept = keepIn ? new KeptReports(keepIn, url) : null;
        this.queue = [];
        this.sending = new Set(); // ids of reports in a request not yet answered
    }

    /** Takes in what an earlier load of the page kept and could not send. */
    recall() {
        this.kept?.all().then((reports) => {
            const queued = new Set(this.queue.map((report) => report.id));
            this.queue.unshift(...reports.filter((report) => !queued.has(report.id))
                .sort((a, b) => Date.parse(this.timeOf(a)) - Date.parse(this.timeOf(b))));
        });
    }

    add(report) {
        this.queue.push(report);
        this.kept?.add(report);
        if (this.queue.length > this.limit) this.forget(this.queue.slice(0, this.queue.length - this.limit));
    }

    send(leaving) {
        const oldest = Date.now() - this.maxAgeMs;
        this.forget(this.queue.filter((report) => Date.parse(this.timeOf(report)) < oldest));
        const waiting = this.queue.filter((report) => !this.sending.has(report.id));
        for (let first = 0; first < waiting.length; first += 100) {
            const reports = waiting.slice(first, first + 100);
            const body = JSON.stringify({[this.field]: reports.map(this.wire)});
            if (leaving && navigator.sendBeacon) {
                navigator.sendBeacon(this.url, body);
                continue;
            }
            for (const report of reports) this.sending.add(report.id);
            fetch(this.url, {method: "POST", body, keepalive: true, headers: {"Content-Type": "text/plain"}})
                .then((response) => {
                    if (response.ok) return this.forget(reports);
                    if (response.status >= 400 && response.status < 500 && response.status !== 429) {
                        console.warn(`banner-carousel: ${reports.length} ${this.field} refused (${response.status}); dropped`);
                        this.forget(reports);
                    }
                }, () => {}) // the service is away: sent again later, counted once
                .finally(() => {
                    for (const report of reports) this.sending.delete(report.id);
                });
        }
    }

    forget(reports) {
        if (reports.length === 0) return;
        const ids = new Set(reports.map((report) => report.id));
        this.queue = this.queue.filter((report) => !ids.has(report.id));
        this.kept?.remove([...ids]);
    }
}

/**
 * What a screen playing from its plan says (docs/SCREENS.md, offline play): since when it is
 * offline (`since`, epoch milliseconds, shown as HH:MM here) and whether the plan ran out.
 */
function offlineNotice(since, ended) {
    const time = new Date(since).toLocaleTimeString([], {hour: "2-digit", minute: "2-digit", hourCycle: "h23"});
    return `Offline since ${time}` + (ended ? " · nothing planned after this banner" : "");
}

/** An id for a report, unique without asking anyone: a UUID where the browser makes them. */
function reportId() {
    if (typeof crypto.randomUUID === "function") return crypto.randomUUID();
    return Array.from(crypto.getRandomValues(new Uint8Array(16)), (byte) => byte.toString(16).padStart(2, "0")).join("");
}

/**
 * Reports waiting to be sent to `url`, kept in IndexedDB database `name` (one object store,
 * `reports`, keyed by id). Every call is best effort: a browser without IndexedDB, or refusing
 * it, keeps the queue in memory only.
 */
class KeptReports {
    constructor(name, url) {
        this.url = url;
        this.database = new Promise((resolve, reject) => {
            const request = indexedDB.open(name, 1);
            request.onupgradeneeded = () => request.result.createObjectStore("reports", {keyPath: "id"});
            request.onsuccess = () => resolve(request.result);
            request.onerror = () => reject(request.error);
        }).catch(() => null);
    }

    async all() {
        const found = await this.run("readonly", (store) => store.getAll());
        return (found ?? []).filter((kept) => kept.url === this.url).map(({url, ...view}) => view);
    }

    add(view) {
        this.run("readwrite", (store) => store.put({...view, url: this.url}));
    }

    remove(ids) {
        this.run("readwrite", (store) => {
            for (const id of ids) store.delete(id);
        });
    }

    /** `work(store)` in a transaction; the result of the request it returns, or null. */
    async run(mode, work) {
        const database = await this.database;
        if (!database) return null;
        return new Promise((resolve) => {
            try {
                const transaction = database.transaction("reports", mode);
                const request = work(transaction.objectStore("reports"));
                transaction.oncomplete = () => resolve(request ? request.result : null);
                transaction.onerror = transaction.onabort = () => resolve(null);
            } catch {
                resolve(null);
            }
        });
    }
}

/** `?name=value&…` of the parameters given (null ones left out), or "" when none is. */
function queryOf(parameters) {
    const given = Object.entries(parameters).filter(([, value]) => value !== null && value !== undefined);
    return given.length ? "?" + given.map(([name, value]) => `${name}=${encodeURIComponent(value)}`).join("&") : "";
}

/**
 * The screen's audience (docs/AUDIENCES.md): `given` (the page's `?audience=`, the component's
 * `audience` attribute) when it is a name, else none, said on the console.
 */
function audienceName(given) {
    if (!given) return null;
    if (/^[a-z0-9][a-z0-9._-]{0,63}$/.test(given)) return given;
    console.warn(`banner-carousel: '${given}' is not an audience (a-z, 0-9, '.', '_', '-'); showing every audience's banners`);
    return null;
}

/**
 * This screen's id (docs/SCREENS.md): `given` when it is one (the page's `?screen=`, the
 * component's `screen` attribute), else an id made once for this browser, `web-` and 12 random
 * characters, kept in localStorage.
 */
function screenId(given) {
    const rule = /^[a-z0-9][a-z0-9._-]{0,63}$/;
    if (given && rule.test(given)) return given;
    if (given) console.warn(`banner-carousel: '${given}' is not a screen id (a-z, 0-9, '.', '_', '-'); using another`);
    return keptForThisBrowser("banner-carousel-screen", rule, () => "web-" + randomText(12, "abcdefghijklmnopqrstuvwxyz0123456789"));
}

/**
 * This screen's key (docs/SCREENS.md, "A screen's own reports"): `given` when it is one (the
 * page's `?screenKey=`, for a kiosk whose storage is wiped at every start), else 32 random
 * characters made once for this browser, kept in localStorage. The first key a screen is heard
 * with claims its id; what is sent without it changes nothing.
 */
function screenKey(given) {
    const rule = /^[A-Za-z0-9_-]{16,128}$/;
    if (given && rule.test(given)) return given;
    if (given) console.warn("banner-carousel: the screenKey given is not a key (16 to 128 of A-Z, a-z, 0-9, '-', '_'); using another");
    return keptForThisBrowser("banner-carousel-screen-key", rule,
        () => randomText(32, "ABCDEFGHIJKLMNOPQRSTUVWXYZabcdefghijklmnopqrstuvwxyz0123456789-_"));
}

/** The value kept in localStorage as `name` when `rule` holds for it, else a new one `make`s, kept. */
function keptForThisBrowser(name, rule, make) {
    try {
        const kept = localStorage.getItem(name);
        if (kept && rule.test(kept)) return kept;
    } catch {
        // Storage refused (a private window's policy): a value for this page only.
    }
    const made = make();
    try {
        localStorage.setItem(name, made);
    } catch {
        // As above.
    }
    return made;
}

/** `length` characters of `alphabet` at random (equally likely when its length divides 256, as a key's 64 does). */
function randomText(length, alphabet) {
    return Array.from(crypto.getRandomValues(new Uint8Array(length)), (byte) => alphabet[byte % alphabet.length]).join("");
}

/**
 * Receipts (docs/SCREENS.md): after each flip the screen tells the service what it showed and
 * when, on the service's clock, so that the service can say whether it is in step. A flip is a
 * change of banner seen while following the carousel (or playing from the plan, offline); the
 * first banner after loading, or after the tab was hidden, is not one. They wait in a
 * `ReportQueue` (the latest 100), sent every `everyMs` (5 s) and with `navigator.sendBeacon` when
 * the page is hidden or left; the service takes those of the last hour, and measures a receipt
 * sent again once. With `keepIn` (the built-in page), the queue survives a reload.
 */
class ReceiptReporter {
    constructor(base, screen, clock, {key = null, everyMs = 5000, keepIn = null, audience = null} = {}) {
        this.clock = clock;
        this.everyMs = everyMs;
        // The id is the queue's own: the service tells a receipt sent again by its instant. The
        // screen's audience (docs/AUDIENCES.md) says which of the carousel's states it is judged by;
        // its key, in the query (sendBeacon sends no header), that the receipts are its own.
        const path = `${base}/screens/${encodeURIComponent(screen)}/receipts${queryOf({screenKey: key, audience})}`;
        this.reports = new ReportQueue(path, "receipts", {
            keepIn, maxAgeMs: 50 * 60 * 1000, timeOf: (receipt) => receipt.shownAt, limit: 100,
            wire: ({id, ...receipt}) => receipt});
        this.onVisibility = () => {
            if (document.visibilityState === "hidden") this.reports.send(true);
        };
        this.onLeave = () => this.reports.send(true);
    }

    start() {
        document.addEventListener("visibilitychange", this.onVisibility);
        addEventListener("pagehide", this.onLeave);
        this.timer = setInterval(() => this.reports.send(false), this.everyMs);
        this.reports.recall();
    }

    /** Sends what waits now (the service is back). */
    sendNow() {
        this.reports.send(false);
    }

    stop() {
        document.removeEventListener("visibilitychange", this.onVisibility);
        removeEventListener("pagehide", this.onLeave);
        clearInterval(this.timer);
        this.reports.send(true);
    }

    /** Banner `id` of the state of `version` was first painted in the frame of `frameTime`. */
    flipped(id, version, frameTime) {
        // Before the clock is estimated, a time would be this device's, not the service's.
        if (!this.clock.ready) return;
        const receipt = {id: reportId(), version, banner: id,
            shownAt: new Date(Math.round(this.clock.at(frameTime))).toISOString(),
            offsetMs: Math.round(this.clock.at() - Date.now())};
        const rttMs = this.clock.rttMs;
        if (rttMs !== null) receipt.rttMs = Math.min(rttMs, 600000);
        this.reports.add(receipt);
    }
}
