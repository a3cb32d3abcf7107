// A carousel's banners: listed, reordered, added, edited and removed.

import {badge, button, clearErrors, confirmDeletion, session, ui} from "./admin-ui.js";
import {carouselPath, typedNumber} from "./admin-api.js";
import {write} from "./admin-carousel.js";
import {addWindow, localOf, scheduleSummary, typedSchedule, zone} from "./admin-schedule.js";

export function renderBanners() {
    const banners = session.editing.definition.banners;
    ui.banners.replaceChildren(...banners.map((banner, position) => bannerItem(banner, position, banners.length)));
    markRotation();
    // The audiences the banners name, offered by the preview of an instant and by the stats
    // (each audience's screens are counted apart, docs/STATS.md).
    const audiences = [...new Set(banners.flatMap((banner) => banner.audiences ?? []))].sort();
    ui.instantAudiences.replaceChildren(...audiences.map((name) => Object.assign(document.createElement("option"), {value: name})));
    const chosen = ui.statsAudience.value;
    ui.statsAudience.replaceChildren(
        Object.assign(document.createElement("option"), {value: "", textContent: "of no audience"}),
        ...audiences.map((name) => Object.assign(document.createElement("option"), {value: name, textContent: `of ${name}`})));
    ui.statsAudience.value = audiences.includes(chosen) ? chosen : "";
}

/** Banners out of the rotation now (disabled, or scheduled for another time) say so. */
export function markRotation() {
    for (const item of ui.banners.children) {
        const off = session.rotation !== null && !session.rotation.includes(item.dataset.banner);
        const shown = item.querySelector(".badge.off-now");
        if (off && !shown) item.querySelector(".banner-text").append(badge("not on now", "off-now"));
        else if (!off && shown) shown.remove();
    }
}

export function bannerItem(banner, position, count) {
    const item = document.createElement("li");
    item.dataset.banner = banner.id;
    item.draggable = true;
    const thumbnail = document.createElement("img");
    thumbnail.className = "thumbnail";
    thumbnail.alt = "";
    thumbnail.src = banner.image;
    const text = document.createElement("div");
    text.className = "banner-text";
    const id = document.createElement("strong");
    id.textContent = banner.id;
    const caption = document.createElement("span");
    caption.textContent = banner.caption || "(no caption)";
    text.append(id, caption);
    if (banner.enabled === false) text.append(badge("disabled", "disabled"));
    if ((banner.weight ?? 1) !== 1) text.append(badge(`weight ${banner.weight}`, "weight"));
    if (banner.audiences?.length) text.append(badge(`for ${banner.audiences.join(", ")}`, "audiences"));
    const actions = document.createElement("div");
    actions.className = "banner-actions";
    actions.append(
        button("↑", `Move ${banner.id} up`, position > 0 ? () => move(banner.id, position - 1) : null),
        button("↓", `Move ${banner.id} down`, position < count - 1 ? () => move(banner.id, position + 1) : null),
        button("Edit", `Edit ${banner.id}`, () => editBanner(banner)),
        button("Delete", `Delete ${banner.id}`, () => deleteBanner(banner.id), "link-danger"));
    const summary = scheduleSummary(banner);
    if (summary) {
        const schedule = document.createElement("span");
        schedule.className = "schedule-summary";
        schedule.textContent = summary;
        text.append(schedule);
    }
    item.append(thumbnail, text, actions);
    item.addEventListener("dragstart", (event) => {
        event.dataTransfer.setData("text/plain", banner.id);
        event.dataTransfer.effectAllowed = "move";
        item.classList.add("dragging");
    });
    item.addEventListener("dragend", () => item.classList.remove("dragging"));
    item.addEventListener("dragover", (event) => {
        event.preventDefault();
        event.dataTransfer.dropEffect = "move";
    });
    item.addEventListener("drop", (event) => {
        event.preventDefault();
        const dragged = event.dataTransfer.getData("text/plain");
        if (dragged && dragged !== banner.id) move(dragged, position);
    });
    return item;
}

