// Tournaments: #/tournaments lists them and, for an organiser (a token from `arena
// organiser-token create`, kept for this tab only), makes one: ruleset, size, options, entrants
// (built-in policies, bot accounts, people), games, seed, engines, the clock of bots and people.
// #/tournament/KEY is its page, live: progress, standings by camp with 95% intervals, each
// entrant's rates and rating, the games in play (their live tables) and every finished game
// (its replay), with JSON and CSV exports. `arena tournament` prints the same page's address.
"use strict";

Object.assign(WORDS.zh, {
  "tn.title": "锦标赛", "tn.list": "锦标赛", "tn.none": "还没有锦标赛", "tn.new": "新建锦标赛", "tn.create": "开始",
  "tn.token": "组织者令牌", "tn.signin": "登录", "tn.signed": "组织者：{name}", "tn.signout": "退出",
  "tn.name": "名称", "tn.ruleset": "规则", "tn.players": "人数", "tn.options": "选项 (JSON)", "tn.games": "局数",
  "tn.seed": "种子", "tn.assign": "座位分配", "tn.assign.seat": "轮换座位", "tn.assign.camp": "整个阵营同一策略",
  "tn.engines": "引擎数 (0 = 全部)", "tn.time": "每次决策时限 (秒)", "tn.hosted": "超时几次后托管",
  "tn.entrants": "参赛者", "tn.policies": "内置策略", "tn.bots": "外部机器人", "tn.people": "玩家 (g-… 用逗号分隔)",
  "tn.progress": "{done} / {games} 局", "tn.running": "进行中", "tn.stopped": "已暂停", "tn.idle": "未运行", "tn.done": "已完成",
  "tn.host.web": "由网页服务器运行", "tn.host.cli": "由 arena tournament 运行", "tn.by": "组织者 {name}",
  "tn.camps": "各阵营胜率（95% 区间）", "tn.camp": "阵营", "tn.wins": "胜", "tn.of": "局", "tn.rate": "胜率",
  "tn.entrant": "参赛者", "tn.rating": "评分 (μ ± σ)", "tn.live": "正在进行的对局", "tn.results": "已完成的对局",
  "tn.game": "对局", "tn.winners": "获胜", "tn.export": "导出", "tn.stop": "暂停", "tn.resume": "继续",
  "tn.kind.policy": "内置", "tn.kind.bot": "机器人", "tn.kind.person": "玩家", "tn.error": "出错：{e}", "tn.draw": "平局",
  "nav.tv": "电视", "nav.tournaments": "锦标赛",
});
Object.assign(WORDS.en, {
  "tn.title": "tournament", "tn.list": "Tournaments", "tn.none": "no tournament yet", "tn.new": "New tournament", "tn.create": "start",
  "tn.token": "organiser token", "tn.signin": "sign in", "tn.signed": "organiser: {name}", "tn.signout": "sign out",
  "tn.name": "name", "tn.ruleset": "ruleset", "tn.players": "players", "tn.options": "options (JSON)", "tn.games": "games",
  "tn.seed": "seed", "tn.assign": "seats", "tn.assign.seat": "rotate over seats", "tn.assign.camp": "a policy per camp",
  "tn.engines": "engines (0 = all)", "tn.time": "time per decision (s)", "tn.hosted": "托管 after time-outs",
  "tn.entrants": "entrants", "tn.policies": "built-in policies", "tn.bots": "bot accounts", "tn.people": "people (g-…, comma-separated)",
  "tn.progress": "{done} of {games} games", "tn.running": "running", "tn.stopped": "stopped", "tn.idle": "not running", "tn.done": "finished",
  "tn.host.web": "played by the web server", "tn.host.cli": "played by arena tournament", "tn.by": "by {name}",
  "tn.camps": "wins by camp (95% interval)", "tn.camp": "camp", "tn.wins": "won", "tn.of": "of", "tn.rate": "win rate",
  "tn.entrant": "entrant", "tn.rating": "rating (μ ± σ)", "tn.live": "games in play", "tn.results": "finished games",
  "tn.game": "game", "tn.winners": "won", "tn.export": "export", "tn.stop": "stop", "tn.resume": "resume",
  "tn.kind.policy": "built-in", "tn.kind.bot": "bot", "tn.kind.person": "person", "tn.error": "error: {e}", "tn.draw": "draw",
  "nav.tv": "TV", "nav.tournaments": "Tournaments",
});

