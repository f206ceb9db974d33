// Who is winning, drawn: under every live table, replay and seat, each camp's chance to win,
// move by move (GET /api/games/GAME/chart: a live game's chart is computed from what a spectator
// sees, held the table's delay behind; a finished game's from the whole log), with its key
// moments marked (deaths, roles shown, the largest swings, the end). Clicking a moment, or
// anywhere on the chart, jumps the replay there (or finds the entry in a live table's log).
// It wraps the live, replay and play pages' routes, so they need no line of their own.
"use strict";

Object.assign(WORDS.zh, {
  "chart.title": "胜率", "chart.ahead": "领先：{camp} {p}", "chart.even": "势均力敌",
  "chart.model.public": "按观众可见的信息估计", "chart.model.full": "按整局记录估计（含所有手牌与身份）",
  "chart.model.hand-set": "粗略估计（此牌桌无拟合模型）",
  "chart.death": "{seat} 阵亡（{role}）", "chart.reveal": "{seat} 亮明身份：{role}",
  "chart.swing": "大转折：{camp} {delta}", "chart.end": "对局结束", "chart.draw": "平局",
  "chart.camp.lord": "主公方", "chart.camp.rebel": "反贼", "chart.camp.renegade": "内奸", "chart.waiting": "发牌中…",
});
Object.assign(WORDS.en, {
  "chart.title": "chance to win", "chart.ahead": "ahead: {camp} {p}", "chart.even": "level",
  "chart.model.public": "from what a spectator sees", "chart.model.full": "from the whole log (every hand and role)",
  "chart.model.hand-set": "a rough estimate (no model fitted for this table)",
  "chart.death": "{seat} died ({role})", "chart.reveal": "{seat} showed: {role}",
  "chart.swing": "swing: {camp} {delta}", "chart.end": "game over", "chart.draw": "draw",
  "chart.camp.lord": "the lord's side", "chart.camp.rebel": "the rebels", "chart.camp.renegade": "the renegade", "chart.waiting": "dealing…",
});

const CAMP_COLOURS = { lord: "#d4a017", rebel: "#2e86c1", renegade: "#7d3c98", zhuzhong: "#d4a017", fanzei: "#2e86c1", neijian: "#7d3c98", ningchen: "#27ae60" };
const SPARE_COLOURS = ["#c0392b", "#16a085", "#8e6e53", "#34495e"];
const CHART_W = 1000;
const CHART_H = 140;

function campName(c, n, seatName) {
  if (c.key.startsWith("seat")) return seatName(Number(c.key.slice(4)));
  const own = tOr(`chart.camp.${c.key}`, null);
  return own || n.role(c.role);
}

