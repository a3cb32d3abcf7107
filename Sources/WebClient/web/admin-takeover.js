// Takeover: commands, not edits of the definition, so no If-Match (docs/SCHEDULES.md,
// "Takeovers"); and the carousel's state, followed.

import {clearErrors, send, session, showProblem, ui} from "./admin-ui.js";
import {api, carouselPath, problemDetail, read, typedNumber} from "./admin-api.js";
import {markRotation} from "./admin-banners.js";
import {followPending} from "./admin-pending.js";
import {followTimeline} from "./admin-timeline.js";

export function fillTakeoverChoices() {
    const select = ui.takeoverForm.elements.banner;
    const chosen = select.value;
    select.replaceChildren(...session.editing.definition.banners.map((banner) => {
        const option = document.createElement("option");
        option.value = banner.id;
        option.textContent = banner.caption ? `${banner.id} — ${banner.caption}` : banner.id;
        return option;
    }));
    if (session.editing.definition.banners.some((banner) => banner.id === chosen)) select.value = chosen;
}

/** The carousel's state now: whether a takeover holds it, said prominently. */
export async function followState() {
    if (!session.editing) return;
    try {
        const response = await read(`${carouselPath(session.editing.name)}/banner`);
        if (response.ok) {
            const state = await response.json();
            showTakeover(state);
            session.rotation = state.rotation;
            markRotation();
            await followTimeline(state);
            await followPending(state);
        }
    } catch {
        // the list says the service is unreachable
    }
}

export function showTakeover(state) {
    const takeover = state.takeover;
    ui.takeoverNow.classList.toggle("active", Boolean(takeover));
    ui.takeoverNow.textContent = takeover
        ? `Takeover: ${takeover.banner} is on every screen ${takeover.until
            ? `until ${new Date(takeover.until).toLocaleString()}` : "until it is ended"}.`
        : "No takeover: the banners rotate.";
    ui.takeoverEnd.hidden = !takeover;
}

export async function takeoverCommand(method, body) {
    clearErrors(ui.takeoverForm);
    const path = `${carouselPath(session.editing.name)}/takeover`;
    const response = await send(ui.takeoverError, () => api(method, path, {body}));
    if (!response) return;
    if (response.ok) {
        showTakeover(await response.json());
    } else {
        showProblem(ui.takeoverForm, ui.takeoverError, await problemDetail(response));
    }
}

ui.takeoverForm.addEventListener("submit", (event) => {
    event.preventDefault();
    const seconds = ui.takeoverForm.elements.seconds.value.trim();
    const body = {banner: ui.takeoverForm.elements.banner.value};
    if (seconds !== "") body.seconds = typedNumber(seconds);
    takeoverCommand("POST", body);
});
ui.takeoverEnd.addEventListener("click", () => takeoverCommand("DELETE"));
