"use strict";
// The web client of the banner carousel service: shows the shared carousel, follows it live
// (Server-Sent Events, or ETag polling where a stream cannot get through), flips in step with
// every other screen (sync.js), and drives it.
(() => {
    const $ = (selector) => document.querySelector(selector);
    const ui = {
        carousel: $(".carousel"),
        status: $(".status"),
        stage: $(".stage"),
        slide: $(".slide"),
        link: $(".slide-link"),
        image: $(".slide-image"),
        caption: $(".slide-caption"),
        empty: $(".empty"),
        bar: $(".progress-bar"),
        previous: $(".previous-button"),
        next: $(".next-button"),
        pause: $(".pause-button"),
        dots: $(".dots"),
        error: $(".error"),
        badge: $(".offline-badge"),
        dialog: $(".token-dialog"),
        tokenForm: $(".token-form"),
        tokenInput: $(".token-input"),
        tokenMessage: $(".token-message"),
        tokenCancel: $(".token-cancel"),
        track: $(".track"),
        // The neighbours beside the slide: fetched and decoded ahead, dragged in by a swipe.
        neighbours: {previous: $(".neighbour-previous img"), next: $(".neighbour-next img")},
    };
    const tokenKey = "banner-carousel-token";
    // Which carousel: /carousels/NAME/ or /?carousel=NAME; else the bare paths, the carousel
    // `default` (docs/WEB-CLIENT.md).
    const carouselName = (() => {
        const fromPath = location.pathname.match(/^\/carousels\/([a-z0-9][a-z0-9-]{0,63})\/$/);
        const fromQuery = new URLSearchParams(location.search).get("carousel");
        const name = fromPath ? fromPath[1] : fromQuery;
        return name && /^[a-z0-9][a-z0-9-]{0,63}$/.test(name) ? name : null;
    })();
    const api = (path) => (carouselName ? `/carousels/${carouselName}${path}` : path);
    // Views and clicks are counted per carousel (docs/STATS.md); the bare paths are `default`'s.
    const carouselURL = `/carousels/${carouselName ?? "default"}`;
    if (carouselName) document.title = `${carouselName} · Banner carousel`;
    const reducedMotion = window.matchMedia("(prefers-reduced-motion: reduce)");

    let state = null; // what is shown
    let pending = null; // the latest state received, shown in the next frame
    let jumpUntil = 0; // performance.now() until which changes show without animation (tab shown again)
    let upcoming = null; // the next automatic advance, foreseen: {due, state}
    let defaultInterval = null;
    const clock = new ServiceClock("/time", {rememberAs: "banner-carousel-clock"});
    // `?preview`: the admin page's live preview, whose views are nobody's and which is no screen
    // (docs/ADMIN.md).
    const preview = new URLSearchParams(location.search).has("preview");
    // Which screen this is (docs/SCREENS.md): `?screen=ID`, else an id kept for this browser.
    const screen = preview ? null : screenId(new URLSearchParams(location.search).get("screen"));
    // Its key (docs/SCREENS.md, "A screen's own reports"): `?screenKey=`, else one kept for this browser.
    const key = preview ? null : screenKey(new URLSearchParams(location.search).get("screenKey"));
    // Its audience (docs/AUDIENCES.md): `?audience=NAME`; the state, the stream, the plan and the
    // answers to its commands are that audience's.
    const audience = audienceName(new URLSearchParams(location.search).get("audience"));
    const feed = new CarouselFeed(carouselName ? `/carousels/${carouselName}` : "", clock, {
        onState: (next, {restart}) => receive(next, {restart}),
        onStatus: (status) => showStatus(status),
        screen,
        key,
        audience,
    });
    // Views wait in IndexedDB until the service has them (docs/STATS.md): none lost offline.
    const views = new ViewReporter(carouselURL, clock, ui.stage, {keepIn: "banner-carousel-reports", audience});
    // Offline play (docs/SCREENS.md): the next hours planned, kept for a reload; their images
    // cached by the service worker.
    const plan = new TimelinePlan(carouselURL, {current: () => state, audience,
        keepAs: `${carouselURL}/plan${queryOf({audience})}`,
        onPlanned: (images) => worker.then((registration) => registration?.active?.postMessage({cacheImages: images}))});
    const worker = !preview && "serviceWorker" in navigator
        ? navigator.serviceWorker.register("/sw.js").then(() => navigator.serviceWorker.ready).catch((error) => {
            console.warn(`banner-carousel: no service worker, so no playing from a reload while offline (${error})`);
            return null;
        })
        : Promise.resolve(null);
    let feedStatus = null; // the feed's: "live", "unreachable" or "missing"
    let playedStep = null; // the plan's entry shown while playing from it, else null
    let planEnded = false; // the plan ran out: the last banner it knows stays
    let offlineSince = null; // Date.now() when the service was last reached, while it is not
    const offlineSinceKey = "banner-carousel-offline-since";
    const receipts = screen
        ? new ReceiptReporter(carouselURL, screen, clock, {key, keepIn: "banner-carousel-reports", audience}) : null;

    // ----- Showing the state ---------------------------------------------------------------

    // Every state received goes through here; the next animation frame shows the latest one, so a
    // burst of queued events (a tab that was frozen) is one change on screen, not a slideshow.
    function receive(next, {restart = false} = {}) {
        if (supersedes(next, pending ?? state, restart)) pending = next;
    }

    function render(next, frameTime) {
        const previous = state;
        state = next;
        // A new version is a change the plan does not know; back from playing it, it may be old.
        if (!next.planned && (next.version !== previous?.version || previous?.planned)) plan.changed();
        defaultInterval = learnDefaultInterval(next, defaultInterval);
        upcoming = foreseeAdvance(next, defaultInterval);
        ui.carousel.dataset.version = String(next.version);
        const hasBanner = next.banner !== null;
        // A takeover (v2) shows its banner as it is: no dots, no countdown, no paging.
        const takeover = next.takeover ?? null;
        ui.carousel.classList.toggle("takeover", takeover !== null);
        ui.empty.hidden = hasBanner;
        if (!hasBanner) views.shown(null);
        ui.stage.hidden = !hasBanner;
        for (const button of [ui.previous, ui.next]) button.disabled = takeover !== null || next.count < 2;
        ui.pause.textContent = next.paused ? "Resume" : "Pause";
        ui.pause.setAttribute("aria-pressed", String(next.paused));
        renderDots(next);
        if (hasBanner && !sameBanner(shown, next.banner)) {
            const jumped = frameTime < jumpUntil;
            // A flip of the carousel, seen as it happened: not the first banner, nor a tab catching up.
            if (shown !== null && !jumped && shown.id !== next.banner.id) {
                receipts?.flipped(next.banner.id, next.version, frameTime);
            }
            showBanner(next.banner, jumped ? "none" : direction(previous, next),
                {frameTime, foreseen: next.foreseen === true});
        }
        // The three-view idea: the neighbours' images are fetched (and decoded, so that a flip at
        // nextAdvanceAt shows it in that very frame) long before they are needed.
        preload(ui.neighbours.previous, next.previous);
        preload(ui.neighbours.next, next.next);
    }

    function preload(image, banner) {
        if (!banner) {
            image.removeAttribute("src");
            image.removeAttribute("srcset");
            return;
        }
        if (!setSource(image, banner)) return;
        image.decode().catch(() => {});
    }

    // An image of the service's media library comes with its variants (docs/MEDIA.md): the
    // browser picks the one the screen needs. The neighbours are given the same `sizes` as the
    // slide, so that what was fetched and decoded ahead is the very file the flip shows. False
    // when the image already shows this source.
    function setSource(image, banner) {
        const srcset = banner.srcset ?? "";
        if (image.getAttribute("src") === banner.image && (image.getAttribute("srcset") ?? "") === srcset) return false;
        if (srcset) {
            image.sizes = "100vw";
            image.srcset = srcset;
        } else {
            image.removeAttribute("srcset");
            image.removeAttribute("sizes");
        }
        image.src = banner.image;
        return true;
    }

    function direction(previous, next) {
        if (!previous || previous.index === null || next.index === null || next.count < 2) return "none";
        if (next.index === (previous.index + 1) % next.count) return "forward";
        if (previous.index === (next.index + 1) % next.count) return "backward";
        return "jump";
    }

    // What the slide shows: the state's banner, or the neighbour a swipe brought in before the
    // service confirmed it.
    let shown = null;
    const sameBanner = (a, b) => a !== null && b !== null && a.id === b.id && a.image === b.image
        && a.caption === b.caption && a.link === b.link && (a.srcset ?? "") === (b.srcset ?? "");

    // Shows `banner` and announces it (docs/SCREENS.md): `frameTime` is the frame that shows it.
    function showBanner(banner, movement, {frameTime = performance.now(), foreseen = false} = {}) {
        shown = banner;
        views.shown(banner.id, frameTime);
        document.dispatchEvent(new CustomEvent("banner-carousel:shown", {detail: {id: banner.id, frameTime, foreseen,
            serviceTime: clock.ready ? clock.at(frameTime) : null}}));
        ui.slide.classList.remove("missing-image", "enter-forward", "enter-backward", "enter-jump");
        ui.slide.style.setProperty("--placeholder-hue", String(hue(banner.id)));
        setSource(ui.image, banner);
        ui.image.alt = banner.caption || banner.id;
        ui.caption.textContent = banner.caption;
        ui.caption.hidden = banner.caption === "";
        if (banner.link) {
            // Counted (as its audience's click), then there.
            ui.link.href = `${carouselURL}/banners/${encodeURIComponent(banner.id)}/click${queryOf({audience})}`;
        } else {
            ui.link.removeAttribute("href");
        }
        ui.slide.dataset.bannerId = banner.id;
        if (movement !== "none" && !reducedMotion.matches) {
            void ui.slide.offsetWidth; // restart the animation
            ui.slide.classList.add("enter-" + movement);
        }
    }

    // A banner whose image cannot be loaded still shows its caption, on a colour of its own.
    ui.image.addEventListener("error", () => ui.slide.classList.add("missing-image"));
    ui.image.addEventListener("load", () => ui.slide.classList.remove("missing-image"));

    function hue(text) {
        let hash = 0;
        for (const character of text) hash = (hash * 31 + character.codePointAt(0)) % 360;
        return hash;
    }

    // One dot per rotating banner (the v2 `rotation`; v1 services send only `count`).
    function renderDots(next) {
        const count = next.takeover ? 0 : next.count;
        if (ui.dots.children.length !== count) {
            ui.dots.replaceChildren(...Array.from({length: count}, (_, index) => {
                const item = document.createElement("li");
                const button = document.createElement("button");
                button.type = "button";
                button.className = "dot";
                button.setAttribute("aria-label", `Show banner ${index + 1} of ${next.count}`);
                button.addEventListener("click", () => command("PUT", api("/banner/index"), {index}));
                item.append(button);
                return item;
            }));
        }
        Array.from(ui.dots.querySelectorAll(".dot")).forEach((dot, index) => {
            const id = next.rotation ? next.rotation[index] : null;
            if (id) {
                dot.dataset.bannerId = id;
            } else {
                delete dot.dataset.bannerId;
            }
            if (index === next.index) {
                dot.setAttribute("aria-current", "true");
            } else {
                dot.removeAttribute("aria-current");
            }
        });
    }

    // Once per frame: the latest state received, else the next banner when its time has come on
    // the service's clock (docs/SCREENS.md), in the frame nearest to it; then the countdown.
    function frame(frameTime) {
        if (pending) {
            const next = pending;
            pending = null;
            render(next, frameTime);
        }
        if (feedStatus === "unreachable" && (clock.ready || clock.recall())) {
            playFromPlan(frameTime);
        } else if (advanceIsDue(upcoming, clock, frameTime)) {
            render(upcoming.state, frameTime);
        }
        let fraction = 0;
        if (state && !state.paused && state.nextAdvanceAt !== null && clock.ready) {
            const due = Date.parse(state.nextAdvanceAt);
            fraction = Math.min(1, Math.max(0, 1 - (due - clock.at(frameTime)) / (state.interval * 1000)));
        }
        ui.bar.style.transform = `scaleX(${fraction})`;
        requestAnimationFrame(frame);
    }

    // Cut off from the service, the page goes on with the plan: each change in the frame nearest
    // its instant (as advanceIsDue), on the last estimate of the service's clock, so that every
    // screen cut off stays in step with the others and with the service (docs/SCREENS.md).
    function playFromPlan(frameTime) {
        const planned = plan.stateAt(clock.at(frameTime) + 1000 / 120);
        if (!planned) return;
        if (planned.step !== playedStep) {
            const first = playedStep === null;
            playedStep = planned.step;
            const next = planned.state;
            // Going offline changes nothing on screen: the plan starts where the page is.
            if (!(first && state && next.banner?.id === state.banner?.id && next.index === state.index)) {
                render(next, frameTime);
            }
        }
        if (planned.ended !== planEnded || ui.badge.hidden) {
            planEnded = planned.ended;
            updateStatus();
        }
    }

    // A tab that was hidden shows the live state as it comes back, without catching up slide by
    // slide: the frames it missed were never drawn, and what it shows next is asked afresh.
    document.addEventListener("visibilitychange", () => {
        if (document.visibilityState !== "visible") return;
        jumpUntil = performance.now() + 1000;
        feed.refresh();
    });

    // ----- Following the service -----------------------------------------------------------

    function showStatus(status) {
        if (status === "unreachable" && feedStatus !== "unreachable") offlineSince = lostContact();
        if (status === "live" && feedStatus === "unreachable") backOnline();
        if (status === "live") {
            offlineSince = null;
            try {
                localStorage.removeItem(offlineSinceKey);
            } catch {
                // Storage refused: nothing was kept.
            }
        }
        feedStatus = status;
        updateStatus();
    }

    // Since when the service has been out of reach (Date.now()): kept for this browser, so that a
    // page reloaded meanwhile says the same.
    function lostContact() {
        try {
            const kept = localStorage.getItem(offlineSinceKey);
            if (kept !== null && Number.isFinite(Number(kept))) return Number(kept);
            localStorage.setItem(offlineSinceKey, String(Date.now()));
        } catch {
            // Storage refused: since this page knows.
        }
        return Date.now();
    }

    // Back: the service's state shows at once, without a slide or a burst of the changes missed
    // (the next frame shows the latest), the clock is estimated afresh and the plan fetched again.
    function backOnline() {
        playedStep = null;
        planEnded = false;
        jumpUntil = performance.now() + 1000;
        clock.round();
        feed.refresh();
        // What waited: at once, so the fleet hears this screen's flips of the outage with it.
        if (!preview) views.sendNow();
        receipts?.sendNow();
    }

    function updateStatus() {
        const playingOffline = feedStatus === "unreachable" && playedStep !== null;
        ui.status.hidden = feedStatus === "live" || playingOffline;
        ui.status.textContent = feedStatus === "missing"
            ? `There is no carousel named “${carouselName ?? "default"}”.`
            : "The carousel service is unreachable — retrying…";
        ui.carousel.classList.toggle("offline", !ui.status.hidden);
        // A badge beside the controls, never over the banner, which goes on playing.
        ui.badge.hidden = !playingOffline;
        if (playingOffline) {
            ui.badge.textContent = offlineNotice(offlineSince ?? Date.now(), planEnded);
        }
    }

    // ----- Driving it ------------------------------------------------------------------------

    async function command(method, path, body) {
        hideError();
        const headers = {};
        const token = sessionStorage.getItem(tokenKey);
        if (token) headers["Authorization"] = `Bearer ${token}`;
        if (body !== undefined) headers["Content-Type"] = "application/json";
        let response;
        try {
            response = await fetch(path + queryOf({audience}),
                {method, headers, body: body === undefined ? undefined : JSON.stringify(body)});
        } catch {
            showError("The carousel service cannot be reached; the command was not sent.");
            return false;
        }
        if (response.status === 401) {
            sessionStorage.removeItem(tokenKey);
            const message = token
                ? "That control token was refused. Enter the service's CAROUSEL_CONTROL_TOKEN."
                : "This carousel is protected. Enter the control token to change it.";
            if (await askForToken(message)) return command(method, path, body);
            showError(token ? "The control token was refused." : "Changing this carousel needs its control token.");
            return false;
        }
        if (!response.ok) {
            const problem = await response.json().catch(() => null);
            showError(problem && problem.detail ? problem.detail : `The service answered ${response.status}.`);
            return false;
        }
        receive(await response.json());
        return true;
    }

    function askForToken(message) {
        ui.tokenMessage.textContent = message;
        ui.tokenInput.value = "";
        ui.dialog.showModal();
        ui.tokenInput.focus();
        return new Promise((resolve) => {
            const finish = (accepted) => {
                ui.tokenForm.removeEventListener("submit", submit);
                ui.tokenCancel.removeEventListener("click", cancel);
                ui.dialog.removeEventListener("cancel", cancel);
                ui.dialog.close();
                resolve(accepted);
            };
            const submit = (event) => {
                event.preventDefault();
                const token = ui.tokenInput.value.trim();
                if (token === "") return;
                sessionStorage.setItem(tokenKey, token);
                finish(true);
            };
            const cancel = (event) => {
                event.preventDefault();
                finish(false);
            };
            ui.tokenForm.addEventListener("submit", submit);
            ui.tokenCancel.addEventListener("click", cancel);
            ui.dialog.addEventListener("cancel", cancel);
        });
    }

    function showError(text) {
        ui.error.textContent = text;
        ui.error.hidden = false;
    }

    function hideError() {
        ui.error.hidden = true;
    }

    const goPrevious = () => command("POST", api("/banner/previous"));
    const goNext = () => command("POST", api("/banner/next"));
    const togglePause = () => command("POST", api(state && state.paused ? "/banner/resume" : "/banner/pause"));

    // A swipe on an operator's or kiosk's screen is the global command: the neighbour shows at once,
    // and comes back if the command is refused.
    const neighbourOf = (direction) => (state && !state.takeover && state.count > 1 ? state[direction] : null);
    attachSwipe(ui.stage, ui.track, {
        canSwipe: (direction) => (direction === undefined ? neighbourOf("next") !== null : neighbourOf(direction) !== null),
        commit: async (direction) => {
            const from = state;
            showBanner(neighbourOf(direction), "none");
            if (!(await command("POST", api(`/banner/${direction}`))) && state === from) showBanner(from.banner, "none");
        },
        reducedMotion: () => reducedMotion.matches,
    });

    ui.previous.addEventListener("click", goPrevious);
    ui.next.addEventListener("click", goNext);
    ui.pause.addEventListener("click", togglePause);
    document.addEventListener("keydown", (event) => {
        if (ui.dialog.open || event.altKey || event.ctrlKey || event.metaKey) return;
        const onControl = event.target instanceof HTMLButtonElement || event.target instanceof HTMLInputElement;
        if (event.key === "ArrowLeft") {
            event.preventDefault();
            goPrevious();
        } else if (event.key === "ArrowRight") {
            event.preventDefault();
            goNext();
        } else if (event.key === " " && !onControl) {
            event.preventDefault();
            togglePause();
        }
    });

    // The page's files came on connections the service closed: the stream finds none idle to reuse
    // and opens its own, which the service holds for under 1 KiB instead of 15 (docs/SCREENS.md).
    feed.start();
    plan.start();
    plan.recall(); // for a reload while offline; a plan fetched from the service replaces it
    if (!preview) views.start();
    receipts?.start();
    requestAnimationFrame(frame);
})();