// Draw the chart of `game` under the table; returns {refresh(), mark(seq), stop()}.
// opts: viewer ("spectator", "god" or a seat), delay, onJump(seq) for a replay.
function attachChart(game, info, n, opts = {}) {
  const board = q(".board");
  if (!board) return { refresh() {}, mark() {}, stop() {} };
  const box = document.createElement("section");
  box.className = "chart";
  box.id = "chart";
  box.innerHTML = `<div class="chart-head"><b class="chart-ahead"></b> <span class="chart-legend"></span></div>
    <svg viewBox="0 0 ${CHART_W} ${CHART_H + 24}" preserveAspectRatio="none" role="img"></svg>
    <div class="chart-note"></div>`;
  board.appendChild(box);
  const svg = box.querySelector("svg");
  const seatName = (i) => {
    const s = info.header.seats[i];
    return s ? `S${i} ${s.name || (s.bot ? "" : s.player)}`.trim() : `S${i}`;
  };
  let chart = null;
  let current = null;
  let place = () => {};
  let busy = false;
  let again = false;
  const query = new URLSearchParams();
  if (opts.viewer) query.set("viewer", opts.viewer);
  if (opts.delay) query.set("delay", opts.delay);

  const colour = (i) => CAMP_COLOURS[chart.camps[i].key] || SPARE_COLOURS[i % SPARE_COLOURS.length];
  const legend = () => {
    const camps = chart.camps;
    const pts = chart.points;
    // the chances as of the replay's position (a replay), else the latest
    const upto = current === null ? Infinity : current;
    const seen = pts.filter((p) => p[0] <= upto);
    const last = seen.length ? seen[seen.length - 1] : null;
    const ahead = box.querySelector(".chart-ahead");
    if (!last) {
      ahead.textContent = t("chart.waiting");
    } else {
      const order = camps.map((c, i) => i).sort((a, b) => last[b + 1] - last[a + 1]);
      const lead = last[order[0] + 1] - (order.length > 1 ? last[order[1] + 1] : 0);
      ahead.textContent = lead < 0.05 ? t("chart.even") : t("chart.ahead", { camp: campName(camps[order[0]], n, seatName), p: `${Math.round(last[order[0] + 1] * 100)}%` });
    }
    box.querySelector(".chart-legend").innerHTML = camps.map((c, i) => `<span class="camp" data-camp="${esc(c.key)}" style="color:${colour(i)}">● <span class="name"></span> <b class="p">${last ? Math.round(last[i + 1] * 100) : "–"}%</b></span>`).join(" ");
    box.querySelectorAll(".chart-legend .camp .name").forEach((el, i) => { el.textContent = campName(camps[i], n, seatName); });
    box.querySelector(".chart-note").textContent = t(`chart.model.${chart.model}`);
  };
  const draw = () => {
    if (!chart) return;
    legend();
    const camps = chart.camps;
    const pts = chart.points;
    const x0 = pts.length ? pts[0][0] : 0;
    const x1 = Math.max(chart.upto, x0 + 1);
    const X = (seq) => ((seq - x0) / (x1 - x0)) * CHART_W;
    const Y = (p) => 4 + (1 - p) * (CHART_H - 8);
    // the click area first: the moments drawn over it take their own clicks
    let out = `<rect class="hit" x="0" y="0" width="${CHART_W}" height="${CHART_H + 24}"/><line class="axis" x1="0" x2="${CHART_W}" y1="${Y(0.5)}" y2="${Y(0.5)}"/>`;
    camps.forEach((c, i) => {
      if (!pts.length) return;
      // a step line: a chance holds until the next move changes it
      let d = `M ${X(pts[0][0]).toFixed(1)} ${Y(pts[0][i + 1]).toFixed(1)}`;
      for (let k = 1; k < pts.length; k++) d += ` H ${X(pts[k][0]).toFixed(1)} V ${Y(pts[k][i + 1]).toFixed(1)}`;
      d += ` H ${X(x1).toFixed(1)}`;
      out += `<path class="camp-line" pointer-events="none" data-camp="${esc(c.key)}" d="${d}" stroke="${colour(i)}"/>`;
    });
    // one mark per seq (a death and the swing it caused share it: its words say both), drawn
    // most telling first; each mark's click area reaches at most halfway to its neighbours, so
    // no mark's area lies over another's (a swing's once took the clicks of a death beside it)
    const groups = [];
    for (const m of chart.moments) {
      const last = groups[groups.length - 1];
      if (last && last.seq === m.seq) last.items.push(m);
      else groups.push({ seq: m.seq, items: [m] });
    }
    const rank = { end: 0, death: 1, reveal: 2, swing: 3 };
    for (const g of groups) g.items.sort((a, b) => (rank[a.kind] ?? 4) - (rank[b.kind] ?? 4));
    groups.forEach((g, k) => {
      const xs = X(g.seq);
      // (and never past the chart's edges, where it would be cut off: the end sits on one)
      const lo = Math.max(k ? Math.max(xs - 8, (X(groups[k - 1].seq) + xs) / 2) : xs - 8, 0);
      const hi = Math.min(k < groups.length - 1 ? Math.min(xs + 8, (xs + X(groups[k + 1].seq)) / 2) : xs + 8, CHART_W);
      const x = xs.toFixed(1), kind = g.items[0].kind;
      const kinds = [...new Set(g.items.map((m) => m.kind))].join(" ");
      const sym = { death: "✝", reveal: "◉", swing: "▲", end: "⚑" }[kind] || "•";
      out += `<g class="moment ${kinds}" data-seq="${g.seq}" data-kind="${kind}"><rect class="mhit" x="${lo.toFixed(1)}" y="0" width="${Math.max(hi - lo, 1).toFixed(1)}" height="${CHART_H + 24}"/><line x1="${x}" x2="${x}" y1="0" y2="${CHART_H}"/><text x="${x}" y="${CHART_H + 18}">${sym}</text><title></title></g>`;
    });
    out += `<line class="now" x1="0" x2="0" y1="0" y2="${CHART_H}" visibility="hidden"/>`;
    svg.innerHTML = out;
    svg.querySelectorAll(".moment").forEach((el, k) => {
      const g = groups[k];
      const said = (m) => {
        const camp = m.camp !== undefined ? camps.find((c) => c.key === m.camp) : null;
        const words = {
          death: () => t("chart.death", { seat: seatName(m.seat), role: n.role(m.role) }),
          reveal: () => t("chart.reveal", { seat: seatName(m.seat), role: n.role(m.role) }),
          swing: () => t("chart.swing", { camp: camp ? campName(camp, n, seatName) : m.camp, delta: `${m.delta > 0 ? "+" : ""}${Math.round(m.delta * 100)}%` }),
          end: () => (m.draw ? t("chart.draw") : t("chart.end")),
        };
        return (words[m.kind] || (() => m.kind))();
      };
      el.querySelector("title").textContent = g.items.map(said).join(" · ");
      el.addEventListener("click", (ev) => { ev.stopPropagation(); jump(g.seq); });
    });
    place = () => { // the replay's position: the line moved, nothing redrawn (clicks stay put)
      const line = svg.querySelector(".now");
      if (current === null) { line.setAttribute("visibility", "hidden"); return; }
      line.setAttribute("x1", X(current).toFixed(1));
      line.setAttribute("x2", X(current).toFixed(1));
      line.setAttribute("visibility", "visible");
    };
    place();
    svg.querySelector(".hit").addEventListener("click", (ev) => {
      const r = svg.getBoundingClientRect();
      const seq = x0 + ((ev.clientX - r.left) / r.width) * (x1 - x0);
      const near = pts.reduce((best, p) => (Math.abs(p[0] - seq) < Math.abs(best - seq) ? p[0] : best), pts.length ? pts[0][0] : 0);
      jump(near);
    });
  };

  const jump = (seq) => {
    if (opts.onJump) { opts.onJump(seq); return; }
    const li = q(`#log li[data-seq="${seq}"]`) || [...document.querySelectorAll("#log li")].find((x) => Number(x.dataset.seq) <= seq);
    if (li) { li.scrollIntoView({ block: "center" }); li.classList.add("flash"); setTimeout(() => li.classList.remove("flash"), 1500); }
  };

  const refresh = async () => {
    if (busy) { again = true; return; }
    busy = true;
    try {
      chart = await getJSON(`/api/games/${encodeURIComponent(game)}/chart?${query}`);
      window.arenaChart = chart;
      draw();
    } catch (err) {
      box.querySelector(".chart-note").textContent = err.message;
    } finally {
      busy = false;
      if (again) { again = false; setTimeout(refresh, 300); }
    }
  };
  let timer = null;
  if (opts.live) timer = setInterval(() => { if (!chart || !chart.over) refresh(); }, opts.every || 2000);
  refresh();
  return {
    refresh,
    mark(seq) { current = seq; if (chart) { legend(); place(); } },
    stop() { if (timer) clearInterval(timer); },
  };
}

