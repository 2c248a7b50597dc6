// Small SVG charts drawn at the size they are shown (never stretched): axes with units and
// ticks, one slot per item along x, a tooltip on hover or keyboard focus. One tab stop per
// chart; the arrow keys move between its items, Enter picks one.

const NS = "http://www.w3.org/2000/svg";
const MARGIN = { top: 20, right: 14, bottom: 46, left: 58 };

function svg(tag, attrs = {}, text = null) {
  const node = document.createElementNS(NS, tag);
  for (const [key, value] of Object.entries(attrs)) node.setAttribute(key, String(value));
  if (text !== null) node.textContent = text;
  return node;
}

/** Round tick values from 0 past ``max``: steps of 1, 2 or 5 × 10^k, about ``count`` of them. */
export function niceTicks(max, count = 4) {
  const raw = Math.max(max, 1) / count;
  const power = 10 ** Math.floor(Math.log10(raw));
  const step = [1, 2, 5, 10].map((m) => m * power).find((s) => s >= raw);
  const ticks = [];
  for (let v = 0; v < max + step; v += step) ticks.push(v);
  return ticks;
}

/**
 * Draw a chart into ``target`` (an <svg>) at its current width.
 *
 * spec: { items, yTitle, xTitle, yFormat(v), xLabel(item), tip(item) → [lines], pick(item),
 *         series: [{ kind: "bar"|"line", className, value(item), label }] }
 */
export function drawChart(target, tipBox, spec) {
  const width = Math.max(280, Math.round(target.clientWidth || target.parentElement.clientWidth || 600));
  const height = width < 500 ? 220 : 260;
  target.setAttribute("viewBox", `0 0 ${width} ${height}`);
  target.setAttribute("height", String(height));
  target.replaceChildren();
  const { items } = spec;
  const plot = { x: MARGIN.left, y: MARGIN.top, w: width - MARGIN.left - MARGIN.right, h: height - MARGIN.top - MARGIN.bottom };
  const max = Math.max(1, ...items.flatMap((item) => spec.series.map((s) => s.value(item))));
  const ticks = niceTicks(max);
  const top = ticks[ticks.length - 1];
  const y = (v) => plot.y + plot.h - (v / top) * plot.h;
  const slot = Math.min(plot.w / Math.max(items.length, 1), 64);  // a few passes: narrow bars, from the left
  const x = (i) => plot.x + slot * (i + 0.5);

  for (const t of ticks) {
    target.append(svg("line", { class: "grid", x1: plot.x, x2: plot.x + plot.w, y1: y(t), y2: y(t) }));
    target.append(svg("text", { class: "tick", x: plot.x - 6, y: y(t) + 4, "text-anchor": "end" }, spec.yFormat(t)));
  }
  target.append(svg("text", { class: "axis-title", transform: `translate(14 ${plot.y + plot.h / 2}) rotate(-90)`, "text-anchor": "middle" }, spec.yTitle));
  const every = Math.max(1, Math.ceil(items.length / Math.max(1, Math.floor(plot.w / 84))));
  items.forEach((item, i) => {
    if (i % every === 0) {
      target.append(svg("text", { class: "tick", x: x(i), y: plot.y + plot.h + 16, "text-anchor": "middle" }, spec.xLabel(item)));
    }
  });
  target.append(svg("line", { class: "axis", x1: plot.x, x2: plot.x + plot.w, y1: plot.y + plot.h, y2: plot.y + plot.h }));
  target.append(svg("line", { class: "axis", x1: plot.x, x2: plot.x, y1: plot.y, y2: plot.y + plot.h }));
  target.append(svg("text", { class: "axis-title", x: plot.x + plot.w / 2, y: height - 6, "text-anchor": "middle" }, spec.xTitle));

  const bars = spec.series.filter((s) => s.kind === "bar");
  const lines = spec.series.filter((s) => s.kind === "line");
  for (const series of lines) {
    const points = items.map((item, i) => `${x(i)},${y(series.value(item))}`).join(" ");
    target.append(svg("polyline", { class: `line ${series.className}`, points }));
  }
  const marks = items.map((item, i) => {
    const group = svg("g", { class: "item", tabindex: "-1", role: "img", "aria-label": spec.tip(item).join(", ") });
    group.append(svg("rect", { class: "hit", x: plot.x + slot * i, y: plot.y, width: slot, height: plot.h }));
    bars.forEach((series, b) => {
      const inset = bars.length > 1 ? [0.12, 0.3][b] : 0.2;
      const w = Math.max(1, slot * (1 - 2 * inset));
      const v = series.value(item);
      group.append(svg("rect", { class: `bar ${series.className}`, x: plot.x + slot * i + slot * inset, width: w, y: y(v), height: plot.y + plot.h - y(v) }));
    });
    for (const series of lines) {
      group.append(svg("circle", { class: `point ${series.className}`, cx: x(i), cy: y(series.value(item)), r: Math.min(4, Math.max(2, slot / 4)) }));
    }
    const show = () => showTip(tipBox, target, spec.tip(item), x(i) / width, marks, i);
    group.addEventListener("mouseenter", show);
    group.addEventListener("focus", show);
    const hide = () => { tipBox.hidden = true; group.classList.remove("current"); };
    group.addEventListener("mouseleave", () => { if (document.activeElement !== group) hide(); });
    group.addEventListener("blur", hide);
    group.addEventListener("click", () => spec.pick && spec.pick(item));
    group.addEventListener("keydown", (event) => keys(event, marks, i, () => spec.pick && spec.pick(item)));
    target.append(group);
    return group;
  });
  if (marks.length) marks[marks.length - 1].setAttribute("tabindex", "0");
}

function keys(event, marks, i, pick) {
  const next = { ArrowRight: i + 1, ArrowLeft: i - 1, Home: 0, End: marks.length - 1 }[event.key];
  if (event.key === "Enter" || event.key === " ") { event.preventDefault(); pick(); return; }
  if (next === undefined || next < 0 || next >= marks.length) return;
  event.preventDefault();
  marks[i].setAttribute("tabindex", "-1");
  marks[next].setAttribute("tabindex", "0");
  marks[next].focus();
}

function showTip(tipBox, target, lines, share, marks, i) {
  marks.forEach((m, n) => m.classList.toggle("current", n === i));
  tipBox.replaceChildren(...lines.map((line, n) => {
    const node = document.createElement(n === 0 ? "strong" : "span");
    node.textContent = line;
    return node;
  }));
  tipBox.hidden = false;
  const box = target.getBoundingClientRect();
  const parent = tipBox.offsetParent ? tipBox.offsetParent.getBoundingClientRect() : box;
  const left = box.left - parent.left + share * box.width - tipBox.offsetWidth / 2;
  tipBox.style.left = `${Math.max(0, Math.min(left, box.width - tipBox.offsetWidth))}px`;
  tipBox.style.top = `${box.top - parent.top + 4}px`;
}
