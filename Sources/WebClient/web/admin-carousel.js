// Writes to the carousel being edited. Each sends the definition's ETag (If-Match): a carousel
// someone else changed meanwhile answers 412, and the page says so, keeping what the user typed.
// After a write the editor reads the carousel again (`whenWritten`, registered by the editor, which
// imports the views that write: they import this module, not the editor).

import {send, session, showProblem, ui} from "./admin-ui.js";
import {api, problemDetail} from "./admin-api.js";
import {atPath, replan, scheduledAt, scheduledNote} from "./admin-pending.js";

let reload = async () => {};

/**
 * What to do once a write went through: `keepTyped` says whether the forms keep what was typed
 * (a restore gives the settings as restored instead).
 */
export function whenWritten(action) {
    reload = action;
}

/** A write to the carousel being edited, with its ETag; the carousel read again after it. */
export async function write(errorElement, form, method, path, body,
                            {saved = null, schedulable = true, keepTyped = true} = {}) {
    ui.editorStatus.textContent = "";
    // With "Make changes at" filled in, the write is kept and made then (docs/SCHEDULED.md), on the
    // carousel as it is then: without If-Match, or a second change scheduled would be dropped
    // because the first moved the revision.
    const at = schedulable ? scheduledAt() : null;
    const target = at ? atPath(path, at) : path;
    const ifMatch = at ? undefined : session.editing.etag;
    const response = await send(errorElement, () => api(method, target, {body, ifMatch}));
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
    if (response.status === 202) {
        const note = scheduledNote(await response.json());
        await replan();
        ui.editorStatus.textContent = note;
        return true;
    }
    await reload({keepTyped});
    if (saved) ui.editorStatus.textContent = saved;
    return true;
}
