// Webhooks (`/webhooks`, docs/WEBHOOKS.md: the admin role): listed when asked for, each with its
// last deliveries (`/webhooks/{id}/deliveries`: delivered, waiting for its next attempt and why,
// or given up), created with a secret the page draws (crypto.getRandomValues) for the operator to
// give the receiver, deleted once confirmed. The service refuses a URL leading to a non-public
// address, naming the field.

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
    const rows = webhooks.map(row);
    ui.webhooksRows.replaceChildren(...rows);
    ui.webhooksTable.hidden = webhooks.length === 0;
    ui.webhooksStatus.textContent = webhooks.length === 0 ? "No webhooks yet." : "";
    await Promise.all(webhooks.map((webhook, index) => showDeliveries(webhook, rows[index])));
}

/** The webhook's last five deliveries, in its row. */
async function showDeliveries(webhook, tr) {
    const place = tr.querySelector(".deliveries");
    const response = await api("GET", `/webhooks/${webhook.id}/deliveries?limit=5`).catch(() => null);
    if (!response?.ok) {
        place.textContent = response ? await problemDetail(response) : "The service cannot be reached.";
        return;
    }
    const {deliveries} = await response.json();
    if (deliveries.length === 0) {
        place.textContent = "None yet.";
        return;
    }
    const list = document.createElement("ul");
    list.append(...deliveries.map((delivery) => {
        const item = document.createElement("li");
        item.dataset.state = delivery.state;
        item.textContent = deliverySummary(delivery);
        return item;
    }));
    place.replaceChildren(list);
}

/** "delivered · carousel.changed · 5 Dec 2026, 21:35 · HTTP 204", or why not and what next. */
export function deliverySummary(delivery) {
    const last = delivery.lastAttempt;
    const why = last ? (last.error ?? `HTTP ${last.status}`) : "";
    const parts = [delivery.state, delivery.type, when.format(new Date(delivery.at))];
    if (delivery.state === "delivered") {
        parts.push(`HTTP ${last.status}`);
    } else if (delivery.state === "failed") {
        parts.push(`given up after ${delivery.attempts} attempts: ${why}`);
    } else if (last) {
        parts.push(`attempt ${delivery.attempts} failed: ${why}; next ${when.format(new Date(delivery.nextAttemptAt))}`);
    } else {
        parts.push("sending");
    }
    return parts.join(" · ");
}

function row(webhook) {
    const tr = document.createElement("tr");
    tr.dataset.webhook = String(webhook.id);
    const actions = cell("", "actions");
    actions.append(button("Delete", `Delete webhook ${webhook.id}`, () => remove(webhook), "link-danger"));
    tr.append(
        cell(webhook.url, "url"), cell(webhook.events.join(", "), "events"),
        cell(`${when.format(new Date(webhook.createdAt))} by ${webhook.createdBy}`, "created"),
        cell("…", "deliveries"), actions);
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
