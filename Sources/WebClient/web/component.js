// <banner-carousel src="https://host/carousels/NAME" token="…">: the shared carousel on any page,
// of any origin the service's CORS allows (docs/EMBEDDING.md). The service serves this file as
// /embed.js, after sync.js and swipe.js, all inside one function: nothing leaks into the page but
// the element's name.
//
// What the element shows is its *view*: normally the live carousel (flipping in step with every
// other screen, docs/SCREENS.md); while a visitor hovers it, focuses it, or browses it (swipe,
// keys and dots without a token) the view is held on a banner of its own, and it rejoins the live
// banner on leave or a few seconds after the last touch. Only a page that gives a `token` gets the
// previous/next/pause buttons, which page everybody's carousel.

const browseHoldMs = 4000; // a browsing visitor's view rejoins the live banner this long after the last touch
const componentCSS = `
:host { display: block; --banner-aspect-ratio: 8 / 3; --banner-accent: #2457d6; --banner-radius: 12px;
    font-family: system-ui, -apple-system, "Segoe UI", Roboto, "Helvetica Neue", Arial, sans-serif; }
:host([hidden]) { display: none; }
* { box-sizing: border-box; }
.carousel { position: relative; outline: none; }
.carousel:focus-visible .viewport { outline: 3px solid var(--banner-accent); outline-offset: 3px; }
.viewport { position: relative; overflow: hidden; border-radius: var(--banner-radius); touch-action: pan-y;
    aspect-ratio: var(--banner-aspect-ratio); background: #e8eaef; user-select: none; -webkit-user-select: none; }
.track { position: absolute; inset: 0; }
.slide { --hue: 220; position: absolute; inset: 0; margin: 0;
    background: linear-gradient(135deg, hsl(var(--hue) 70% 45%), hsl(calc(var(--hue) + 40) 70% 35%)); }
.slide.previous { transform: translateX(-100%); }
.slide.next { transform: translateX(100%); }
.slide a { display: block; width: 100%; height: 100%; }
.slide a:not([href]) { cursor: default; }
.slide a:focus-visible { outline: 3px solid #fff; outline-offset: -6px; }
.slide img { display: block; width: 100%; height: 100%; object-fit: cover; -webkit-user-drag: none; }
.slide.missing-image img { visibility: hidden; }
.slide figcaption { position: absolute; left: 0; right: 0; bottom: 0; padding: 0.8em 1.2em; color: #fff;
    font-size: clamp(0.95rem, 2.4vw, 1.6rem); font-weight: 650; line-height: 1.25; pointer-events: none;
    text-shadow: 0 1px 3px rgba(0, 0, 0, 0.45); background: linear-gradient(to top, rgba(0, 0, 0, 0.55), transparent); }
.slide figcaption:empty { display: none; }
.slide.missing-image figcaption { top: 0; display: flex; align-items: center; justify-content: center;
    text-align: center; background: none; font-size: clamp(1.2rem, 3.4vw, 2.4rem); }
.enter-forward { animation: enter-forward 420ms cubic-bezier(0.2, 0.8, 0.2, 1); }
.enter-backward { animation: enter-backward 420ms cubic-bezier(0.2, 0.8, 0.2, 1); }
.enter-jump { animation: enter-jump 300ms ease-out; }
@keyframes enter-forward { from { transform: translateX(12%); opacity: 0.2; } to { transform: none; opacity: 1; } }
@keyframes enter-backward { from { transform: translateX(-12%); opacity: 0.2; } to { transform: none; opacity: 1; } }
@keyframes enter-jump { from { opacity: 0; } to { opacity: 1; } }
.progress { position: absolute; left: 0; right: 0; bottom: 0; height: 3px; background: rgba(255, 255, 255, 0.25); }
.bar { height: 100%; background: #fff; transform: scaleX(0); transform-origin: left; }
.held .progress, .takeover .progress, .takeover .dots { visibility: hidden; }
.controls { display: flex; align-items: center; justify-content: center; gap: 8px; margin-top: 8px; flex-wrap: wrap; }
.controls[hidden] { display: none; }
button { font: inherit; color: #1d2330; background: #fff; border: 1px solid #cfd4de; border-radius: 999px;
    min-width: 36px; min-height: 36px; padding: 0 12px; cursor: pointer; }
button[hidden] { display: none; }
button:disabled { opacity: 0.4; cursor: default; }
button:focus-visible { outline: 3px solid var(--banner-accent); outline-offset: 2px; }
.previous-button, .next-button { font-size: 1.4rem; line-height: 1; padding: 0; }
.pause-button[aria-pressed="true"] { background: #1d2330; color: #fff; border-color: #1d2330; }
.dots { display: flex; gap: 2px; list-style: none; margin: 0; padding: 0; }
.dot { min-width: 24px; min-height: 24px; padding: 0; border: none; background: none; display: grid; place-items: center; }
.dot::before { content: ""; width: 9px; height: 9px; border-radius: 50%; background: #b9c0cd; transition: transform 150ms, background 150ms; }
.dot[aria-current="true"]::before { background: var(--banner-accent); transform: scale(1.3); }
.status { margin: 8px 0 0; padding: 8px 12px; border-radius: 8px; background: #fff4d6; color: #6b4e00; font-size: 0.9rem; }
.status[hidden] { display: none; }
@media (prefers-reduced-motion: reduce) {
    .enter-forward, .enter-backward, .enter-jump { animation: none; }
    .dot::before { transition: none; }
}
`;

