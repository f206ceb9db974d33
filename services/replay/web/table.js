// The table: seats around the felt, the piles, the log. Shared by the live table, the replay and
// the person's own seat (which puts its seat at the bottom and its hand below the felt).
"use strict";

function tableShell(title, side = "") {
  app.innerHTML = `
    <section class="table-page">
      <div class="board"><div class="felt" id="felt"><div class="centre" id="centre"></div></div><div id="below"></div></div>
      <aside class="side"><h3>${esc(title)}</h3>${side}<div id="controls"></div><ol class="log" id="log"></ol></aside>
    </section>`;
}

function seatNamer(info) {
  return (i) => {
    const s = i >= 0 ? info.header.seats[i] : null;
    return s ? `S${i} ${s.name || s.player}` : `S${i}`;
  };
}

const ASKS = { play: "to play", discard: "to discard", targets: "to pick targets", draft: "to pick a general" };

// A pending decision of another seat that everyone may know of: seat and kind only.
function renderWaits(d, seatName) {
  const el = q("#decision");
  if (!el) return;
  document.querySelectorAll(".seat.asked").forEach((b) => b.classList.remove("asked"));
  if (!d) { el.textContent = ""; delete el.dataset.seat; delete el.dataset.kind; return; }
  el.dataset.seat = d.seat;
  el.dataset.kind = d.kind;
  el.dataset.version = d.version;
  el.textContent = `waiting for ${seatName(d.seat)} ${ASKS[d.kind] || "to decide"}`;
  const box = q(`.seat[data-seat="${d.seat}"]`);
  if (box) box.classList.add("asked");
}

// opts: bottom = the seat drawn at the bottom; hosted = seats on 托管; me = the person's seat
function renderTable(v, info, n, opts = {}) {
  const felt = q("#felt");
  const N = v.seats.length;
  const bottom = opts.bottom || 0;
  const hosted = opts.hosted || new Set();
  const seatName = seatNamer(info);
  let boxes = felt.querySelectorAll(".seat");
  if (boxes.length !== N) {
    felt.querySelectorAll(".seat").forEach((b) => b.remove());
    for (let i = 0; i < N; i++) {
      const b = document.createElement("div");
      b.className = "seat";
      b.dataset.seat = i;
      const a = Math.PI / 2 + (2 * Math.PI * ((i - bottom + N) % N)) / N; // bottom seat first, clockwise
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
    b.classList.toggle("me", opts.me === i);
    b.classList.toggle("hosted", hosted.has(i));
    const hearts = Array.from({ length: Math.max(s.max_hp, 0) }, (_, k) => `<i class="${k < s.hp ? "full" : ""}"></i>`).join("");
    const cardsHtml = (ids) => ids.map((c) => `<span class="card ${n.red(c) ? "red" : ""}" data-card="${c}">${esc(n.card(c))}</span>`).join("");
    const counters = Object.entries(s.counters).filter(([, val]) => val).map(([k, val]) => `${COUNTERS[k] || n.word(k)} ${val}`).join(" ");
    const shown = opts.me === i ? [] : s.hand; // the person's own hand is drawn below the felt
    b.innerHTML = `
      <div class="who"><b class="name"></b>${s.role ? `<span class="role role-${esc(s.role)}">${esc(n.role(s.role))}</span>` : ""}</div>
      <div class="general">${esc(s.general ? n.word(s.general) : "?")}${s.chained ? " ⛓" : ""}${!s.alive ? " ✝" : ""}${hosted.has(i) ? ' <span class="tag">托管</span>' : ""}</div>
      <div class="hp" title="HP ${s.hp}/${s.max_hp}">${hearts}<span class="num">${s.hp}/${s.max_hp}</span></div>
      <div class="hand">hand <b class="hand-count">${s.hand_count}</b> ${shown.length ? cardsHtml(shown) : ""}</div>
      <div class="equip">${s.equip.length ? cardsHtml(s.equip) : "<span class=none>no equipment</span>"}</div>
      ${s.judge.length ? `<div class="judge">judge: ${cardsHtml(s.judge)}</div>` : ""}
      ${counters ? `<div class="counters">${esc(counters)}</div>` : ""}`;
    b.querySelector(".name").textContent = seatName(i); // a chosen name is text, never markup
  });
  const turn = v.over ? (v.winners.length ? `winners: ${v.winners.map(seatName).join(", ")}` : "game over")
    : v.current >= 0 ? `round ${v.round} · ${seatName(v.current)} · ${PHASES[v.phase] || v.phase} phase` : "dealing";
  q("#centre").innerHTML = `
    <div class="turn" id="turn"></div>
    <div class="piles">deck <b id="deck">${v.draw_count}</b> · discard ${v.discard.length}</div>
    <div class="top">${v.discard.slice(-5).map((c) => `<span class="card ${n.red(c) ? "red" : ""}">${esc(n.card(c))}</span>`).join("")}</div>
    <div class="decision" id="decision"></div>
    <div class="seq">event <b id="seq" data-seq="${v.seq}">${v.seq}</b></div>`;
  q("#turn").textContent = turn;
}

function addLog(items, max = 300) {
  const log = q("#log");
  for (const [seq, words] of items) {
    if (!words) continue;
    const li = document.createElement("li");
    li.dataset.seq = seq;
    li.value = seq;
    li.textContent = words;
    log.prepend(li);
  }
  while (log.children.length > max) log.lastChild.remove();
}
