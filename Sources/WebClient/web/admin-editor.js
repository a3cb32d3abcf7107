// Editing one carousel (#/carousels/NAME): its settings, takeover, preview, timeline, scheduled
// changes, stats, history and banners, each a view of its own module. The definition is read with
// its ETag, which every write sends (admin-carousel.js); after a write the carousel is read again
// here.

import {clearErrors, session, ui} from "./admin-ui.js";
import {carouselPath, problemDetail, read, typedNumber} from "./admin-api.js";
import {refresh} from "./admin-list.js";
import {renderBanners, resetBannerForm} from "./admin-banners.js";
import {zone} from "./admin-schedule.js";
import {fillTakeoverChoices, followState} from "./admin-takeover.js";
import {hideHistory, historyShown, showHistory} from "./admin-history.js";
import {whenReplanned} from "./admin-pending.js";
import {whenWritten, write} from "./admin-carousel.js";

whenWritten(async ({keepTyped}) => {
    await openEditor(session.editing.name, {keepTyped});
    await refresh();
});
whenReplanned(followState);

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

/** No carousel is edited: the editor goes, and its preview's stream with it. */
export function closeEditor() {
    session.editing = null;
    ui.editor.hidden = true;
    ui.preview.src = "about:blank";
}

function fillSettings(definition) {
    clearErrors(ui.settings);
    ui.settings.elements.interval.value = String(definition.interval);
    ui.settings.elements.timeZone.value = definition.timeZone ?? "";
    ui.settings.elements.autoplay.checked = definition.autoplay;
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
