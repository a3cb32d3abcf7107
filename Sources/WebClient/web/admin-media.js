// The media library (docs/MEDIA.md): its view (#/media: every image with what shows it, uploads,
// deletions) and the dialog the banner form picks an image from, by its thumbnail. Both upload by
// dropping a file or choosing one, with its progress.

import {button, confirmDeletion, ui} from "./admin-ui.js";
import {api, askForToken, problemDetail, tokenKey} from "./admin-api.js";
import {showPreview} from "./admin-banners.js";
import {onShow} from "./admin-router.js";

/** An upload zone and what it reports in: the dialog's, or the view's. */
function uploader(prefix, uploaded) {
    const element = (name) => document.getElementById(`${prefix}-${name}`);
    const parts = {
        drop: element("drop"), file: element("file"), progress: element("progress"), status: element("status"),
        error: element("error"), grid: element("grid"),
    };
    parts.showError = (text) => {
        parts.error.textContent = text;
        parts.error.hidden = false;
    };
    parts.file.addEventListener("change", () => {
        if (parts.file.files.length > 0) upload(parts.file.files[0], parts, uploaded);
        parts.file.value = "";
    });
    parts.drop.addEventListener("dragover", (event) => {
        event.preventDefault();
        event.dataTransfer.dropEffect = "copy";
        parts.drop.classList.add("over");
    });
    parts.drop.addEventListener("dragleave", () => parts.drop.classList.remove("over"));
    parts.drop.addEventListener("drop", (event) => {
        event.preventDefault();
        parts.drop.classList.remove("over");
        const file = event.dataTransfer.files[0];
        if (file) upload(file, parts, uploaded);
    });
    return parts;
}

// The dialog: an image chosen, or uploaded, is the banner form's.
const picker = uploader("media", async (image) => {
    await listInto(picker, pickable);
    use(image);
});

// The view: the library as it is, each image with the banners that show it and a Delete.
const library = uploader("library", () => listInto(library, kept));

ui.mediaOpen.addEventListener("click", () => {
    picker.error.hidden = true;
    picker.status.textContent = "";
    ui.mediaDialog.showModal();
    listInto(picker, pickable);
});

onShow("media", () => {
    library.error.hidden = true;
    listInto(library, kept);
});

async function listInto(parts, item) {
    const response = await api("GET", "/media");
    if (!response.ok) {
        parts.showError(await problemDetail(response));
        return;
    }
    const {media} = await response.json();
    parts.grid.replaceChildren(...media.slice().reverse().map(item));
    if (media.length === 0) parts.status.textContent = "The library is empty: upload the first image.";
}

/** What a thumbnail says of an image: its size, and how many banners show it. */
function thumbnail(image) {
    const picture = document.createElement("img");
    picture.alt = "";
    picture.loading = "lazy";
    // The narrowest variant is a thumbnail already; an image narrower than 480 has none.
    picture.src = image.variants.length > 0 ? image.variants[0].url : image.url;
    const uses = image.usedBy.length === 0 ? "unused" : `${image.usedBy.length} banner${image.usedBy.length === 1 ? "" : "s"}`;
    const label = document.createElement("span");
    label.textContent = `${image.width} × ${image.height} · ${uses}`;
    return {picture, label, uses};
}

function pickable(image) {
    const item = document.createElement("li");
    const choose = document.createElement("button");
    choose.type = "button";
    choose.dataset.media = image.id;
    const {picture, label, uses} = thumbnail(image);
    choose.setAttribute("aria-label", `Use the image of ${image.width} × ${image.height} pixels (${uses})`);
    choose.append(picture, label);
    choose.addEventListener("click", () => use(image));
    item.append(choose);
    return item;
}

function kept(image) {
    const item = document.createElement("li");
    item.dataset.media = image.id;
    const {picture, label} = thumbnail(image);
    const link = document.createElement("a");
    link.href = image.url;
    link.append(picture);
    const shownBy = document.createElement("span");
    shownBy.className = "used-by";
    shownBy.textContent = image.usedBy.map((use) => `${use.carousel}: ${use.banner}`).join(", ");
    item.append(link, label, shownBy, button(
        "Delete", `Delete the image of ${image.width} × ${image.height} pixels`, () => remove(image), "link-danger"));
    return item;
}

async function remove(image) {
    const confirmed = await confirmDeletion(`this image of ${image.width} × ${image.height} pixels`,
        "Its original and its variants go; screens that kept it show it no more. This cannot be undone.");
    if (!confirmed) return;
    library.error.hidden = true;
    const response = await api("DELETE", `/media/${image.id}`);
    // A banner shows it (409): the detail names each; nothing was deleted.
    if (!response.ok && response.status !== 404) library.showError(await problemDetail(response));
    else library.status.textContent = "The image is deleted.";
    await listInto(library, kept);
}

function use(image) {
    ui.bannerForm.elements.image.value = image.url;
    showPreview();
    ui.mediaDialog.close();
    ui.bannerForm.elements.image.focus();
}

/**
 * Sends `file` as a multipart form, showing how much has gone (fetch cannot tell: XMLHttpRequest).
 * The service answers once the variants are made.
 */
async function upload(file, parts, uploaded) {
    parts.error.hidden = true;
    parts.status.textContent = `Uploading ${file.name}…`;
    parts.progress.hidden = false;
    parts.progress.value = 0;
    const answer = await send(file, parts.progress);
    parts.progress.hidden = true;
    if (answer.status === 401 && await askForToken("This service needs its admin token to upload.")) {
        return upload(file, parts, uploaded);
    }
    if (answer.status !== 200 && answer.status !== 201) {
        parts.status.textContent = "";
        parts.showError(`${file.name} was not uploaded: ${answer.detail}`);
        return;
    }
    parts.status.textContent = answer.status === 201
        ? `${file.name} is in the library (${answer.image.width} × ${answer.image.height}).`
        : `${file.name} was in the library already.`;
    await uploaded(answer.image);
}

function send(file, progress) {
    return new Promise((resolve) => {
        const request = new XMLHttpRequest();
        request.open("POST", "/media");
        request.setRequestHeader("Accept", "application/json");
        const token = sessionStorage.getItem(tokenKey);
        if (token) request.setRequestHeader("Authorization", `Bearer ${token}`);
        request.upload.addEventListener("progress", (event) => {
            if (event.lengthComputable) progress.value = event.loaded / event.total;
        });
        request.addEventListener("load", () => {
            let body = null;
            try {
                body = JSON.parse(request.responseText);
            } catch {
                // said below
            }
            resolve({
                status: request.status,
                image: body,
                detail: body?.detail ?? `the service answered ${request.status} ${request.statusText}`,
            });
        });
        request.addEventListener("error", () => resolve({status: 0, detail: "the service could not be reached"}));
        const form = new FormData();
        form.append("file", file, file.name);
        request.send(form);
    });
}
