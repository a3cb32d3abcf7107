// The audit log (`GET /audit`, docs/AUDIT.md: the admin role): read when asked for, newest first,
// a page at a time, by carousel and actor; the same entries downloadable as the service's CSV.

import {cell, send, ui} from "./admin-ui.js";
import {api, problemDetail} from "./admin-api.js";

const when = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "medium"});
const pageSize = 50;
/** The `before` of the next page, null when there is none. */
let next = null;

function auditPath({before, limit = pageSize} = {}) {
    const query = new URLSearchParams({limit: String(limit)});
    for (const name of ["carousel", "actor"]) {
        const value = ui.auditForm.elements[name].value.trim();
        if (value !== "") query.set(name, value);
    }
    if (before) query.set("before", String(before));
    return `/audit?${query}`;
}

/** Reads a page: the first (`more` false) or the one after those shown. */
async function showAudit(more) {
    const response = await send(ui.auditStatus, () => api("GET", auditPath({before: more ? next : null})));
    if (!response) return;
    if (!response.ok) {
        ui.auditStatus.textContent = await problemDetail(response);
        return;
    }
    const page = await response.json();
    const rows = page.entries.map(row);
    if (more) ui.auditRows.append(...rows); else ui.auditRows.replaceChildren(...rows);
    next = page.next;
    ui.auditOlder.hidden = next === null;
    const shown = ui.auditRows.children.length;
    ui.auditTable.hidden = shown === 0;
    ui.auditStatus.textContent = shown === 0 ? "No entries." : `${shown} entries${next === null ? "" : " (more older ones)"}.`;
}

function row(entry) {
    const tr = document.createElement("tr");
    tr.dataset.seq = String(entry.seq);
    tr.append(
        cell(when.format(new Date(entry.at)), "when"), cell(entry.actor, "actor"), cell(entry.action, "action"),
        cell(entry.carousel ?? "", "carousel"), cell(entry.target ?? "", "target"),
        cell(entry.revision === null ? "" : String(entry.revision), "revision"),
        cell(entry.requestId ?? "", "request"));
    tr.title = entry.at;
    return tr;
}

ui.auditForm.addEventListener("submit", (event) => {
    event.preventDefault();
    showAudit(false);
});

ui.auditOlder.addEventListener("click", () => showAudit(true));

/** The newest 10,000 entries of the filter as the service's CSV, saved as a file. */
ui.auditCsv.addEventListener("click", async () => {
    ui.auditStatus.textContent = "";
    const response = await send(ui.auditStatus, () => api("GET", auditPath({limit: 10000}), {accept: "text/csv"}));
    if (!response) return;
    if (!response.ok) {
        ui.auditStatus.textContent = await problemDetail(response);
        return;
    }
    if (ui.auditDownload.href) URL.revokeObjectURL(ui.auditDownload.href);
    ui.auditDownload.href = URL.createObjectURL(await response.blob());
    ui.auditDownload.download = "audit.csv";
    ui.auditDownload.click();
    ui.auditStatus.textContent = `Downloaded ${ui.auditDownload.download}.`;
});
