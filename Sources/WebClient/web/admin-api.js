// Talking to the API (docs/API.md): reads without a token, writes with this tab's admin token.

import {ui} from "./admin-ui.js";

export const tokenKey = "banner-carousel-admin-token";

export function carouselPath(name) {
    return `/carousels/${encodeURIComponent(name)}`;
}

/** A read: no token needed, never from the browser's cache. */
export function read(path) {
    return fetch(path, {headers: {Accept: "application/json"}, cache: "no-store"});
}

/**
 * What the user typed in a number field, as a number when it is one, else as typed (an empty
 * field too): the service says what is wrong with it, beside the field.
 */
export function typedNumber(text) {
    return text === "" || Number.isNaN(Number(text)) ? text : Number(text);
}

/**
 * `fetch` with the admin token of this tab (sessionStorage: it goes when the tab does). A 401
 * asks for the token and tries again once it is given; a wrong one is said to be wrong.
 */
export async function api(method, path, {body, ifMatch, accept = "application/json"} = {}) {
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

export function askForToken(message) {
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
export async function problemDetail(response) {
    try {
        const problem = await response.json();
        if (problem && typeof problem.detail === "string") return problem.detail;
    } catch {
        // not JSON: said below
    }
    return `The service answered ${response.status} ${response.statusText}.`;
}

export function showAccess(text) {
    ui.access.textContent = text;
    ui.access.hidden = false;
}
