// recap console: a small client of the HTTP API. No build step, no framework.
"use strict";

const $ = (selector) => document.querySelector(selector);
const number = (n) => Number(n || 0).toLocaleString("en-US");
const state = { key: localStorage.getItem("recap-api-key") || "", config: null, session: null, stream: null };

// --- the API -------------------------------------------------------------------------
class Unauthorized extends Error {}

async function api(path, options = {}) {
  const headers = { ...(options.headers || {}) };
  if (state.key) headers.Authorization = `Bearer ${state.key}`;
  if (options.json !== undefined) {
    headers["Content-Type"] = "application/json";
    options = { ...options, body: JSON.stringify(options.json) };
  }
  const response = await fetch(path, { ...options, headers });
  if (response.status === 401) { showLogin(); throw new Unauthorized("API key needed"); }
  if (response.status === 204) return null;
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : response.statusText);
  return body;
}

async function allMessages(id) {
  const items = [];
  let after = null;
  for (;;) {
    const page = await api(`/sessions/${id}/messages?limit=1000${after !== null ? `&after=${after}` : ""}`);
    items.push(...page.items);
    if (page.next_after === null) return items;
    after = page.next_after;
  }
}

// --- sign-in ---------------------------------------------------------------------------
function showLogin() {
  $("#login").hidden = false;
  $("#chat-view").hidden = true;
  $("#dashboard").hidden = true;
  $("#api-key").focus();
}

$("#login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  state.key = $("#api-key").value.trim();
  try {
    await api("/sessions?limit=1");
    localStorage.setItem("recap-api-key", state.key);
    $("#login").hidden = true;
    $("#login-error").hidden = true;
    showView("chat");
    await start();
  } catch (error) {
    $("#login-error").textContent = "That key was not accepted.";
    $("#login-error").hidden = false;
  }
});

// --- views -----------------------------------------------------------------------------
function showView(name) {
  $("#chat-view").hidden = name !== "chat";
  $("#dashboard").hidden = name !== "dashboard";
  $("#tab-chat").setAttribute("aria-pressed", String(name === "chat"));
  $("#tab-dashboard").setAttribute("aria-pressed", String(name === "dashboard"));
  if (name === "dashboard") loadDashboard().catch(report);
}
$("#tab-chat").addEventListener("click", () => showView("chat"));
$("#tab-dashboard").addEventListener("click", () => showView("dashboard"));

function report(error) {
  if (error instanceof Unauthorized) return;
  const failure = $("#failure");
  failure.textContent = String(error.message || error);
  failure.hidden = false;
}

// --- sessions --------------------------------------------------------------------------
async function loadSessions() {
  const page = await api("/sessions?limit=200");
  const list = $("#sessions");
  list.replaceChildren(...page.items.map((s) => {
    const li = document.createElement("li");
    li.dataset.id = s.id;
    li.classList.toggle("active", state.session === s.id);
    const open = document.createElement("button");
    open.className = "open";
    open.type = "button";
    open.innerHTML = `<span></span><small></small>`;
    open.firstChild.textContent = s.title || `Session ${s.id.slice(0, 8)}`;
    open.lastChild.textContent = `${number(s.message_count)} msgs · ${number(s.context_chars)} chars`;
    open.addEventListener("click", () => openSession(s.id).catch(report));
    const remove = document.createElement("button");
    remove.className = "delete";
    remove.type = "button";
    remove.title = "Delete session";
    remove.setAttribute("aria-label", `Delete ${open.firstChild.textContent}`);
    remove.textContent = "✕";
    remove.addEventListener("click", () => deleteSession(s.id).catch(report));
    li.append(open, remove);
    return li;
  }));
}

$("#new-session").addEventListener("click", async () => {
  try {
    const created = await api("/sessions", { method: "POST", json: { title: `Session of ${new Date().toLocaleString()}` } });
    await loadSessions();
    await openSession(created.id);
  } catch (error) { report(error); }
});

async function deleteSession(id) {
  if (!confirm("Delete this session and its messages?")) return;
  await api(`/sessions/${id}`, { method: "DELETE" });
  if (state.session === id) closeSession();
  await loadSessions();
}

