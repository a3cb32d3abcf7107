// The admin page at /admin (docs/ADMIN.md): the carousels over the admin API (docs/API.md), with
// the API's own messages shown beside the field they name. An ES module, as are its views, one
// file each (admin-*.js), loaded by the browser as they are: no build step.

import {session, ui} from "./admin-ui.js";
import {refresh} from "./admin-list.js";
import {openEditor} from "./admin-editor.js";
import {followState} from "./admin-takeover.js";
// Every view registers its handlers when loaded; stats is reached by nothing else.
import "./admin-stats.js";
// The Screens view keeps itself up to date.
import "./admin-screens.js";
// The media library's dialog, opened from the banner form.
import "./admin-media.js";
// The carousel's history, shown when asked for.
import "./admin-history.js";
// Named tokens, listed when asked for.
import "./admin-tokens.js";
// Webhooks, listed when asked for.
import "./admin-webhooks.js";
// The audit log, read when asked for.
import "./admin-audit.js";

const refreshEveryMs = 10000;

// The carousel being edited is in the address (#carousel=NAME): a reload or a shared link
// opens it again.
function followAddress() {
    const name = new URLSearchParams(location.hash.slice(1)).get("carousel");
    if (name) {
        openEditor(name);
    } else {
        session.editing = null;
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
