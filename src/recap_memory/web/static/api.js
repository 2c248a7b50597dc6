// The console's client of recap's HTTP API: requests with the stored API key, paging,
// and Server-Sent Events read from a fetch body.

export const auth = { key: localStorage.getItem("recap-api-key") || "", onUnauthorized: () => {} };

/** Raised after a 401: the console shows its sign-in form instead of an error. */
export class Unauthorized extends Error {}

/** The headers every request carries (the key, when one was given). */
export function headers(extra = {}) {
  return auth.key ? { ...extra, Authorization: `Bearer ${auth.key}` } : { ...extra };
}

/** Call the API; ``options.json`` is sent as a JSON body. The decoded answer (null for 204). */
export async function api(path, options = {}) {
  const { json, ...rest } = options;
  const init = { ...rest, headers: headers(rest.headers) };
  if (json !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(json);
  }
  const response = await fetch(path, init);
  if (response.status === 401) {
    auth.onUnauthorized();
    throw new Unauthorized("API key needed");
  }
  if (response.status === 204) return null;
  const body = await response.json();
  if (!response.ok) throw new Error(body.error ? `${body.error.code}: ${body.error.message}` : response.statusText);
  return body;
}

/** Every message of a session, in order, page by page. */
export async function allMessages(id) {
  const items = [];
  let after = null;
  for (;;) {
    const page = await api(`/sessions/${id}/messages?limit=1000${after !== null ? `&after=${after}` : ""}`);
    items.push(...page.items);
    if (page.next_after === null) return items;
    after = page.next_after;
  }
}

/** Read a text/event-stream body, calling onEvent(name, data) for each event. */
export async function readEvents(response, onEvent) {
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