let componentSheet = null; // one style sheet for every element on the page
const serviceClocks = new Map(); // one clock per service origin, for every element on the page

function serviceClock(origin) {
    let clock = serviceClocks.get(origin);
    if (!clock) {
        clock = new ServiceClock(`${origin}/time`); // started by the first feed whose stream has begun
        serviceClocks.set(origin, clock);
    }
    return clock;
}

function slideHue(text) {
    let hash = 0;
    for (const character of text) hash = (hash * 31 + character.codePointAt(0)) % 360;
    return hash;
}

class BannerCarouselElement extends HTMLElement {
    static observedAttributes = ["src", "token", "screen", "audience"];

    constructor() {
        super();
        const root = this.attachShadow({mode: "open"});
        if (!componentSheet) {
            componentSheet = new CSSStyleSheet();
            componentSheet.replaceSync(componentCSS);
        }
        root.adoptedStyleSheets = [componentSheet];
        const slide = (role) => `<figure class="slide ${role}"${role === "current" ? ' aria-roledescription="slide" aria-live="polite"' : " aria-hidden=\"true\" inert"}>
            <a target="_top" rel="noopener" draggable="false"><img alt="" draggable="false" decoding="async"></a>
            <figcaption></figcaption></figure>`;
        root.innerHTML = `<div class="carousel" role="region" aria-roledescription="carousel" aria-label="Banners" tabindex="0">
            <div class="viewport"><div class="track">${slide("previous")}${slide("current")}${slide("next")}</div>
            <div class="progress" aria-hidden="true"><div class="bar"></div></div></div>
            <div class="controls">
            <button class="previous-button" type="button" aria-label="Previous banner" hidden>&#8249;</button>
            <ol class="dots" aria-label="Banners"></ol>
            <button class="next-button" type="button" aria-label="Next banner" hidden>&#8250;</button>
            <button class="pause-button" type="button" aria-pressed="false" hidden>Pause</button></div>
            <p class="status" role="status" hidden></p></div>`;
        const $ = (selector) => root.querySelector(selector);
        this.ui = {
            carousel: $(".carousel"), viewport: $(".viewport"), track: $(".track"), bar: $(".bar"),
            slides: {previous: $(".slide.previous"), current: $(".slide.current"), next: $(".slide.next")},
            previous: $(".previous-button"), next: $(".next-button"), pause: $(".pause-button"),
            dots: $(".dots"), status: $(".status"),
        };
        for (const image of root.querySelectorAll("img")) {
            image.addEventListener("error", () => image.closest(".slide").classList.add("missing-image"));
            image.addEventListener("load", () => image.closest(".slide").classList.remove("missing-image"));
        }
        this.reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");
        this.wireInput();
    }

