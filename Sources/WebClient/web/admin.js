"use strict";
// The admin page at /admin (docs/ADMIN.md): the carousels over the admin API (docs/API.md), with
// the API's own messages shown beside the field they name.

(() => {
    const tokenKey = "banner-carousel-admin-token";
    const refreshEveryMs = 10000;

    const ui = {
        access: document.getElementById("access"),
        listStatus: document.getElementById("list-status"),
        rows: document.querySelector("#carousels tbody"),
        create: document.getElementById("create"),
        createError: document.getElementById("create-error"),
        confirmDelete: document.getElementById("confirm-delete"),
        tokenDialog: document.getElementById("token-dialog"),
        tokenMessage: document.getElementById("token-message"),
        tokenInput: document.getElementById("token-input"),
        editor: document.getElementById("editor"),
        editorName: document.querySelector("#editor .carousel-name"),
        editorStatus: document.getElementById("editor-status"),
        conflict: document.getElementById("conflict"),
        settings: document.getElementById("settings"),
        settingsError: document.getElementById("settings-error"),
        banners: document.getElementById("banners"),
        bannerForm: document.getElementById("banner-form"),
        bannerFormTitle: document.getElementById("banner-form-title"),
        bannerSubmit: document.getElementById("banner-submit"),
        bannerCancel: document.getElementById("banner-cancel"),
        bannerError: document.getElementById("banner-error"),
        bannerPreview: document.getElementById("banner-preview"),
        takeoverNow: document.getElementById("takeover-now"),
        takeoverForm: document.getElementById("takeover-form"),
        takeoverEnd: document.getElementById("takeover-end"),
        takeoverError: document.getElementById("takeover-error"),
    };

    // ----- Talking to the API ------------------------------------------------------------------

    function carouselPath(name) {
        return `/carousels/${encodeURIComponent(name)}`;
    }

    /** A read: no token needed, never from the browser's cache. */
    function read(path) {
        return fetch(path, {headers: {Accept: "application/json"}, cache: "no-store"});
    }

    /**
     * What the user typed in a number field, as a number when it is one, else as typed (an empty
     * field too): the service says what is wrong with it, beside the field.
     */
    function typedNumber(text) {
        return text === "" || Number.isNaN(Number(text)) ? text : Number(text);
    }

    /**
     * `fetch` with the admin token of this tab (sessionStorage: it goes when the tab does). A 401
     * asks for the token and tries again once it is given; a wrong one is said to be wrong.
     */
    async function api(method, path, {body, ifMatch} = {}) {
        const token = sessionStorage.getItem(tokenKey);
        const headers = {Accept: "application/json"};
        if (token) headers.Authorization = `Bearer ${token}`;
        if (body !== undefined) headers["Content-Type"] = "application/json";
        if (ifMatch) headers["If-Match"] = ifMatch;
        const response = await fetch(path, {
            method, headers, cache: "no-store", body: body === undefined ? undefined : JSON.stringify(body),
        });
        if (response.status === 401) {
            sessionStorage.removeItem(tokenKey);
            const message = token
                ? "That admin token was refused. Enter the service's CAROUSEL_ADMIN_TOKEN."
                : "This service needs its admin token for changes.";
            if (await askForToken(message)) return api(method, path, {body, ifMatch});
        }
        if (response.status === 403) showAccess(await problemDetail(response.clone()));
        return response;
    }

    function askForToken(message) {
        ui.tokenMessage.textContent = message;
        ui.tokenInput.value = "";
        ui.tokenDialog.returnValue = "";
        ui.tokenDialog.showModal();
        return new Promise((resolve) => {
            ui.tokenDialog.addEventListener("close", () => {
                const token = ui.tokenInput.value.trim();
                const given = ui.tokenDialog.returnValue === "use" && token !== "";
                if (given) sessionStorage.setItem(tokenKey, token);
                resolve(given);
            }, {once: true});
        });
    }

    /** The `detail` of a problem answer (RFC 9457), or a sentence for an answer without one. */
    async function problemDetail(response) {
        try {
            const problem = await response.json();
            if (problem && typeof problem.detail === "string") return problem.detail;
        } catch {
            // not JSON: said below
        }
        return `The service answered ${response.status} ${response.statusText}.`;
    }

    function showAccess(text) {
        ui.access.textContent = text;
        ui.access.hidden = false;
    }

    // ----- The list ------------------------------------------------------------------------------

    async function refresh() {
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

    function row(carousel) {
        const tr = document.createElement("tr");
        tr.dataset.carousel = carousel.name;
        const name = document.createElement("td");
        const preview = document.createElement("a");
        preview.href = `${carouselPath(carousel.name)}/`;
        preview.textContent = carousel.name;
        name.append(preview);
        const count = cell(String(carousel.count), "number");
        const version = cell(String(carousel.version), "number");
        const actions = cell("", "actions");
        actions.append(
            button("Edit", `Edit ${carousel.name}`, () => {
                location.hash = `carousel=${encodeURIComponent(carousel.name)}`;
            }),
            button("Delete", `Delete ${carousel.name}`, () => confirmAndDelete(carousel.name), "link-danger"));
        tr.append(name, count, version, actions);
        return tr;
    }

    function cell(text, className) {
        const td = document.createElement("td");
        td.className = className;
        td.textContent = text;
        return td;
    }

    // ----- Creating ------------------------------------------------------------------------------

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

    /** `request()`, or null with the error said in `errorElement` when the service is unreachable. */
    async function send(errorElement, request) {
        try {
            return await request();
        } catch {
            errorElement.textContent = "The carousel service cannot be reached; nothing was changed.";
            errorElement.hidden = false;
            return null;
        }
    }

    /**
     * Shows the API's message beside the field it names (`interval: must be …`, `timeZone: …`),
     * else under the form.
     */
    function showProblem(form, fallback, detail) {
        // `interval: …`, `banners[2].image: …`, `windows[0].days[1]: …` (definitions) or `field
        // 'seconds' must …` (commands): the field is the path's first member the form has.
        const named = /^([A-Za-z0-9_.[\]]+): (.*)$/.exec(detail) ?? /^field '([^']+)':? (.*)$/.exec(detail);
        const members = named ? named[1].replace(/\[\d+\]/g, "").split(".") : [];
        const member = members.find((name) => form.querySelector(`.error[data-field="${name}"]`));
        const fieldError = member && form.querySelector(`.error[data-field="${member}"]`);
        const target = fieldError || fallback;
        target.textContent = fieldError ? named[2] : detail;
        target.hidden = false;
        if (fieldError) {
            const input = form.querySelector(`[name="${member}"]`);
            input.setAttribute("aria-invalid", "true");
            input.focus();
        }
    }

    function clearErrors(form) {
        for (const error of form.querySelectorAll(".error")) {
            error.textContent = "";
            error.hidden = true;
        }
        for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
    }

    // ----- Deleting ------------------------------------------------------------------------------

    /** Asks before deleting `subject`; resolves to whether the user chose to. Keeping is the default. */
    function confirmDeletion(subject, consequence) {
        ui.confirmDelete.querySelector(".subject").textContent = subject;
        ui.confirmDelete.querySelector(".consequence").textContent = consequence;
        ui.confirmDelete.returnValue = "";
        ui.confirmDelete.showModal();
        return new Promise((resolve) => ui.confirmDelete.addEventListener(
            "close", () => resolve(ui.confirmDelete.returnValue === "delete"), {once: true}));
    }

    async function confirmAndDelete(name) {
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
            if (editing?.name === name) location.hash = "";
        } else if (response.status === 412) {
            ui.listStatus.textContent = `${name} was changed by someone else meanwhile and was not deleted: `
                + "look again, then delete it if you still want to.";
        } else {
            ui.listStatus.textContent = await problemDetail(response);
        }
        await refresh();
    }

    // ----- Editing one carousel ------------------------------------------------------------------
    // The definition is read with its ETag, and every write sends it (If-Match): a carousel someone
    // else changed meanwhile answers 412, and the page says so, keeping what the user typed.

    let editing = null; // {name, etag, definition}
    let editingBanner = null; // the id of the banner in the banner form, or null when adding

    async function openEditor(name, {keepTyped = false} = {}) {
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
            editing = null;
            return;
        }
        const opening = editing?.name !== name;
        editing = {name, etag: response.headers.get("ETag"), definition: await response.json()};
        ui.editorName.textContent = name;
        ui.editor.hidden = false;
        ui.conflict.hidden = true;
        if (!keepTyped) {
            fillSettings(editing.definition);
            if (opening) resetBannerForm();
        }
        renderBanners();
        fillTakeoverChoices();
        await followState();
        if (opening) ui.editor.querySelector("h2").scrollIntoView();
    }

    function fillSettings(definition) {
        clearErrors(ui.settings);
        ui.settings.elements.interval.value = String(definition.interval);
        ui.settings.elements.timeZone.value = definition.timeZone ?? "";
        ui.settings.elements.autoplay.checked = definition.autoplay;
    }

    /** A write to the carousel being edited, with its ETag; the definition read again after it. */
    async function write(errorElement, form, method, path, body) {
        ui.editorStatus.textContent = "";
        const response = await send(errorElement, () => api(method, path, {body, ifMatch: editing.etag}));
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
        await openEditor(editing.name, {keepTyped: true});
        await refresh();
        return true;
    }

    document.getElementById("conflict-reload").addEventListener("click", async () => {
        await openEditor(editing.name, {keepTyped: true});
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
        if (await write(ui.settingsError, ui.settings, "PATCH", carouselPath(editing.name), patch)) {
            ui.editorStatus.textContent = "Settings saved.";
        }
    });

    // ----- Its banners ---------------------------------------------------------------------------

    function renderBanners() {
        const banners = editing.definition.banners;
        ui.banners.replaceChildren(...banners.map((banner, position) => bannerItem(banner, position, banners.length)));
    }

    function bannerItem(banner, position, count) {
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
        if (banner.enabled === false) {
            const off = document.createElement("span");
            off.className = "badge";
            off.textContent = "disabled";
            text.append(off);
        }
        const actions = document.createElement("div");
        actions.className = "banner-actions";
        actions.append(
            button("↑", `Move ${banner.id} up`, position > 0 ? () => move(banner.id, position - 1) : null),
            button("↓", `Move ${banner.id} down`, position < count - 1 ? () => move(banner.id, position + 1) : null),
            button("Edit", `Edit ${banner.id}`, () => editBanner(banner)),
            button("Delete", `Delete ${banner.id}`, () => deleteBanner(banner.id), "link-danger"));
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

    function button(label, name, action, className = "secondary") {
        const element = document.createElement("button");
        element.type = "button";
        element.className = className;
        element.textContent = label;
        element.setAttribute("aria-label", name);
        if (action) element.addEventListener("click", action);
        else element.disabled = true;
        return element;
    }

    /** Moves banner `id` to `position` (PUT …/order), keeping the focus on the same control. */
    async function move(id, position) {
        const ids = editing.definition.banners.map((banner) => banner.id).filter((other) => other !== id);
        ids.splice(position, 0, id);
        const focused = document.activeElement?.getAttribute("aria-label");
        if (await write(ui.bannerError, ui.bannerForm, "PUT", `${carouselPath(editing.name)}/order`, {ids})) {
            ui.editorStatus.textContent = `Moved ${id} to position ${position + 1}.`;
            const again = focused && ui.banners.querySelector(`button[aria-label="${CSS.escape(focused)}"]`);
            (again && !again.disabled
                ? again : ui.banners.querySelector(`li[data-banner="${CSS.escape(id)}"] button:not(:disabled)`))?.focus();
        }
    }

    function editBanner(banner) {
        resetBannerForm();
        editingBanner = banner.id;
        const fields = ui.bannerForm.elements;
        fields.id.value = banner.id;
        fields.id.readOnly = true;
        fields.image.value = banner.image;
        fields.caption.value = banner.caption ?? "";
        fields.link.value = banner.link ?? "";
        fields.duration.value = banner.duration ?? "";
        fields.enabled.checked = banner.enabled !== false;
        ui.bannerFormTitle.textContent = `Edit ${banner.id}`;
        ui.bannerSubmit.textContent = "Save banner";
        ui.bannerCancel.hidden = false;
        showPreview();
        fields.image.focus();
    }

    function resetBannerForm() {
        ui.bannerForm.reset();
        clearErrors(ui.bannerForm);
        editingBanner = null;
        ui.bannerForm.elements.id.readOnly = false;
        ui.bannerFormTitle.textContent = "Add a banner";
        ui.bannerSubmit.textContent = "Add banner";
        ui.bannerCancel.hidden = true;
        showPreview();
    }

    ui.bannerCancel.addEventListener("click", resetBannerForm);

    function showPreview() {
        const url = ui.bannerForm.elements.image.value.trim();
        ui.bannerPreview.hidden = !/^https?:\/\//.test(url);
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
        const banner = {
            image: fields.image.value.trim(),
            caption: fields.caption.value,
            link: fields.link.value.trim() === "" ? null : fields.link.value.trim(),
            duration: duration === "" ? null : typedNumber(duration),
            enabled: fields.enabled.checked,
        };
        const path = `${carouselPath(editing.name)}/banners`;
        const id = fields.id.value.trim();
        const saved = editingBanner === null
            ? await write(ui.bannerError, ui.bannerForm, "POST", path, {id, ...banner})
            // A merge patch: the banner's schedule, not in this form, stays as it is.
            : await write(ui.bannerError, ui.bannerForm, "PATCH", `${path}/${encodeURIComponent(editingBanner)}`, banner);
        if (saved) {
            ui.editorStatus.textContent = editingBanner === null ? `Added ${id}.` : `Saved ${id}.`;
            resetBannerForm();
        }
    });

    async function deleteBanner(id) {
        if (!await confirmDeletion(id, `The banner leaves ${editing.name} at once, on every screen.`)) return;
        const path = `${carouselPath(editing.name)}/banners/${encodeURIComponent(id)}`;
        if (await write(ui.bannerError, ui.bannerForm, "DELETE", path)) {
            ui.editorStatus.textContent = `Deleted ${id}.`;
            if (editingBanner === id) resetBannerForm();
        }
    }

    // ----- Takeover ------------------------------------------------------------------------------
    // Commands, not edits of the definition: no If-Match (docs/SCHEDULES.md, "Takeovers").

    function fillTakeoverChoices() {
        const select = ui.takeoverForm.elements.banner;
        const chosen = select.value;
        select.replaceChildren(...editing.definition.banners.map((banner) => {
            const option = document.createElement("option");
            option.value = banner.id;
            option.textContent = banner.caption ? `${banner.id} — ${banner.caption}` : banner.id;
            return option;
        }));
        if (editing.definition.banners.some((banner) => banner.id === chosen)) select.value = chosen;
    }

    /** The carousel's state now: whether a takeover holds it, said prominently. */
    async function followState() {
        if (!editing) return;
        try {
            const response = await read(`${carouselPath(editing.name)}/banner`);
            if (response.ok) showTakeover(await response.json());
        } catch {
            // the list says the service is unreachable
        }
    }

    function showTakeover(state) {
        const takeover = state.takeover;
        ui.takeoverNow.classList.toggle("active", Boolean(takeover));
        ui.takeoverNow.textContent = takeover
            ? `Takeover: ${takeover.banner} is on every screen ${takeover.until
                ? `until ${new Date(takeover.until).toLocaleString()}` : "until it is ended"}.`
            : "No takeover: the banners rotate.";
        ui.takeoverEnd.hidden = !takeover;
    }

    async function takeoverCommand(method, body) {
        clearErrors(ui.takeoverForm);
        const path = `${carouselPath(editing.name)}/takeover`;
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

    // The carousel being edited is in the address (#carousel=NAME): a reload or a shared link
    // opens it again.
    function followAddress() {
        const name = new URLSearchParams(location.hash.slice(1)).get("carousel");
        if (name) {
            openEditor(name);
        } else {
            editing = null;
            ui.editor.hidden = true;
        }
    }

    window.addEventListener("hashchange", followAddress);
    followAddress();

    refresh();
    setInterval(() => {
        refresh();
        followState();
    }, refreshEveryMs);
})();