function closeSession() {
  state.session = null;
  if (state.stream) state.stream.abort();
  $("#session-title").textContent = "No session open";
  $("#record").replaceChildren();
  for (const el of ["#message", "#send", "#import-file", "#memory-button"]) $(el).disabled = true;
}

async function openSession(id) {
  state.session = id;
  for (const el of ["#message", "#send", "#import-file", "#memory-button"]) $(el).disabled = false;
  $("#failure").hidden = true;
  document.querySelectorAll("#sessions li").forEach((li) => li.classList.toggle("active", li.dataset.id === id));
  listen(id);
  await refresh();
}

// --- the record, folded under its summaries ---------------------------------------------
function messageElement(m) {
  const el = document.createElement("div");
  el.className = "message";
  el.dataset.id = m.id;
  el.dataset.role = m.role;
  const meta = document.createElement("span");
  meta.className = "meta";
  meta.textContent = `#${m.id} · ${m.role}${m.pinned ? " · pinned" : ""}`;
  el.append(meta);
  const text = typeof m.content === "string" ? m.content
    : Array.isArray(m.content) ? m.content.map((p) => p.text || `[${p.type}]`).join("\n") : "";
  if (m.role === "tool") {
    el.append(collapsible("tool-result", `result of ${m.tool_call_id}`, text));
  } else if (text) {
    el.append(document.createTextNode(text));
  }
  for (const call of m.tool_calls || []) {
    el.append(collapsible("tool-call", `→ ${call.function.name}(…) ${call.id}`, call.function.arguments));
  }
  return el;
}

function collapsible(cls, label, text) {
  const box = document.createElement("div");
  box.className = cls;
  if (text.length <= 160) {
    box.textContent = `${label}: ${text}`;
    return box;
  }
  const details = document.createElement("details");
  const summary = document.createElement("summary");
  summary.textContent = `${label} (${number(text.length)} chars)`;
  const body = document.createElement("pre");
  body.textContent = text;
  details.append(summary, body);
  box.append(details);
  return box;
}

function summaryCard(row, folded) {
  const card = document.createElement("article");
  card.className = "summary-card";
  card.dataset.range = row.episode_range;
  const header = document.createElement("header");
  const title = document.createElement("span");
  title.textContent = `Messages ${row.first_message_id}–${row.last_message_id} · ${number(row.source_chars)} chars → ${number(row.chars)} chars`;
  header.append(title);
  const text = document.createElement("p");
  text.className = "text";
  text.textContent = row.content;
  card.append(header, text);
  if (folded) {
    const expand = document.createElement("button");
    expand.className = "expand";
    expand.type = "button";
    expand.setAttribute("aria-expanded", "false");
    expand.textContent = `Show ${folded.length} original messages`;
    const box = document.createElement("div");
    box.className = "folded";
    box.hidden = true;
    box.append(...folded.map(messageElement));
    expand.addEventListener("click", () => {
      box.hidden = !box.hidden;
      expand.setAttribute("aria-expanded", String(!box.hidden));
      expand.textContent = box.hidden ? `Show ${folded.length} original messages` : "Hide original messages";
    });
    header.append(expand);
    card.append(box);
  }
  return card;
}

async function refresh() {
  const id = state.session;
  if (!id) return;
  const [session, messages, summaries, context] = await Promise.all([
    api(`/sessions/${id}`), allMessages(id), api(`/sessions/${id}/summaries`), api(`/sessions/${id}/context`),
  ]);
  if (state.session !== id) return;
  $("#session-title").textContent = session.title || `Session ${id.slice(0, 8)}`;
  const nodes = [];
  const inRow = (m) => summaries.find((r) => m.id >= r.first_message_id && m.id <= r.last_message_id);
  const shown = new Set();
  for (const m of messages) {
    const row = inRow(m);
    if (!row) { nodes.push(messageElement(m)); continue; }
    if (shown.has(row.id)) continue;
    shown.add(row.id);
    nodes.push(summaryCard(row, messages.filter((x) => inRow(x) === row)));
  }
  const record = $("#record");
  const atBottom = record.scrollHeight - record.scrollTop - record.clientHeight < 40;
  record.replaceChildren(...nodes);
  if (atBottom) record.scrollTop = record.scrollHeight;
  renderMemory(summaries, context);  // "Summarising…" follows the events alone
  loadSessions().catch(report);
}

