// The person's own seat: the table from its side, and the dock below it: the pending decision
// drawn from the decision's kind with only its legal options (the server labels every option,
// in the page's language: a card, a seat, a skill, a general, a suit, a random hand card, a
// word), and the seat's hand. Everything goes through the play API (services/play), with the
// session cookie. A dead seat watches the rest (or leaves for the lobby); resigning leaves.
"use strict";

async function playSeat(game, seat) {
  const here = page;
  const info = await gameInfo(game, true);
  if (!here.live) return;
  const n = namer(info.header.ruleset, info.cards, info.names, info.english);
  const fold = newFold(seat);
  const v = fold.view, hosted = fold.hosted; // folded in place by foldEntry
  const names = seatNamer(info, n, () => v, seat);
  q("#title").textContent = t("seat_title", { game });
  const base = `/api/games/${encodeURIComponent(game)}/seats/${seat}`;
  tableShell(`${rulesetName(info.header.ruleset)} · ${game}`, `
    <div class="seat-controls"><button id="hosting"></button> <select id="hostlevel"></select>
    <button id="resign"></button>
    <a href="#/live/${encodeURIComponent(game)}" class="spectate"></a></div>`,
  `<div class="panel" id="decision-panel"></div><div class="myhand" id="myhand"></div>`);
  q("#resign").textContent = t("resign");
  // the bot level of this seat's 托管: the person's own default, kept on the server with their
  // account (GET/PUT /api/me/settings: another device sees it); "" = the table's. The server
  // records it for each seat it opens for them, and for this seat when it is set here.
  const hostLevel = q("#hostlevel");
  hostLevel.title = t("hosting_level");
  hostLevel.innerHTML = `<option value="">${esc(t("level.table"))}</option>`;
  Promise.all([call("GET", "/api/modes"), call("GET", "/api/me/settings")]).then(([m, mine]) => {
    for (const l of m.bot_levels || []) {
      hostLevel.insertAdjacentHTML("beforeend", `<option value="${esc(l)}">${esc(tOr(`level.${l}`, l))}</option>`);
    }
    if ((m.bot_levels || []).includes(mine.hosted_level)) hostLevel.value = mine.hosted_level;
  }).catch(() => {});
  const hostBody = (on) => (on && hostLevel.value ? { hosted: true, level: hostLevel.value } : { hosted: on });
  q(".spectate").textContent = t("spectate");
  const usedAs = {};
  let decision = null, waits = null, offset = 0, picked = [], busy = false, drawn = false, seq = 0;
  let pending = [];
  let killer = -1;
  const panel = q("#decision-panel");

  const send = async (picks) => {
    if (!decision || busy) return;
    const id = decision.id; // the next decision may arrive before this answer's response
    busy = true;
    panel.classList.add("busy");
    try {
      await call("POST", `${base}/answer`, { decision: id, picks });
      if (decision && decision.id === id) panel.dataset.answered = id;
    } catch (err) {
      if (!decision || decision.id !== id) return; // moved on meanwhile: nothing to show
      q("#answer-error").textContent = err.message;
      busy = false;
      panel.classList.remove("busy");
    }
  };
  const choose = (key) => {
    if (!decision || busy) return;
    const single = decision.max === 1 && decision.min <= 1;
    if (single) return send([key]);
    picked = picked.includes(key) ? picked.filter((k) => k !== key) : [...picked, key];
    if (picked.length > decision.max) picked = picked.slice(picked.length - decision.max);
    markPicked();
  };
  const markPicked = () => {
    panel.querySelectorAll("button.opt").forEach((b) => {
      const i = picked.indexOf(b.dataset.key);
      b.classList.toggle("picked", i >= 0);
      b.dataset.order = decision && decision.ordered && i >= 0 ? String(i + 1) : "";
    });
    document.querySelectorAll("#myhand .card, .seat").forEach((el) => {
      const key = el.dataset.card !== undefined ? `card:${el.dataset.card}` : `seat:${el.dataset.seat}`;
      el.classList.toggle("picked", picked.includes(key));
    });
    const ok = q("#ok");
    if (ok) {
      ok.disabled = !(picked.length >= decision.min && picked.length <= decision.max);
      ok.textContent = t("ok", { n: picked.length });
    }
  };
  const leave = async () => {
    try {
      await call("POST", `${base}/resign`);
    } catch (err) {
      if (err.status !== 409) { q("#conn").textContent = err.message; return; }
    }
    const mine = v.seats[seat];
    flash = v.over ? null : { game, dead: !!mine && !mine.alive };
    location.hash = "#/";
  };
  const renderIdle = () => {
    picked = [];
    delete panel.dataset.id;
    delete panel.dataset.kind;
    panel.classList.remove("busy");
    const mine = v.seats[seat];
    let html;
    if (v.over) {
      const result = v.winners.includes(seat) ? "over_won" : v.winners.length ? "over_lost" : "over_draw";
      html = `<div class="prompt" id="result"></div><a href="#/" class="back"></a>`;
      panel.innerHTML = html;
      q("#result").textContent = t(result);
    } else if (mine && !mine.alive) {
      // drawn once, then only its words: while the others play on this runs at every event,
      // and a button made anew each time lost the click of whoever pressed it meanwhile
      if (!panel.querySelector("#to-lobby")) {
        panel.innerHTML = `<div class="prompt dead" id="dead"></div><button id="to-lobby" type="button"></button>`;
      }
      q("#dead").textContent = t("dead", { by: killer >= 0 ? t("dead_by", { seat: names.long(killer) }) : "" });
      q("#to-lobby").textContent = t("back");
      q("#to-lobby").onclick = leave;
      return;
    } else {
      panel.innerHTML = `<div class="prompt waiting"></div>`;
      q(".prompt.waiting").textContent = hosted.has(seat) ? t("hosted_plays") : t("waiting");
      return;
    }
    q(".back").textContent = t("back");
  };
  const renderPanel = () => {
    if (!decision) { renderIdle(); return; }
    if (panel.dataset.id === String(decision.id) && panel.dataset.deadline === String(decision.deadline_ms)) return;
    picked = [];
    busy = false;
    panel.classList.remove("busy");
    panel.dataset.id = decision.id;
    panel.dataset.kind = decision.kind;
    panel.dataset.deadline = decision.deadline_ms;
    panel.dataset.min = decision.min;
    panel.dataset.max = decision.max;
    const single = decision.max === 1 && decision.min <= 1;
    panel.innerHTML = `<div class="head"><div class="prompt"></div><div class="clock" id="clock"></div></div>
      <div class="options">${decision.options.map((o) => `<button class="opt opt-${esc(o.type)}${o.card >= 0 && n.red(o.card) ? " red" : ""}${o.about ? " has-about" : ""}" data-key="${esc(o.key)}" data-type="${esc(o.type)}"><span class="label"></span>${o.about ? '<small class="about"></small>' : ""}</button>`).join("")}</div>
      <div class="actions">${single ? "" : '<button id="ok" disabled></button>'}${decision.declinable ? `<button id="decline">${esc(tOr(`decline.${decision.kind}`, t("decline.other")))}</button>` : ""}</div>
      <div class="error" id="answer-error"></div>`;
    panel.querySelector(".prompt").textContent = decision.prompt;
    panel.querySelectorAll("button.opt").forEach((b, i) => {
      const o = decision.options[i];
      b.querySelector(".label").textContent = o.text;
      if (o.about) { b.querySelector(".about").textContent = o.about; b.title = o.about; }
      b.onclick = () => choose(b.dataset.key);
    });
    if (q("#ok")) q("#ok").onclick = () => send(picked);
    if (q("#decline")) q("#decline").onclick = () => send([]);
    markPicked();
  };
  const renderHand = () => {
    const me = v.seats[seat];
    const keys = new Set(decision ? decision.options.map((o) => o.key) : []);
    q("#myhand").innerHTML = me ? `<span class="label">${esc(t("your_hand"))}</span>` + me.hand.map((c) => `<span class="card big ${n.red(c) ? "red" : ""}${keys.has(`card:${c}`) ? " pickable" : ""}" data-card="${c}">${esc(n.card(c))}</span>`).join("") : "";
    q("#myhand").querySelectorAll(".card.pickable").forEach((el) => { el.onclick = () => choose(`card:${el.dataset.card}`); });
    document.querySelectorAll(".seat").forEach((el) => {
      const key = `seat:${el.dataset.seat}`;
      el.classList.toggle("pickable", keys.has(key));
      el.onclick = keys.has(key) ? () => choose(key) : null;
    });
  };
  const flush = () => {
    drawn = false;
    if (!here.live) return;
    addLog(pending);
    pending = [];
    renderTable(v, info, n, names, { bottom: seat, hosted, me: seat, usedAs, seq });
    renderWaits(waits, names);
    renderPanel();
    renderHand();
    markPicked();
    q("#hosting").textContent = hosted.has(seat) ? t("take_back") : t("hosting");
    q("#hosting").disabled = v.over || !(v.seats[seat] || { alive: true }).alive;
    q("#resign").disabled = v.over;
  };
  const redraw = () => { if (!drawn) { drawn = true; requestAnimationFrame(flush); } };
  const tick = setInterval(() => {
    const el = q("#clock");
    if (!el || !decision) return;
    if (!decision.deadline_ms) { el.textContent = t("bot_answers"); return; }
    const left = Math.max(0, Math.ceil((decision.deadline_ms - (Date.now() + offset)) / 1000));
    el.textContent = t("seconds_left", { n: left });
    el.classList.toggle("short", left <= 5);
  }, 250);
  q("#hosting").onclick = async () => {
    try {
      await call("POST", `${base}/hosted`, hostBody(!hosted.has(seat)));
    } catch (err) { q("#conn").textContent = err.message; }
  };
  hostLevel.onchange = async () => { // the person's default (on 托管 already: its bot plays at it)
    try {
      await call("PUT", "/api/me/settings", { hosted_level: hostLevel.value });
    } catch (err) { q("#conn").textContent = err.message; }
  };
  q("#resign").onclick = async () => {
    const dead = v.seats[seat] && !v.seats[seat].alive;
    if (!dead && !window.confirm(t("resign_confirm"))) return;
    await leave();
  };

  const es = new EventSource(`${base}/stream?lang=${LANG}`);
  es.onmessage = (m) => {
    const x = JSON.parse(m.data);
    foldEntry(fold, x);
    if (x.kind === "event") {
      trackUse(usedAs, x.event, n);
      if (x.event.type === "died" && x.event.seat === seat) killer = x.event.killer;
    }
    seq = x.seq;
    pending.push([x.seq, entryWords(x, n, names.short)]);
    redraw();
    q("#conn").textContent = t("conn.live");
  };
  es.addEventListener("decision", (m) => {
    const d = JSON.parse(m.data);
    decision = d.decision;
    waits = d.waits;
    if (d.now_ms) offset = d.now_ms - Date.now();
    redraw();
  });
  es.addEventListener("end", () => { es.close(); decision = null; q("#conn").textContent = t("conn.over"); redraw(); });
  es.onerror = () => { q("#conn").textContent = t("conn.reconnecting"); };
  es.addEventListener("refused", (m) => { es.close(); q("#conn").textContent = JSON.parse(m.data).error; });
  window.arenaSeat = { view: () => v, hosted: () => [...hosted], decision: () => decision };
  stopCurrent = () => { es.close(); clearInterval(tick); };
}
