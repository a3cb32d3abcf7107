// History (`GET …/revisions`, docs/HISTORY.md: the admin role): each revision of the carousel
// being edited with when, who and what; its changes against the revision before, field by field;
// and Restore, an admin write with If-Match like any other (a new revision, nothing lost).

import {badge, button, session, ui} from "./admin-ui.js";
import {api, carouselPath, problemDetail} from "./admin-api.js";
import {write} from "./admin-carousel.js";

const when = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "medium"});

/** Whether the history is on screen (then every write of the editor reads it again). */
export function historyShown() {
    return !ui.historyList.hidden;
}

/** Hides the history (another carousel is opened). */
export function hideHistory() {
    ui.historyList.hidden = true;
    ui.historyList.replaceChildren();
    ui.historyStatus.textContent = "";
    ui.historyError.hidden = true;
}

export async function showHistory() {
    ui.historyError.hidden = true;
    let response;
    try {
        response = await api("GET", `${carouselPath(session.editing.name)}/revisions`);
    } catch {
        ui.historyStatus.textContent = "The carousel service cannot be reached — try again.";
        return;
    }
    if (!response.ok) {
        ui.historyStatus.textContent = await problemDetail(response);
        return;
    }
    const {revisions} = await response.json();
    const current = session.editing.definition.revision;
    ui.historyList.replaceChildren(...revisions.map((revision) => entry(revision, current)));
    ui.historyList.hidden = false;
    ui.historyStatus.textContent = `${revisions.length} revision${revisions.length === 1 ? "" : "s"} kept.`;
}

function entry(revision, current) {
    const item = document.createElement("li");
    item.dataset.revision = String(revision.revision);
    const head = document.createElement("p");
    head.className = "revision-head";
    const number = document.createElement("strong");
    number.textContent = `Revision ${revision.revision}`;
    const time = document.createElement("time");
    time.dateTime = revision.at;
    time.textContent = when.format(new Date(revision.at));
    head.append(number, " · ", time, ` · ${revision.actor}`);
    if (revision.revision === current) head.append(" ", badge("current", "ok"));
    const summary = document.createElement("p");
    summary.className = "summary";
    summary.textContent = revision.summary;
    const changes = document.createElement("div");
    changes.className = "changes";
    changes.hidden = true;
    const buttons = document.createElement("div");
    buttons.className = "buttons start";
    buttons.append(button("Show changes", `Show the changes of revision ${revision.revision}`,
        () => toggleChanges(revision.revision, changes)));
    if (revision.revision !== current) {
        buttons.append(button("Restore", `Restore revision ${revision.revision}`, () => restore(revision.revision)));
    }
    item.append(head, summary, buttons, changes);
    return item;
}

async function toggleChanges(number, container) {
    if (!container.hidden) {
        container.hidden = true;
        return;
    }
    const path = `${carouselPath(session.editing.name)}/revisions`;
    let responses;
    try {
        responses = await Promise.all([api("GET", `${path}/${number}`), api("GET", `${path}/${number - 1}`)]);
    } catch {
        ui.historyStatus.textContent = "The carousel service cannot be reached — try again.";
        return;
    }
    const [after, before] = responses;
    if (!after.ok) {
        ui.historyStatus.textContent = await problemDetail(after);
        return;
    }
    const note = document.createElement("p");
    note.className = "hint";
    if (!before.ok) {
        note.textContent = number === 1
            ? "The carousel as it was created:"
            : `Revision ${number - 1} is no longer kept; the carousel at revision ${number}:`;
        container.replaceChildren(note, changeTable(differences({}, await after.json())));
    } else {
        note.textContent = `From revision ${number - 1} to ${number}:`;
        container.replaceChildren(note, changeTable(differences(await before.json(), await after.json())));
    }
    container.hidden = false;
}

/**
 * What differs between two definitions, as rows of a table: each setting, each banner added or
 * removed, each field of a banner kept, and the order of the banners kept.
 */
export function differences(before, after) {
    const rows = [];
    for (const key of ["interval", "autoplay", "timeZone", "fallback"]) {
        if (key in after && !same(before[key], after[key])) rows.push([key, before[key], after[key]]);
    }
    const old = new Map((before.banners ?? []).map((banner) => [banner.id, banner]));
    const now = new Map((after.banners ?? []).map((banner) => [banner.id, banner]));
    for (const [id, banner] of now) {
        const previous = old.get(id);
        if (!previous) {
            rows.push([`banner ${id}`, undefined, banner.image]);
            continue;
        }
        for (const key of new Set([...Object.keys(previous), ...Object.keys(banner)])) {
            if (!same(previous[key], banner[key])) rows.push([`banner ${id} · ${key}`, previous[key], banner[key]]);
        }
    }
    for (const [id, banner] of old) {
        if (!now.has(id)) rows.push([`banner ${id}`, banner.image, undefined]);
    }
    const keptBefore = [...old.keys()].filter((id) => now.has(id));
    const keptAfter = [...now.keys()].filter((id) => old.has(id));
    if (!same(keptBefore, keptAfter)) rows.push(["order", keptBefore.join(", "), keptAfter.join(", ")]);
    return rows;
}

function same(a, b) {
    return JSON.stringify(a ?? null) === JSON.stringify(b ?? null);
}

function shown(value) {
    if (value === undefined || value === null || value === "") return "—";
    return typeof value === "object" ? JSON.stringify(value) : String(value);
}

function changeTable(rows) {
    const table = document.createElement("table");
    table.className = "diff";
    const head = document.createElement("thead");
    const titles = document.createElement("tr");
    for (const title of ["Field", "Before", "After"]) {
        const th = document.createElement("th");
        th.scope = "col";
        th.textContent = title;
        titles.append(th);
    }
    head.append(titles);
    const body = document.createElement("tbody");
    for (const [field, before, after] of rows) {
        const tr = document.createElement("tr");
        const name = document.createElement("th");
        name.scope = "row";
        name.textContent = field;
        const removed = document.createElement("td");
        removed.className = "before";
        removed.textContent = shown(before);
        const added = document.createElement("td");
        added.className = "after";
        added.textContent = shown(after);
        tr.append(name, removed, added);
        body.append(tr);
    }
    if (rows.length === 0) {
        const tr = document.createElement("tr");
        const td = document.createElement("td");
        td.colSpan = 3;
        td.textContent = "No field changed.";
        tr.append(td);
        body.append(tr);
    }
    table.append(head, body);
    return table;
}

async function restore(number) {
    ui.historyError.hidden = true;
    const path = `${carouselPath(session.editing.name)}/revisions/${number}/restore`;
    // A restore is made now whatever "Make changes at" says: it cannot be scheduled.
    // The settings as restored, not as typed (`keepTyped`).
    if (await write(ui.historyError, ui.historyBox, "POST", path, undefined, {schedulable: false, keepTyped: false})) {
        ui.editorStatus.textContent =
            `Revision ${number} restored: the carousel is at revision ${session.editing.definition.revision}.`;
    }
}

ui.historyShow.addEventListener("click", showHistory);
