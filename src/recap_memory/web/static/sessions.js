// The session list: titles a person can tell apart, last activity, labelled sizes, an empty
// state; on a phone it lives in a drawer.

import { ago, el, number, short, when } from "./format.js";

/** The title a session is shown under. */
export const titleOf = (s) => s.title || `Untitled session ${s.id.slice(0, 8)}`;

/** What a session needs attention for, if anything: [label, kind, detail] or null. */
export function statusOf(s) {
  if (s.compacting) return ["Summarising…", "busy", "a compaction pass is running"];
  if (s.failures && s.last_error) return ["Compaction failing", "failing", `${s.failures} failed ${s.failures === 1 ? "attempt" : "attempts"}: ${s.last_error}`];
  if (s.due) return ["Compaction due", "due", "over its trigger; the worker picks it up next"];
  return null;
}

/** Whether a session matches what was typed in the filter (title or id, any case). */
export const matches = (s, query) => !query || `${titleOf(s)} ${s.id}`.toLowerCase().includes(query.trim().toLowerCase());

/**
 * The list's items. ``actions`` has open(id) and remove(id, title); ``active`` is the open
 * session's id; ``query`` filters by title or id. Sessions sharing a title are told apart by
 * when they started and their id.
 */
export function sessionItems(sessions, active, actions, query = "") {
  if (!sessions.length) {
    return [el("li", { className: "empty" }, "No sessions yet. Start one with ", el("strong", { text: "+ New session" }),
      ", or append messages through the API (POST /sessions).")];
  }
  const shown = sessions.filter((s) => matches(s, query));
  if (!shown.length) return [el("li", { className: "empty", text: `No session matches “${query.trim()}”.` })];
  const counts = new Map();
  for (const s of sessions) counts.set(titleOf(s), (counts.get(titleOf(s)) || 0) + 1);
  return shown.map((s) => {
    const title = titleOf(s);
    const twin = counts.get(title) > 1
      ? el("span", { className: "twin", text: `started ${when(s.created_at)} · ${s.id.slice(0, 8)}` }) : null;
    const status = statusOf(s);
    const sizes = `Record ${short(s.char_count)} · next context ${short(s.context_chars)} chars`;
    const open = el("button", { className: "open", type: "button", title: `${title}\n${number(s.message_count)} messages; record ${number(s.char_count)} chars; next context ${number(s.context_chars)} chars`, onclick: () => actions.open(s.id) },
      el("span", { className: "title", text: title }),
      twin,
      status ? el("span", { className: `status ${status[1]}`, text: status[0], title: status[2] }) : null,
      el("span", { className: "line" },
        `${number(s.message_count)} ${s.message_count === 1 ? "message" : "messages"} · `,
        el("time", { datetime: s.updated_at, text: ago(s.updated_at), title: `last activity ${when(s.updated_at)}` })),
      el("span", { className: "line", text: sizes }));
    if (active === s.id) open.setAttribute("aria-current", "true");
    const remove = el("button", { className: "delete", type: "button", title: "Delete session", "aria-label": `Delete ${title}`, text: "✕", onclick: () => actions.remove(s.id, title) });
    return el("li", { "data-id": s.id, className: active === s.id ? "active" : "" }, open, remove);
  });
}

/** The drawer on narrow screens: the toggle opens and closes it; Escape and a pick close it. */
export function drawer(toggle, panel, scrim) {
  const set = (open) => {
    panel.classList.toggle("open", open);
    scrim.hidden = !open;
    toggle.setAttribute("aria-expanded", String(open));
    if (open) (panel.querySelector("[aria-current]") || panel.querySelector("button")).focus();
  };
  toggle.addEventListener("click", () => set(!panel.classList.contains("open")));
  scrim.addEventListener("click", () => set(false));
  document.addEventListener("keydown", (event) => {
    if (event.key === "Escape" && panel.classList.contains("open")) { set(false); toggle.focus(); }
  });
  return { close: () => set(false) };
}
