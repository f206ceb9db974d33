// Arena web page: helpers shared by every page, and the router. Plain JS, no build, no network
// but ours. A page is a function registered by name (`addRoute`): #/NAME/... calls it with the
// path's parts and the query; #/ is the lobby. A page that awaits checks `page.live` (it turns
// false when the person navigates away) before it touches the document again.
"use strict";

const app = document.getElementById("app");
const esc = (t) => String(t).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const q = (sel, root = document) => root.querySelector(sel);
let stopCurrent = () => {};
let page = { live: true }; // the page on show; a new one each time the route changes

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

function when(ms) { return ms ? new Date(ms).toLocaleString(LANG === "zh" ? "zh-CN" : "en-GB") : ""; }

// A message that survives one navigation (the lobby shows it after a resign, say).
let flash = null;

// ---- the router ---------------------------------------------------------------------------

const ROUTES = {}; // name -> async (parts, params): a page
function addRoute(name, show) { ROUTES[name] = show; }

async function route() {
  page.live = false;
  stopCurrent();
  stopCurrent = () => {};
  page = { live: true };
  const [path, query] = (location.hash.slice(1) || "/").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  renderHeader();
  try {
    const show = ROUTES[parts[0] || ""] || ROUTES[""];
    await show(parts, params);
  } catch (err) {
    if (!page.live) return;
    app.innerHTML = `<p class="error"></p><p><a href="#/"></a></p>`;
    q(".error").textContent = err.message;
    q("#app a").textContent = t("error.back");
  }
}

// The header: the brand (the lobby), the page's title, the language switch, the connection.
function renderHeader() {
  document.documentElement.lang = LANG;
  const sw = q("#lang");
  sw.textContent = t("lang.switch");
  sw.title = t("lang.title");
  q("#brand").title = t("lobby");
}

function startRouter() {
  document.documentElement.lang = LANG;
  q("#lang").onclick = () => { setLang(LANG === "zh" ? "en" : "zh"); route(); };
  window.addEventListener("hashchange", route);
  route();
}
// every page's script has run by then (they are at the end of the body)
document.addEventListener("DOMContentLoaded", startRouter);
