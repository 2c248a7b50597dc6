// The Session Memory panel: a gauge of the next context against the trigger (and the hard
// cap), the summary chain as collapsible rows, and a preview of what the model will read.

import { el, number, sized } from "./format.js";
import { rangeLabel, rowSizes, summaryText, textOf } from "./record.js";

const UNITS = ["chars", "tokens", "messages"];
const SIZE_OF = { chars: (c) => c.chars, tokens: (c) => c.tokens, messages: (c) => c.message_count };

/** The unit and value of the first limit set in ``limits`` ({chars: 8000} → ["chars", 8000]). */
function firstLimit(limits) {
  const unit = UNITS.find((u) => limits && limits[u]);
  return unit ? [unit, limits[unit]] : [null, null];
}

/** The gauge: how full the next context is against the trigger, with the hard cap marked. */
export function gauge(context, config) {
  const [unit, trigger] = firstLimit(config && config.threshold);
  const [capUnit, cap] = firstLimit(config && config.max);
  const measure = unit || capUnit || "chars";
  const value = SIZE_OF[measure](context);
  const capInUnit = capUnit === measure ? cap : null;
  const scale = Math.max(value, trigger || 0, capInUnit || 0, 1);
  const share = trigger ? value / trigger : null;
  const level = share === null ? "ok" : share >= 1 ? "over" : share >= 0.8 ? "near" : "ok";
  const state = context.due ? "compaction is due"
    : trigger ? `${Math.round(share * 100)}% of the trigger` : "no trigger set";
  const text = `${sized(value, measure)}${trigger ? ` of ${number(trigger)}` : ""}: ${state}`;
  const bar = el("div", {
    className: `gauge ${level}`, role: "meter", "aria-label": "Next context against the trigger",
    "aria-valuemin": 0, "aria-valuemax": trigger || scale, "aria-valuenow": value, "aria-valuetext": text,
  }, el("span", { className: "fill", style: `width: ${(100 * value) / scale}%` }));
  const track = el("div", { className: "gauge-track" }, bar);
  const marks = el("p", { className: "marks" });
  for (const [kind, at, label] of [["trigger", trigger, `compacts at ${number(trigger)}`], ["cap", capInUnit, `hard cap ${number(capInUnit)}`]]) {
    if (!at) continue;
    track.append(el("span", { className: `mark ${kind}`, style: `left: calc(${(100 * at) / scale}% - 1px)`, "aria-hidden": "true" }));
    marks.append(el("span", { className: `mark-label ${kind}`, text: label }));
  }
  const notes = [`${sized(context.tokens, "tokens")} · ${sized(context.message_count, "messages")}`];
  if (cap && capUnit !== measure) notes.push(`hard cap ${sized(cap, capUnit)}`);
  return el("div", { className: "gauge-box" },
    el("p", { className: "gauge-label" }, el("strong", { text: "Next context: " }), text),
    track, marks, el("p", { className: "note", text: notes.join(" · ") }));
}

/** The chain: one collapsible row per summary (its range and sizes), or a line saying none yet. */
export function chainRows(summaries, positions, config) {
  if (!summaries.length) {
    const [unit, trigger] = firstLimit(config && config.threshold);
    const when = trigger ? ` once the next context passes ${sized(trigger, unit)}` : "";
    return [el("p", { className: "empty", text: `No summaries yet: the oldest messages are folded into the first one${when}.` })];
  }
  return summaries.map((row, i) => el("details", { className: "chain-row", "data-range": row.episode_range, open: i === summaries.length - 1 },
    el("summary", {}, el("span", { className: "range", text: rangeLabel(row, positions) }), el("span", { className: "sizes", text: rowSizes(row) })),
    summaryText(row)));
}

/** What the model reads next, one line per message (positions; summaries by their range). */
export function contextPreview(context, positions) {
  return context.messages.map((m, i) => {
    const id = context.ids[i];
    const where = typeof id === "number" && positions.has(id) ? `#${positions.get(id)} ` : "";
    const text = textOf(m).replace(/\*\*|__|`/g, "");  // a one-line preview: no markdown marks
    return el("li", { text: `${where}${m.role}: ${text.slice(0, 90)}${text.length > 90 ? "…" : ""}` });
  });
}
