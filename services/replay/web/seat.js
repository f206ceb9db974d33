// The person's own seat: the table from its side, its hand, and its pending decision drawn from
// the decision's kind with only its legal options (the server labels every option: a card, a
// seat, a skill, a general, a suit, a random hand card, a word). Everything goes through the
// play API (services/play), with the session cookie.
"use strict";

const DECLINE = { play: "end the phase", respond: "don't", targets: "cancel", confirm: "no", discard: "don't", cards: "cancel", choose: "skip", pick_card: "skip" };

async function gameInfo(game) {
  for (let i = 0; ; i++) { // a game just matched may take a moment to be started
    try { return await getJSON(`/api/games/${encodeURIComponent(game)}`); } catch (err) {
      if (err.status !== 404 || i > 40) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

async function playSeat(game, seat) {
  const info = await gameInfo(game);
  const n = namer(info.header.ruleset, info.cards, info.names);
  const seatName = seatNamer(info);
  const S = (i) => (i >= 0 && info.header.seats[i] ? `S${i}` : "—");
  q("#title").textContent = `playing ${info.header.ruleset} as ${seatName(seat)}`;
  tableShell(`${game}`, `
    <div class="seat-controls"><button id="hosting">托管</button> <button id="resign">resign</button>
    <a href="#/live/${encodeURIComponent(game)}" class="spectate">spectate</a></div>
    <div class="panel" id="decision-panel"></div>`);
  q("#below").innerHTML = `<div class="myhand" id="myhand"></div>`;
  const fold = newFold(seat);
  const v = fold.view, hosted = fold.hosted; // folded in place by foldEntry
  let decision = null, waits = null, offset = 0, picked = [], busy = false, drawn = false;
  let pending = [];
  const panel = q("#decision-panel");

  const send = async (picks) => {
    if (!decision || busy) return;
    const id = decision.id; // the next decision may arrive before this answer's response
    busy = true;
    panel.classList.add("busy");
    try {
      await call("POST", `/api/games/${encodeURIComponent(game)}/seats/${seat}/answer`, { decision: id, picks });
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
      ok.textContent = `OK (${picked.length})`;
    }
  };
  const renderPanel = () => {
    if (!decision) {
      picked = [];
      delete panel.dataset.id;
      delete panel.dataset.kind;
      panel.classList.remove("busy");
      const result = v.winners.includes(seat) ? "you won" : v.winners.length ? "you lost" : "a draw";
      panel.innerHTML = v.over ? `<div class="prompt" id="result">the game is over: ${result} — <a href="#/">back to the lobby</a></div>`
        : hosted.has(seat) ? `<div class="prompt">托管: your bot plays this seat</div>` : `<div class="prompt waiting">waiting…</div>`;
      return;
    }
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
    panel.innerHTML = `<div class="prompt"></div><div class="clock" id="clock"></div>
      <div class="options">${decision.options.map((o) => `<button class="opt opt-${esc(o.type)}${o.card >= 0 && n.red(o.card) ? " red" : ""}" data-key="${esc(o.key)}" data-type="${esc(o.type)}"></button>`).join("")}</div>
      <div class="actions">${single ? "" : '<button id="ok" disabled>OK</button>'}${decision.declinable ? `<button id="decline">${esc(DECLINE[decision.kind] || "pass")}</button>` : ""}</div>
      <div class="error" id="answer-error"></div>`;
    panel.querySelector(".prompt").textContent = decision.prompt;
    panel.querySelectorAll("button.opt").forEach((b, i) => {
      b.textContent = decision.options[i].text;
      b.onclick = () => choose(b.dataset.key);
    });
    if (q("#ok")) q("#ok").onclick = () => send(picked);
    if (q("#decline")) q("#decline").onclick = () => send([]);
    markPicked();
  };
  const renderHand = () => {
    const me = v.seats[seat];
    const keys = new Set(decision ? decision.options.map((o) => o.key) : []);
    q("#myhand").innerHTML = me ? `<span class="label">your hand</span>` + me.hand.map((c) => `<span class="card big ${n.red(c) ? "red" : ""}${keys.has(`card:${c}`) ? " pickable" : ""}" data-card="${c}">${esc(n.card(c))}</span>`).join("") : "";
    q("#myhand").querySelectorAll(".card.pickable").forEach((el) => { el.onclick = () => choose(`card:${el.dataset.card}`); });
    document.querySelectorAll(".seat").forEach((el) => {
      const key = `seat:${el.dataset.seat}`;
      el.classList.toggle("pickable", keys.has(key));
      el.onclick = keys.has(key) ? () => choose(key) : null;
    });
  };
  const flush = () => {
    drawn = false;
    addLog(pending);
    pending = [];
    renderTable(v, info, n, { bottom: seat, hosted, me: seat });
    renderWaits(waits, seatName);
    renderPanel();
    renderHand();
    markPicked();
    q("#hosting").textContent = hosted.has(seat) ? "take back" : "托管";
    q("#hosting").disabled = v.over;
    q("#resign").disabled = v.over;
  };
  const redraw = () => { if (!drawn) { drawn = true; requestAnimationFrame(flush); } };
  const tick = setInterval(() => {
    const el = q("#clock");
    if (!el || !decision) return;
    if (!decision.deadline_ms) { el.textContent = "托管: your bot answers"; return; }
    const left = Math.max(0, Math.ceil((decision.deadline_ms - (Date.now() + offset)) / 1000));
    el.textContent = `${left} s`;
    el.classList.toggle("short", left <= 5);
  }, 250);
  q("#hosting").onclick = async () => {
    try {
      await call("POST", `/api/games/${encodeURIComponent(game)}/seats/${seat}/hosted`, { hosted: !hosted.has(seat) });
    } catch (err) { q("#conn").textContent = err.message; }
  };
  q("#resign").onclick = async () => {
    if (!window.confirm("Leave the game? Your bot will play your seat to the end.")) return;
    try { await call("POST", `/api/games/${encodeURIComponent(game)}/seats/${seat}/resign`); } catch (err) { q("#conn").textContent = err.message; }
  };

  const es = new EventSource(`/api/games/${encodeURIComponent(game)}/seats/${seat}/stream`);
  es.onmessage = (m) => {
    const x = JSON.parse(m.data);
    foldEntry(fold, x);
    pending.push([x.seq, entryWords(x, n, S)]);
    redraw();
    q("#conn").textContent = "live";
  };
  es.addEventListener("decision", (m) => {
    const d = JSON.parse(m.data);
    decision = d.decision;
    waits = d.waits;
    if (d.now_ms) offset = d.now_ms - Date.now();
    redraw();
  });
  es.addEventListener("end", () => { es.close(); decision = null; q("#conn").textContent = "game over"; redraw(); });
  es.onerror = () => { q("#conn").textContent = "reconnecting…"; };
  es.addEventListener("refused", (m) => { es.close(); q("#conn").textContent = JSON.parse(m.data).error; });
  window.arenaSeat = { view: () => v, hosted: () => [...hosted], decision: () => decision };
  stopCurrent = () => { es.close(); clearInterval(tick); };
}
