// recap console: a small client of the HTTP API. No build step, no framework: ES modules,
// each with one job; this one wires the page together (views, sessions, the record, events).

import { allMessages, api, auth, headers, readEvents, Unauthorized } from "./api.js";
import { loadDashboard, redraw } from "./dashboard.js";
import { findStatus, markMatches, showMatch } from "./find.js";
import { chainRows, contextPreview, gauge } from "./memory.js";
import { messageElement, positionsOf, rangeLabel, recordNodes } from "./record.js";
import { el, number } from "./format.js";
import { drawer, sessionItems, titleOf } from "./sessions.js";

const $ = (selector) => document.querySelector(selector);
const state = { config: null, session: null, stream: null, sessions: [] };
const narrow = window.matchMedia("(max-width: 760px)");
const overlaid = window.matchMedia("(max-width: 1100px)");
const sessionsDrawer = drawer($("#sessions-toggle"), $("#sidebar"), $("#scrim"));

// --- sign-in -----------------------------------------------------------------------------
function showLogin() {
  $("#login").hidden = false;
  $("#chat-view").hidden = true;
  $("#dashboard").hidden = true;
  $("#sessions-toggle").hidden = true;
  $("#api-key").focus();
}
auth.onUnauthorized = showLogin;

$("#login-form").addEventListener("submit", async (event) => {
  event.preventDefault();
  auth.key = $("#api-key").value.trim();
  try {
    await api("/sessions?limit=1");
    localStorage.setItem("recap-api-key", auth.key);
    $("#login").hidden = true;
    $("#login-error").hidden = true;
    await start();  // the view the address names
  } catch (error) {
    $("#login-error").textContent = "That key was not accepted.";
    $("#login-error").hidden = false;
  }
});

// --- views and the address: #session/<id> or #dashboard, so a reload or a link lands there ---
function remember(hash) {
  if (location.hash !== hash) history.pushState(null, "", hash || location.pathname + location.search);
}

async function route() {
  const hash = decodeURIComponent(location.hash.slice(1));
  if (hash === "dashboard") { showView("dashboard", false); return; }
  showView("chat", false);
  const id = hash.startsWith("session/") ? hash.slice("session/".length) : null;
  if (id && id !== state.session) {
    await openSession(id, false).catch((error) => {
      closeSession(false);
      throw new Error(`That session could not be opened (${error.message}); it may have been deleted.`);
    });
  } else if (!id && state.session) closeSession(false);
}
window.addEventListener("popstate", () => route().catch(report));

function showView(name, rememberIt = true) {
  if (rememberIt) remember(name === "dashboard" ? "#dashboard" : state.session ? `#session/${state.session}` : "");
  $("#chat-view").hidden = name !== "chat";
  $("#dashboard").hidden = name !== "dashboard";
  $("#sessions-toggle").hidden = name !== "chat";
  $("#tab-chat").setAttribute("aria-pressed", String(name === "chat"));
  $("#tab-dashboard").setAttribute("aria-pressed", String(name === "dashboard"));
  if (name === "dashboard") loadDashboard(openFromDashboard).catch(report);
}
const openFromDashboard = (id) => { showView("chat", false); openSession(id).catch(report); };
$("#tab-chat").addEventListener("click", () => showView("chat"));
$("#tab-dashboard").addEventListener("click", () => showView("dashboard"));
let resizing = null;
window.addEventListener("resize", () => { clearTimeout(resizing); resizing = setTimeout(redraw, 150); });

function report(error) {
  if (error instanceof Unauthorized) return;
  $("#failure").textContent = String(error.message || error);
  $("#failure").hidden = false;
}

// --- sessions ----------------------------------------------------------------------------
const LISTED = 200;

async function loadSessions() {
  const page = await api(`/sessions?limit=${LISTED}`);
  state.sessions = page.items;
  $("#sessions-count").textContent = page.total > page.items.length
    ? `The newest ${number(page.items.length)} of ${number(page.total)} sessions.` : "";
  renderSessions();
}