    connectedCallback() {
        // An element upgraded in place (the script came after it) has had its src attribute's
        // callback first, which started it: one feed, one stream, per element.
        if (!this.running) this.start();
    }

    disconnectedCallback() {
        this.stop();
    }

    attributeChangedCallback(name) {
        if (!this.isConnected) return;
        if (name === "src" || name === "screen" || name === "audience") {
            if (this.running) this.stop();
            this.start();
        } else {
            this.drawControls();
        }
    }

    // ----- Following the service --------------------------------------------------------------

    start() {
        let base;
        try {
            base = new URL(this.getAttribute("src") ?? "", document.baseURI);
        } catch {
            base = null;
        }
        if (!base || !/^https?:$/.test(base.protocol) || !this.hasAttribute("src")) {
            this.say("banner-carousel: the src attribute must be the carousel's URL, like https://host/carousels/home.");
            return;
        }
        this.base = base.href.replace(/\/+$/, "");
        // Views and clicks are counted per carousel (docs/STATS.md); a bare service URL is `default`.
        this.carouselURL = /\/carousels\/[^/]+$/.test(new URL(this.base).pathname) ? this.base
            : `${base.origin}/carousels/default`;
        this.clock = serviceClock(base.origin);
        this.live = null; // the carousel's state, as the service pushed it or as foreseen
        this.pending = null; // the latest state received, taken in the next frame
        this.upcoming = null;
        this.defaultInterval = null;
        this.banners = new Map(); // id → banner, to browse beyond the live neighbours
        this.fetchingBanners = false;
        this.pinned = null; // the banner id the view is held on, or null: live
        this.hovered = false;
        this.focused = false;
        this.browsedAt = -Infinity;
        this.shown = null; // {id, image, caption, link} in the current slide
        this.jumpUntil = 0;
        this.feedStatus = null;
        this.playedStep = null; // the plan's entry shown while playing from it (cut off), else null
        this.planEnded = false;
        this.offlineSince = null;
        this.running = true;
        // Which screen this is (docs/SCREENS.md): the `screen` attribute, else an id kept for this browser.
        this.screen = screenId(this.getAttribute("screen"));
        // Its key (docs/SCREENS.md, "A screen's own reports"): one kept for this browser.
        this.screenKey = screenKey(null);
        // Its audience (docs/AUDIENCES.md): the `audience` attribute; what it shows and its
        // commands' answers are that audience's.
        this.audience = audienceName(this.getAttribute("audience"));
        this.feed = new CarouselFeed(this.base, this.clock, {
            screen: this.screen,
            key: this.screenKey,
            audience: this.audience,
            onState: (next, {restart}) => this.receive(next, {restart}),
            onStatus: (status) => this.followStatus(status),
        });
        // Offline play (docs/SCREENS.md): the next hours, held in memory (this page's origin is not
        // the service's: no worker, nothing kept across a reload).
        this.plan = new TimelinePlan(this.carouselURL, {current: () => this.live, audience: this.audience});
        this.plan.start();
        this.onVisible = () => {
            if (document.visibilityState !== "visible") return;
            this.jumpUntil = performance.now() + 1000;
            this.feed.refresh();
        };
        document.addEventListener("visibilitychange", this.onVisible);
        this.feed.start();
        this.views = new ViewReporter(this.carouselURL, this.clock, this, {audience: this.audience});
        this.views.start();
        this.receipts = new ReceiptReporter(this.carouselURL, this.screen, this.clock,
            {key: this.screenKey, audience: this.audience});
        this.receipts.start();
        this.frameRequest = requestAnimationFrame((time) => this.frame(time));
        this.drawControls();
    }

