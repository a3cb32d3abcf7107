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
        windows: document.getElementById("banner-windows"),
        windowAdd: document.getElementById("window-add"),
        zoneName: document.querySelector("#banner-form .zone-name"),
        preview: document.getElementById("preview"),
        timelineSpan: document.getElementById("timeline-span"),
        timelineStrip: document.getElementById("timeline-strip"),
        timelineNext: document.getElementById("timeline-next"),
        statsPeriod: document.getElementById("stats-period"),
        statsShow: document.getElementById("stats-show"),
        statsCsv: document.getElementById("stats-csv"),
        statsStatus: document.getElementById("stats-status"),
        statsResult: document.getElementById("stats-result"),
        statsChart: document.getElementById("stats-chart"),
        statsCaption: document.getElementById("stats-caption"),
        statsRows: document.querySelector("#stats-table tbody"),
        statsDownload: document.getElementById("stats-download"),
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
    async function api(method, path, {body, ifMatch, accept = "application/json"} = {}) {
        const token = sessionStorage.getItem(tokenKey);
        const headers = {Accept: accept};
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
            if (await askForToken(message)) return api(method, path, {body, ifMatch, accept});
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

    function badge(text, kind) {
        const element = document.createElement("span");
        element.className = `badge ${kind}`;
        element.textContent = text;
        return element;
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
        // A field, or a group of fields (a banner's time windows): then which one of them is said too.
        const input = fieldError
            && (form.querySelector(`[name="${member}"]`) ?? form.querySelector(`[data-focus="${member}"]`));
        const within = /^.*windows\[(\d+)\]\.?(.*)$/.exec(named?.[1] ?? "");
        target.textContent = !fieldError ? detail
            : within ? `Time window ${Number(within[1]) + 1}${within[2] ? `, ${within[2]}` : ""}: ${named[2]}`
            : named[2];
        target.hidden = false;
        if (input) {
            if (input.matches("input, select, textarea")) input.setAttribute("aria-invalid", "true");
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
        if (opening) {
            rotation = null;
            timelineRead = {version: null, at: 0};
            ui.statsResult.hidden = true;
            ui.statsStatus.textContent = "";
            // The page of `/` for this carousel, which follows the service by itself.
            ui.preview.src = `${carouselPath(name)}/?preview`;
            ui.preview.title = `Live preview of ${name}`;
        }
        ui.editorName.textContent = name;
        ui.zoneName.textContent = zone();
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
        markRotation();
    }

    let rotation = null; // the ids in rotation now, from the carousel's state

    /** Banners out of the rotation now (disabled, or scheduled for another time) say so. */
    function markRotation() {
        for (const item of ui.banners.children) {
            const off = rotation !== null && !rotation.includes(item.dataset.banner);
            const shown = item.querySelector(".badge.off-now");
            if (off && !shown) item.querySelector(".banner-text").append(badge("not on now", "off-now"));
            else if (!off && shown) shown.remove();
        }
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
        if (banner.enabled === false) text.append(badge("disabled", "disabled"));
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
        fields.startsAt.value = banner.startsAt ? localOf(banner.startsAt, zone()) : "";
        fields.endsAt.value = banner.endsAt ? localOf(banner.endsAt, zone()) : "";
        for (const window of banner.windows ?? []) addWindow(window);
        ui.bannerFormTitle.textContent = `Edit ${banner.id}`;
        ui.bannerSubmit.textContent = "Save banner";
        ui.bannerCancel.hidden = false;
        showPreview();
        fields.image.focus();
    }

    function resetBannerForm() {
        ui.bannerForm.reset();
        ui.windows.replaceChildren();
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
            ...typedSchedule(),
        };
        const path = `${carouselPath(editing.name)}/banners`;
        const id = fields.id.value.trim();
        const saved = editingBanner === null
            // A new banner names only what it has; null (none) is for removing from one that exists.
            ? await write(ui.bannerError, ui.bannerForm, "POST", path,
                Object.fromEntries(Object.entries({id, ...banner}).filter(([, value]) => value !== null)))
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

    // ----- A banner's schedule -------------------------------------------------------------------
    // Entered in the carousel's time zone (docs/SCHEDULES.md); the API takes instants (RFC 3339)
    // and writes them back in UTC, so the page converts both ways with the browser's zone data.

    const weekDays = [["mon", "Monday"], ["tue", "Tuesday"], ["wed", "Wednesday"], ["thu", "Thursday"],
        ["fri", "Friday"], ["sat", "Saturday"], ["sun", "Sunday"]];

    function zone() {
        return editing?.definition.timeZone ?? "UTC";
    }

    /** The wall clock of `instant` (milliseconds) in `timeZone`: year, month, day, hour, minute, second. */
    function wallClock(instant, timeZone) {
        const format = new Intl.DateTimeFormat("en-US", {
            timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
            hour: "2-digit", minute: "2-digit", second: "2-digit",
        });
        return Object.fromEntries(format.formatToParts(new Date(instant)).map((part) => [part.type, part.value]));
    }

    /** How far `timeZone`'s clocks are ahead of UTC at `instant`, in milliseconds. */
    function zoneOffset(instant, timeZone) {
        const wall = wallClock(instant, timeZone);
        return Date.UTC(+wall.year, +wall.month - 1, +wall.day, +wall.hour, +wall.minute, +wall.second)
            - Math.floor(instant / 1000) * 1000;
    }

    /** A datetime-local value (`2026-12-24T08:00`) read in `timeZone`, as an RFC 3339 instant. */
    function instantOf(local, timeZone) {
        const [date, time] = local.split("T");
        const [year, month, day] = date.split("-").map(Number);
        const [hour, minute, second = 0] = time.split(":").map(Number);
        const asUTC = Date.UTC(year, month - 1, day, hour, minute, second);
        // The offset at the instant found, which differs from the first guess's near a change of offset.
        const guess = asUTC - zoneOffset(asUTC, timeZone);
        return new Date(asUTC - zoneOffset(guess, timeZone)).toISOString();
    }

    /** An RFC 3339 instant as a datetime-local value in `timeZone`. */
    function localOf(instant, timeZone) {
        const wall = wallClock(Date.parse(instant), timeZone);
        return `${wall.year}-${wall.month}-${wall.day}T${wall.hour}:${wall.minute}`;
    }

    /** One time window's row: its days, from, to, and a button that removes it. */
    function addWindow(window = {from: "09:00", to: "17:00"}) {
        const item = document.createElement("li");
        item.className = "window";
        const group = document.createElement("fieldset");
        const legend = document.createElement("legend");
        legend.className = "visually-hidden";
        const days = document.createElement("div");
        days.className = "days";
        for (const [value, name] of weekDays) {
            const label = document.createElement("label");
            const box = document.createElement("input");
            box.type = "checkbox";
            box.value = value;
            box.checked = (window.days ?? []).includes(value);
            box.setAttribute("aria-label", name);
            label.append(box, name.slice(0, 3));
            days.append(label);
        }
        const times = document.createElement("div");
        times.className = "times";
        // A time field cannot say 24:00; 00:00 as the end is the same window (it runs to midnight).
        times.append(timeField("From", "from", window.from), timeField("To", "to", window.to === "24:00" ? "00:00" : window.to));
        const remove = button("Remove", "", () => {
            item.remove();
            numberWindows();
            ui.windowAdd.focus();
        }, "link-danger");
        group.append(legend, days, times, remove);
        item.append(group);
        ui.windows.append(item);
        numberWindows();
        return item;
    }

    function timeField(text, className, value) {
        const label = document.createElement("label");
        const input = document.createElement("input");
        input.type = "time";
        input.className = className;
        input.value = value ?? "";
        label.append(text, input);
        return label;
    }

    /** Each row's name for assistive technology: "Time window 2", "Remove time window 2". */
    function numberWindows() {
        Array.from(ui.windows.children).forEach((item, index) => {
            item.querySelector("legend").textContent = `Time window ${index + 1}`;
            item.querySelector("button").setAttribute("aria-label", `Remove time window ${index + 1}`);
        });
    }

    ui.windowAdd.addEventListener("click", () => addWindow().querySelector("input").focus());

    /** The schedule in the form, as the API takes it: null for what is not set (it removes it from a banner). */
    function typedSchedule() {
        const fields = ui.bannerForm.elements;
        const windows = Array.from(ui.windows.children, (item) => {
            const days = Array.from(item.querySelectorAll(".days input:checked"), (box) => box.value);
            const window = {from: item.querySelector("input.from").value, to: item.querySelector("input.to").value};
            return days.length > 0 ? {days, ...window} : window;
        });
        return {
            startsAt: fields.startsAt.value === "" ? null : instantOf(fields.startsAt.value, zone()),
            endsAt: fields.endsAt.value === "" ? null : instantOf(fields.endsAt.value, zone()),
            windows: windows.length === 0 ? null : windows,
        };
    }

    /** A banner's schedule in a line, in the carousel's time zone; empty when it has none. */
    function scheduleSummary(banner) {
        const parts = [];
        if (banner.startsAt) parts.push(`from ${localOf(banner.startsAt, zone()).replace("T", " ")}`);
        if (banner.endsAt) parts.push(`until ${localOf(banner.endsAt, zone()).replace("T", " ")}`);
        for (const window of banner.windows ?? []) {
            const days = window.days ? window.days.join(" ") : "every day";
            parts.push(`${days} ${window.from}–${window.to}`);
        }
        return parts.join("; ");
    }

    // ----- The timeline ----------------------------------------------------------------------------
    // What plays when over the next hours: the changes the service plans (`GET …/timeline`,
    // docs/SCHEDULES.md) drawn as a strip, a lane per banner with a bar wherever it is the one
    // shown, and the next few listed in words. Read again when the state's version moves, else
    // once a minute (a carousel that flips every few seconds plans thousands of changes in hours).

    const horizonMs = 6 * 3600 * 1000;
    const mostChanges = 2000;
    const timelineListed = 5;
    const stripWidth = 1000;
    const laneHeight = 14;
    let timelineRead = {version: null, at: 0};

    async function followTimeline(state) {
        if (state.version === timelineRead.version && Date.now() - timelineRead.at < 60000) return;
        timelineRead = {version: state.version, at: Date.now()};
        // Enough changes for the horizon at the quickest turn, bounded.
        const definition = editing.definition;
        const quickest = Math.max(1, Math.min(definition.interval,
            ...definition.banners.map((banner) => banner.duration ?? definition.interval)));
        const limit = Math.min(mostChanges, Math.ceil(horizonMs / 1000 / quickest) + 1);
        let response;
        try {
            response = await read(`${carouselPath(editing.name)}/timeline?limit=${limit}`);
        } catch {
            return; // the list says the service is unreachable
        }
        if (response.ok) showTimeline(state, (await response.json()).entries, limit);
    }

    function showTimeline(state, entries, limit) {
        const when = new Intl.DateTimeFormat(undefined, {
            timeZone: zone(), weekday: "short", hour: "2-digit", minute: "2-digit", second: "2-digit",
        });
        ui.timelineNext.replaceChildren(...entries.slice(0, timelineListed).map((entry) => {
            const item = document.createElement("li");
            item.dataset.banner = entry.banner ?? "";
            const time = document.createElement("time");
            time.dateTime = entry.at;
            time.textContent = when.format(new Date(entry.at));
            item.append(time, ` ${entry.banner ?? "nothing"} (${entry.index + 1} of ${entry.count})`);
            return item;
        }));
        const from = Date.now();
        const horizon = from + horizonMs;
        // Cut at the limit, the plan is unknown after its last change; else nothing changes after it.
        const known = entries.length === limit ? Date.parse(entries[entries.length - 1].at) : horizon;
        const segments = [{banner: state.banner?.id ?? null, at: new Date(from).toISOString()}, ...entries]
            .filter((segment) => Date.parse(segment.at) < Math.min(horizon, known));
        ui.timelineSpan.textContent = entries.length === 0
            ? "No change planned: the carousel is paused, has one banner, or a takeover holds it."
            : known < horizon
                ? `The next ${entries.length} changes, to ${when.format(new Date(known))} (${zone()}).`
                : `The next 6 hours (${zone()}): ${segments.length - 1} changes.`;
        ui.timelineStrip.replaceChildren(...strip(segments, from, horizon, Math.min(horizon, known)), scale(from, horizon));
    }

    /** The strip: a lane per banner of the carousel, named, a bar wherever it is the one shown. */
    function strip(segments, from, horizon, known) {
        const x = (instant) => ((Math.min(instant, horizon) - from) / (horizon - from)) * stripWidth;
        return editing.definition.banners.map(({id}) => {
            const row = document.createElement("div");
            row.className = "lane-row";
            row.dataset.banner = id;
            const label = document.createElement("span");
            label.className = "lane-label";
            label.textContent = id;
            const svg = svgElement("svg", {viewBox: `0 0 ${stripWidth} ${laneHeight}`, preserveAspectRatio: "none"});
            svg.append(svgElement("rect", {class: "lane", x: 0, y: 0, width: stripWidth, height: laneHeight}));
            segments.forEach((segment, position) => {
                if (segment.banner !== id) return;
                const start = Date.parse(segment.at);
                const end = position + 1 < segments.length ? Date.parse(segments[position + 1].at) : known;
                if (start >= horizon) return;
                svg.append(svgElement("rect", {
                    class: "shown", x: x(start), y: 0, width: Math.max(x(end) - x(start), 1), height: laneHeight,
                }));
            });
            row.append(label, svg);
            return row;
        });
    }

    /** Times under the strip: now and every two hours, in the carousel's time zone. */
    function scale(from, horizon) {
        const row = document.createElement("div");
        row.className = "lane-row scale";
        const times = document.createElement("div");
        times.className = "scale-times";
        const clock = new Intl.DateTimeFormat(undefined, {timeZone: zone(), hour: "2-digit", minute: "2-digit"});
        for (let instant = from; instant <= horizon; instant += 2 * 3600 * 1000) {
            const time = document.createElement("span");
            time.textContent = clock.format(new Date(instant));
            times.append(time);
        }
        row.append(document.createElement("span"), times);
        return row;
    }

    function svgElement(name, attributes) {
        const element = document.createElementNS("http://www.w3.org/2000/svg", name);
        for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
        return element;
    }

    // ----- Stats ---------------------------------------------------------------------------------
    // Plays, views and clicks (`GET …/stats`, docs/STATS.md: the admin role), read when asked for:
    // views per bucket as columns, and each banner's totals as a table whose cells carry bars.

    function statsPath() {
        return `${carouselPath(editing.name)}/stats?bucket=${ui.statsPeriod.value}`;
    }

    async function showStats() {
        ui.statsStatus.textContent = "Reading the stats…";
        const response = await send(ui.statsStatus, () => api("GET", statsPath()));
        if (!response) return;
        if (!response.ok) {
            ui.statsStatus.textContent = await problemDetail(response);
            return;
        }
        const report = await response.json();
        drawBuckets(report);
        fillBannerTotals(report);
        ui.statsResult.hidden = false;
        ui.statsStatus.textContent = "";
    }

    ui.statsShow.addEventListener("click", showStats);
    ui.statsPeriod.addEventListener("change", () => {
        if (!ui.statsResult.hidden) showStats();
    });

    /** Views per bucket over the period, all banners together. */
    function drawBuckets(report) {
        const buckets = new Map();
        for (const row of report.rows) buckets.set(row.start, (buckets.get(row.start) ?? 0) + row.views);
        const starts = [...buckets.keys()].sort();
        const highest = Math.max(1, ...buckets.values());
        const width = 20;
        const svg = svgElement("svg", {viewBox: `0 0 ${Math.max(starts.length, 1) * width} 100`, preserveAspectRatio: "none"});
        starts.forEach((start, position) => {
            const height = (buckets.get(start) / highest) * 100;
            svg.append(svgElement("rect", {
                class: "column", x: position * width + 2, y: 100 - height, width: width - 4, height,
            }));
        });
        ui.statsChart.replaceChildren(svg);
        const when = new Intl.DateTimeFormat(undefined, {
            timeZone: report.timeZone ?? "UTC", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
        });
        const total = [...buckets.values()].reduce((sum, views) => sum + views, 0);
        ui.statsCaption.textContent = `Views per ${report.bucket}, ${when.format(new Date(report.from))} to `
            + `${when.format(new Date(report.to))} (${report.timeZone ?? "UTC"}): ${total} in all, `
            + `${Math.max(0, ...buckets.values())} at most in one ${report.bucket}.`;
    }

    /** Each banner's totals over the period, with a bar against the highest in each column. */
    function fillBannerTotals(report) {
        const totals = new Map();
        for (const row of report.rows) {
            const sum = totals.get(row.banner) ?? {plays: 0, shownSeconds: 0, views: 0, clicks: 0};
            for (const key of Object.keys(sum)) sum[key] += row[key];
            totals.set(row.banner, sum);
        }
        for (const sum of totals.values()) sum.ctr = sum.views > 0 ? sum.clicks / sum.views : null;
        const columns = ["plays", "shownSeconds", "views", "clicks", "ctr"];
        const highest = Object.fromEntries(columns.map((column) =>
            [column, Math.max(0, ...[...totals.values()].map((sum) => sum[column] ?? 0))]));
        ui.statsRows.replaceChildren(...[...totals.entries()].map(([banner, sum]) => {
            const tr = document.createElement("tr");
            tr.dataset.banner = banner;
            const name = document.createElement("th");
            name.scope = "row";
            name.textContent = banner;
            tr.append(name, ...columns.map((column) => {
                const value = sum[column];
                const text = value === null ? "–"
                    : column === "ctr" ? `${(value * 100).toFixed(1)} %`
                    : column === "shownSeconds" ? Math.round(value).toLocaleString()
                    : value.toLocaleString();
                const td = cell(text, "number");
                td.dataset.value = value === null ? "" : String(value);
                const bar = svgElement("svg", {class: "bar", viewBox: "0 0 100 4", preserveAspectRatio: "none"});
                bar.append(svgElement("rect", {
                    x: 0, y: 0, height: 4, width: highest[column] > 0 ? ((value ?? 0) / highest[column]) * 100 : 0,
                }));
                td.append(bar);
                return td;
            }));
            return tr;
        }));
        if (totals.size === 0) ui.statsStatus.textContent = "Nothing was played, seen or clicked in this period.";
    }

    /** The same stats as CSV (the service's own), saved as a file. */
    ui.statsCsv.addEventListener("click", async () => {
        ui.statsStatus.textContent = "";
        const response = await send(ui.statsStatus, () => api("GET", statsPath(), {accept: "text/csv"}));
        if (!response) return;
        if (!response.ok) {
            ui.statsStatus.textContent = await problemDetail(response);
            return;
        }
        if (ui.statsDownload.href) URL.revokeObjectURL(ui.statsDownload.href);
        ui.statsDownload.href = URL.createObjectURL(await response.blob());
        ui.statsDownload.download = `${editing.name}-stats-by-${ui.statsPeriod.value}.csv`;
        ui.statsDownload.click();
        ui.statsStatus.textContent = `Downloaded ${ui.statsDownload.download}.`;
    });

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
            if (response.ok) {
                const state = await response.json();
                showTakeover(state);
                rotation = state.rotation;
                markRotation();
                await followTimeline(state);
            }
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
            ui.preview.src = "about:blank"; // its stream closed
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