function renderSessions() {
  const focused = document.activeElement && document.activeElement.closest("#sessions li[data-id]");
  const keep = focused && [focused.dataset.id, document.activeElement.className];
  $("#sessions").replaceChildren(...sessionItems(state.sessions, state.session, {
    open: (id) => openSession(id).catch(report),
    remove: (id, title) => deleteSession(id, title).catch(report),
  }, $("#session-filter").value));
  if (keep) document.querySelector(`#sessions li[data-id="${keep[0]}"] .${keep[1]}`)?.focus();  // a refresh keeps the keyboard's place
}
$("#session-filter").addEventListener("input", renderSessions);

// Kept current while the console stays open: other sessions' activity, "5 min ago", the totals.
// A service that stops answering is said once, plainly, and the line goes when it is back.
const LOST = "The service is not answering; the console tries again every 30 s.";
setInterval(async () => {
  if (document.hidden || !$("#login").hidden) return;
  try {
    if (!$("#chat-view").hidden) await loadSessions();
    else if (!document.activeElement.closest("svg")) await loadDashboard(openFromDashboard);  // not under a reader's focus
    if ($("#failure").textContent === LOST) $("#failure").hidden = true;
  } catch (error) {
    report(error instanceof TypeError ? new Error(LOST) : error);  // fetch's TypeError: no answer at all
  }
}, 30_000);

async function newSession() {
  const created = await api("/sessions", { method: "POST", json: { title: `Session of ${new Date().toLocaleString("en-GB")}` } });
  await loadSessions();
  await openSession(created.id);
  $("#message").focus();
}
$("#new-session").addEventListener("click", () => newSession().catch(report));
$("#welcome-new").addEventListener("click", () => newSession().catch(report));

async function deleteSession(id, title) {
  if (!confirm(`Delete “${title}” and its messages?`)) return;
  await api(`/sessions/${id}`, { method: "DELETE" });
  if (state.session === id) closeSession();
  await loadSessions();
}

const controls = ["#message", "#send", "#import-file", "#memory-button"];

function closeSession(rememberIt = true) {
  if (rememberIt) remember("");
  state.session = null;
  document.title = "recap console";
  if (state.stream) state.stream.abort();
  $("#session-title").textContent = "No session open";
  $("#record").replaceChildren();
  $("#record").hidden = true;
  $("#welcome").hidden = false;
  $("#find-bar").hidden = true;
  showMemory(false);
  for (const selector of controls) $(selector).disabled = true;
}

async function openSession(id, rememberIt = true) {
  if (rememberIt) remember(`#session/${id}`);
  state.session = id;
  for (const selector of controls) $(selector).disabled = false;
  $("#failure").hidden = true;
  $("#memory-note").hidden = true;
  $("#welcome").hidden = true;
  $("#record").hidden = false;
  $("#find-bar").hidden = false;
  $("#find").value = "";
  $("#find-status").textContent = "";
  renderSessions();
  sessionsDrawer.close();
  listen(id);
  await refresh();
}

// --- the record and Session Memory ---------------------------------------------------------
async function refresh() {
  const id = state.session;
  if (!id) return;
  const [session, messages, summaries, context] = await Promise.all([
    api(`/sessions/${id}`), allMessages(id), api(`/sessions/${id}/summaries`), api(`/sessions/${id}/context`),
  ]);
  if (state.session !== id) return;
  $("#session-title").textContent = titleOf(session);
  $("#session-title").title = titleOf(session);
  document.title = `${titleOf(session)} · recap`;
  const record = $("#record");
  const atBottom = record.scrollHeight - record.scrollTop - record.clientHeight < 40;
  record.replaceChildren(...(messages.length ? recordNodes(messages, summaries)
    : [el("p", { className: "empty", text: "No messages yet. Write one below, or import a transcript (JSON or JSONL)." })]));
  if (atBottom) record.scrollTop = record.scrollHeight;
  if ($("#find").value.trim()) find(false);  // a re-render keeps what was being looked for
  const positions = positionsOf(messages);
  $("#context-size").replaceChildren(gauge(context, state.config));
  $("#chain").replaceChildren(...chainRows(summaries, positions, state.config));
  $("#context-preview").replaceChildren(...contextPreview(context, positions));
  loadSessions().catch(report);  // "Summarising…" follows the events alone
}

