// Editing one carousel. The definition is read with its ETag, and every write sends it (If-Match):
// a carousel someone else changed meanwhile answers 412, and the page says so, keeping what the
// user typed.

import {clearErrors, send, session, showProblem, ui} from "./admin-ui.js";
import {api, carouselPath, problemDetail, read, typedNumber} from "./admin-api.js";
import {refresh} from "./admin-list.js";
import {renderBanners, resetBannerForm} from "./admin-banners.js";
import {zone} from "./admin-schedule.js";
import {fillTakeoverChoices, followState} from "./admin-takeover.js";
import {hideHistory, historyShown, showHistory} from "./admin-history.js";
import {atPath, replan, scheduledAt, scheduledNote} from "./admin-pending.js";

export async function openEditor(name, {keepTyped = false} = {}) {
    let response;
    try {
        response = await read(carouselPath(name));
    } catch {
        ui.listStatus.textContent = "The carousel service cannot be reached — try again.";
        return;
    }
    if (!response.ok) {
        ui.listStatus.textContent = await problemDetail(response);
        ui.editor.hidden = true;
        session.editing = null;
        return;
    }
    const opening = session.editing?.name !== name;
    session.editing = {name, etag: response.headers.get("ETag"), definition: await response.json()};
    if (opening) {
        session.rotation = null;
        session.timelineRead = {version: null, at: 0};
        ui.statsResult.hidden = true;
        ui.statsStatus.textContent = "";
        hideHistory();
        session.pendingRead = null;
        ui.pendingAt.value = "";
        ui.pendingList.replaceChildren();
        // The page of `/` for this carousel, which follows the service by itself.
        ui.preview.src = `${carouselPath(name)}/?preview`;
        ui.preview.title = `Live preview of ${name}`;
    }
    ui.editorName.textContent = name;
    ui.zoneName.textContent = zone();
    ui.editor.hidden = false;
    ui.conflict.hidden = true;
    if (!keepTyped) {
        fillSettings(session.editing.definition);
        if (opening) resetBannerForm();
    }
    renderBanners();
    fillTakeoverChoices();
    // Every write makes a revision: the history on screen shows it.
    if (historyShown()) await showHistory();
    await followState();
    if (opening) ui.editor.querySelector("h2").scrollIntoView();
}

export function fillSettings(definition) {
    clearErrors(ui.settings);
    ui.settings.elements.interval.value = String(definition.interval);
    ui.settings.elements.timeZone.value = definition.timeZone ?? "";
    ui.settings.elements.autoplay.checked = definition.autoplay;
}

/** A write to the carousel being edited, with its ETag; the definition read again after it. */
export async function write(errorElement, form, method, path, body, {saved = null, schedulable = true} = {}) {
    ui.editorStatus.textContent = "";
    // With "Make changes at" filled in, the write is kept and made then (docs/SCHEDULED.md), on the
    // carousel as it is then: without If-Match, or a second change scheduled would be dropped
    // because the first moved the revision.
    const at = schedulable ? scheduledAt() : null;
    const target = at ? atPath(path, at) : path;
    const ifMatch = at ? undefined : session.editing.etag;
    const response = await send(errorElement, () => api(method, target, {body, ifMatch}));
    if (!response) return false;
    if (response.status === 412) {
        ui.conflict.hidden = false;
        ui.conflict.querySelector("button").focus();
        return false;
    }
    if (!response.ok) {
        showProblem(form, errorElement, await problemDetail(response));
        return false;
    }
    if (response.status === 202) {
        const note = scheduledNote(await response.json());
        await replan();
        ui.editorStatus.textContent = note;
        return true;
    }
    await openEditor(session.editing.name, {keepTyped: true});
    await refresh();
    if (saved) ui.editorStatus.textContent = saved;
    return true;
}

document.getElementById("conflict-reload").addEventListener("click", async () => {
    await openEditor(session.editing.name, {keepTyped: true});
    ui.editorStatus.textContent = "Their version is loaded; what you typed is kept. Save again to apply it.";
});

ui.settings.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(ui.settings);
    const fields = ui.settings.elements;
    const interval = fields.interval.value.trim();
    const timeZone = fields.timeZone.value.trim();
    const patch = {
        interval: typedNumber(interval),
        timeZone: timeZone === "" ? null : timeZone,
        autoplay: fields.autoplay.checked,
    };
    await write(ui.settingsError, ui.settings, "PATCH", carouselPath(session.editing.name), patch,
        {saved: "Settings saved."});
});
