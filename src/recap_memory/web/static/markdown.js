// A summary's markdown as a person reads it: headings, bold and italic, inline code, bullet
// and numbered lists, the digest's "[8 May 2023]" group lines and line breaks.
//
// Safe by construction: every piece of text is inserted as a text node (textContent), never
// as HTML, so whatever a message said ("<img onerror=…>", "<script>") shows as the characters
// it is and can never become markup. Only the elements below are ever created.

import { el } from "./format.js";

const HEADING = /^(#{1,6})\s+(.*?)\s*#*\s*$/;
const BULLET = /^(\s*)[-*+•]\s+(.*)$/;
const NUMBERED = /^(\s*)(\d{1,3})[.)]\s+(.*)$/;
const GROUP = /^\[[^[\]\n]{1,200}\]$/;
const RULE = /^\s*([-*_])(\s*\1){2,}\s*$/;
const INLINE = /(\*\*[^*\n]+?\*\*|__[^_\n]+?__|`[^`\n]+`|\*[^*\s\n](?:[^*\n]*[^*\s\n])?\*|(?<![\w])_[^_\s\n](?:[^_\n]*[^_\s\n])?_(?![\w]))/;

/** The markdown ``text`` as a DocumentFragment of safe elements. */
export function renderMarkdown(text) {
  const out = document.createDocumentFragment();
  let paragraph = null;  // the open <p>, lines joined by <br>
  let lists = [];        // the open lists, outermost first: {node, indent, ordered}
  const close = () => { paragraph = null; lists = []; };

  for (const raw of String(text || "").replace(/\r\n?/g, "\n").split("\n")) {
    const line = raw.replace(/\s+$/, "");
    if (!line.trim()) { close(); continue; }
    let match;
    if ((match = HEADING.exec(line))) {
      close();
      const level = Math.min(6, match[1].length + 3);  // inside a card under the page's h1–h3
      out.append(inline(document.createElement(`h${level}`), match[2]));
    } else if (GROUP.test(line.trim())) {
      close();
      out.append(inline(el("p", { className: "group" }), line.trim()));
    } else if (RULE.test(line)) {
      close();
      out.append(document.createElement("hr"));
    } else if ((match = BULLET.exec(line)) || (match = NUMBERED.exec(line))) {
      paragraph = null;
      const ordered = match.length === 4;
      const indent = match[1].replace(/\t/g, "  ").length;
      const item = inline(document.createElement("li"), match[match.length - 1]);
      listFor(out, lists, indent, ordered, ordered ? Number(match[2]) : null).append(item);
    } else if (lists.length && /^\s{2,}\S/.test(raw)) {
      // a continuation of the last item
      const last = lists[lists.length - 1].node.lastElementChild;
      last.append(document.createElement("br"));
      inline(last, line.trim());
    } else {
      lists = [];
      if (paragraph) paragraph.append(document.createElement("br"));
      else { paragraph = document.createElement("p"); out.append(paragraph); }
      inline(paragraph, line.trim());
    }
  }
  return out;
}

/** The list an item at ``indent`` belongs in: the open one, a new nested one, or a new one. */
function listFor(out, lists, indent, ordered, start) {
  while (lists.length && (indent < lists[lists.length - 1].indent
      || (indent === lists[lists.length - 1].indent && lists[lists.length - 1].ordered !== ordered))) {
    lists.pop();
  }
  const open = lists[lists.length - 1];
  if (open && open.indent === indent) return open.node;
  const node = document.createElement(ordered ? "ol" : "ul");
  if (ordered && start !== null && start !== 1) node.start = start;
  const parent = open ? open.node.lastElementChild : null;
  (parent || out).append(node);
  lists.push({ node, indent, ordered });
  return node;
}

/** Append ``text`` to ``parent`` with its bold, italic and code spans; returns ``parent``. */
function inline(parent, text) {
  let rest = text;
  let match;
  while ((match = INLINE.exec(rest))) {
    if (match.index) parent.append(document.createTextNode(rest.slice(0, match.index)));
    const token = match[0];
    if (token.startsWith("`")) parent.append(el("code", { text: token.slice(1, -1) }));
    else if (token.startsWith("**") || token.startsWith("__")) parent.append(inline(document.createElement("strong"), token.slice(2, -2)));
    else parent.append(inline(document.createElement("em"), token.slice(1, -1)));
    rest = rest.slice(match.index + token.length);
  }
  if (rest) parent.append(document.createTextNode(rest));
  return parent;
}
