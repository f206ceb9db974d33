// The lobby: sit down (a guest name), quick play or open a table, join an open one; live games
// to watch and finished games to replay, with the side that won and the players.
"use strict";

// Options a table may be opened with, by ruleset (each table size's own options come with it).
const PRESETS = {
  standard: [["with generals (draft)", { generals: "draft" }], ["vanilla", {}]],
  jinyu: [["谋攻", { mougong: true }], ["basic", {}]],
};

function seatsText(g) {
  return g.players.map((p, i) => `${g.names && g.names[i] ? g.names[i] : p}${g.bots[i] ? " (bot)" : ""}`);
}

async function lobby() {
  q("#title").textContent = "lobby";
  app.innerHTML = `<section class="lobby">
    <div class="playbox" id="playbox"></div>
    <h2>Open tables</h2><table id="open"></table>
    <h2>Live games</h2><table id="live"></table>
    <h2>Recent games</h2><table id="recent"></table></section>`;
  let modes = null;
  let me = null;
  let status = null;
  const names = {};
  try { modes = await getJSON("/api/modes"); Object.assign(names, modes.names || {}); } catch (err) { modes = null; }
  const roleWord = (ruleset, r) => (names[ruleset] && names[ruleset][r]) || ROLES[r] || r;

  const renderPlay = () => {
    const box = q("#playbox");
    if (!modes) { box.innerHTML = `<p class="none">This server only shows games (no matchmaker): watch and replay below.</p>`; return; }
    if (!me) {
      box.innerHTML = `<form id="guest"><label>Your name <input id="name" maxlength="32" required placeholder="a name to play under"></label> <button>sit down</button></form><div class="error" id="guest-error"></div>`;
      q("#guest").onsubmit = async (ev) => {
        ev.preventDefault();
        try { await call("POST", "/api/guests", { name: q("#name").value }); await refreshMe(); } catch (err) { q("#guest-error").textContent = err.message; }
      };
      return;
    }
    const who = `<p class="me">Playing as <b id="me-name"></b></p>`;
    if (me.waiting) {
      box.innerHTML = `${who}<p id="waiting">Waiting at a table… <span id="waited"></span> <button id="leave">leave</button></p><div class="error" id="play-error"></div>`;
      q("#me-name").textContent = me.name;
      q("#leave").onclick = async () => { try { await call("DELETE", "/api/me/ticket"); await refreshMe(); } catch (err) { q("#play-error").textContent = err.message; } };
      return;
    }
    const rulesets = [...new Set(modes.tables.map((t) => t.ruleset))];
    box.innerHTML = `${who}
      <form id="table-form" class="table-form">
        <label>ruleset <select id="ruleset">${rulesets.map((r) => `<option>${esc(r)}</option>`).join("")}</select></label>
        <label>players <select id="players"></select></label>
        <label>options <select id="preset"></select></label>
        <label>bots <select id="level">${modes.bot_levels.map((l) => `<option>${esc(l)}</option>`).join("")}</select></label>
        <label>bots join after <input id="botwait" type="number" min="0" max="600" step="any" value="10" size="4"> s</label>
        <label>time per decision <input id="timelimit" type="number" min="2" max="600" step="any" value="30" size="4"> s</label>
        <label>托管 after <input id="hostedafter" type="number" min="0" max="20" value="2" size="3"> time-outs</label>
        <button id="quick" type="submit">quick play</button> <button id="open-table" type="button">open a table</button>
      </form><div class="error" id="play-error"></div>`;
    q("#me-name").textContent = me.name;
    const fill = () => {
      const r = q("#ruleset").value;
      const sizes = modes.tables.filter((t) => t.ruleset === r);
      q("#players").innerHTML = sizes.map((t, i) => `<option value="${i}">${t.players}</option>`).join("");
      const presets = PRESETS[r] || [["default", {}]];
      q("#preset").innerHTML = presets.map((p, i) => `<option value="${i}">${esc(p[0])}</option>`).join("");
    };
    q("#ruleset").onchange = fill;
    fill();
    const settings = () => {
      const r = q("#ruleset").value;
      const size = modes.tables.filter((t) => t.ruleset === r)[Number(q("#players").value)];
      const preset = (PRESETS[r] || [["default", {}]])[Number(q("#preset").value)][1];
      return {
        ruleset: r, players: size.players, options: { ...size.options, ...preset },
        bot_after_ms: Math.round(Number(q("#botwait").value) * 1000) || 1,
        bot_level: q("#level").value,
        time_limit_ms: Math.round(Number(q("#timelimit").value) * 1000),
        hosted_after: Number(q("#hostedafter").value),
      };
    };
    const go = async (how) => {
      try {
        if (how === "quick") await call("POST", "/api/quickplay", { settings: settings() });
        else await call("POST", "/api/tables", settings());
        await refreshMe();
      } catch (err) { q("#play-error").textContent = err.message; }
    };
    q("#table-form").onsubmit = (ev) => { ev.preventDefault(); go("quick"); };
    q("#open-table").onclick = () => go("open");
  };

  const follow = () => { // the ticket's updates until seated (watching keeps it alive)
    if (status) return;
    status = new EventSource("/api/me/stream");
    status.addEventListener("status", (m) => {
      const st = JSON.parse(m.data);
      if (st.state === "seated") { status.close(); location.hash = `#/play/${encodeURIComponent(st.seated.game)}/${st.seated.seat}`; }
      else if (st.state === "idle") { status.close(); status = null; refreshMe(); }
      else if (q("#waited")) q("#waited").textContent = `(${Math.round(st.waited_ms / 1000)} s)`;
    });
    status.addEventListener("end", () => { if (status) status.close(); status = null; });
  };
  const refreshMe = async () => {
    if (!modes) { renderPlay(); return; }
    try { me = await getJSON("/api/me"); } catch (err) { me = null; }
    if (me && me.seated && !me.seated.over) { // back to the game the person is playing
      location.hash = `#/play/${encodeURIComponent(me.seated.game)}/${me.seated.seat}`;
      return;
    }
    renderPlay();
    if (me && me.waiting) follow();
  };

  const refresh = async () => {
    try {
      if (modes) {
        const { tables } = await getJSON("/api/tables");
        q("#open").innerHTML = tables.map((t) => `<tr data-table="${esc(t.table)}"><td>${esc(t.settings.ruleset)}</td><td>${t.waiting.length}/${t.settings.players} seated</td>
          <td class="names"></td><td>bots: ${esc(t.settings.bot_level)} after ${Math.round(t.settings.bot_after_ms / 1000)} s</td>
          <td>${me && !me.waiting ? `<button class="join" data-table="${esc(t.table)}">join</button>` : ""}</td></tr>`).join("") || "<tr><td>none right now</td></tr>";
        tables.forEach((t) => { const el = q(`tr[data-table="${CSS.escape(t.table)}"] .names`); if (el) el.textContent = t.waiting.join(", "); });
        document.querySelectorAll("button.join").forEach((b) => {
          b.onclick = async () => { try { await call("POST", `/api/tables/${encodeURIComponent(b.dataset.table)}/join`); await refreshMe(); } catch (err) { q("#play-error").textContent = err.message; } };
        });
      } else {
        q("#open").innerHTML = "<tr><td>—</td></tr>";
      }
      const { games } = await getJSON("/api/games?limit=200");
      const row = (g, live) => `<tr data-game="${esc(g.id)}"><td><a href="#/${live ? "live" : "replay"}/${encodeURIComponent(g.id)}">${esc(g.id)}</a></td>
        <td>${esc(g.ruleset)}</td><td class="players"></td><td>${esc(when(g.start))}</td>
        <td class="side">${live ? `${g.version} entries` : ""}</td>
        <td>${live ? `<a href="#/replay/${encodeURIComponent(g.id)}">from the start</a>` : `<span class="winners"></span>`}</td></tr>`;
      const fillRows = (el, list, live) => {
        el.innerHTML = list.map((g) => row(g, live)).join("") || `<tr><td>${live ? "none right now" : "none yet"}</td></tr>`;
        list.forEach((g) => {
          const tr = el.querySelector(`tr[data-game="${CSS.escape(g.id)}"]`);
          if (!tr) return;
          const players = seatsText(g);
          tr.querySelector(".players").textContent = players.join(", ");
          const w = tr.querySelector(".winners");
          if (w) w.textContent = g.winners.map((s) => players[s]).join(", ");
          // the side that won: its roles, or (a game without roles: 1v1) its players
          const sides = (g.sides || []).map((r) => roleWord(g.ruleset, r)).join(", ");
          if (!live) tr.querySelector(".side").textContent = `winners: ${sides || w.textContent || "—"}`;
        });
      };
      fillRows(q("#live"), games.filter((g) => !g.finished), true);
      fillRows(q("#recent"), games.filter((g) => g.finished), false);
      q("#conn").textContent = "";
    } catch (err) { q("#conn").textContent = `lobby: ${err.message}`; }
  };
  await refreshMe();
  await refresh();
  const timer = setInterval(refresh, 3000);
  stopCurrent = () => { clearInterval(timer); if (status) status.close(); };
}
