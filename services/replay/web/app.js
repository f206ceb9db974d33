// Arena web page: the live table (SSE) and the replay, and the route table. Plain JS, no build.
//   #/                     the lobby (lobby.js)
//   #/play/GAME/SEAT       the person's own seat (seat.js)
//   #/live/GAME            a live table as a spectator sees it (with the table's delay)
//   #/replay/GAME?viewer=&at=N   a replay: spectator by default, a switch to every hand
// Another page is one more file with its function and one addRoute line below.
"use strict";

function viewerQuery(params) {
  const out = new URLSearchParams();
  for (const k of ["viewer", "delay"]) if (params.get(k)) out.set(k, params.get(k));
  return out;
}

async function live(id, params) {
  const here = page;
  const info = await gameInfo(id);
  if (!here.live) return;
  const n = namer(info.header.ruleset, info.cards, info.names, info.english);
  const fold = newFold(-1);
  const v = fold.view, hosted = fold.hosted; // folded in place by foldEntry
  const names = seatNamer(info, n, () => v);
  q("#title").textContent = t("live_title", { game: id });
  tableShell(`${tOr(`rs.${info.header.ruleset}`, info.header.ruleset)} · ${id}`);
  q("#controls").innerHTML = `<a href="#/replay/${encodeURIComponent(id)}"></a>`;
  q("#controls a").textContent = t("replay_from_start");
  const usedAs = {};
  let pending = [];
  let drawn = false;
  let seq = 0;
  let decision = null; // the public pending decision, if the server sent one (it follows the batch)
  const flush = () => {
    drawn = false;
    if (!here.live) return;
    addLog(pending);
    pending = [];
    renderTable(v, info, n, names, { hosted, usedAs, seq });
    renderWaits(decision, names);
  };
  const redraw = () => { if (!drawn) { drawn = true; requestAnimationFrame(flush); } };
  const es = new EventSource(`/api/games/${encodeURIComponent(id)}/stream?${viewerQuery(params)}`);
  es.onmessage = (m) => {
    const x = JSON.parse(m.data);
    foldEntry(fold, x);
    if (x.kind === "event") trackUse(usedAs, x.event, n);
    decision = null; // a new entry: whatever was pending has been answered
    seq = x.seq;
    pending.push([x.seq, entryWords(x, n, names.short)]);
    redraw();
    q("#conn").textContent = t("conn.live");
  };
  es.addEventListener("decision", (m) => {
    const d = JSON.parse(m.data);
    decision = d.seat === undefined ? null : d; // {"version"} alone: nothing public pending
    redraw();
  });
  es.addEventListener("end", () => { es.close(); q("#conn").textContent = t("conn.over"); });
  es.onerror = () => { q("#conn").textContent = t("conn.reconnecting"); }; // EventSource resumes with Last-Event-ID
  window.arenaLive = { view: () => v };
  stopCurrent = () => es.close();
}

async function replay(id, params) {
  const here = page;
  const info = await gameInfo(id);
  const vq = viewerQuery(params);
  const events = await getJSON(`/api/games/${encodeURIComponent(id)}/events?${vq}`);
  if (!here.live) return;
  const n = namer(info.header.ruleset, info.cards, info.names, info.english);
  const entries = events.entries.filter((x) => x.kind === "event" || x.kind === "control" || x.kind === "abandon");
  const steps = entries.filter((x) => x.kind === "event");
  let fold = newFold(events.viewer);
  const names = seatNamer(info, n, () => fold.view);
  const who = events.viewer === -2 ? t("every_hand") : events.viewer === -1 ? t("spectator") : names.long(events.viewer);
  q("#title").textContent = `${t("replay_title", { game: id })} (${who})`;
  tableShell(`${tOr(`rs.${info.header.ruleset}`, info.header.ruleset)} · ${id}`);
  const viewers = [["spectator", t("spectator")], ...(info.over ? [["god", t("every_hand")]] : [])];
  q("#controls").innerHTML = `
    <label>${esc(t("view"))} <select id="viewer">${viewers.map(([k, label]) => `<option value="${k}" ${vq.get("viewer") === k || (!vq.get("viewer") && k === "spectator") ? "selected" : ""}>${esc(label)}</option>`).join("")}</select></label>
    <div class="controls">
      <button id="back">${esc(t("step_back"))}</button><button id="play">${esc(t("play_btn"))}</button><button id="fwd">${esc(t("step_fwd"))}</button>
      <label>${esc(t("speed"))} <select id="speed"><option>1</option><option selected>4</option><option>16</option><option>64</option></select> ${esc(t("per_s"))}</label>
    </div>
    <input id="seek" type="range" min="0" max="${steps.length}" value="0">
    <div class="at"><input id="at" type="number" min="0" max="${steps.length}" value="0"> / ${steps.length}</div>`;
  let at = 0;
  let timer = null;
  const show = (k) => {
    at = Math.max(0, Math.min(steps.length, k));
    fold = newFold(events.viewer);
    const usedAs = {};
    let done = 0, seq = 0;
    const lines = [];
    for (const x of entries) {
      if (x.kind === "event") {
        if (done >= at) break;
        done += 1;
        trackUse(usedAs, x.event, n);
      }
      foldEntry(fold, x);
      seq = x.seq;
      lines.push([x.seq, entryWords(x, n, names.short)]);
    }
    renderTable(fold.view, info, n, names, { hosted: fold.hosted, usedAs, seq });
    q("#log").innerHTML = "";
    addLog(lines.slice(-300));
    q("#seek").value = at;
    q("#at").value = at;
    q("#seq").dataset.index = at;
    history.replaceState(null, "", `#/replay/${encodeURIComponent(id)}?${new URLSearchParams({ ...Object.fromEntries(vq), at })}`);
  };
  const pause = () => { clearInterval(timer); timer = null; q("#play").textContent = t("play_btn"); };
  const play = () => {
    if (at >= steps.length) show(0);
    timer = setInterval(() => { if (at >= steps.length) pause(); else show(at + 1); }, 1000 / Number(q("#speed").value));
    q("#play").textContent = t("pause_btn");
  };
  q("#viewer").onchange = (e) => {
    const next = new URLSearchParams({ viewer: e.target.value, at });
    location.hash = `#/replay/${encodeURIComponent(id)}?${next}`;
  };
  q("#play").onclick = () => (timer ? pause() : play());
  q("#back").onclick = () => { pause(); show(at - 1); };
  q("#fwd").onclick = () => { pause(); show(at + 1); };
  q("#seek").oninput = (e) => { pause(); show(Number(e.target.value)); };
  q("#at").onchange = (e) => { pause(); show(Number(e.target.value)); };
  q("#speed").onchange = () => { if (timer) { pause(); play(); } };
  show(Number(params.get("at") || 0));
  window.arenaReplay = { show, length: steps.length, events: steps };
  stopCurrent = pause;
}

addRoute("", () => lobby());
addRoute("play", (p) => (p[1] && p[2] !== undefined ? playSeat(p[1], Number(p[2])) : lobby()));
addRoute("live", (p, params) => (p[1] ? live(p[1], params) : lobby()));
addRoute("replay", (p, params) => (p[1] ? replay(p[1], params) : lobby()));
