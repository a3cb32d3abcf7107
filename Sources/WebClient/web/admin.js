// The admin page at /admin (docs/ADMIN.md): the carousels over the admin API (docs/API.md), with
// the API's own messages shown beside the field they name. An ES module, as are its views, one
// file each (admin-*.js), loaded by the browser as they are: no build step. Modules import one way,
// from this entry down to admin-ui.js and admin-api.js: a view that must be told of another's
// change registers for it (`onShow`, `whenWritten`, `whenReplanned`) instead of importing it.

import {startRouting, onShow} from "./admin-router.js";
import {refresh} from "./admin-list.js";
import {closeEditor, openEditor} from "./admin-editor.js";
import {followState} from "./admin-takeover.js";
// Every view registers its handlers when loaded; stats is reached by nothing else.
import "./admin-stats.js";
// The Screens view keeps itself up to date.
import "./admin-screens.js";
// The media library: its view, and the dialog the banner form picks an image from.
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

// The carousel being edited is in the address (#/carousels/NAME): a reload or a shared link opens
// it again.
onShow("carousels", ({carousel}) => (carousel ? openEditor(carousel) : closeEditor()));
startRouting();

refresh();
setInterval(() => {
    refresh();
    followState();
}, refreshEveryMs);
