// The timeline: what plays when over the next hours, the changes the service plans (`GET
// …/timeline`, docs/SCHEDULES.md) drawn as a strip, a lane per banner with a bar wherever it is
// the one shown and a mark where a scheduled change is made, and the next few listed in words.
// Read again when the state's version moves, else once a minute (a carousel that flips every few
// seconds plans thousands of changes in hours).

import {clearErrors, session, showProblem, svgElement, ui} from "./admin-ui.js";
import {carouselPath, problemDetail, read} from "./admin-api.js";
import {instantOf, zone} from "./admin-schedule.js";

export const horizonMs = 6 * 3600 * 1000;
export const mostChanges = 2000;
export const timelineListed = 5;
export const stripWidth = 1000;
export const laneHeight = 14;

export async function followTimeline(state) {
    if (state.version === session.timelineRead.version && Date.now() - session.timelineRead.at < 60000) return;
    session.timelineRead = {version: state.version, at: Date.now()};
    // Enough changes for the horizon at the quickest turn, bounded.
    const definition = session.editing.definition;
    const quickest = Math.max(1, Math.min(definition.interval,
        ...definition.banners.map((banner) => banner.duration ?? definition.interval)));
    const limit = Math.min(mostChanges, Math.ceil(horizonMs / 1000 / quickest) + 1);
    let response;
    try {
        response = await read(`${carouselPath(session.editing.name)}/timeline?limit=${limit}`);
    } catch {
        return; // the list says the service is unreachable
    }
    if (response.ok) showTimeline(state, (await response.json()).entries, limit);
}

export function showTimeline(state, entries, limit) {
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
        if (entry.change) {
            item.dataset.change = String(entry.change);
            item.append(`, after scheduled change ${entry.change}`);
        }
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

/**
 * The strip: a lane per banner of the carousel, named, a bar wherever it is the one shown; then
 * one per banner shown that the carousel does not have now (a scheduled change adds it, or a
 * takeover shows it).
 */
export function strip(segments, from, horizon, known) {
    const x = (instant) => ((Math.min(instant, horizon) - from) / (horizon - from)) * stripWidth;
    const ids = session.editing.definition.banners.map(({id}) => id);
    for (const {banner} of segments) if (banner !== null && !ids.includes(banner)) ids.push(banner);
    return ids.map((id) => {
        const row = document.createElement("div");
        row.className = "lane-row";
        row.dataset.banner = id;
        const label = document.createElement("span");
        label.className = "lane-label";
        label.textContent = id;
        const svg = svgElement("svg", {viewBox: `0 0 ${stripWidth} ${laneHeight}`, preserveAspectRatio: "none"});
        svg.append(svgElement("rect", {class: "lane", x: 0, y: 0, width: stripWidth, height: laneHeight}));
        // A scheduled change (docs/SCHEDULED.md): a mark across every lane at its time.
        for (const segment of segments) {
            if (!segment.change || Date.parse(segment.at) >= horizon) continue;
            const at = x(Date.parse(segment.at));
            svg.append(svgElement("line", {class: "change-mark", x1: at, x2: at, y1: 0, y2: laneHeight}));
        }
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
export function scale(from, horizon) {
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

// The preview of an instant (docs/AUDIENCES.md): what a screen of an audience will show then if no
// command intervenes (`GET …/preview?at=&audience=`), the scheduled changes made on the way.
ui.instantPreview.addEventListener("submit", async (event) => {
    event.preventDefault();
    clearErrors(ui.instantPreview);
    ui.instantResult.replaceChildren();
    const fields = ui.instantPreview.elements;
    if (!fields.at.value) {
        showProblem(ui.instantPreview, ui.instantResult, "at: choose the instant to preview");
        return;
    }
    const audience = fields.audience.value.trim();
    const query = `at=${encodeURIComponent(instantOf(fields.at.value, zone()))}`
        + (audience ? `&audience=${encodeURIComponent(audience)}` : "");
    let response;
    try {
        response = await read(`${carouselPath(session.editing.name)}/preview?${query}`);
    } catch {
        ui.instantResult.textContent = "The service cannot be reached.";
        return;
    }
    if (!response.ok) {
        showProblem(ui.instantPreview, ui.instantResult, await problemDetail(response));
        return;
    }
    const state = await response.json();
    const who = audience ? `A screen of ${audience}` : "A screen of no audience";
    if (!state.banner) {
        ui.instantResult.textContent = `${who} will show nothing then: no banner of its is on.`;
        return;
    }
    const thumbnail = Object.assign(document.createElement("img"), {className: "thumbnail", alt: "", src: state.banner.image});
    const text = document.createElement("span");
    text.dataset.banner = state.banner.id;
    text.textContent = state.takeover
        ? `${who} will show ${state.banner.id} (a takeover).`
        : `${who} will show ${state.banner.id}${state.banner.caption ? ` “${state.banner.caption}”` : ""}`
            + ` (${state.index + 1} of ${state.count}).`;
    ui.instantResult.append(thumbnail, text);
});
