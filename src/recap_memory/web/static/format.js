// How the console writes numbers, sizes and times, and a small helper to build elements.

/** 12345 → "12,345". */
export const number = (n) => Number(n || 0).toLocaleString("en-US");

/** 12345 → "12.3k", 2100000 → "2.1M": for axes and tight lists (the exact figure goes in a tooltip). */
export function short(n) {
  const value = Number(n || 0);
  if (Math.abs(value) >= 1e6) return `${trim(value / 1e6)}M`;
  if (Math.abs(value) >= 1e4) return `${Math.round(value / 1e3)}k`;
  if (Math.abs(value) >= 1e3) return `${trim(value / 1e3)}k`;
  return String(Math.round(value));
}
const trim = (x) => x.toFixed(1).replace(/\.0$/, "");

/** A size with its unit: (6557, "chars") → "6,557 chars". */
export const sized = (n, unit) => `${number(n)} ${n === 1 ? unit.replace(/s$/, "") : unit}`;

/** A moment as people write it here: "30 Nov 2026, 14:02". */
export function when(iso) {
  return new Date(iso).toLocaleString("en-GB", { day: "numeric", month: "short", year: "numeric", hour: "2-digit", minute: "2-digit" });
}

/** The time of day, with the date when it is not today: "14:02" or "28 Nov, 14:02". */
export function clock(iso, now = new Date()) {
  const moment = new Date(iso);
  const today = moment.toDateString() === now.toDateString();
  return moment.toLocaleString("en-GB", today ? { hour: "2-digit", minute: "2-digit" } : { day: "numeric", month: "short", hour: "2-digit", minute: "2-digit" });
}

/** How long ago: "just now", "5 min ago", "3 h ago", "yesterday", else the date. */
export function ago(iso, now = Date.now()) {
  const seconds = (now - new Date(iso).getTime()) / 1000;
  if (seconds < 45) return "just now";
  if (seconds < 3600) return `${Math.round(seconds / 60)} min ago`;
  if (seconds < 86400) return `${Math.round(seconds / 3600)} h ago`;
  if (seconds < 2 * 86400) return "yesterday";
  return new Date(iso).toLocaleDateString("en-GB", { day: "numeric", month: "short", year: "numeric" });
}

/**
 * Build an element: el("p", { className: "note", text: "Hi", title: "…" }, child, …).
 * Text always goes in as text (never parsed as HTML); other props are attributes, except
 * className, text, hidden and on* listeners (onclick: fn).
 */
export function el(tag, props = {}, ...children) {
  const node = document.createElement(tag);
  for (const [key, value] of Object.entries(props)) {
    if (value === undefined || value === null || value === false) continue;
    if (key === "className") node.className = value;
    else if (key === "text") node.textContent = value;
    else if (key === "hidden") node.hidden = Boolean(value);
    else if (key.startsWith("on")) node.addEventListener(key.slice(2), value);
    else node.setAttribute(key, value === true ? "" : String(value));
  }
  node.append(...children.filter((child) => child !== null && child !== undefined && child !== false));
  return node;
}
