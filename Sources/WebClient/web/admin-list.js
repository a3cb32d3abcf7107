// The list of carousels: read every few seconds, a page at a time, created and deleted here.

import {badge, button, cell, clearErrors, confirmDeletion, send, session, showProblem, ui} from "./admin-ui.js";
import {api, carouselPath, problemDetail, read, typedNumber} from "./admin-api.js";
import {go} from "./admin-router.js";

// A page of the list at a time (`GET /carousels?limit=&after=`, docs/API.md): a chain's 10,000
// carousels are not one table. The `after` of each page from the first to the one shown.
const pageSize = 100;
const pageStarts = [null];
let nextPage = null;

export async function refresh() {
    const after = pageStarts[pageStarts.length - 1];
    let response;
    try {
        response = await read(`/carousels?limit=${pageSize}${after === null ? "" : `&after=${encodeURIComponent(after)}`}`);
    } catch {
        ui.listStatus.textContent = "The carousel service cannot be reached — retrying…";
        return;
    }
    if (!response.ok) {
        ui.listStatus.textContent = await problemDetail(response);
        return;
    }
    const {carousels, next} = await response.json();
    if (carousels.length === 0 && pageStarts.length > 1) {
        // Deleted meanwhile down to nothing on this page: the one before.
        pageStarts.pop();
        return refresh();
    }
    if (carousels.length === 0) ui.listStatus.textContent = "No carousel yet.";
    nextPage = next;
    ui.listPages.hidden = pageStarts.length === 1 && next === null;
    ui.listPrevious.disabled = pageStarts.length === 1;
    ui.listNext.disabled = next === null;
    ui.listPage.textContent = `Page ${pageStarts.length}: ${carousels[0]?.name ?? ""} to ${carousels.at(-1)?.name ?? ""}`;
    // Rows are rebuilt only when something changed: a focused button stays focused.
    const listed = JSON.stringify(carousels);
    if (listed === lastListed) return;
    lastListed = listed;
    ui.rows.replaceChildren(...carousels.map(row));
}

let lastListed = null;

ui.listNext.addEventListener("click", () => {
    if (nextPage === null) return;
    pageStarts.push(nextPage);
    refresh();
});
ui.listPrevious.addEventListener("click", () => {
    if (pageStarts.length === 1) return;
    pageStarts.pop();
    refresh();
});

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
        button("Edit", `Edit ${carousel.name}`, () => go("carousels", carousel.name)),
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
        if (session.editing?.name === name) go("carousels");
    } else if (response.status === 412) {
        ui.listStatus.textContent = `${name} was changed by someone else meanwhile and was not deleted: `
            + "look again, then delete it if you still want to.";
    } else {
        ui.listStatus.textContent = await problemDetail(response);
    }
    await refresh();
}
