// Find in the open session: every message whose text holds the query (any case), the folded
// originals included (their card opens), counted, stepped through with Enter / Shift+Enter.

/** Mark the messages of ``record`` that contain ``query``; the marked elements, in order. */
export function markMatches(record, query) {
  const needle = query.trim().toLowerCase();
  const found = [];
  for (const message of record.querySelectorAll(".message")) {
    const hit = Boolean(needle) && message.textContent.toLowerCase().includes(needle);
    message.classList.toggle("found", hit);
    message.classList.remove("current-find");
    if (hit) found.push(message);
  }
  return found;
}

/** Bring match ``index`` into view: open the summary card that folds it, scroll, highlight. */
export function showMatch(found, index) {
  found.forEach((m, i) => m.classList.toggle("current-find", i === index));
  const target = found[index];
  if (!target) return;
  const folded = target.closest(".folded");
  if (folded && folded.hidden) folded.closest(".summary-card").querySelector("button.expand").click();
  target.scrollIntoView({ block: "center", behavior: "instant" });
}

/** "2 of 5 messages", "No message contains “x”", or nothing for an empty query. */
export function findStatus(found, index, query) {
  if (!query.trim()) return "";
  if (!found.length) return `No message contains “${query.trim()}”.`;
  return `${index + 1} of ${found.length} ${found.length === 1 ? "message" : "messages"}`;
}
