// The lobby: sit down (a guest name), quick play or open a table (standard identity for 5 by
// default, as /api/modes says), join an open one; live games to watch and finished games to
// replay, with the side that won and the players. A person whose seat died, or who just left a
// game, is told so here and may watch it.
"use strict";

function seatsText(g) {
  return g.players.map((p, i) => (g.bots[i] ? t("bot") : g.names && g.names[i] ? g.names[i] : p));
}

const rulesetName = (r) => tOr(`rs.${r}`, r);
const levelName = (l) => tOr(`level.${l}`, l);

async function lobby() {
  const here = page;
  q("#title").textContent = t("lobby");
  app.innerHTML = `<section class="lobby">
    <div class="notice" id="notice" hidden></div>
    <div class="playbox" id="playbox"></div>
    <h2>${esc(t("open_tables"))}</h2><table id="open"></table>
    <h2>${esc(t("live_games"))}</h2><table id="live"></table>
    <h2>${esc(t("recent_games"))}</h2><table id="recent"></table></section>`;
  let modes = null;
  let me = null;
  let status = null;
  const names = {};
  try { modes = await getJSON("/api/modes"); Object.assign(names, modes.names || {}); } catch (err) { modes = null; }
  if (!here.live) return;
  const roleWord = (ruleset, r) => namer(ruleset, [], names[ruleset] || {}).role(r);
  const error = (err) => { const el = q("#play-error") || q("#guest-error"); if (el) el.textContent = err.message; };

  const renderNotice = () => {
    const box = q("#notice");
    const seated = me && me.seated;
    const parts = [];
    let text = "";
    if (seated && !seated.over && !seated.alive) { // dead, still at the seat: watch from it, or leave
      const g = encodeURIComponent(seated.game);
      parts.push(`<p><span class="text"></span> <a href="#/play/${g}/${seated.seat}">${esc(t("watch_seat"))}</a> · <button id="leave-seat" type="button">${esc(t("leave_seat"))}</button></p>`);
      text = t("dead_banner", { game: seated.game });
    } else if (flash && flash.game) { // just left a game that goes on: watch it as a spectator
      parts.push(`<p><span class="text"></span> <a href="#/live/${encodeURIComponent(flash.game)}">${esc(t("watch"))}</a></p>`);
      text = t(flash.dead ? "dead_banner" : "left_banner", { game: flash.game });
    }
    box.hidden = !parts.length;
    box.innerHTML = parts.join("");
    if (q("#notice .text")) q("#notice .text").textContent = text;
    const leave = q("#leave-seat");
    if (leave) {
      leave.onclick = async () => {
        try {
          await call("POST", `/api/games/${encodeURIComponent(seated.game)}/seats/${seated.seat}/resign`);
          flash = { game: seated.game, dead: true };
          await refreshMe();
        } catch (err) { error(err); }
      };
    }
  };

  const renderPlay = () => {
    const box = q("#playbox");
    if (!modes) { box.innerHTML = `<p class="none">${esc(t("no_matchmaker"))}</p>`; return; }
    if (!me) {
      box.innerHTML = `<form id="guest"><label>${esc(t("your_name"))} <input id="name" maxlength="32" required placeholder="${esc(t("name_placeholder"))}"></label> <button>${esc(t("sit_down"))}</button></form><div class="error" id="guest-error"></div>`;
      q("#guest").onsubmit = async (ev) => {
        ev.preventDefault();
        try { await call("POST", "/api/guests", { name: q("#name").value }); await refreshMe(); } catch (err) { error(err); }
      };
      return;
    }
    const who = `<p class="me">${esc(t("playing_as"))}<b id="me-name"></b></p>`;
    if (me.waiting) {
      box.innerHTML = `${who}<p id="waiting">${esc(t("waiting_at"))} <span id="waited"></span> <button id="leave">${esc(t("leave"))}</button></p><div class="error" id="play-error"></div>`;
      q("#me-name").textContent = me.name;
      q("#leave").onclick = async () => { try { await call("DELETE", "/api/me/ticket"); await refreshMe(); } catch (err) { error(err); } };
      return;
    }
    const rulesets = [...new Set(modes.tables.map((tb) => tb.ruleset))];
    const start = modes.default || modes.tables[0];
    box.innerHTML = `${who}
      <form id="table-form" class="table-form">
        <label>${esc(t("ruleset"))} <select id="ruleset">${rulesets.map((r) => `<option value="${esc(r)}" ${r === start.ruleset ? "selected" : ""}>${esc(rulesetName(r))}</option>`).join("")}</select></label>
        <label>${esc(t("players"))} <select id="players"></select></label>
        <label>${esc(t("preset"))} <select id="preset"></select></label>
        <label>${esc(t("bots"))} <select id="level">${modes.bot_levels.map((l) => `<option value="${esc(l)}">${esc(levelName(l))}</option>`).join("")}</select></label>
        <label>${esc(t("bots_after"))} <input id="botwait" type="number" min="0" max="600" step="any" value="10" size="4"> ${esc(t("seconds"))}</label>
        <label>${esc(t("time_per_decision"))} <input id="timelimit" type="number" min="2" max="120" step="any" value="30" size="4"> ${esc(t("seconds"))}</label>
        <label>${esc(t("hosted_after"))} <input id="hostedafter" type="number" min="0" max="20" value="2" size="3"> ${esc(t("times"))}</label>
        <span class="buttons"><button id="quick" type="submit">${esc(t("quick_play"))}</button> <button id="open-table" type="button">${esc(t("open_table"))}</button></span>
      </form><div class="error" id="play-error"></div>`;
    q("#me-name").textContent = me.name;
    const sizes = () => modes.tables.filter((tb) => tb.ruleset === q("#ruleset").value);
    const presets = () => (modes.presets || {})[q("#ruleset").value] || [{ id: "default", names: {}, options: {} }];
    const fill = (players) => {
      q("#players").innerHTML = sizes().map((tb, i) => `<option value="${i}" ${tb.players === players ? "selected" : ""}>${tb.players}</option>`).join("");
      q("#preset").innerHTML = presets().map((p) => `<option value="${esc(p.id)}">${esc(p.names[LANG] || p.id)}</option>`).join("");
    };
    q("#ruleset").onchange = () => fill(0);
    fill(start.players);
    const settings = () => {
      const size = sizes()[Number(q("#players").value)];
      const preset = presets().find((p) => p.id === q("#preset").value) || presets()[0];
      return {
        ruleset: q("#ruleset").value, players: size.players, options: { ...size.options, ...preset.options },
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
        flash = null;
        await refreshMe();
      } catch (err) { error(err); }
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
      else if (q("#waited")) q("#waited").textContent = `(${Math.round(st.waited_ms / 1000)} ${t("seconds")})`;
    });
    status.addEventListener("end", () => { if (status) status.close(); status = null; });
  };
  const refreshMe = async () => {
    if (!modes) { renderPlay(); return; }
    try { me = await getJSON("/api/me"); } catch (err) { me = null; }
    if (!here.live) return;
    const s = me && me.seated;
    if (s && !s.over && s.alive) { // back to the game the person is playing
      location.hash = `#/play/${encodeURIComponent(s.game)}/${s.seat}`;
      return;
    }
    renderNotice();
    renderPlay();
    if (me && me.waiting) follow();
  };

  const refresh = async () => {
    try {
      const [open, listed] = await Promise.all([modes ? getJSON("/api/tables") : null, getJSON("/api/games?limit=200")]);
      if (!here.live) return;
      if (open) {
        q("#open").innerHTML = open.tables.map((tb) => `<tr data-table="${esc(tb.table)}"><td>${esc(rulesetName(tb.settings.ruleset))}</td><td>${esc(t("seated_n", { n: tb.waiting.length, m: tb.settings.players }))}</td>
          <td class="names"></td><td>${esc(t("bots_level", { level: levelName(tb.settings.bot_level), s: Math.round(tb.settings.bot_after_ms / 1000) }))}</td>
          <td>${me && !me.waiting ? `<button class="join" data-table="${esc(tb.table)}">${esc(t("join"))}</button>` : ""}</td></tr>`).join("") || `<tr><td>${esc(t("none_now"))}</td></tr>`;
        open.tables.forEach((tb) => { const el = q(`tr[data-table="${CSS.escape(tb.table)}"] .names`); if (el) el.textContent = tb.waiting.join(", "); });
        document.querySelectorAll("button.join").forEach((b) => {
          b.onclick = async () => { try { await call("POST", `/api/tables/${encodeURIComponent(b.dataset.table)}/join`); await refreshMe(); } catch (err) { error(err); } };
        });
      } else {
        q("#open").innerHTML = "<tr><td>—</td></tr>";
      }
      const games = listed.games;
      const row = (g, isLive) => `<tr data-game="${esc(g.id)}"><td><a href="#/${isLive ? "live" : "replay"}/${encodeURIComponent(g.id)}">${esc(g.id)}</a></td>
        <td>${esc(rulesetName(g.ruleset))}</td><td class="players"></td><td>${esc(when(g.start))}</td>
        <td class="side">${isLive ? esc(t("entries_n", { n: g.version })) : ""}</td>
        <td>${isLive ? `<a href="#/replay/${encodeURIComponent(g.id)}">${esc(t("from_start"))}</a>` : `<span class="winners"></span>`}</td></tr>`;
      const fillRows = (el, list, isLive) => {
        el.innerHTML = list.map((g) => row(g, isLive)).join("") || `<tr><td>${esc(isLive ? t("none_now") : t("none_yet"))}</td></tr>`;
        list.forEach((g) => {
          const tr = el.querySelector(`tr[data-game="${CSS.escape(g.id)}"]`);
          if (!tr) return;
          const players = seatsText(g);
          tr.querySelector(".players").textContent = players.join(", ");
          const w = tr.querySelector(".winners");
          if (w) w.textContent = g.winners.map((s) => players[s]).join(", ");
          // the side that won: its roles, or (a game without roles: 1v1) its players
          const sides = (g.sides || []).map((r) => roleWord(g.ruleset, r)).join(", ");
          if (!isLive) tr.querySelector(".side").textContent = t("winners", { who: sides || w.textContent || "—" });
        });
      };
      fillRows(q("#live"), games.filter((g) => !g.finished), true);
      fillRows(q("#recent"), games.filter((g) => g.finished), false);
      q("#conn").textContent = "";
    } catch (err) { if (here.live) q("#conn").textContent = `${t("lobby")}: ${err.message}`; }
  };
  await refreshMe();
  if (!here.live) return;
  await refresh();
  if (!here.live) return;
  const timer = setInterval(refresh, 3000);
  stopCurrent = () => { clearInterval(timer); if (status) status.close(); };
}