/** Moves banner `id` to `position` (PUT …/order), keeping the focus on the same control. */
export async function move(id, position) {
    const ids = session.editing.definition.banners.map((banner) => banner.id).filter((other) => other !== id);
    ids.splice(position, 0, id);
    const focused = document.activeElement?.getAttribute("aria-label");
    if (await write(ui.bannerError, ui.bannerForm, "PUT", `${carouselPath(session.editing.name)}/order`, {ids},
        {saved: `Moved ${id} to position ${position + 1}.`})) {
        const again = focused && ui.banners.querySelector(`button[aria-label="${CSS.escape(focused)}"]`);
        (again && !again.disabled
            ? again : ui.banners.querySelector(`li[data-banner="${CSS.escape(id)}"] button:not(:disabled)`))?.focus();
    }
}

export function editBanner(banner) {
    resetBannerForm();
    session.editingBanner = banner.id;
    const fields = ui.bannerForm.elements;
    fields.id.value = banner.id;
    fields.id.readOnly = true;
    fields.image.value = banner.image;
    fields.caption.value = banner.caption ?? "";
    fields.link.value = banner.link ?? "";
    fields.duration.value = banner.duration ?? "";
    fields.weight.value = banner.weight ?? "";
    fields.audiences.value = (banner.audiences ?? []).join(", ");
    fields.enabled.checked = banner.enabled !== false;
    fields.startsAt.value = banner.startsAt ? localOf(banner.startsAt, zone()) : "";
    fields.endsAt.value = banner.endsAt ? localOf(banner.endsAt, zone()) : "";
    for (const window of banner.windows ?? []) addWindow(window);
    ui.bannerFormTitle.textContent = `Edit ${banner.id}`;
    ui.bannerSubmit.textContent = "Save banner";
    ui.bannerCancel.hidden = false;
    showPreview();
    fields.image.focus();
}

export function resetBannerForm() {
    ui.bannerForm.reset();
    ui.windows.replaceChildren();
    clearErrors(ui.bannerForm);
    session.editingBanner = null;
    ui.bannerForm.elements.id.readOnly = false;
    ui.bannerFormTitle.textContent = "Add a banner";
    ui.bannerSubmit.textContent = "Add banner";
    ui.bannerCancel.hidden = true;
    showPreview();
}

ui.bannerCancel.addEventListener("click", resetBannerForm);

export function showPreview() {
    const url = ui.bannerForm.elements.image.value.trim();
    ui.bannerPreview.hidden = !/^(https?:\/\/|\/media\/)/.test(url);
    if (!ui.bannerPreview.hidden) ui.bannerPreview.src = url;
}

// The thumbnail follows the field once typing pauses, not at every key (each is a request).
let previewTimer = null;
ui.bannerForm.elements.image.addEventListener("input", () => {
    clearTimeout(previewTimer);
    previewTimer = setTimeout(showPreview, 400);
});
ui.bannerPreview.addEventListener("error", () => {
    ui.bannerPreview.hidden = true;
});

ui.bannerForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(ui.bannerForm);
    const fields = ui.bannerForm.elements;
    const duration = fields.duration.value.trim();
    const weight = fields.weight.value.trim();
    const audiences = fields.audiences.value.split(",").map((name) => name.trim()).filter((name) => name !== "");
    const banner = {
        image: fields.image.value.trim(),
        caption: fields.caption.value,
        link: fields.link.value.trim() === "" ? null : fields.link.value.trim(),
        duration: duration === "" ? null : typedNumber(duration),
        weight: weight === "" ? null : typedNumber(weight),
        audiences: audiences.length ? audiences : null,
        enabled: fields.enabled.checked,
        ...typedSchedule(),
    };
    const path = `${carouselPath(session.editing.name)}/banners`;
    const id = fields.id.value.trim();
    const saved = session.editingBanner === null
        // A new banner names only what it has; null (none) is for removing from one that exists.
        ? await write(ui.bannerError, ui.bannerForm, "POST", path,
            Object.fromEntries(Object.entries({id, ...banner}).filter(([, value]) => value !== null)),
            {saved: `Added ${id}.`})
        : await write(ui.bannerError, ui.bannerForm, "PATCH", `${path}/${encodeURIComponent(session.editingBanner)}`, banner,
            {saved: `Saved ${id}.`});
    if (saved) resetBannerForm();
});

export async function deleteBanner(id) {
    if (!await confirmDeletion(id, `The banner leaves ${session.editing.name} at once, on every screen.`)) return;
    const path = `${carouselPath(session.editing.name)}/banners/${encodeURIComponent(id)}`;
    if (await write(ui.bannerError, ui.bannerForm, "DELETE", path, undefined, {saved: `Deleted ${id}.`})) {
        if (session.editingBanner === id) resetBannerForm();
    }
}
