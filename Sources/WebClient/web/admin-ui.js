// The admin page's elements, the state of what is being edited, and the small helpers every view
// uses to build and report (docs/ADMIN.md).

export const session = {
    editing: null, // {name, etag, definition}
    editingBanner: null, // the id of the banner in the banner form, or null when adding
    rotation: null, // the ids in rotation now, from the carousel's state
    timelineRead: {version: null, at: 0},
    pendingRead: null, // the state's version when the pending changes were last read
};

export const ui = {
    access: document.getElementById("access"),
    listStatus: document.getElementById("list-status"),
    rows: document.querySelector("#carousels tbody"),
    listPages: document.getElementById("list-pages"),
    listPrevious: document.getElementById("list-previous"),
    listNext: document.getElementById("list-next"),
    listPage: document.getElementById("list-page"),
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
    instantPreview: document.getElementById("instant-preview"),
    instantAudiences: document.getElementById("instant-audiences"),
    instantResult: document.getElementById("instant-result"),
    statsPeriod: document.getElementById("stats-period"),
    statsAudience: document.getElementById("stats-audience"),
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
    pendingAt: document.getElementById("pending-at"),
    pendingStatus: document.getElementById("pending-status"),
    pendingList: document.getElementById("pending-list"),
    historyBox: document.getElementById("history-box"),
    historyShow: document.getElementById("history-show"),
    historyStatus: document.getElementById("history-status"),
    historyError: document.getElementById("history-error"),
    historyList: document.getElementById("history-list"),
    auditForm: document.getElementById("audit-form"),
    auditCsv: document.getElementById("audit-csv"),
    auditStatus: document.getElementById("audit-status"),
    auditTable: document.getElementById("audit"),
    auditRows: document.querySelector("#audit tbody"),
    auditOlder: document.getElementById("audit-older"),
    auditDownload: document.getElementById("audit-download"),
    tokensShow: document.getElementById("tokens-show"),
    tokensStatus: document.getElementById("tokens-status"),
    tokensTable: document.getElementById("tokens"),
    tokensRows: document.querySelector("#tokens tbody"),
    tokensSecret: document.getElementById("tokens-secret"),
    tokensSecretValue: document.getElementById("tokens-secret-value"),
    tokensSecretCopy: document.getElementById("tokens-secret-copy"),
    tokensForm: document.getElementById("tokens-form"),
    tokensError: document.getElementById("tokens-error"),
    webhooksShow: document.getElementById("webhooks-show"),
    webhooksStatus: document.getElementById("webhooks-status"),
    webhooksTable: document.getElementById("webhooks"),
    webhooksRows: document.querySelector("#webhooks tbody"),
    webhooksForm: document.getElementById("webhooks-form"),
    webhooksError: document.getElementById("webhooks-error"),
    mediaOpen: document.getElementById("media-open"),
    mediaDialog: document.getElementById("media-dialog"),
};

export function badge(text, kind) {
    const element = document.createElement("span");
    element.className = `badge ${kind}`;
    element.textContent = text;
    return element;
}

export function cell(text, className) {
    const td = document.createElement("td");
    td.className = className;
    td.textContent = text;
    return td;
}

/** `request()`, or null with the error said in `errorElement` when the service is unreachable. */
export async function send(errorElement, request) {
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
export function showProblem(form, fallback, detail) {
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

export function clearErrors(form) {
    for (const error of form.querySelectorAll(".error")) {
        error.textContent = "";
        error.hidden = true;
    }
    for (const input of form.querySelectorAll("[aria-invalid]")) input.removeAttribute("aria-invalid");
}

/** Asks before deleting `subject`; resolves to whether the user chose to. Keeping is the default. */
export function confirmDeletion(subject, consequence) {
    ui.confirmDelete.querySelector(".subject").textContent = subject;
    ui.confirmDelete.querySelector(".consequence").textContent = consequence;
    ui.confirmDelete.returnValue = "";
    ui.confirmDelete.showModal();
    return new Promise((resolve) => ui.confirmDelete.addEventListener(
        "close", () => resolve(ui.confirmDelete.returnValue === "delete"), {once: true}));
}

export function button(label, name, action, className = "secondary") {
    const element = document.createElement("button");
    element.type = "button";
    element.className = className;
    element.textContent = label;
    element.setAttribute("aria-label", name);
    if (action) element.addEventListener("click", action);
    else element.disabled = true;
    return element;
}

export function svgElement(name, attributes) {
    const element = document.createElementNS("http://www.w3.org/2000/svg", name);
    for (const [key, value] of Object.entries(attributes)) element.setAttribute(key, String(value));
    return element;
}
