// Webhooks (`/webhooks`, docs/WEBHOOKS.md: the admin role): listed when asked for, created with a
// secret the page draws (crypto.getRandomValues) for the operator to give the receiver, deleted
// once confirmed. The service refuses a URL leading to a non-public address, naming the field.

import {button, cell, clearErrors, confirmDeletion, send, showProblem, ui} from "./admin-ui.js";
import {api, problemDetail} from "./admin-api.js";

const when = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "short"});

/** 32 random bytes in hexadecimal: what `openssl rand -hex 32` gives. */
export function drawnSecret() {
    const bytes = crypto.getRandomValues(new Uint8Array(32));
    return Array.from(bytes, (byte) => byte.toString(16).padStart(2, "0")).join("");
}

export async function showWebhooks() {
    const response = await send(ui.webhooksStatus, () => api("GET", "/webhooks"));
    if (!response) return;
    if (!response.ok) {
        ui.webhooksStatus.textContent = await problemDetail(response);
        return;
    }
    const {webhooks} = await response.json();
    ui.webhooksRows.replaceChildren(...webhooks.map(row));
    ui.webhooksTable.hidden = webhooks.length === 0;
    ui.webhooksStatus.textContent = webhooks.length === 0 ? "No webhooks yet." : "";
}

function row(webhook) {
    const tr = document.createElement("tr");
    tr.dataset.webhook = String(webhook.id);
    const actions = cell("", "actions");
    actions.append(button("Delete", `Delete webhook ${webhook.id}`, () => remove(webhook), "link-danger"));
    tr.append(
        cell(webhook.url, "url"), cell(webhook.events.join(", "), "events"),
        cell(`${when.format(new Date(webhook.createdAt))} by ${webhook.createdBy}`, "created"), actions);
    return tr;
}

async function remove(webhook) {
    const confirmed = await confirmDeletion(webhook.url, "It is told of no more events. This cannot be undone.");
    if (!confirmed) return;
    const response = await send(ui.webhooksStatus, () => api("DELETE", `/webhooks/${webhook.id}`));
    if (!response) return;
    const said = response.ok ? `The webhook to ${webhook.url} is deleted.` : await problemDetail(response);
    await showWebhooks();
    ui.webhooksStatus.textContent = said;
}

ui.webhooksForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(ui.webhooksForm);
    const fields = ui.webhooksForm.elements;
    const events = Array.from(ui.webhooksForm.querySelectorAll("input[name=events]:checked"), (box) => box.value);
    const body = {url: fields.url.value.trim(), events, secret: fields.secret.value};
    const response = await send(ui.webhooksError, () => api("POST", "/webhooks", {body}));
    if (!response) return;
    if (!response.ok) {
        showProblem(ui.webhooksForm, ui.webhooksError, await problemDetail(response));
        return;
    }
    const created = await response.json();
    ui.webhooksForm.reset();
    fields.secret.value = drawnSecret();
    await showWebhooks();
    ui.webhooksStatus.textContent = `Webhook ${created.id} to ${created.url} created. Its receiver checks each `
        + "delivery's signature with the secret you gave it.";
});

ui.webhooksForm.elements.secret.value = drawnSecret();
ui.webhooksShow.addEventListener("click", showWebhooks);
