// Scheduled changes (`GET …/pending`, docs/SCHEDULED.md: the admin role): the editor's writes made
// at a time given in "Make changes at" instead of now, and the changes waiting, each with Cancel.
// Read again when the editor opens, after each write, and when the state's version moves (a change
// made at its time moves it).

import {button, session, ui} from "./admin-ui.js";
import {api, carouselPath, problemDetail} from "./admin-api.js";
import {instantOf, zone} from "./admin-schedule.js";

// What else reads the state again after a change is scheduled or cancelled (the takeover box and
// the timeline: admin-takeover.js, which imports this module, registers it).
let followState = async () => {};

export function whenReplanned(action) {
    followState = action;
}

const when = () => new Intl.DateTimeFormat(undefined, {
    timeZone: zone(), dateStyle: "medium", timeStyle: "medium",
});

/**
 * The instant the editor's writes are asked for (RFC 3339), read from "Make changes at" in the
 * carousel's time zone; null when it is empty (made now).
 */
export function scheduledAt() {
    const local = ui.pendingAt.value;
    return local === "" ? null : instantOf(local, zone());
}

/** `path` with `at` added to its query. */
export function atPath(path, at) {
    return `${path}${path.includes("?") ? "&" : "?"}at=${encodeURIComponent(at)}`;
}

/** What an answer of 202 (a change scheduled) says in the editor's status. */
export function scheduledNote(change) {
    return `Scheduled for ${when().format(new Date(change.at))} (${zone()}) as change ${change.id}: `
        + "nothing changes until then.";
}

/**
 * After a change is scheduled or cancelled: the list and the timeline read again (the state's
 * version has not moved, so neither would be otherwise).
 */
export async function replan() {
    session.timelineRead = {version: null, at: 0};
    await showPending();
    await followState();
}

/** Reads the pending changes again when the state's version moved since the last read. */
export async function followPending(state) {
    if (state.version === session.pendingRead) return;
    session.pendingRead = state.version;
    await showPending();
}

export async function showPending() {
    if (!session.editing) return;
    let response;
    try {
        response = await api("GET", `${carouselPath(session.editing.name)}/pending`);
    } catch {
        return; // the list says the service is unreachable
    }
    if (!response.ok) {
        ui.pendingStatus.textContent = await problemDetail(response);
        return;
    }
    const {pending} = await response.json();
    ui.pendingList.replaceChildren(...pending.map(entry));
    ui.pendingList.hidden = pending.length === 0;
    ui.pendingStatus.textContent = pending.length === 0
        ? "No change is waiting."
        : `${pending.length} change${pending.length === 1 ? "" : "s"} waiting, soonest first.`;
}

function entry(change) {
    const item = document.createElement("li");
    item.dataset.change = String(change.id);
    const head = document.createElement("p");
    head.className = "revision-head";
    const time = document.createElement("time");
    time.dateTime = change.at;
    time.textContent = when().format(new Date(change.at));
    const what = document.createElement("code");
    what.textContent = `${change.method} ${change.path}`;
    head.append(time, " · ", what, ` · ${change.actor}`);
    if (change.ifMatch) head.append(" · only if the carousel is unchanged by then");
    const body = document.createElement("pre");
    body.className = "summary";
    body.textContent = change.body ? JSON.stringify(change.body) : "";
    body.hidden = !change.body;
    const buttons = document.createElement("div");
    buttons.className = "buttons start";
    buttons.append(button("Cancel", `Cancel change ${change.id}`, () => cancel(change.id)));
    item.append(head, body, buttons);
    return item;
}

async function cancel(id) {
    let response;
    try {
        response = await api("DELETE", `${carouselPath(session.editing.name)}/pending/${id}`);
    } catch {
        ui.pendingStatus.textContent = "The carousel service cannot be reached — try again.";
        return;
    }
    const said = response.ok ? `Change ${id} cancelled: it will not be made.` : await problemDetail(response);
    await replan();
    ui.pendingStatus.textContent = said;
}
