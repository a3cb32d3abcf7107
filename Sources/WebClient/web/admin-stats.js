// Stats: plays, views and clicks (`GET …/stats`, docs/STATS.md: the admin role), read when asked
// for: views per bucket as columns, and each banner's totals as a table whose cells carry bars.

import {cell, send, session, svgElement, ui} from "./admin-ui.js";
import {api, carouselPath, problemDetail} from "./admin-api.js";

export function statsPath() {
    const audience = ui.statsAudience.value;
    return `${carouselPath(session.editing.name)}/stats?bucket=${ui.statsPeriod.value}`
        + (audience ? `&audience=${encodeURIComponent(audience)}` : "");
}

export async function showStats() {
    ui.statsStatus.textContent = "Reading the stats…";
    const response = await send(ui.statsStatus, () => api("GET", statsPath()));
    if (!response) return;
    if (!response.ok) {
        ui.statsStatus.textContent = await problemDetail(response);
        return;
    }
    const report = await response.json();
    drawBuckets(report);
    fillBannerTotals(report);
    ui.statsResult.hidden = false;
    ui.statsStatus.textContent = "";
}

ui.statsShow.addEventListener("click", showStats);
for (const control of [ui.statsPeriod, ui.statsAudience]) {
    control.addEventListener("change", () => {
        if (!ui.statsResult.hidden) showStats();
    });
}

/** Views per bucket over the period, all banners together. */
export function drawBuckets(report) {
    const buckets = new Map();
    for (const row of report.rows) buckets.set(row.start, (buckets.get(row.start) ?? 0) + row.views);
    const starts = [...buckets.keys()].sort();
    const highest = Math.max(1, ...buckets.values());
    const width = 20;
    const svg = svgElement("svg", {viewBox: `0 0 ${Math.max(starts.length, 1) * width} 100`, preserveAspectRatio: "none"});
    starts.forEach((start, position) => {
        const height = (buckets.get(start) / highest) * 100;
        svg.append(svgElement("rect", {
            class: "column", x: position * width + 2, y: 100 - height, width: width - 4, height,
        }));
    });
    ui.statsChart.replaceChildren(svg);
    const when = new Intl.DateTimeFormat(undefined, {
        timeZone: report.timeZone ?? "UTC", month: "short", day: "numeric", hour: "2-digit", minute: "2-digit",
    });
    const total = [...buckets.values()].reduce((sum, views) => sum + views, 0);
    ui.statsCaption.textContent = `Views per ${report.bucket}, ${when.format(new Date(report.from))} to `
        + `${when.format(new Date(report.to))} (${report.timeZone ?? "UTC"}): ${total} in all, `
        + `${Math.max(0, ...buckets.values())} at most in one ${report.bucket}.`;
}

/** Each banner's totals over the period, with a bar against the highest in each column. */
export function fillBannerTotals(report) {
    const totals = new Map();
    for (const row of report.rows) {
        const sum = totals.get(row.banner) ?? {plays: 0, shownSeconds: 0, views: 0, clicks: 0};
        for (const key of Object.keys(sum)) sum[key] += row[key];
        totals.set(row.banner, sum);
    }
    for (const sum of totals.values()) sum.ctr = sum.views > 0 ? sum.clicks / sum.views : null;
    const columns = ["plays", "shownSeconds", "views", "clicks", "ctr"];
    const highest = Object.fromEntries(columns.map((column) =>
        [column, Math.max(0, ...[...totals.values()].map((sum) => sum[column] ?? 0))]));
    ui.statsRows.replaceChildren(...[...totals.entries()].map(([banner, sum]) => {
        const tr = document.createElement("tr");
        tr.dataset.banner = banner;
        const name = document.createElement("th");
        name.scope = "row";
        name.textContent = banner;
        tr.append(name, ...columns.map((column) => {
            const value = sum[column];
            const text = value === null ? "–"
                : column === "ctr" ? `${(value * 100).toFixed(1)} %`
                : column === "shownSeconds" ? Math.round(value).toLocaleString()
                : value.toLocaleString();
            const td = cell(text, "number");
            td.dataset.value = value === null ? "" : String(value);
            const bar = svgElement("svg", {class: "bar", viewBox: "0 0 100 4", preserveAspectRatio: "none"});
            bar.append(svgElement("rect", {
                x: 0, y: 0, height: 4, width: highest[column] > 0 ? ((value ?? 0) / highest[column]) * 100 : 0,
            }));
            td.append(bar);
            return td;
        }));
        return tr;
    }));
    if (totals.size === 0) ui.statsStatus.textContent = "Nothing was played, seen or clicked in this period.";
}

/** The same stats as CSV (the service's own), saved as a file. */
ui.statsCsv.addEventListener("click", async () => {
    ui.statsStatus.textContent = "";
    const response = await send(ui.statsStatus, () => api("GET", statsPath(), {accept: "text/csv"}));
    if (!response) return;
    if (!response.ok) {
        ui.statsStatus.textContent = await problemDetail(response);
        return;
    }
    if (ui.statsDownload.href) URL.revokeObjectURL(ui.statsDownload.href);
    ui.statsDownload.href = URL.createObjectURL(await response.blob());
    const audience = ui.statsAudience.value ? `-of-${ui.statsAudience.value}` : "";
    ui.statsDownload.download = `${session.editing.name}-stats${audience}-by-${ui.statsPeriod.value}.csv`;
    ui.statsDownload.click();
    ui.statsStatus.textContent = `Downloaded ${ui.statsDownload.download}.`;
});