    stop() {
        this.running = false;
        this.feed?.stop();
        this.views?.stop();
        this.receipts?.stop();
        cancelAnimationFrame(this.frameRequest);
        if (this.onVisible) document.removeEventListener("visibilitychange", this.onVisible);
    }

    followStatus(status) {
        const was = this.feedStatus;
        this.feedStatus = status;
        if (status === "unreachable" && was !== "unreachable") this.offlineSince = Date.now();
        if (status === "live" && was === "unreachable") {
            // Back: the service's state in one step (no slide, no receipt), the clock and the plan afresh.
            this.playedStep = null;
            this.jumpUntil = performance.now() + 1000;
            this.clock.round();
            this.feed.refresh();
            this.views.sendNow();
            this.receipts.sendNow();
        }
        this.sayStatus();
    }

    sayStatus() {
        const origin = new URL(this.base).origin;
        if (this.feedStatus === "unreachable" && this.playedStep !== null) {
            this.say(offlineNotice(this.offlineSince, this.planEnded));
        } else {
            this.say(this.feedStatus === "live" ? null
                : this.feedStatus === "missing" ? `There is no carousel at ${this.base}.`
                    : `The carousel service at ${origin} cannot be reached (is this page's origin in its `
                        + "CAROUSEL_CORS_ORIGINS?) — retrying…");
        }
    }

    receive(next, {restart = false} = {}) {
        if (supersedes(next, this.pending ?? this.live, restart)) this.pending = next;
    }

    takeLive(state) {
        const previous = this.live;
        this.live = state;
        // A new version is a change the plan does not know; back from playing it, it may be old.
        if (!state.planned && (state.version !== previous?.version || previous?.planned)) this.plan.changed();
        this.defaultInterval = learnDefaultInterval(state, this.defaultInterval);
        this.upcoming = foreseeAdvance(state, this.defaultInterval);
        for (const banner of [state.banner, state.previous, state.next]) {
            if (banner) this.banners.set(banner.id, banner);
        }
        if ((state.rotation ?? []).some((id) => !this.banners.has(id))) this.fetchBanners();
    }

    async fetchBanners() {
        if (this.fetchingBanners) return;
        this.fetchingBanners = true;
        try {
            const response = await fetch(`${this.base}/banners`, {cache: "no-store"});
            if (response.ok) {
                for (const banner of (await response.json()).banners) {
                    this.banners.set(banner.id, {id: banner.id, image: banner.image, caption: banner.caption,
                        link: banner.link, duration: banner.duration, srcset: banner.srcset ?? ""});
                }
            }
        } catch {
            // The next state with an unknown banner asks again.
        } finally {
            this.fetchingBanners = false;
        }
    }

    // ----- The view ------------------------------------------------------------------------

    /** Whether this view is held off the live carousel: a visitor is on it (never under a takeover). */
    get held() {
        return this.live !== null && !this.live.takeover
            && (this.hovered || this.focused || performance.now() - this.browsedAt < browseHoldMs);
    }

    /** The banner ids this view pages through: the rotation (v1 services: what is known). */
    get rotation() {
        if (!this.live || this.live.takeover) return [];
        return this.live.rotation ?? [this.live.banner?.id].filter(Boolean);
    }

    neighbour(id, direction) {
        const rotation = this.rotation;
        const index = rotation.indexOf(id);
        if (index < 0 || rotation.length < 2) return null;
        const step = direction === "next" ? 1 : rotation.length - 1;
        return this.banners.get(rotation[(index + step) % rotation.length]) ?? null;
    }