// --- find in the session -------------------------------------------------------------------
const finding = { found: [], index: 0 };

function find(jump = true) {
  const query = $("#find").value;
  finding.found = markMatches($("#record"), query);
  finding.index = Math.min(finding.index, Math.max(finding.found.length - 1, 0));
  if (jump) { finding.index = 0; showMatch(finding.found, 0); }
  else finding.found.forEach((m, i) => m.classList.toggle("current-find", i === finding.index));
  $("#find-status").textContent = findStatus(finding.found, finding.index, query);
}
$("#find").addEventListener("input", () => find());
$("#find").addEventListener("keydown", (event) => {
  if (event.key !== "Enter" || !finding.found.length) return;
  event.preventDefault();
  const step = event.shiftKey ? -1 : 1;
  finding.index = (finding.index + step + finding.found.length) % finding.found.length;
  showMatch(finding.found, finding.index);
  $("#find-status").textContent = findStatus(finding.found, finding.index, $("#find").value);
});

function showMemory(open) {
  const panel = $("#memory");
  panel.hidden = !open;
  $("#memory-button").setAttribute("aria-expanded", String(open));
  if (open && overlaid.matches) panel.focus();  // over the conversation: take the reader there
  if (open) panel.scrollIntoView({ block: "nearest" });
}
$("#memory-button").addEventListener("click", () => showMemory($("#memory").hidden));
$("#memory-close").addEventListener("click", () => { showMemory(false); $("#memory-button").focus(); });
$("#memory").addEventListener("keydown", (event) => {
  if (event.key === "Escape" && overlaid.matches) { showMemory(false); $("#memory-button").focus(); }
});

$("#compact-now").addEventListener("click", async () => {
  const note = $("#memory-note");
  try {
    const result = await api(`/sessions/${state.session}/compact`, { method: "POST" });
    note.textContent = result.summary  // the row names its positions: no listing needed
      ? `Compacted: ${rangeLabel(result.summary, new Map()).toLowerCase()} folded into a summary.`
      : `Nothing to compact yet: ${result.reason || result.path}.`;
    note.hidden = false;
    await refresh();
  } catch (error) { report(error); }
});

// --- live events ---------------------------------------------------------------------------
function setBusy(busy) {
  $("#summarising").hidden = !busy;
  $("#memory-button").dataset.busy = String(Boolean(busy));
}

async function listen(id) {
  if (state.stream) state.stream.abort();
  const controller = new AbortController();
  state.stream = controller;
  try {
    const response = await fetch(`/sessions/${id}/events`, { headers: headers(), signal: controller.signal });
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
    loadSessions().catch(report);  // the list marks it as failing
  }
  if (name === "session.state") setBusy(event.compacting);
}

// --- writing -------------------------------------------------------------------------------
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
  const response = await fetch(`/sessions/${state.session}/chat`, {
    method: "POST", headers: headers({ "Content-Type": "application/json" }), body: JSON.stringify({ content }),
  });
  if (!response.ok) {
    const body = await response.json();
    throw new Error(body.error ? body.error.message : response.statusText);
  }
  const record = $("#record");
  record.querySelector(":scope > .empty")?.remove();
  record.append(messageElement({ id: "…", role: "user", content }));
  const answer = messageElement({ id: "…", role: "assistant", content: "" });
  answer.classList.add("streaming");
  record.append(answer);
  let failure = null;
  await readEvents(response, (name, data) => {
    if (name === "delta") { answer.append(document.createTextNode(data.text)); record.scrollTop = record.scrollHeight; }
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

// --- start ---------------------------------------------------------------------------------
async function start() {
  state.config = await api("/config");
  const chatting = Boolean(state.config.chat_model);
  $("#role").hidden = chatting;
  $("#composer-note").textContent = chatting
    ? `${state.config.chat_model} answers, through the compacted context.`
    : "No chat model is configured (RECAP_CHAT_MODEL): write either side, or import a transcript.";
  await loadSessions();
  await route();
}

narrow.addEventListener("change", () => sessionsDrawer.close());
start().catch(report);
