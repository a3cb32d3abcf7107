// A banner's schedule. Entered in the carousel's time zone (docs/SCHEDULES.md); the API takes
// instants (RFC 3339) and writes them back in UTC, so the page converts both ways with the
// browser's zone data.

import {button, session, ui} from "./admin-ui.js";

export const weekDays = [["mon", "Monday"], ["tue", "Tuesday"], ["wed", "Wednesday"], ["thu", "Thursday"],
    ["fri", "Friday"], ["sat", "Saturday"], ["sun", "Sunday"]];

export function zone() {
    return session.editing?.definition.timeZone ?? "UTC";
}

/** The wall clock of `instant` (milliseconds) in `timeZone`: year, month, day, hour, minute, second. */
export function wallClock(instant, timeZone) {
    const format = new Intl.DateTimeFormat("en-US", {
        timeZone, hourCycle: "h23", year: "numeric", month: "2-digit", day: "2-digit",
        hour: "2-digit", minute: "2-digit", second: "2-digit",
    });
    return Object.fromEntries(format.formatToParts(new Date(instant)).map((part) => [part.type, part.value]));
}

/** How far `timeZone`'s clocks are ahead of UTC at `instant`, in milliseconds. */
export function zoneOffset(instant, timeZone) {
    const wall = wallClock(instant, timeZone);
    return Date.UTC(+wall.year, +wall.month - 1, +wall.day, +wall.hour, +wall.minute, +wall.second)
        - Math.floor(instant / 1000) * 1000;
}

/** A datetime-local value (`2026-12-24T08:00`) read in `timeZone`, as an RFC 3339 instant. */
export function instantOf(local, timeZone) {
    const [date, time] = local.split("T");
    const [year, month, day] = date.split("-").map(Number);
    const [hour, minute, second = 0] = time.split(":").map(Number);
    const asUTC = Date.UTC(year, month - 1, day, hour, minute, second);
    // The offset at the instant found, which differs from the first guess's near a change of offset.
    const guess = asUTC - zoneOffset(asUTC, timeZone);
    return new Date(asUTC - zoneOffset(guess, timeZone)).toISOString();
}

/** An RFC 3339 instant as a datetime-local value in `timeZone`. */
export function localOf(instant, timeZone) {
    const wall = wallClock(Date.parse(instant), timeZone);
    return `${wall.year}-${wall.month}-${wall.day}T${wall.hour}:${wall.minute}`;
}

/** One time window's row: its days, from, to, and a button that removes it. */
export function addWindow(window = {from: "09:00", to: "17:00"}) {
    const item = document.createElement("li");
    item.className = "window";
    const group = document.createElement("fieldset");
    const legend = document.createElement("legend");
    legend.className = "visually-hidden";
    const days = document.createElement("div");
    days.className = "days";
    for (const [value, name] of weekDays) {
        const label = document.createElement("label");
        const box = document.createElement("input");
        box.type = "checkbox";
        box.value = value;
        box.checked = (window.days ?? []).includes(value);
        box.setAttribute("aria-label", name);
        label.append(box, name.slice(0, 3));
        days.append(label);
    }
    const times = document.createElement("div");
    times.className = "times";
    // A time field cannot say 24:00; 00:00 as the end is the same window (it runs to midnight).
    times.append(timeField("From", "from", window.from), timeField("To", "to", window.to === "24:00" ? "00:00" : window.to));
    const remove = button("Remove", "", () => {
        item.remove();
        numberWindows();
        ui.windowAdd.focus();
    }, "link-danger");
    group.append(legend, days, times, remove);
    item.append(group);
    ui.windows.append(item);
    numberWindows();
    return item;
}

export function timeField(text, className, value) {
    const label = document.createElement("label");
    const input = document.createElement("input");
    input.type = "time";
    input.className = className;
    input.value = value ?? "";
    label.append(text, input);
    return label;
}

/** Each row's name for assistive technology: "Time window 2", "Remove time window 2". */
export function numberWindows() {
    Array.from(ui.windows.children).forEach((item, index) => {
        item.querySelector("legend").textContent = `Time window ${index + 1}`;
        item.querySelector("button").setAttribute("aria-label", `Remove time window ${index + 1}`);
    });
}

ui.windowAdd.addEventListener("click", () => addWindow().querySelector("input").focus());

/** The schedule in the form, as the API takes it: null for what is not set (it removes it from a banner). */
export function typedSchedule() {
    const fields = ui.bannerForm.elements;
    const windows = Array.from(ui.windows.children, (item) => {
        const days = Array.from(item.querySelectorAll(".days input:checked"), (box) => box.value);
        const window = {from: item.querySelector("input.from").value, to: item.querySelector("input.to").value};
        return days.length > 0 ? {days, ...window} : window;
    });
    return {
        startsAt: fields.startsAt.value === "" ? null : instantOf(fields.startsAt.value, zone()),
        endsAt: fields.endsAt.value === "" ? null : instantOf(fields.endsAt.value, zone()),
        windows: windows.length === 0 ? null : windows,
    };
}

/** A banner's schedule in a line, in the carousel's time zone; empty when it has none. */
export function scheduleSummary(banner) {
    const parts = [];
    if (banner.startsAt) parts.push(`from ${localOf(banner.startsAt, zone()).replace("T", " ")}`);
    if (banner.endsAt) parts.push(`until ${localOf(banner.endsAt, zone()).replace("T", " ")}`);
    for (const window of banner.windows ?? []) {
        const days = window.days ? window.days.join(" ") : "every day";
        parts.push(`${days} ${window.from}–${window.to}`);
    }
    return parts.join("; ");
}
