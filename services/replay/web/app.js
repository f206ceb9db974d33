// Arena web viewer: lobby, live table (SSE) and replay. Plain JS, no build, no network but ours.
"use strict";

const HONGLOU = { "桃": "药", "八卦阵": "护官符", "雌雄双股剑": "鸳鸯剑", "诸葛连弩": "连弩",
  "青龙偃月刀": "青龙刀", "方天画戟": "画戟", lord: "主人", loyalist: "仆人", "主公技": "主人技" };
const ROLES = { lord: "主公", loyalist: "忠臣", rebel: "反贼", renegade: "内奸" };
const PHASES = { start: "准备", judge: "判定", draw: "摸牌", play: "出牌", discard: "弃牌", finish: "结束" };
const SUITS = { S: "♠", H: "♥", C: "♣", D: "♦" };
const RANKS = { 1: "A", 11: "J", 12: "Q", 13: "K" };
const app = document.getElementById("app");
let stopCurrent = () => {};

const esc = (t) => String(t).replace(/[&<>"']/g, (c) => `&#${c.charCodeAt(0)};`);
const q = (sel, root = document) => root.querySelector(sel);

async function getJSON(url) {
  const r = await fetch(url, { cache: "no-store" });
  const body = await r.json();
  if (!r.ok) throw new Error(body.error || r.statusText);
  return body;
}

// ---- names ---------------------------------------------------------------------------------

function namer(ruleset, cards) {
  const hl = ruleset === "honglou";
  const word = (w) => (hl && HONGLOU[w]) || w;
  const role = (r) => (r ? (hl && HONGLOU[r]) || ROLES[r] || r : "");
  const card = (id) => {
    const c = cards[id];
    if (!c) return `#${id}`;
    return `${word(c[0])}${SUITS[c[1]] || ""}${c[2] ? RANKS[c[2]] || c[2] : ""}`;
  };
  const red = (id) => cards[id] && (cards[id][1] === "H" || cards[id][1] === "D");
  return { word, role, card, red };
}

function describe(e, n, seatName) {
  const S = seatName;
  const list = (ids) => (ids || []).map(n.card).join(" ");
  const tg = (ts) => (ts && ts.length ? " → " + ts.map(S).join(", ") : "");
  switch (e.type) {
    case "game_started": return `game starts: ${e.players} players, ${e.deck} cards`;
    case "role_assigned": return e.role ? `${S(e.seat)} is ${n.role(e.role)}` : `${S(e.seat)} gets a hidden role`;
    case "general_chosen": return e.general ? `${S(e.seat)} plays ${e.general} (${e.hp}/${e.max_hp})` : `${S(e.seat)} picks a general`;
    case "turn_started": return `— round ${e.round}: ${S(e.seat)}'s turn —`;
    case "phase_started": return `${S(e.seat)}: ${PHASES[e.phase] || e.phase} phase`;
    case "turn_ended": return `${S(e.seat)}'s turn ends`;
    case "draft_offered": return `${S(e.seat)} is offered ${e.generals && e.generals.length ? e.generals.join(", ") : "generals"}`;
    case "phase_skipped": return `${S(e.seat)} skips the ${PHASES[e.phase] || e.phase} phase`;
    case "cards_moved": {
      const what = e.cards && e.cards.length ? list(e.cards) : `${e.count} card${e.count === 1 ? "" : "s"}`;
      const from = e.src_seat >= 0 ? `${S(e.src_seat)}'s ${e.src}` : e.src;
      const to = e.dst_seat >= 0 ? `${S(e.dst_seat)}'s ${e.dst}` : e.dst;
      return `${what}: ${from} → ${to}${e.reason ? ` (${n.word(e.reason)})` : ""}`;
    }
    case "deck_reshuffled": return `the discard pile is shuffled into the deck (${e.count})`;
    case "card_used": return `${S(e.user)} uses ${n.word(e.name)}${SUITS[e.suit] || ""}${tg(e.targets)}${e.skill ? ` [${e.skill}]` : ""}`;
    case "card_played": return `${S(e.seat)} plays ${n.word(e.name)}${e.skill ? ` [${e.skill}]` : ""}`;
    case "target_changed": return `${n.word(e.card)} turns from ${S(e.old)} to ${S(e.new)}`;
    case "nullified": return `${n.word(e.name)} on ${S(e.target)} is nullified`;
    case "ineffective": return `${n.word(e.name)} has no effect on ${S(e.target)} (${n.word(e.reason)})`;
    case "dodged": return `${S(e.target)} dodges ${n.word(e.name)}`;
    case "damaged": return `${S(e.target)} takes ${e.amount}${e.nature !== "normal" ? " " + e.nature : ""} damage${e.source >= 0 ? ` from ${S(e.source)}` : ""} → HP ${e.hp}`;
    case "hp_lost": return `${S(e.seat)} loses ${e.amount} HP → ${e.hp}`;
    case "recovered": return `${S(e.seat)} recovers ${e.amount} → HP ${e.hp}`;
    case "max_hp_changed": return `${S(e.seat)}'s max HP is now ${e.max_hp}`;
    case "dying": return `${S(e.seat)} is dying (HP ${e.hp})`;
    case "died": return `${S(e.seat)} dies — was ${n.role(e.role)}${e.killer >= 0 ? `, killed by ${S(e.killer)}` : ""}`;
    case "judged": return `${S(e.seat)}'s judgement for ${n.word(e.reason)}: ${n.card(e.card)} ${e.result ? "— takes effect" : "— no effect"}`;
    case "chain_toggled": return `${S(e.seat)} is ${e.chained ? "chained" : "unchained"}`;
    case "skill_invoked": return `${S(e.seat)} invokes ${n.word(e.skill)}${tg(e.targets)}`;
    case "suit_named": return `${S(e.seat)} names ${SUITS[e.suit] || e.suit}`;
    case "card_shown": return `${S(e.seat)} shows ${n.card(e.card)}`;
    case "counter_changed": return `${S(e.seat)}: ${e.counter} = ${e.value}`;
    case "game_ended": return e.draw ? "the game ends in a draw" : `the game ends: ${e.winners.map(n.role).join(", ")} win (${e.winner_seats.map(S).join(", ")})`;
    default: return e.type;
  }
}

function entryWords(x, n, S) {
  if (x.kind === "event") return describe(x.event, n, S);
  if (x.kind === "answer") return `${S(x.answer.seat)} answers decision ${x.answer.decision}: ${x.answer.picks.join(", ") || "declines"}`;
  if (x.kind === "seed_reveal") return `seed revealed: ${x.reveal.seed} (anyone can now verify every shuffle)`;
  if (x.kind === "header") return `table of ${x.header.players}, ruleset ${x.header.ruleset}, seed committed ${x.header.seed_commitment.slice(0, 12)}…`;
  return x.kind;
}

// ---- the table -----------------------------------------------------------------------------

function tableShell(title) {
  app.innerHTML = `
    <section class="table-page">
      <div class="felt" id="felt"><div class="centre" id="centre"></div></div>
      <aside class="side"><h3>${esc(title)}</h3><div id="controls"></div><ol class="log" id="log"></ol></aside>
    </section>`;
}

const ASKS = { play: "to play", discard: "to discard", targets: "to pick targets", draft: "to pick a general" };

// The public pending decision (services/replay/decisions.py): seat and kind only, live viewers only.
function renderDecision(d, seatName) {
  const el = q("#decision");
  if (!el) return;
  document.querySelectorAll(".seat.asked").forEach((b) => b.classList.remove("asked"));
  if (!d) { el.textContent = ""; delete el.dataset.seat; delete el.dataset.kind; return; }
  el.dataset.seat = d.seat;
  el.dataset.kind = d.kind;
  el.dataset.version = d.version;
  el.textContent = `waiting for ${seatName(d.seat)} ${ASKS[d.kind] || d.kind}`;
  const box = q(`.seat[data-seat="${d.seat}"]`);
  if (box) box.classList.add("asked");
}

function renderTable(v, info, n) {
  const felt = q("#felt");
  const N = v.seats.length;
  const seatName = (i) => (i >= 0 && info.header.seats[i] ? `S${i} ${info.header.seats[i].player}` : `S${i}`);
  let boxes = felt.querySelectorAll(".seat");
  if (boxes.length !== N) {
    felt.querySelectorAll(".seat").forEach((b) => b.remove());
    for (let i = 0; i < N; i++) {
      const b = document.createElement("div");
      b.className = "seat";
      b.dataset.seat = i;
      const a = Math.PI / 2 + (2 * Math.PI * i) / N; // seat 0 at the bottom, clockwise
      b.style.left = `${50 + 40 * Math.cos(a)}%`;
      b.style.top = `${50 + 38 * Math.sin(a)}%`;
      felt.appendChild(b);
    }
    boxes = felt.querySelectorAll(".seat");
  }
  v.seats.forEach((s, i) => {
    const b = boxes[i];
    b.dataset.hp = s.hp;
    b.dataset.hand = s.hand_count;
    b.classList.toggle("current", v.current === i && !v.over);
    b.classList.toggle("dead", !s.alive);
    b.classList.toggle("winner", v.over && v.winners.includes(i));
    const hearts = Array.from({ length: Math.max(s.max_hp, 0) }, (_, k) => `<i class="${k < s.hp ? "full" : ""}"></i>`).join("");
    const cardsHtml = (ids) => ids.map((c) => `<span class="card ${n.red(c) ? "red" : ""}">${esc(n.card(c))}</span>`).join("");
    const counters = Object.entries(s.counters).filter(([, val]) => val).map(([k, val]) => `${k} ${val}`).join(" ");
    b.innerHTML = `
      <div class="who"><b>${esc(seatName(i))}</b>${s.role ? `<span class="role role-${esc(s.role)}">${esc(n.role(s.role))}</span>` : ""}</div>
      <div class="general">${esc(s.general || "?")}${s.chained ? " ⛓" : ""}${!s.alive ? " ✝" : ""}</div>
      <div class="hp" title="HP ${s.hp}/${s.max_hp}">${hearts}<span class="num">${s.hp}/${s.max_hp}</span></div>
      <div class="hand">hand <b class="hand-count">${s.hand_count}</b> ${s.hand.length ? cardsHtml(s.hand) : ""}</div>
      <div class="equip">${s.equip.length ? cardsHtml(s.equip) : "<span class=none>no equipment</span>"}</div>
      ${s.judge.length ? `<div class="judge">judge: ${cardsHtml(s.judge)}</div>` : ""}
      ${counters ? `<div class="counters">${esc(counters)}</div>` : ""}`;
  });
  const turn = v.over ? (v.winners.length ? `winners: ${v.winners.map(seatName).join(", ")}` : "game over")
    : v.current >= 0 ? `round ${v.round} · ${seatName(v.current)} · ${PHASES[v.phase] || v.phase} phase` : "dealing";
  q("#centre").innerHTML = `
    <div class="turn" id="turn">${esc(turn)}</div>
    <div class="piles">deck <b id="deck">${v.draw_count}</b> · discard ${v.discard.length}</div>
    <div class="top">${v.discard.slice(-5).map((c) => `<span class="card ${n.red(c) ? "red" : ""}">${esc(n.card(c))}</span>`).join("")}</div>
    <div class="decision" id="decision"></div>
    <div class="seq">event <b id="seq" data-seq="${v.seq}">${v.seq}</b></div>`;
}

function addLog(items, max = 300) {
  const log = q("#log");
  for (const [seq, words] of items) {
    const li = document.createElement("li");
    li.dataset.seq = seq;
    li.value = seq;
    li.textContent = words;
    log.prepend(li);
  }
  while (log.children.length > max) log.lastChild.remove();
}

// ---- pages ---------------------------------------------------------------------------------

function when(ms) { return ms ? new Date(ms).toLocaleString() : ""; }

async function lobby() {
  q("#title").textContent = "lobby";
  app.innerHTML = `<section class="lobby"><h2>Live games</h2><table id="live"></table>
    <h2>Recent games</h2><table id="recent"></table></section>`;
  const row = (g, live) => `<tr data-game="${esc(g.id)}"><td><a href="#/${live ? "live" : "replay"}/${encodeURIComponent(g.id)}">${esc(g.id)}</a></td>
    <td>${esc(g.ruleset)}</td><td>${g.players.length} players</td><td>${esc(when(g.start))}</td>
    <td>${live ? `${g.version} entries` : `ended ${esc(when(g.end))}`}</td>
    <td>${live ? `<a href="#/replay/${encodeURIComponent(g.id)}">from the start</a>` : `winners ${g.winners.join(", ")}`}</td></tr>`;
  const refresh = async () => {
    try {
      const { games } = await getJSON("/api/games?limit=200");
      q("#live").innerHTML = games.filter((g) => !g.finished).map((g) => row(g, true)).join("") || "<tr><td>none right now</td></tr>";
      q("#recent").innerHTML = games.filter((g) => g.finished).map((g) => row(g, false)).join("") || "<tr><td>none yet</td></tr>";
      q("#conn").textContent = "";
    } catch (err) { q("#conn").textContent = `lobby: ${err.message}`; }
  };
  await refresh();
  const timer = setInterval(refresh, 3000);
  stopCurrent = () => clearInterval(timer);
}

function viewerQuery(params) {
  const out = new URLSearchParams();
  for (const k of ["viewer", "token", "delay"]) if (params.get(k)) out.set(k, params.get(k));
  return out;
}

async function live(id, params) {
  const info = await getJSON(`/api/games/${encodeURIComponent(id)}`);
  const n = namer(info.header.ruleset, info.cards);
  const S = (i) => (i >= 0 && info.header.seats[i] ? `S${i}` : "—");
  q("#title").textContent = `live: ${id} (${info.header.ruleset})`;
  tableShell(`${id} — live`);
  q("#controls").innerHTML = `<a href="#/replay/${encodeURIComponent(id)}">replay from the start</a>`;
  let v = newView(-1);
  let pending = [];
  let drawn = false;
  let decision = null; // the public pending decision, if the server sent one (it follows the batch)
  const seatName = (i) => (info.header.seats[i] ? `S${i} ${info.header.seats[i].player}` : `S${i}`);
  const flush = () => {
    drawn = false;
    addLog(pending);
    pending = [];
    renderTable(v, info, n);
    renderDecision(decision, seatName);
  };
  const redraw = () => { if (!drawn) { drawn = true; requestAnimationFrame(flush); } };
  const es = new EventSource(`/api/games/${encodeURIComponent(id)}/stream?${viewerQuery(params)}`);
  es.onmessage = (m) => {
    const x = JSON.parse(m.data);
    if (x.kind === "event") v = applyEvent(v, x.event);
    decision = null; // a new entry: whatever was pending has been answered
    pending.push([x.seq, entryWords(x, n, S)]);
    redraw();
    q("#conn").textContent = "live";
  };
  es.addEventListener("decision", (m) => {
    const d = JSON.parse(m.data);
    decision = d.seat === undefined ? null : d; // {"version"} alone: nothing public pending
    redraw();
  });
  es.addEventListener("end", () => { es.close(); q("#conn").textContent = "game over"; });
  es.onerror = () => { q("#conn").textContent = "reconnecting…"; }; // EventSource resumes with Last-Event-ID
  stopCurrent = () => es.close();
}

async function replay(id, params) {
  const info = await getJSON(`/api/games/${encodeURIComponent(id)}`);
  const n = namer(info.header.ruleset, info.cards);
  const S = (i) => (i >= 0 && info.header.seats[i] ? `S${i}` : "—");
  const vq = viewerQuery(params);
  if (!vq.get("viewer") && info.over) vq.set("viewer", "god");
  const page = await getJSON(`/api/games/${encodeURIComponent(id)}/events?${vq}`);
  const events = page.entries.filter((x) => x.kind === "event");
  q("#title").textContent = `replay: ${id} (${info.header.ruleset}, ${page.viewer === -2 ? "every hand" : page.viewer === -1 ? "spectator" : "seat " + page.viewer})`;
  tableShell(`${id} — replay`);
  q("#controls").innerHTML = `
    <div class="controls">
      <button id="back" title="step back">◀ step</button><button id="play">▶ play</button><button id="fwd" title="step forward">step ▶</button>
      <label>speed <select id="speed"><option>1</option><option selected>4</option><option>16</option><option>64</option></select> ev/s</label>
    </div>
    <input id="seek" type="range" min="0" max="${events.length}" value="0">
    <div>event <input id="at" type="number" min="0" max="${events.length}" value="0"> / ${events.length}</div>`;
  let at = 0;
  let timer = null;
  const show = (k) => {
    at = Math.max(0, Math.min(events.length, k));
    const v = newView(page.viewer);
    for (let i = 0; i < at; i++) applyEvent(v, events[i].event);
    renderTable(v, info, n);
    q("#log").innerHTML = "";
    addLog(events.slice(Math.max(0, at - 300), at).map((x) => [x.seq, entryWords(x, n, S)]));
    q("#seek").value = at;
    q("#at").value = at;
    q("#seq").dataset.index = at;
    history.replaceState(null, "", `#/replay/${encodeURIComponent(id)}?${new URLSearchParams({ ...Object.fromEntries(vq), at })}`);
  };
  const pause = () => { clearInterval(timer); timer = null; q("#play").textContent = "▶ play"; };
  const play = () => {
    if (at >= events.length) show(0);
    timer = setInterval(() => { if (at >= events.length) pause(); else show(at + 1); }, 1000 / Number(q("#speed").value));
    q("#play").textContent = "❚❚ pause";
  };
  q("#play").onclick = () => (timer ? pause() : play());
  q("#back").onclick = () => { pause(); show(at - 1); };
  q("#fwd").onclick = () => { pause(); show(at + 1); };
  q("#seek").oninput = (e) => { pause(); show(Number(e.target.value)); };
  q("#at").onchange = (e) => { pause(); show(Number(e.target.value)); };
  q("#speed").onchange = () => { if (timer) { pause(); play(); } };
  show(Number(params.get("at") || 0));
  window.arenaReplay = { show, length: events.length, events };
  stopCurrent = pause;
}

async function route() {
  stopCurrent();
  stopCurrent = () => {};
  const [path, query] = (location.hash.slice(1) || "/").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === "live" && parts[1]) await live(parts[1], params);
    else if (parts[0] === "replay" && parts[1]) await replay(parts[1], params);
    else await lobby();
  } catch (err) {
    app.innerHTML = `<p class="error">${esc(err.message)}</p><p><a href="#/">back to the lobby</a></p>`;
  }
}

window.addEventListener("hashchange", route);
route();