function renderMemory(summaries, context) {
  $("#chain").replaceChildren(...summaries.map((row) => summaryCard(row, null)));
  const limits = state.config ? state.config.threshold : {};
  const budget = limits.chars ? ` of ${number(limits.chars)} before compaction` : "";
  $("#context-size").textContent = `Next context: ${number(context.chars)} chars${budget} · ${number(context.tokens)} tokens · ${context.message_count} messages`;
  $("#context-preview").replaceChildren(...context.messages.map((m) => {
    const li = document.createElement("li");
    const text = typeof m.content === "string" ? m.content : "";
    li.textContent = `${m.role}: ${text.slice(0, 90)}${text.length > 90 ? "…" : ""}`;
    return li;
  }));
}

$("#memory-button").addEventListener("click", () => {
  const panel = $("#memory");
  panel.hidden = !panel.hidden;
  $("#memory-button").setAttribute("aria-expanded", String(!panel.hidden));
});

$("#compact-now").addEventListener("click", async () => {
  try {
    const result = await api(`/sessions/${state.session}/compact`, { method: "POST" });
    if (!result.summary) report(new Error(`Nothing compacted: ${result.reason || result.path}`));
    await refresh();
  } catch (error) { report(error); }
});

// --- live events -----------------------------------------------------------------------
function setBusy(busy) {
  $("#summarising").hidden = !busy;
  $("#memory-button").dataset.busy = String(Boolean(busy));
}

// Reads a text/event-stream body, calling onEvent(name, data) per event.
async function readEvents(response, onEvent) {
  const reader = response.body.pipeThrough(new TextDecoderStream()).getReader();
  let buffer = "";
  for (;;) {
    const { value, done } = await reader.read();
    if (done) return;
    buffer += value;
    let cut;
    while ((cut = buffer.indexOf("\n\n")) >= 0) {
      const block = buffer.slice(0, cut);
      buffer = buffer.slice(cut + 2);
      let name = "message";
      let data = "";
      for (const line of block.split("\n")) {
        if (line.startsWith("event:")) name = line.slice(6).trim();
        else if (line.startsWith("data:")) data += line.slice(5).trim();
      }
      if (data) onEvent(name, JSON.parse(data));
    }
  }
}

async function listen(id) {
  if (state.stream) state.stream.abort();
  const controller = new AbortController();
  state.stream = controller;
  const headers = state.key ? { Authorization: `Bearer ${state.key}` } : {};
  try {
    const response = await fetch(`/sessions/${id}/events`, { headers, signal: controller.signal });
    await readEvents(response, handle);
  } catch (error) {
    if (error.name === "AbortError") return;
  }
  if (state.session === id && !controller.signal.aborted) setTimeout(() => listen(id), 1000);
}

function handle(name, event) {
  if (name === "summarization.started") { setBusy(true); $("#failure").hidden = true; }
  if (["summarization.finished", "summarization.skipped", "summarization.superseded"].includes(name)) {
    setBusy(false);
    refresh().catch(report);
  }
  if (name === "summarization.failed") {
    setBusy(false);
    $("#failure").textContent = `Summarisation failed: ${event.reason}`;
    $("#failure").hidden = false;
  }
  if (name === "session.state") setBusy(event.compacting);
}

// --- writing -----------------------------------------------------------------------------
$("#composer").addEventListener("submit", async (event) => {
  event.preventDefault();
  const box = $("#message");
  const content = box.value.trim();
  if (!content || !state.session) return;
  box.value = "";  // cleared at once: what is typed while this one is sent stays
  try {
    if (state.config && state.config.chat_model) {
      await chat(content);
    } else {
      await api(`/sessions/${state.session}/messages`, { method: "POST", json: { messages: [{ role: $("#role").value, content }] } });
      await refresh();
    }
  } catch (error) {
    if (!box.value) box.value = content;  // not sent: give it back
    report(error);
  }
  box.focus();
});

