// The session's record as a person reads it: messages numbered 1…n from the session's start
// (the database id only in a tooltip), folded under the summary cards that cover them.

import { clock, el, number, when } from "./format.js";
import { renderMarkdown } from "./markdown.js";

/** Positions within the session: message id → 1…n, in record order. */
export function positionsOf(messages) {
  return new Map(messages.map((m, i) => [m.id, i + 1]));
}

/** "Messages 3–30" for a summary row: the positions the API gives, else those of the listing. */
export function rangeLabel(row, positions) {
  const first = row.first_position ?? positions.get(row.first_message_id) ?? row.first_message_id;
  const last = row.last_position ?? positions.get(row.last_message_id) ?? row.last_message_id;
  return first === last ? `Message ${first}` : `Messages ${first}–${last}`;
}

/** A summary row's sizes: "30 messages · 12,345 → 2,100 chars". */
export function rowSizes(row) {
  return `${number(row.messages)} ${row.messages === 1 ? "message" : "messages"} · ${number(row.source_chars)} → ${number(row.chars)} chars`;
}

/** The plain text of a message's content (parts joined, non-text parts named). */
export function textOf(m) {
  if (typeof m.content === "string") return m.content;
  if (Array.isArray(m.content)) return m.content.map((p) => p.text || `[${p.type}]`).join("\n");
  return "";
}

/** One message: its position and role, its text, tool calls and results (long ones folded). */
export function messageElement(m, position) {
  const meta = el("span", {
    className: "meta",
    text: `${position === undefined ? "" : `#${position} · `}${m.role}${m.pinned ? " · pinned" : ""}`,
    title: typeof m.id === "number" ? `message id ${m.id}` : undefined,
  });
  if (m.created_at) meta.append(" · ", el("time", { datetime: m.created_at, text: clock(m.created_at), title: when(m.created_at) }));
  const node = el("div", { className: "message", "data-id": m.id, "data-role": m.role }, meta);
  const text = textOf(m);
  if (m.role === "tool") node.append(collapsible("tool-result", `result of ${m.tool_call_id}`, text));
  else if (text) node.append(document.createTextNode(text));
  for (const call of m.tool_calls || []) {
    node.append(collapsible("tool-call", `→ ${call.function.name}(…) ${call.id}`, call.function.arguments));
  }
  return node;
}

function collapsible(className, label, text) {
  if (text.length <= 160) return el("div", { className, text: `${label}: ${text}` });
  return el("div", { className },
    el("details", {}, el("summary", { text: `${label} (${number(text.length)} chars)` }), el("pre", { text })));
}

/** The rendered markdown of a summary row. */
export function summaryText(row) {
  return el("div", { className: "text markdown" }, renderMarkdown(row.content));
}

/**
 * A summary card: the range it covers and its sizes in the header, the summary rendered, and
 * (in the record) a button that opens the original messages it folds, brought into view.
 */
export function summaryCard(row, positions, folded) {
  const made = `${row.strategy}${row.model ? ` (${row.model})` : ""}, ${when(row.created_at)}`;
  const header = el("header", {},
    el("span", { className: "range", text: rangeLabel(row, positions), title: `message ids ${row.first_message_id}–${row.last_message_id}` }),
    el("span", { className: "sizes", text: rowSizes(row), title: `summarised by ${made}` }));
  const card = el("article", { className: "summary-card", "data-range": row.episode_range, "aria-label": `Summary of ${rangeLabel(row, positions).toLowerCase()}` },
    header, summaryText(row));
  if (!folded) return card;
  const label = `Show the ${folded.length} original messages`;
  const box = el("div", { className: "folded", hidden: true }, ...folded.map((m) => messageElement(m, positions.get(m.id))));
  const expand = el("button", { className: "expand", type: "button", "aria-expanded": "false", text: label });
  expand.addEventListener("click", () => {
    box.hidden = !box.hidden;
    expand.setAttribute("aria-expanded", String(!box.hidden));
    expand.textContent = box.hidden ? label : "Hide the original messages";
    if (!box.hidden) box.scrollIntoView({ block: "start", behavior: "instant" });
  });
  card.append(el("div", { className: "card-actions" }, expand), box);
  return card;
}

/** The record's nodes: each message, or the card of the summary row that covers it. */
export function recordNodes(messages, summaries) {
  const positions = positionsOf(messages);
  const rowOf = (m) => summaries.find((r) => m.id >= r.first_message_id && m.id <= r.last_message_id);
  const nodes = [];
  const shown = new Set();
  for (const m of messages) {
    const row = rowOf(m);
    if (!row) { nodes.push(messageElement(m, positions.get(m.id))); continue; }
    if (shown.has(row.id)) continue;
    shown.add(row.id);
    nodes.push(summaryCard(row, positions, messages.filter((x) => rowOf(x) === row)));
  }
  return nodes;
}