    frame(frameTime) {
        if (!this.running) return;
        let foreseen = false;
        if (this.pending) {
            this.takeLive(this.pending);
            this.pending = null;
        }
        if (this.feedStatus === "unreachable" && this.clock.ready) {
            foreseen = this.playFromPlan(frameTime);
        } else if (advanceIsDue(this.upcoming, this.clock, frameTime)) {
            this.takeLive(this.upcoming.state);
            foreseen = true;
        }
        if (this.live) {
            const held = this.held;
            if (!held) this.pinned = null;
            else if (this.pinned === null && this.shown) this.pinned = this.shown.id;
            const banner = (this.pinned && this.banners.get(this.pinned)) || this.live.banner;
            this.draw(banner, frameTime, foreseen && !held);
        }
        this.frameRequest = requestAnimationFrame((time) => this.frame(time));
    }

    /**
     * Cut off from the service: the plan's change in the frame nearest its instant, on the last
     * estimate of the service's clock, as the page does. Whether a change was taken.
     */
    playFromPlan(frameTime) {
        const planned = this.plan.stateAt(this.clock.at(frameTime) + 1000 / 120);
        if (!planned) return false;
        let taken = false;
        if (planned.step !== this.playedStep) {
            const first = this.playedStep === null;
            this.playedStep = planned.step;
            // Going offline changes nothing on screen: the plan starts where the element is.
            const same = this.live && planned.state.banner?.id === this.live.banner?.id;
            if (!(first && same)) {
                this.takeLive(planned.state);
                taken = true;
            }
            this.planEnded = planned.ended;
            this.sayStatus();
        } else if (planned.ended !== this.planEnded) {
            this.planEnded = planned.ended;
            this.sayStatus();
        }
        return taken;
    }

    draw(banner, frameTime, foreseen, movement = null) {
        const live = this.live;
        const ui = this.ui;
        ui.carousel.classList.toggle("takeover", Boolean(live.takeover));
        ui.carousel.classList.toggle("held", this.pinned !== null);
        ui.viewport.hidden = banner === null;
        if (banner === null) this.views.shown(null);
        if (banner && (!this.shown || this.shown.id !== banner.id || this.shown.image !== banner.image
            || this.shown.caption !== banner.caption || this.shown.link !== banner.link)) {
            const jumped = frameTime < this.jumpUntil;
            const move = movement ?? (jumped ? "none" : this.direction(this.shown, banner));
            // A flip of the live carousel, seen as it happened: not the first banner, a tab catching
            // up, or a visitor browsing.
            if (this.shown && !jumped && this.pinned === null && this.shown.id !== banner.id) {
                this.receipts.flipped(banner.id, live.version, frameTime);
            }
            this.fill(ui.slides.current, banner, move);
            this.shown = banner;
            this.views.shown(banner.id, frameTime);
            this.dispatchEvent(new CustomEvent("banner-carousel:shown", {bubbles: true, composed: true,
                detail: {id: banner.id, frameTime, foreseen, live: this.pinned === null,
                    serviceTime: this.clock.ready ? this.clock.at(frameTime) : null}}));
        }
        if (banner) {
            this.fill(ui.slides.previous, this.neighbour(banner.id, "previous"), "none");
            this.fill(ui.slides.next, this.neighbour(banner.id, "next"), "none");
        }
        this.drawDots(banner);
        ui.pause.textContent = live.paused ? "Resume" : "Pause";
        ui.pause.setAttribute("aria-pressed", String(live.paused));
        for (const button of [ui.previous, ui.next]) button.disabled = Boolean(live.takeover) || live.count < 2;
        let fraction = 0;
        if (!live.paused && live.nextAdvanceAt !== null && this.clock.ready) {
            const due = Date.parse(live.nextAdvanceAt);
            fraction = Math.min(1, Math.max(0, 1 - (due - this.clock.at(frameTime)) / (live.interval * 1000)));
        }
        ui.bar.style.transform = `scaleX(${fraction})`;
    }

    direction(from, to) {
        if (!from || this.reducedMotion.matches) return "none";
        const rotation = this.rotation;
        const a = rotation.indexOf(from.id);
        const b = rotation.indexOf(to.id);
        if (a < 0 || b < 0 || rotation.length < 2) return "jump";
        if (b === (a + 1) % rotation.length) return "forward";
        if (a === (b + 1) % rotation.length) return "backward";
        return "jump";
    }

