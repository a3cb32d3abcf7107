// Named tokens (`/tokens`, docs/TOKENS.md: the admin role): listed when asked for, created with
// the secret shown once (the service keeps only its SHA-256), revoked once confirmed.

import {button, cell, clearErrors, confirmDeletion, send, showProblem, ui} from "./admin-ui.js";
import {api, problemDetail} from "./admin-api.js";

const when = new Intl.DateTimeFormat(undefined, {dateStyle: "medium", timeStyle: "short"});

export async function showTokens() {
    const response = await send(ui.tokensStatus, () => api("GET", "/tokens"));
    if (!response) return;
    if (!response.ok) {
        ui.tokensStatus.textContent = await problemDetail(response);
        return;
    }
    const {tokens} = await response.json();
    ui.tokensRows.replaceChildren(...tokens.map(row));
    ui.tokensTable.hidden = tokens.length === 0;
    ui.tokensStatus.textContent = tokens.length === 0 ? "No named tokens yet." : "";
}

function row(token) {
    const tr = document.createElement("tr");
    tr.dataset.token = token.name;
    const expires = token.expiresAt === null ? "never" : when.format(new Date(token.expiresAt));
    const actions = cell("", "actions");
    actions.append(button("Revoke", `Revoke ${token.name}`, () => revoke(token.name), "link-danger"));
    tr.append(
        cell(token.name, "name"), cell(token.role, "role"), cell(token.carousels?.join(", ") ?? "all", "carousels"),
        cell(token.expired ? `expired ${expires}` : expires, "expires"),
        cell(`${when.format(new Date(token.createdAt))} by ${token.createdBy}`, "created"), actions);
    return tr;
}

async function revoke(name) {
    const confirmed = await confirmDeletion(
        name, "Requests with its secret are refused from now on, on every replica. This cannot be undone.");
    if (!confirmed) return;
    const response = await send(ui.tokensStatus, () => api("DELETE", `/tokens/${encodeURIComponent(name)}`));
    if (!response) return;
    ui.tokensStatus.textContent = response.ok ? `${name} revoked.` : await problemDetail(response);
    if (ui.tokensSecret.querySelector(".token-name").textContent === name) ui.tokensSecret.hidden = true;
    await showTokens();
    if (response.ok) ui.tokensStatus.textContent = `${name} revoked.`;
}

ui.tokensForm.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(ui.tokensForm);
    const fields = ui.tokensForm.elements;
    const body = {name: fields.name.value.trim(), role: fields.role.value};
    const carousels = fields.carousels.value.split(/[\s,]+/).filter((name) => name !== "");
    if (carousels.length > 0) body.carousels = carousels;
    // datetime-local is the browser's local time; the service takes an instant.
    if (fields.expiresAt.value !== "") body.expiresAt = new Date(fields.expiresAt.value).toISOString();
    const response = await send(ui.tokensError, () => api("POST", "/tokens", {body}));
    if (!response) return;
    if (!response.ok) {
        showProblem(ui.tokensForm, ui.tokensError, await problemDetail(response));
        return;
    }
    const created = await response.json();
    ui.tokensSecret.querySelector(".token-name").textContent = created.name;
    ui.tokensSecretValue.textContent = created.secret;
    ui.tokensSecret.hidden = false;
    ui.tokensForm.reset();
    await showTokens();
    ui.tokensSecretCopy.focus();
});

ui.tokensSecretCopy.addEventListener("click", async () => {
    try {
        await navigator.clipboard.writeText(ui.tokensSecretValue.textContent);
        ui.tokensStatus.textContent = "The secret is copied.";
    } catch {
        // No clipboard (an http page other than localhost): the text is there to select.
        getSelection().selectAllChildren(ui.tokensSecretValue);
        ui.tokensStatus.textContent = "Select and copy the secret.";
    }
});

ui.tokensShow.addEventListener("click", showTokens);