const POLICIES = ["heuristic", "random", "easy", "hard"];
const ORG_KEY = "arena.organiser";

function organiserToken() {
  try { return sessionStorage.getItem(ORG_KEY) || ""; } catch (e) { return ""; }
}

// A call with the organiser's bearer token (not a cookie: nothing another site could send).
async function orgCall(method, url, body) {
  const init = { method, cache: "no-store", headers: { Authorization: `Bearer ${organiserToken()}` } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(url, init);
  const data = await r.json().catch(() => ({}));
  if (!r.ok) { const err = new Error(data.error || r.statusText); err.status = r.status; throw err; }
  return data;
}

function pct(x) { return `${(x * 100).toFixed(1)}%`; }

// A win rate with its 95% interval drawn as a bar.
function rateCell(r) {
  if (!r) return "<td>–</td>";
  const lo = Math.max(0, r.ci95[0]);
  const hi = Math.min(1, r.ci95[1]);
  return `<td class="rate"><span class="ci"><i style="left:${lo * 100}%;width:${Math.max((hi - lo) * 100, 0.5)}%"></i><b style="left:${r.win_rate * 100}%"></b></span> ${pct(r.win_rate)} <small>[${pct(lo)}, ${pct(hi)}]</small></td>`;
}

async function tournaments() {
  const here = page;
  q("#title").textContent = t("tn.list");
  const list = await getJSON("/api/tournaments");
  if (!here.live) return;
  app.innerHTML = `<section class="tournaments">
    <h2></h2><table class="tn-list" id="tn-list"></table>
    <h2 id="tn-new-title"></h2><div id="tn-org"></div><form id="tn-form" class="tn-form" hidden></form><div class="error" id="tn-error"></div></section>`;
  q(".tournaments h2").textContent = t("tn.list");
  q("#tn-new-title").textContent = t("tn.new");
  const rows = list.tournaments.map((x) => `<tr data-key="${esc(x.key)}"><td><a href="#/tournament/${esc(x.key)}" class="tn-name"></a></td><td>${esc(x.ruleset)} ${x.players}</td><td>${esc(t("tn.progress", { done: x.done, games: x.games }))}</td><td>${esc(t(x.running ? "tn.running" : x.done >= x.games ? "tn.done" : x.stopped ? "tn.stopped" : "tn.idle"))}</td><td class="who"></td></tr>`);
  q("#tn-list").innerHTML = rows.join("") || `<tr><td class="none">${esc(t("tn.none"))}</td></tr>`;
  const trs = document.querySelectorAll("#tn-list tr[data-key]");
  list.tournaments.forEach((x, i) => {
    const tr = trs[i];
    tr.querySelector(".tn-name").textContent = x.name || x.key;
    tr.querySelector(".who").textContent = x.entrants.map((e) => e.name).join(", ");
  });
  await organiserBox(here);
}

async function organiserBox(here) {
  const box = q("#tn-org");
  const token = organiserToken();
  let who = null;
  if (token) {
    try { who = await orgCall("GET", "/api/organiser"); } catch (err) { who = null; }
  }
  if (!here.live) return;
  if (!who) {
    box.innerHTML = `<form id="tn-signin"><label><span></span> <input id="tn-token" type="password" autocomplete="off" size="40"></label> <button></button></form>`;
    box.querySelector("span").textContent = t("tn.token");
    box.querySelector("button").textContent = t("tn.signin");
    q("#tn-signin").onsubmit = async (ev) => {
      ev.preventDefault();
      try { sessionStorage.setItem(ORG_KEY, q("#tn-token").value.trim()); } catch (e) { /* this page only */ }
      try { await orgCall("GET", "/api/organiser"); route(); } catch (err) { q("#tn-error").textContent = err.message; }
    };
    return;
  }
  box.innerHTML = `<p><span id="tn-who"></span> <button id="tn-signout" type="button"></button></p>`;
  q("#tn-who").textContent = t("tn.signed", { name: who.name });
  q("#tn-signout").textContent = t("tn.signout");
  q("#tn-signout").onclick = () => { try { sessionStorage.removeItem(ORG_KEY); } catch (e) { /* gone */ } route(); };
  await createForm(here);
}

async function createForm(here) {
  let modes = null;
  let bots = { bots: [] };
  try { modes = await getJSON("/api/modes"); } catch (err) { modes = { tables: [{ ruleset: "standard", players: 5, options: {} }] }; }
  try { bots = await getJSON("/api/bot-accounts"); } catch (err) { /* none */ }
  if (!here.live) return;
  const form = q("#tn-form");
  form.hidden = false;
  const rulesets = [...new Set(modes.tables.map((x) => x.ruleset))];
  const field = (key, input) => `<label><span>${esc(t(key))}</span> ${input}</label>`;
  form.innerHTML = `
    ${field("tn.name", `<input id="tn-n" maxlength="80">`)}
    ${field("tn.ruleset", `<select id="tn-ruleset">${rulesets.map((r) => `<option ${r === "standard" ? "selected" : ""}>${esc(r)}</option>`).join("")}</select>`)}
    ${field("tn.players", `<select id="tn-players"></select>`)}
    ${field("tn.options", `<input id="tn-options" value="{}" size="16">`)}
    ${field("tn.games", `<input id="tn-games" type="number" min="1" max="100000" value="20" size="6">`)}
    ${field("tn.seed", `<input id="tn-seed" type="number" min="0" value="1" size="6">`)}
    ${field("tn.assign", `<select id="tn-assign"><option value="seat">${esc(t("tn.assign.seat"))}</option><option value="camp">${esc(t("tn.assign.camp"))}</option></select>`)}
    ${field("tn.engines", `<input id="tn-engines" type="number" min="0" max="64" value="0" size="3">`)}
    ${field("tn.time", `<input id="tn-time" type="number" min="2" max="120" value="15" size="3">`)}
    ${field("tn.hosted", `<input id="tn-hosted" type="number" min="0" max="20" value="2" size="3">`)}
    <fieldset><legend>${esc(t("tn.entrants"))}</legend>
      <div><span>${esc(t("tn.policies"))}:</span> ${POLICIES.map((p) => `<label><input type="checkbox" name="policy" value="${p}" ${p === "heuristic" || p === "random" ? "checked" : ""}> ${p}</label>`).join(" ")}</div>
      <div id="tn-botlist"><span>${esc(t("tn.bots"))}:</span> </div>
      <div>${field("tn.people", `<input id="tn-people" size="40">`)}</div>
    </fieldset>
    <button id="tn-go" type="submit">${esc(t("tn.create"))}</button>`;
  const list = q("#tn-botlist");
  for (const b of bots.bots) {
    const label = document.createElement("label");
    label.innerHTML = `<input type="checkbox" name="bot"> <span></span>`;
    label.querySelector("input").value = b.player;
    label.querySelector("span").textContent = `${b.name} (${b.player})`;
    list.appendChild(label);
  }
  const sizes = () => {
    const r = q("#tn-ruleset").value;
    const ps = [...new Set(modes.tables.filter((x) => x.ruleset === r).map((x) => x.players))];
    q("#tn-players").innerHTML = ps.map((p) => `<option ${p === 5 ? "selected" : ""}>${p}</option>`).join("");
  };
  q("#tn-ruleset").onchange = sizes;
  sizes();
  form.onsubmit = async (ev) => {
    ev.preventDefault();
    q("#tn-error").textContent = "";
    let options = {};
    try { options = JSON.parse(q("#tn-options").value || "{}"); } catch (err) { q("#tn-error").textContent = `options: ${err.message}`; return; }
    const picked = (name) => [...form.querySelectorAll(`input[name=${name}]:checked`)].map((x) => x.value);
    const people = q("#tn-people").value.split(",").map((x) => x.trim()).filter(Boolean);
    const body = {
      name: q("#tn-n").value,
      ruleset: q("#tn-ruleset").value,
      players: Number(q("#tn-players").value),
      options,
      entrants: [...picked("bot"), ...people, ...picked("policy")],
      games: Number(q("#tn-games").value),
      seed: Number(q("#tn-seed").value),
      assign: q("#tn-assign").value,
      engines: Number(q("#tn-engines").value),
      time_limit_ms: Math.round(Number(q("#tn-time").value) * 1000),
      hosted_after: Number(q("#tn-hosted").value),
    };
    try {
      const made = await orgCall("POST", "/api/tournaments", body);
      location.hash = `#/tournament/${made.key}`;
    } catch (err) {
      q("#tn-error").textContent = err.message;
    }
  };
}

async function tournamentPage(key) {
  const here = page;
  const first = await getJSON(`/api/tournaments/${encodeURIComponent(key)}`);
  if (!here.live) return;
  app.innerHTML = `<section class="tournament" data-key="${esc(key)}">
    <h2 id="tn-head"></h2><p id="tn-meta"></p>
    <div class="tn-progress"><div class="bar"><i id="tn-bar"></i></div> <span id="tn-count"></span> <span id="tn-state"></span>
      <a id="tn-json" href="/api/tournaments/${esc(key)}" target="_blank"></a> <a id="tn-csv" href="/api/tournaments/${esc(key)}/games.csv"></a> <span id="tn-controls"></span></div>
    <h3 id="tn-camps-title"></h3><table class="tn-camps" id="tn-camps"></table>
    <h3 id="tn-entrants-title"></h3><table class="tn-entrants" id="tn-entrants"></table>
    <h3 id="tn-live-title"></h3><ul class="tn-live" id="tn-live"></ul>
    <h3 id="tn-results-title"></h3><table class="tn-results" id="tn-results"></table></section>`;
  q("#tn-json").textContent = `${t("tn.export")} JSON`;
  q("#tn-csv").textContent = `${t("tn.export")} CSV`;
  q("#tn-camps-title").textContent = t("tn.camps");
  q("#tn-entrants-title").textContent = t("tn.entrants");
  q("#tn-live-title").textContent = t("tn.live");
  q("#tn-results-title").textContent = t("tn.results");
  const render = (x) => {
    const s = x.summary;
    const names = Object.fromEntries(s.entrants.map((e) => [e.id, e]));
    const nameOf = (id) => (names[id] ? names[id].name : id);
    const nm = namer(s.ruleset, [], {});
    q("#title").textContent = `${t("tn.title")}: ${s.name || s.key}`;
    q("#tn-head").textContent = s.name || s.key;
    q("#tn-meta").textContent = `${s.ruleset} ${s.players} · ${s.entrants.map((e) => `${e.name} (${t(`tn.kind.${e.kind}`)})`).join(", ")} · ${t(`tn.host.${s.host}`)}${s.organiser ? ` · ${t("tn.by", { name: s.organiser })}` : ""}`;
    q("#tn-bar").style.width = `${s.games ? (100 * s.done) / s.games : 0}%`;
    q("#tn-count").textContent = t("tn.progress", { done: s.done, games: s.games });
    const state = s.running ? "tn.running" : s.done >= s.games ? "tn.done" : s.stopped ? "tn.stopped" : "tn.idle";
    q("#tn-state").textContent = t(state);
    q("#tn-state").dataset.state = state.slice(3);
    const st = x.standings;
    const camps = st.per_camp || {};
    q("#tn-camps").innerHTML = `<tr><th>${esc(t("tn.camp"))}</th><th>${esc(t("tn.wins"))}</th><th>${esc(t("tn.rate"))}</th></tr>` +
      Object.entries(camps).map(([c, r]) => `<tr data-camp="${esc(c)}"><td>${esc(c === "draw" ? t("tn.draw") : tOr(`chart.camp.${c}`, c))}</td><td>${r.wins} ${esc(t("tn.of"))} ${r.games}</td>${rateCell(r)}</tr>`).join("");
    const roles = [...new Set(Object.values(st.per_role || {}).flatMap((r) => Object.keys(r)))];
    const ratings = st.ratings || {};
    q("#tn-entrants").innerHTML = `<tr><th>${esc(t("tn.entrant"))}</th><th>${esc(t("tn.rate"))}</th>${roles.map((r) => `<th>${esc(nm.role(r))}</th>`).join("")}<th>${esc(t("tn.rating"))}</th></tr>` +
      Object.entries(st.per_policy || {}).map(([e, r]) => `<tr data-entrant="${esc(e)}"><td class="who"></td>${rateCell(r)}${roles.map((role) => rateCell((st.per_role[e] || {})[role])).join("")}<td>${ratings[e] ? `${ratings[e].mu.toFixed(2)} ± ${ratings[e].sigma.toFixed(2)}` : "–"}</td></tr>`).join("");
    q("#tn-entrants").querySelectorAll("tr[data-entrant]").forEach((tr) => { tr.querySelector(".who").textContent = nameOf(tr.dataset.entrant); });
    q("#tn-live").innerHTML = x.live.map((g) => `<li data-game="${esc(g)}"><a href="#/live/${esc(g)}">${esc(g)}</a> <span class="tn-odds"></span></li>`).join("") || `<li class="none">–</li>`;
    odds();
    q("#tn-results").innerHTML = `<tr><th>#</th><th>${esc(t("tn.game"))}</th><th>${esc(t("tn.entrants"))}</th><th>${esc(t("tn.winners"))}</th></tr>` +
      x.results.slice().reverse().map((r) => `<tr data-game="${esc(r.game)}"><td>${r.i}</td><td><a href="#/replay/${esc(r.game)}">${esc(r.game)}</a></td><td class="seats"></td><td class="won"></td></tr>`).join("");
    const shown = x.results.slice().reverse();
    q("#tn-results").querySelectorAll("tr[data-game]").forEach((tr, i) => {
      const r = shown[i];
      tr.querySelector(".seats").textContent = r.seats.map((e, seat) => `${nameOf(e)}${r.roles[seat] ? `·${nm.role(r.roles[seat])}` : ""}`).join(", ");
      tr.querySelector(".won").textContent = r.draw ? t("tn.draw") : [...new Set(r.winners.map((w) => nameOf(r.seats[w])))].join(", ");
    });
    const controls = q("#tn-controls");
    controls.innerHTML = "";
    if (organiserToken() && s.done < s.games) {
      const b = document.createElement("button");
      b.textContent = t(s.running ? "tn.stop" : "tn.resume");
      b.onclick = async () => {
        try { await orgCall("POST", `/api/tournaments/${encodeURIComponent(key)}/${s.running ? "stop" : "resume"}`); } catch (err) { q("#tn-state").textContent = t("tn.error", { e: err.message }); }
      };
      controls.appendChild(b);
    }
    window.arenaTournament = x;
  };
  // each game in play with its chances now (its chart's latest point, as a spectator sees it)
  const odds = async () => {
    for (const li of document.querySelectorAll("#tn-live li[data-game]")) {
      let c = null;
      try { c = await getJSON(`/api/games/${encodeURIComponent(li.dataset.game)}/chart`); } catch (err) { continue; }
      if (!here.live || !c.points.length) continue;
      const last = c.points[c.points.length - 1];
      const span = li.querySelector(".tn-odds");
      if (!span) continue;
      span.innerHTML = `<span class="odds-bar">${c.camps.map((camp, i) => `<i style="width:${(last[i + 1] * 100).toFixed(1)}%;background:${CAMP_COLOURS[camp.key] || SPARE_COLOURS[i % SPARE_COLOURS.length]}"></i>`).join("")}</span> `;
      span.append(c.camps.map((camp, i) => `${tOr(`chart.camp.${camp.key}`, camp.role)} ${Math.round(last[i + 1] * 100)}%`).join(" · "));
    }
  };
  const every = setInterval(odds, 4000);
  render(first);
  const es = new EventSource(`/api/tournaments/${encodeURIComponent(key)}/stream`);
  es.addEventListener("tournament", (m) => { if (here.live) render(JSON.parse(m.data)); });
  es.onerror = () => { q("#conn").textContent = t("conn.reconnecting"); };
  es.onopen = () => { q("#conn").textContent = t("conn.live"); };
  stopCurrent = () => { es.close(); clearInterval(every); };
}

addRoute("tournaments", () => tournaments());
addRoute("tournament", (p) => (p[1] ? tournamentPage(p[1]) : tournaments()));

// the header's way to the tournaments and TV
document.addEventListener("DOMContentLoaded", () => {
  const header = document.querySelector("header");
  if (!header || q("#nav-extra")) return;
  const nav = document.createElement("nav");
  nav.id = "nav-extra";
  nav.className = "nav-extra";
  nav.innerHTML = `<a href="#/tv" id="nav-tv"></a> <a href="#/tournaments" id="nav-tn"></a>`;
  const title = q("#title");
  header.insertBefore(nav, title ? title.nextSibling : null);
  const label = () => { q("#nav-tv").textContent = t("nav.tv"); q("#nav-tn").textContent = t("nav.tournaments"); };
  label();
  window.addEventListener("hashchange", label);
  q("#lang") && q("#lang").addEventListener("click", () => setTimeout(label, 0));
});