// One chat turn: the answer is shown as it streams in, then the record is reloaded.
async function chat(content) {
  const headers = { "Content-Type": "application/json" };
  if (state.key) headers.Authorization = `Bearer ${state.key}`;
  const response = await fetch(`/sessions/${state.session}/chat`, { method: "POST", headers, body: JSON.stringify({ content }) });
  if (!response.ok) {
    const body = await response.json();
    throw new Error(body.error ? body.error.message : response.statusText);
  }
  $("#record").append(messageElement({ id: "…", role: "user", content }));
  const answer = messageElement({ id: "…", role: "assistant", content: "" });
  answer.classList.add("streaming");
  $("#record").append(answer);
  let failure = null;
  await readEvents(response, (name, data) => {
    if (name === "delta") { answer.append(document.createTextNode(data.text)); $("#record").scrollTop = $("#record").scrollHeight; }
    if (name === "error") failure = data.message;
  });
  await refresh();
  if (failure) throw new Error(`The chat model failed: ${failure}`);
}

$("#message").addEventListener("keydown", (event) => {
  if (event.key === "Enter" && !event.shiftKey) { event.preventDefault(); $("#composer").requestSubmit(); }
});

function parseTranscript(text) {
  try {
    const data = JSON.parse(text);
    if (Array.isArray(data)) return data;
    if (data && Array.isArray(data.messages)) return data.messages;
    if (data && data.role) return [data];
  } catch (error) {
    return text.split("\n").filter((line) => line.trim()).map((line) => JSON.parse(line));
  }
  throw new Error("expected a JSON array of messages, {\"messages\": [...]}, or JSONL");
}

$("#import-file").addEventListener("change", async (event) => {
  const file = event.target.files[0];
  if (!file || !state.session) return;
  try {
    const messages = parseTranscript(await file.text());
    for (let i = 0; i < messages.length; i += 500) {
      await api(`/sessions/${state.session}/messages`, { method: "POST", json: { messages: messages.slice(i, i + 500) } });
    }
    await refresh();
  } catch (error) {
    report(new Error(`Import failed: ${error.message}`));
  }
  event.target.value = "";
});

// --- dashboard ---------------------------------------------------------------------------
async function loadDashboard() {
  const [stats, history] = await Promise.all([api("/stats"), api("/stats/compactions?limit=60")]);
  for (const [key, value] of Object.entries(stats.summary)) {
    const cell = document.getElementById(`stat-${key}`);
    if (cell) cell.textContent = number(value);
  }
  drawChart(history);
}

function drawChart(passes) {
  const svg = $("#compaction-chart");
  const ns = "http://www.w3.org/2000/svg";
  svg.replaceChildren();
  if (!passes.length) {
    const empty = document.createElementNS(ns, "text");
    empty.setAttribute("x", "20"); empty.setAttribute("y", "130");
    empty.textContent = "No compaction yet.";
    svg.append(empty);
    return;
  }
  const max = Math.max(...passes.map((p) => p.chars_before), 1);
  const width = Math.min(800 / passes.length, 48);
  const label = document.createElementNS(ns, "text");
  label.setAttribute("class", "label");
  label.setAttribute("x", "796"); label.setAttribute("y", "14"); label.setAttribute("text-anchor", "end");
  label.textContent = `${passes.length} ${passes.length === 1 ? "pass" : "passes"} · tallest ${number(max)} chars`;
  svg.append(label);
  passes.forEach((p, i) => {
    for (const [cls, value, inset] of [["before", p.chars_before, 0.1], ["after", p.chars_after, 0.3]]) {
      const bar = document.createElementNS(ns, "rect");
      const height = (value / max) * 225;
      bar.setAttribute("class", `bar ${cls}`);
      bar.setAttribute("x", String(i * width + width * inset));
      bar.setAttribute("width", String(width * (1 - 2 * inset)));
      bar.setAttribute("y", String(250 - height));
      bar.setAttribute("height", String(height));
      const title = document.createElementNS(ns, "title");
      title.textContent = `${new Date(p.at).toLocaleString()}: ${number(p.chars_before)} → ${number(p.chars_after)} chars (${p.path})`;
      bar.append(title);
      svg.append(bar);
    }
  });
}

// --- start -------------------------------------------------------------------------------
async function start() {
  state.config = await api("/config");
  const chat = Boolean(state.config.chat_model);
  $("#role").hidden = chat;
  $("#composer-note").textContent = chat
    ? `${state.config.chat_model} answers, through the compacted context.`
    : "No chat model is configured (RECAP_CHAT_MODEL): write either side, or import a transcript.";
  await loadSessions();
}

start().catch(report);
