// The admin page's views (docs/ADMIN.md), each at an address of its own: #/carousels (a carousel's
// editor at #/carousels/NAME), #/screens, #/media, #/tokens, #/webhooks, #/audit. A reload, a
// shared link and the back button keep the view; the navigation says which is shown
// (aria-current). Views register what to do when shown (`onShow`): nothing imports the page's entry.

export const views = ["carousels", "screens", "media", "tokens", "webhooks", "audit"];

const shownHandlers = new Map();

/** Calls `handler({carousel})` whenever `view` is shown (`carousel`: the edited one, or null). */
export function onShow(view, handler) {
    if (!shownHandlers.has(view)) shownHandlers.set(view, []);
    shownHandlers.get(view).push(handler);
}

/** The view and carousel an address names; an unknown one is the carousels' list. */
export function parse(hash) {
    // Addresses from before views: #carousel=NAME.
    const old = new URLSearchParams(hash.replace(/^#/, "")).get("carousel");
    if (old) return {view: "carousels", carousel: old};
    const [view, ...rest] = hash.replace(/^#\/?/, "").split("/");
    if (!views.includes(view)) return {view: "carousels", carousel: null};
    const carousel = view === "carousels" && rest.length > 0 && rest[0] !== "" ? decodeURIComponent(rest[0]) : null;
    return {view, carousel};
}

export function address({view, carousel = null}) {
    return carousel ? `#/carousels/${encodeURIComponent(carousel)}` : `#/${view}`;
}

/** Shows `view` (and `carousel` in the carousels' view), as a new entry of the history. */
export function go(view, carousel = null) {
    location.hash = address({view, carousel});
}

function follow() {
    const wanted = parse(location.hash);
    const canonical = address(wanted);
    // An address of an older form, or none, is replaced by the view's own: not a new history entry.
    if (location.hash !== canonical) history.replaceState(null, "", canonical);
    for (const section of document.querySelectorAll("main > [data-view]")) {
        section.hidden = section.dataset.view !== wanted.view;
    }
    for (const link of document.querySelectorAll("nav.views a")) {
        if (link.dataset.view === wanted.view) {
            link.setAttribute("aria-current", "page");
        } else {
            link.removeAttribute("aria-current");
        }
    }
    document.body.dataset.view = wanted.view;
    for (const handler of shownHandlers.get(wanted.view) ?? []) handler(wanted);
}

export function startRouting() {
    window.addEventListener("hashchange", follow);
    follow();
}
