// The table: seats around the felt (a grid of seats on a phone), the piles, the log. Shared by
// the live table, the replay and the person's own seat (which puts its seat at the bottom, and
// its decision and hand in the dock below the felt).
"use strict";

function tableShell(title, side = "", dock = "") {
  app.innerHTML = `
    <section class="table-page">
      <div class="board"><div class="felt" id="felt"><div class="centre" id="centre"></div></div><div id="below" class="dock">${dock}</div></div>
      <aside class="side"><h3></h3>${side}<div id="controls"></div><ol class="log" id="log"></ol></aside>
    </section>`;
  q(".side h3").textContent = title;
}

// What a page knows of a game to name its seats: the header (seats: player, bot, name), the
// card table and printed names (/api/games/ID), and the catalogue's generals and skill texts
// (/api/games/ID/catalogue; null on a server without the play API: no skill texts then).
async function gameInfo(game, wait = false) {
  for (let i = 0; ; i++) { // a game just matched may take a moment to be started
    try {
      const info = await getJSON(`/api/games/${encodeURIComponent(game)}`);
      try { info.catalogue = await getJSON(`/api/games/${encodeURIComponent(game)}/catalogue`); } catch (err) { info.catalogue = null; }
      return info;
    } catch (err) {
      if (!wait || err.status !== 404 || i > 40) throw err;
      await new Promise((r) => setTimeout(r, 250));
    }
  }
}

// Names of seats as a player reads them: the general a seat plays now (never a bot's player
// id), its person's name beside it, "you" for the person's own seat, else the seat's number.
function seatNamer(info, n, view, me = -9) {
  const named = (g) => g && g !== "vanilla";
  const person = (i) => {
    const s = info.header.seats[i];
    return s && !s.bot ? s.name || s.player : "";
  };
  const number = (i) => t("seat_n", { n: i + 1 });
  // the short name (the log's): general, else person, else number; "you" marked
  const short = (i) => {
    if (i < 0 || !info.header.seats[i]) return "—";
    const s = view().seats[i];
    const base = s && named(s.general) ? n.word(s.general) : person(i) || number(i);
    return i === me ? `${base}${LANG === "zh" ? "（你）" : " (you)"}` : base;
  };
  // the long name (headings, waits): general with the person's name
  const long = (i) => {
    if (i < 0 || !info.header.seats[i]) return "—";
    const s = view().seats[i];
    const who = i === me ? t("you") : person(i);
    if (s && named(s.general)) return who ? `${n.word(s.general)}${LANG === "zh" ? `（${who}）` : ` (${who})`}` : n.word(s.general);
    return who ? `${number(i)} · ${who}` : number(i);
  };
  return { short, long, person, number };
}

// Cards used as something else (转化): card id -> the name it was used as, kept from the events
// (a 闪♦J that 国色 put into a judgement area as 乐不思蜀 is drawn as 乐不思蜀 with 闪♦J beside it).
function trackUse(usedAs, e, n) {
  if (e.type === "card_used" || e.type === "card_played") {
    for (const id of e.cards || []) {
      const c = n.cards[id];
      if (c && (c[0] !== e.name || (e.cards || []).length > 1)) usedAs[id] = e.name;
      else delete usedAs[id];
    }
  } else if (e.type === "cards_moved" && e.dst !== "judge" && e.dst !== "processing") {
    for (const id of e.cards || []) delete usedAs[id];
  }
}

function renderWaits(d, names) {
  const el = q("#decision");
  if (!el) return;
  document.querySelectorAll(".seat.asked").forEach((b) => b.classList.remove("asked"));
  if (!d) { el.textContent = ""; delete el.dataset.seat; delete el.dataset.kind; return; }
  el.dataset.seat = d.seat;
  el.dataset.kind = d.kind;
  el.dataset.version = d.version;
  el.textContent = t("waiting_for", { seat: names.long(d.seat), what: tOr(`ask.${d.kind}`, t("ask.other")) });
  const box = q(`.seat[data-seat="${d.seat}"]`);
  if (box) box.classList.add("asked");
}

function cardsHtml(ids, n, usedAs = {}) {
  return ids.map((c) => {
    const as = usedAs[c];
    const text = as ? `${n.word(as)} (${n.card(c)})` : n.card(c);
    return `<span class="card ${n.red(c) ? "red" : ""}${as ? " converted" : ""}" data-card="${c}">${esc(text)}</span>`;
  }).join("");
}

function skillChips(info, n, general) {
  const cat = info.catalogue;
  const g = cat && cat.generals[general];
  if (!g || !g.skills.length) return "";
  return ` <span class="skills">${g.skills.map((s) => `<button type="button" class="skill" data-skill="${esc(s)}" title="${esc(cat.skills[s] || "")}">${esc(n.word(s))}</button>`).join("")}</span>`;
}

// A skill's text, shown on hover (title) and on a tap (a popover under the seat).
function showSkill(button, info, n) {
  const open = q(".skill-text");
  if (open) open.remove();
  if (!button || button.classList.contains("open")) { document.querySelectorAll(".skill.open").forEach((b) => b.classList.remove("open")); return; }
  document.querySelectorAll(".skill.open").forEach((b) => b.classList.remove("open"));
  button.classList.add("open");
  const div = document.createElement("div");
  div.className = "skill-text";
  div.textContent = `${n.word(button.dataset.skill)}: ${(info.catalogue && info.catalogue.skills[button.dataset.skill]) || ""}`;
  button.closest(".seat").appendChild(div);
}

