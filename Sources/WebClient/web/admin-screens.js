// The Screens view (docs/ADMIN.md, docs/SCREENS.md): every screen of every carousel, whether it is
// alive and in step, what it shows now. Offline and out-of-step screens first, as the service lists
// them. Kept live by GET /screens/events; read afresh every few seconds too (last seen moves on
// without events), and instead of the stream where it cannot be had (an admin token is needed:
// EventSource cannot send one).

import {api, problemDetail, read, tokenKey} from "./admin-api.js";
import {button, confirmDeletion, send} from "./admin-ui.js";

const table = document.querySelector("#screens tbody");
const status = document.getElementById("screens-status");
const screens = new Map(); // id and carousel → the entry, as GET /screens lists it
const images = new Map(); // carousel → (banner id → image URL)
const refreshEveryMs = 5000;

const key = (entry) => `${entry.carousel}/${entry.id}`;
const rank = (entry) => (entry.state === "online" ? 1 : 0);

async function refresh() {
    // With this tab's admin token when it has one; never asking for it here (the first change
    // does): a view that reads every few seconds must not open the token dialog by itself.
    const token = sessionStorage.getItem(tokenKey);
    let response;
    try {
        response = await fetch("/screens", {
            headers: token ? {Accept: "application/json", Authorization: `Bearer ${token}`} : {Accept: "application/json"},
            cache: "no-store"});
    } catch {
        status.textContent = "The service cannot be reached; the list is as last read.";
        return;
    }
    if (response.status === 401 || response.status === 403) {
        status.textContent = "The screens are shown with the admin token: it is asked for at the first change.";
        return;
    }
    if (!response.ok) return;
    const listed = (await response.json()).screens;
    screens.clear();
    for (const entry of listed) screens.set(key(entry), entry);
    status.textContent = "";
    await draw();
}

function follow() {
    const events = new EventSource("/screens/events");
    events.addEventListener("screen", async (event) => {
        const entry = JSON.parse(event.data);
        screens.set(key(entry), entry);
        await draw();
    });
    events.addEventListener("open", refresh); // anything missed while it was away
    events.addEventListener("error", () => {
        // Refused for good (an admin token is set): the periodic reads keep the list.
        if (events.readyState === EventSource.CLOSED) events.close();
    });
}

/** The image of banner `id` of `carousel`, from its banners (read once, again for an unknown one). */
async function imageOf(carousel, id) {
    let known = images.get(carousel);
    if (!known || !known.has(id)) {
        known = new Map();
        const response = await read(`/carousels/${encodeURIComponent(carousel)}/banners`).catch(() => null);
        if (response?.ok) {
            for (const banner of (await response.json()).banners) known.set(banner.id, banner.image);
        }
        images.set(carousel, known);
    }
    return known.get(id) ?? null;
}

function ago(text) {
    const seconds = Math.max(0, Math.round((Date.now() - Date.parse(text)) / 1000));
    if (seconds < 60) return `${seconds} s ago`;
    if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
    return new Date(text).toLocaleString();
}

function cell(row, text, className) {
    const td = row.insertCell();
    td.textContent = text;
    if (className) td.className = className;
    return td;
}

async function draw() {
    const entries = [...screens.values()].sort((a, b) => rank(a) - rank(b)
        || a.carousel.localeCompare(b.carousel) || a.id.localeCompare(b.id));
    const rows = [];
    for (const entry of entries) {
        const row = document.createElement("tr");
        row.dataset.screen = entry.id;
        row.dataset.state = entry.state;
        row.insertCell().outerHTML = `<th scope="row"></th>`;
        row.cells[0].textContent = entry.id;
        row.cells[0].title = entry.userAgent;
        // A screen of an audience (docs/AUDIENCES.md) is judged by that audience's rotation.
        cell(row, entry.audience ? `${entry.carousel} · ${entry.audience}` : entry.carousel, "carousel");
        const state = cell(row, entry.reason ? `${entry.state}: ${entry.reason}` : entry.state, "state");
        state.title = `since ${new Date(entry.since).toLocaleString()}`;
        const shows = cell(row, "", "shows");
        if (entry.shown) {
            const image = await imageOf(entry.carousel, entry.shown.banner);
            if (image) {
                const thumbnail = document.createElement("img");
                thumbnail.src = image;
                thumbnail.alt = "";
                thumbnail.loading = "lazy";
                shows.append(thumbnail);
            }
            shows.append(entry.shown.banner);
        } else {
            shows.append("—");
        }
        const late = entry.shown?.lateMs;
        cell(row, late === null || late === undefined ? "—" : `${late > 0 ? "+" : ""}${late} ms`, "number lateness");
        cell(row, entry.offsetMs === null ? "—" : `${entry.offsetMs > 0 ? "+" : ""}${entry.offsetMs} ms`, "number");
        cell(row, `${ago(entry.lastSeen)} (${entry.via})`, "seen");
        cell(row, "", "actions").append(
            button("Forget", `Forget ${entry.id} of ${entry.carousel}`, () => forget(entry), "link-danger"));
        rows.push(row);
    }
    table.replaceChildren(...rows);
    const none = "No screen has been heard from yet: pages name theirs with ?screen=ID.";
    if (entries.length === 0) status.textContent = none;
    else if (status.textContent === none) status.textContent = "";
}

/**
 * Forgets a screen and its claim (docs/SCREENS.md, "A screen's own reports"): what an operator
 * does for a screen whose key was lost (a kiosk's storage wiped), so that its new key claims it.
 */
async function forget(entry) {
    const confirmed = await confirmDeletion(`screen ${entry.id} of ${entry.carousel}`,
        "It leaves the list, and the key that claimed it no longer does: the next key it is heard with claims it. "
        + "A screen still connected is listed again at its next word.");
    if (!confirmed) return;
    const path = `/carousels/${encodeURIComponent(entry.carousel)}/screens/${encodeURIComponent(entry.id)}`;
    const response = await send(status, () => api("DELETE", path));
    if (!response) return;
    if (!response.ok) {
        status.textContent = await problemDetail(response);
        return;
    }
    screens.delete(key(entry));
    status.textContent = `${entry.id} of ${entry.carousel} forgotten.`;
    await draw();
}

refresh();
follow();
setInterval(refresh, refreshEveryMs);