    fill(slide, banner, movement) {
        const image = slide.querySelector("img");
        const link = slide.querySelector("a");
        const caption = slide.querySelector("figcaption");
        if (!banner) {
            slide.hidden = true;
            return;
        }
        slide.hidden = false;
        const href = banner.link
            ? `${this.carouselURL}/banners/${encodeURIComponent(banner.id)}/click${queryOf({audience: this.audience})}`
            : null;
        // A library image's path (`/media/ID`) is the service's, not this page's.
        const source = this.serviceURL(banner.image);
        const srcset = (banner.srcset ?? "").split(", ").filter(Boolean)
            .map((candidate) => candidate.replace(/^\S+/, (url) => this.serviceURL(url))).join(", ");
        if (slide.dataset.bannerId === banner.id && image.getAttribute("src") === source
            && (image.getAttribute("srcset") ?? "") === srcset
            && caption.textContent === banner.caption && link.getAttribute("href") === href) {
            return;
        }
        slide.classList.remove("enter-forward", "enter-backward", "enter-jump");
        slide.style.setProperty("--hue", String(slideHue(banner.id)));
        slide.dataset.bannerId = banner.id;
        if (image.getAttribute("src") !== source || (image.getAttribute("srcset") ?? "") !== srcset) {
            slide.classList.remove("missing-image");
            // A library image's variants (docs/MEDIA.md), chosen for the element's own width: the
            // same for the neighbours, so the one fetched and decoded ahead is the one the flip shows.
            if (srcset) {
                image.sizes = `${Math.max(1, Math.round(this.getBoundingClientRect().width))}px`;
                image.srcset = srcset;
            } else {
                image.removeAttribute("srcset");
                image.removeAttribute("sizes");
            }
            image.src = source;
            if (slide !== this.ui.slides.current) image.decode().catch(() => {});
        }
        image.alt = banner.caption || banner.id;
        caption.textContent = banner.caption;
        if (href) link.href = href; // counted, then to the banner's link
        else link.removeAttribute("href");
        if (movement !== "none") {
            void slide.offsetWidth; // restart the animation
            slide.classList.add(`enter-${movement}`);
        }
    }

    /** `url` as the service means it: a path of its own (an image of its media library) made absolute. */
    serviceURL(url) {
        return url.startsWith("/") ? new URL(url, new URL(this.base).origin).href : url;
    }

    drawDots(banner) {
        const rotation = this.rotation;
        const ui = this.ui;
        if (ui.dots.children.length !== rotation.length) {
            ui.dots.replaceChildren(...rotation.map((_, index) => {
                const item = document.createElement("li");
                const button = document.createElement("button");
                button.type = "button";
                button.className = "dot";
                button.addEventListener("click", () => this.goTo(index));
                item.append(button);
                return item;
            }));
        }
        const current = banner ? rotation.indexOf(banner.id) : -1;
        ui.dots.querySelectorAll(".dot").forEach((dot, index) => {
            dot.dataset.bannerId = rotation[index];
            dot.setAttribute("aria-label", `Show banner ${index + 1} of ${rotation.length}`);
            if (index === current) dot.setAttribute("aria-current", "true");
            else dot.removeAttribute("aria-current");
        });
    }

    drawControls() {
        const withToken = this.hasAttribute("token");
        for (const button of [this.ui.previous, this.ui.next, this.ui.pause]) button.hidden = !withToken;
    }

    say(text) {
        this.ui.status.hidden = text === null;
        this.ui.status.textContent = text ?? "";
    }

    // ----- What a visitor does -----------------------------------------------------------------

