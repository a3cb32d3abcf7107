// The media library (docs/MEDIA.md): upload an image by dropping it or choosing a file, with its
// progress; pick one of the library's images for the banner form, by its thumbnail.

import {ui} from "./admin-ui.js";
import {api, askForToken, problemDetail, tokenKey} from "./admin-api.js";
import {showPreview} from "./admin-banners.js";

ui.mediaOpen.addEventListener("click", () => {
    ui.mediaError.hidden = true;
    ui.mediaStatus.textContent = "";
    ui.mediaDialog.showModal();
    listLibrary();
});

async function listLibrary() {
    const response = await api("GET", "/media");
    if (!response.ok) {
        showError(await problemDetail(response));
        return;
    }
    const {media} = await response.json();
    ui.mediaGrid.replaceChildren(...media.slice().reverse().map(libraryItem));
    if (media.length === 0) ui.mediaStatus.textContent = "The library is empty: upload the first image.";
}

function libraryItem(image) {
    const item = document.createElement("li");
    const choose = document.createElement("button");
    choose.type = "button";
    choose.dataset.media = image.id;
    const thumbnail = document.createElement("img");
    thumbnail.alt = "";
    thumbnail.loading = "lazy";
    // The narrowest variant is a thumbnail already; an image narrower than 480 has none.
    thumbnail.src = image.variants.length > 0 ? image.variants[0].url : image.url;
    const label = document.createElement("span");
    const uses = image.usedBy.length === 0 ? "unused" : `${image.usedBy.length} banner${image.usedBy.length === 1 ? "" : "s"}`;
    label.textContent = `${image.width} × ${image.height} · ${uses}`;
    choose.setAttribute("aria-label", `Use the image of ${image.width} × ${image.height} pixels (${uses})`);
    choose.append(thumbnail, label);
    choose.addEventListener("click", () => use(image));
    item.append(choose);
    return item;
}

function use(image) {
    ui.bannerForm.elements.image.value = image.url;
    showPreview();
    ui.mediaDialog.close();
    ui.bannerForm.elements.image.focus();
}

function showError(text) {
    ui.mediaError.textContent = text;
    ui.mediaError.hidden = false;
}

ui.mediaFile.addEventListener("change", () => {
    if (ui.mediaFile.files.length > 0) upload(ui.mediaFile.files[0]);
    ui.mediaFile.value = "";
});

ui.mediaDrop.addEventListener("dragover", (event) => {
    event.preventDefault();
    event.dataTransfer.dropEffect = "copy";
    ui.mediaDrop.classList.add("over");
});
ui.mediaDrop.addEventListener("dragleave", () => ui.mediaDrop.classList.remove("over"));
ui.mediaDrop.addEventListener("drop", (event) => {
    event.preventDefault();
    ui.mediaDrop.classList.remove("over");
    const file = event.dataTransfer.files[0];
    if (file) upload(file);
});

/**
 * Sends `file` as a multipart form, showing how much has gone (fetch cannot tell: XMLHttpRequest).
 * The service answers once the variants are made; the image is then the banner's.
 */
async function upload(file) {
    ui.mediaError.hidden = true;
    ui.mediaStatus.textContent = `Uploading ${file.name}…`;
    ui.mediaProgress.hidden = false;
    ui.mediaProgress.value = 0;
    const answer = await send(file);
    ui.mediaProgress.hidden = true;
    if (answer.status === 401 && await askForToken("This service needs its admin token to upload.")) {
        return upload(file);
    }
    if (answer.status !== 200 && answer.status !== 201) {
        ui.mediaStatus.textContent = "";
        showError(`${file.name} was not uploaded: ${answer.detail}`);
        return;
    }
    ui.mediaStatus.textContent = answer.status === 201
        ? `${file.name} is in the library (${answer.image.width} × ${answer.image.height}).`
        : `${file.name} was in the library already.`;
    await listLibrary();
    use(answer.image);
}

function send(file) {
    return new Promise((resolve) => {
        const request = new XMLHttpRequest();
        request.open("POST", "/media");
        request.setRequestHeader("Accept", "application/json");
        const token = sessionStorage.getItem(tokenKey);
        if (token) request.setRequestHeader("Authorization", `Bearer ${token}`);
        request.upload.addEventListener("progress", (event) => {
            if (event.lengthComputable) ui.mediaProgress.value = event.loaded / event.total;
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