// opts: bottom = the seat drawn at the bottom; hosted = seats on 托管; me = the person's seat;
// usedAs = converted cards (trackUse); seq = the position of the last entry shown
function renderTable(v, info, n, names, opts = {}) {
  const felt = q("#felt");
  const N = v.seats.length;
  const bottom = opts.bottom || 0;
  const hosted = opts.hosted || new Set();
  const usedAs = opts.usedAs || {};
  let boxes = felt.querySelectorAll(".seat");
  if (boxes.length !== N) {
    felt.querySelectorAll(".seat").forEach((b) => b.remove());
    for (let k = 0; k < N; k++) {
      const i = (bottom + k) % N; // bottom seat first, then clockwise: the phone's order too
      const b = document.createElement("div");
      b.className = "seat";
      b.dataset.seat = i;
      const a = Math.PI / 2 + (2 * Math.PI * k) / N;
      b.style.setProperty("--x", `${50 + 40 * Math.cos(a)}%`);
      b.style.setProperty("--y", `${50 + 38 * Math.sin(a)}%`);
      b.style.order = k;
      felt.appendChild(b);
      b.addEventListener("click", (ev) => {
        const skill = ev.target.closest(".skill");
        if (skill) { ev.stopPropagation(); showSkill(skill, info, n); }
      });
    }
    boxes = felt.querySelectorAll(".seat");
  }
  const byseat = {};
  boxes.forEach((b) => { byseat[b.dataset.seat] = b; });
  v.seats.forEach((s, i) => {
    const b = byseat[i];
    b.dataset.hp = s.hp;
    b.dataset.hand = s.hand_count;
    b.classList.toggle("current", v.current === i && !v.over);
    b.classList.toggle("dead", !s.alive);
    b.classList.toggle("winner", v.over && v.winners.includes(i));
    b.classList.toggle("me", opts.me === i);
    b.classList.toggle("hosted", hosted.has(i));
    const hearts = Array.from({ length: Math.max(s.max_hp, 0) }, (_, k) => `<i class="${k < s.hp ? "full" : ""}"></i>`).join("");
    const counters = Object.entries(s.counters).filter(([, val]) => val).map(([k, val]) => `${logTable("counters")[k] || n.word(k)} ${val}`).join(" ");
    const shown = opts.me === i ? [] : s.hand; // the person's own hand is drawn in the dock
    const general = s.general === "vanilla" ? "" : s.general ? n.word(s.general) : "?";
    const key = JSON.stringify([s, hosted.has(i), LANG, s.judge.map((c) => usedAs[c] || "")]);
    if (b.dataset.key === key) return; // unchanged: keep an open skill text
    b.dataset.key = key;
    b.innerHTML = `
      <div class="who"><b class="name"></b>${s.role ? `<span class="role role-${esc(s.role)}">${esc(n.role(s.role))}</span>` : ""}</div>
      <div class="general"><b>${esc(general)}</b>${s.chained ? " ⛓" : ""}${!s.alive ? " ✝" : ""}${hosted.has(i) ? ` <span class="tag">${esc(t("hosting"))}</span>` : ""}${skillChips(info, n, s.general)}</div>
      <div class="hp" title="HP ${s.hp}/${s.max_hp}">${hearts}<span class="num">${s.hp}/${s.max_hp}</span> <span class="hand">${esc(t("hand"))} <b class="hand-count">${s.hand_count}</b></span></div>
      ${shown.length ? `<div class="hand hand-cards">${cardsHtml(shown, n)}</div>` : ""}
      ${s.equip.length ? `<div class="equip">${cardsHtml(s.equip, n)}</div>` : ""}
      ${s.judge.length ? `<div class="judge">${esc(t("judge_area"))}: ${cardsHtml(s.judge, n, usedAs)}</div>` : ""}
      ${counters ? `<div class="counters">${esc(counters)}</div>` : ""}`;
    const who = names.person(i) || t("bot");
    b.querySelector(".name").textContent = `${names.number(i)} · ${who}`; // a chosen name is text, never markup
  });
  const phases = logTable("phases");
  const turn = v.over ? (v.winners.length ? t("winners", { who: v.winners.map(names.long).join(lw("sep")) }) : t("game_over"))
    : v.current >= 0 ? `${t("round", { n: v.round })} · ${names.long(v.current)} · ${t("phase", { phase: phases[v.phase] || v.phase })}` : t("dealing");
  const seq = opts.seq || 0;
  q("#centre").innerHTML = `
    <div class="turn" id="turn"></div>
    <div class="piles">${esc(t("deck"))} <b id="deck">${v.draw_count}</b> · ${esc(t("discard_pile"))} ${v.discard.length}</div>
    <div class="top">${cardsHtml(v.discard.slice(-5), n)}</div>
    <div class="decision" id="decision"></div>
    <div class="seq">#<b id="seq" data-seq="${seq}">${seq}</b></div>`;
  q("#turn").textContent = turn;
}

// Log lines, newest first, each numbered by its entry's position (the centre's # is the last).
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
