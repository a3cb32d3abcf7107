// The list of carousels: read every few seconds, created and deleted here.

import {badge, button, cell, clearErrors, confirmDeletion, send, session, showProblem, ui} from "./admin-ui.js";
import {api, carouselPath, problemDetail, read, typedNumber} from "./admin-api.js";

export async function refresh() {
    let response;
    try {
        response = await read("/carousels");
    } catch {
        ui.listStatus.textContent = "The carousel service cannot be reached — retrying…";
        return;
    }
    if (!response.ok) {
        ui.listStatus.textContent = await problemDetail(response);
        return;
    }
    const {carousels} = await response.json();
    if (carousels.length === 0) ui.listStatus.textContent = "No carousel yet.";
    // Rows are rebuilt only when something changed: a focused button stays focused.
    const listed = JSON.stringify(carousels);
    if (listed === lastListed) return;
    lastListed = listed;
    ui.rows.replaceChildren(...carousels.map(row));
}

let lastListed = null;

export function row(carousel) {
    const tr = document.createElement("tr");
    tr.dataset.carousel = carousel.name;
    const name = document.createElement("td");
    const preview = document.createElement("a");
    preview.href = `${carouselPath(carousel.name)}/`;
    preview.textContent = carousel.name;
    name.append(preview);
    const count = cell(String(carousel.count), "number");
    const now = cell(carousel.banner ?? "nothing", "now");
    if (carousel.takeover) now.append(badge("takeover", "takeover"));
    if (carousel.paused) now.append(badge("paused", "paused"));
    const version = cell(String(carousel.version), "number");
    const actions = cell("", "actions");
    actions.append(
        button("Edit", `Edit ${carousel.name}`, () => {
            location.hash = `carousel=${encodeURIComponent(carousel.name)}`;
        }),
        button("Delete", `Delete ${carousel.name}`, () => confirmAndDelete(carousel.name), "link-danger"));
    tr.append(name, count, now, version, actions);
    return tr;
}

ui.create.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(ui.create);
    const form = new FormData(ui.create);
    const definition = {name: form.get("name").trim(), autoplay: form.has("autoplay")};
    const interval = form.get("interval").trim();
    if (interval !== "") definition.interval = typedNumber(interval);
    const timeZone = form.get("timeZone").trim();
    if (timeZone !== "") definition.timeZone = timeZone;
    const response = await send(ui.createError, () => api("POST", "/carousels", {body: definition}));
    if (!response) return;
    if (response.ok) {
        ui.create.reset();
        await refresh();
        ui.listStatus.textContent = `Created ${definition.name}.`;
    } else {
        showProblem(ui.create, ui.createError, await problemDetail(response));
    }
});

export async function confirmAndDelete(name) {
    const confirmed = await confirmDeletion(name, "Its banners, schedules and position go with it, and screens "
        + "showing it stop. This cannot be undone.");
    if (!confirmed) return;
    const path = carouselPath(name);
    const response = await send(ui.createError, async () => {
        // The definition's ETag: a carousel someone changed meanwhile is not deleted unseen.
        const current = await read(path);
        if (current.status === 404) return current;
        return api("DELETE", path, {ifMatch: current.headers.get("ETag")});
    });
    if (!response) return;
    if (response.ok || response.status === 404) {
        ui.listStatus.textContent = `Deleted ${name}.`;
        if (session.editing?.name === name) location.hash = "";
    } else if (response.status === 412) {
        ui.listStatus.textContent = `${name} was changed by someone else meanwhile and was not deleted: `
            + "look again, then delete it if you still want to.";
    } else {
        ui.listStatus.textContent = await problemDetail(response);
    }
    await refresh();
}
