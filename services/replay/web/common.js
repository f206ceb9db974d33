// Arena web page: helpers shared by every page. Plain JS, no build, no network but ours.
"use strict";

const app = document.getElementById("app");
const esc = (t) => String(t).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const q = (sel, root = document) => root.querySelector(sel);
let stopCurrent = () => {};

// A JSON call to our server (the session cookie goes along: same origin). Refusals throw an
// Error carrying the server's reason and the status.
async function call(method, url, body) {
  const init = { method, cache: "no-store", credentials: "same-origin", headers: {} };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(url, init);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
  if (!r.ok) {
    const err = new Error((data && data.error) || r.statusText);
    err.status = r.status;
    throw err;
  }
  return data;
}
const getJSON = (url) => call("GET", url);

function when(ms) { return ms ? new Date(ms).toLocaleString() : ""; }