// ---- the pages it goes under (their routes wrapped: app.js and seat.js need no line) --------

function underTable(name, options) {
  const show = ROUTES[name];
  if (!show) return;
  addRoute(name, async (parts, params) => {
    await show(parts, params);
    const game = parts[1];
    if (!game || !page.live || !q(".board") || q("#chart")) return;
    const here = page;
    const info = await gameInfo(game);
    if (!here.live) return;
    const n = namer(info.header.ruleset, info.cards, info.names, info.english);
    const c = attachChart(game, info, n, options(params));
    let follow = null;
    if (name === "replay") { // keep the replay's position marked (no spoiler before it gets there)
      let shown = -1;
      const mark = () => {
        const r = window.arenaReplay;
        const at = q("#at");
        if (!r || !at) return;
        const k = Number(at.value);
        if (k !== shown) { shown = k; c.mark(k > 0 && r.events[k - 1] ? r.events[k - 1].seq : 0); }
      };
      mark();
      follow = setInterval(mark, 250);
    }
    const stop = stopCurrent;
    stopCurrent = () => { stop(); c.stop(); if (follow) clearInterval(follow); };
    here.chart = c;
  });
}

underTable("live", (params) => ({ live: true, viewer: params.get("viewer") || "", delay: params.get("delay") || "" }));
underTable("play", () => ({ live: true })); // a seat's page: the table's chart, as a spectator sees it
underTable("replay", (params) => ({
  viewer: params.get("viewer") || "",
  onJump: (seq) => {
    const r = window.arenaReplay;
    if (!r) return;
    const k = r.events.filter((x) => x.seq <= seq).length;
    r.show(k);
  },
}));