    wireInput() {
        const ui = this.ui;
        attachSwipe(ui.viewport, ui.track, {
            canSwipe: (direction) => this.live !== null && !this.live.takeover && this.shown !== null
                && (direction === undefined ? this.rotation.length > 1 : this.neighbour(this.shown.id, direction) !== null),
            commit: (direction) => this.browse(direction, "none"),
            touched: () => this.touch(),
            reducedMotion: () => this.reducedMotion.matches,
        });
        ui.carousel.addEventListener("pointerenter", (event) => {
            if (event.pointerType !== "touch") this.hovered = true;
        });
        ui.carousel.addEventListener("pointerleave", (event) => {
            if (event.pointerType !== "touch") this.hovered = false;
        });
        ui.carousel.addEventListener("focusin", () => (this.focused = true));
        ui.carousel.addEventListener("focusout", (event) => {
            if (!ui.carousel.contains(event.relatedTarget)) this.focused = false;
        });
        ui.previous.addEventListener("click", () => this.command("POST", "/banner/previous"));
        ui.next.addEventListener("click", () => this.command("POST", "/banner/next"));
        ui.pause.addEventListener("click", () =>
            this.command("POST", this.live && this.live.paused ? "/banner/resume" : "/banner/pause"));
        ui.carousel.addEventListener("keydown", (event) => {
            if (event.altKey || event.ctrlKey || event.metaKey) return;
            const direction = {ArrowLeft: "previous", ArrowRight: "next"}[event.key];
            if (direction) {
                event.preventDefault();
                if (this.hasAttribute("token")) this.command("POST", `/banner/${direction}`);
                else this.browse(direction);
            } else if (event.key === " " && event.target === ui.carousel && this.hasAttribute("token")) {
                event.preventDefault();
                ui.pause.click();
            }
        });
    }

    /** Holds the view (or keeps holding it) from now, as a visitor's touch does. */
    touch() {
        this.browsedAt = performance.now();
        if (this.pinned === null && this.shown) this.pinned = this.shown.id;
    }

    /** Shows the neighbour in this view only. */
    browse(direction, movement = null) {
        if (!this.shown || !this.live) return;
        const neighbour = this.neighbour(this.shown.id, direction);
        if (!neighbour) return;
        this.touch();
        this.pinned = neighbour.id;
        this.draw(neighbour, performance.now(), false,
            movement ?? (this.reducedMotion.matches ? "none" : direction === "next" ? "forward" : "backward"));
    }

    /** A dot: the banner in this view only, or, with a token, for every screen. */
    goTo(index) {
        if (this.hasAttribute("token")) {
            this.command("PUT", "/banner/index", {index});
            return;
        }
        const banner = this.banners.get(this.rotation[index]);
        if (!banner) return;
        this.touch();
        this.pinned = banner.id;
        this.draw(banner, performance.now(), false);
    }

    /** A global command, with the page's token. */
    async command(method, path, body) {
        const headers = {};
        const token = this.getAttribute("token");
        if (token) headers["Authorization"] = `Bearer ${token}`;
        if (body !== undefined) headers["Content-Type"] = "application/json";
        let response;
        try {
            response = await fetch(`${this.base}${path}${queryOf({audience: this.audience})}`, {method, headers,
                body: body === undefined ? undefined : JSON.stringify(body)});
        } catch {
            this.say("The carousel service cannot be reached; the command was not sent.");
            return;
        }
        if (!response.ok) {
            const problem = await response.json().catch(() => null);
            this.say(response.status === 401
                ? "The control token of this page was refused by the carousel service."
                : (problem && problem.detail) || `The carousel service answered ${response.status}.`);
            return;
        }
        this.say(null);
        const state = await response.json();
        this.receive(state);
        // A view held by the visitor's focus shows what the visitor's own command did.
        if (this.pinned !== null && state.banner) {
            this.banners.set(state.banner.id, state.banner);
            this.pinned = state.banner.id;
        }
    }
}

if (!customElements.get("banner-carousel")) customElements.define("banner-carousel", BannerCarouselElement);
