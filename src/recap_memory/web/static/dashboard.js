// The dashboard: the tenant's totals, each pass's context before → after, the tokens saved
// over time, and a table of the latest passes (the charts' figures, readable on any screen).

import { api } from "./api.js";
import { drawChart } from "./chart.js";
import { el, number, short, when } from "./format.js";

const TABLE_ROWS = 10;
let last = null;  // what was drawn, to redraw at a new width

/** Load /stats and the pass history and draw them; ``open(id)`` opens a pass's session. */
export async function loadDashboard(open) {
  const [stats, passes] = await Promise.all([api("/stats"), api("/stats/compactions?limit=60")]);
  for (const [key, value] of Object.entries(stats.summary)) {
    const cell = document.getElementById(`stat-${key}`);
    if (cell) cell.textContent = number(value);
  }
  last = { passes, open };
  draw();
}

/** Draw the charts again (the window's width changed). */
export function redraw() {
  if (last && !document.getElementById("dashboard").hidden) draw();
}

const sessionName = (p) => p.title || (p.session ? `Session ${p.session.slice(0, 8)}` : "Stateless request (proxy)");
/** How the x axis names a pass: its time when all passes fall on one day, else its date. */
function timeLabels(passes) {
  const sameDay = new Date(passes[0].at).toDateString() === new Date(passes[passes.length - 1].at).toDateString();
  const format = sameDay ? { hour: "2-digit", minute: "2-digit" } : { day: "numeric", month: "short" };
  return (p) => new Date(p.at).toLocaleString("en-GB", format);
}
const pick = (open) => (p) => { if (p.session) open(p.session); };

function draw() {
  const { passes, open } = last;
  const empty = !passes.length;
  for (const id of ["passes-figure", "saved-figure", "passes-table"]) document.getElementById(id).hidden = empty;
  document.getElementById("no-passes").hidden = !empty;
  if (empty) return;
  const xLabel = timeLabels(passes);
  drawChart(document.getElementById("compaction-chart"), document.getElementById("passes-tip"), {
    items: passes,
    yTitle: "chars in context",
    xTitle: `${passes.length} ${passes.length === 1 ? "pass" : "passes"}, oldest → newest`,
    yFormat: short,
    xLabel,
    tip: (p) => [sessionName(p), when(p.at), `${number(p.chars_before)} → ${number(p.chars_after)} chars (−${Math.round(100 * (1 - p.chars_after / Math.max(p.chars_before, 1)))}%)`, `${number(p.messages_removed)} messages folded · ${p.path}`],
    pick: pick(open),
    series: [
      { kind: "bar", className: "before", value: (p) => p.chars_before, label: "before the pass" },
      { kind: "bar", className: "after", value: (p) => p.chars_after, label: "after the pass" },
    ],
  });
  drawChart(document.getElementById("saved-chart"), document.getElementById("saved-tip"), {
    items: passes,
    yTitle: "tokens saved (est.)",
    xTitle: "running total after each pass, oldest → newest",
    yFormat: short,
    xLabel,
    tip: (p) => [`${number(p.tokens_saved_total)} tokens saved so far`, when(p.at), `+${number(p.tokens_saved)} by this pass of ${sessionName(p)}`],
    pick: pick(open),
    series: [{ kind: "line", className: "saved", value: (p) => p.tokens_saved_total, label: "tokens saved" }],
  });
  const rows = passes.slice(-TABLE_ROWS).reverse().map((p) => el("tr", {},
    el("td", {}, el("time", { datetime: p.at, text: when(p.at) })),
    el("td", {}, p.session ? el("button", { type: "button", className: "link", text: sessionName(p), onclick: () => open(p.session) }) : sessionName(p)),
    el("td", { className: "num", text: `${number(p.chars_before)} → ${number(p.chars_after)}` }),
    el("td", { className: "num", text: number(p.tokens_saved) })));
  document.querySelector("#passes-table tbody").replaceChildren(...rows);
}
