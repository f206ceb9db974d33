// Arena web page: routing, the live table (SSE) and the replay. Plain JS, no build.
//   #/                     the lobby (lobby.js)
//   #/play/GAME/SEAT       the person's own seat (seat.js)
//   #/live/GAME            a live table as a spectator sees it (with the table's delay)
//   #/replay/GAME?viewer=&at=N   a replay: spectator by default, a switch to every hand
"use strict";

function viewerQuery(params) {
  const out = new URLSearchParams();
  for (const k of ["viewer", "delay"]) if (params.get(k)) out.set(k, params.get(k));
  return out;
}

async function live(id, params) {
  const info = await getJSON(`/api/games/${encodeURIComponent(id)}`);
  const n = namer(info.header.ruleset, info.cards, info.names);
  const S = (i) => (i >= 0 && info.header.seats[i] ? `S${i}` : "—");
  const seatName = seatNamer(info);
  q("#title").textContent = `live: ${id} (${info.header.ruleset})`;
  tableShell(`${id} — live`);
  q("#controls").innerHTML = `<a href="#/replay/${encodeURIComponent(id)}">replay from the start</a>`;
  const fold = newFold(-1);
  const v = fold.view, hosted = fold.hosted; // folded in place by foldEntry
  let pending = [];
  let drawn = false;
  let decision = null; // the public pending decision, if the server sent one (it follows the batch)
  const flush = () => {
    drawn = false;
    addLog(pending);
    pending = [];
    renderTable(v, info, n, { hosted });
    renderWaits(decision, seatName);
  };
  const redraw = () => { if (!drawn) { drawn = true; requestAnimationFrame(flush); } };
  const es = new EventSource(`/api/games/${encodeURIComponent(id)}/stream?${viewerQuery(params)}`);
  es.onmessage = (m) => {
    const x = JSON.parse(m.data);
    foldEntry(fold, x);
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
  window.arenaLive = { view: () => v };
  stopCurrent = () => es.close();
}

async function replay(id, params) {
  const info = await getJSON(`/api/games/${encodeURIComponent(id)}`);
  const n = namer(info.header.ruleset, info.cards, info.names);
  const S = (i) => (i >= 0 && info.header.seats[i] ? `S${i}` : "—");
  const seatName = seatNamer(info);
  const vq = viewerQuery(params);
  const page = await getJSON(`/api/games/${encodeURIComponent(id)}/events?${vq}`);
  const entries = page.entries.filter((x) => x.kind === "event" || x.kind === "control");
  const steps = entries.filter((x) => x.kind === "event");
  const who = page.viewer === -2 ? "every hand" : page.viewer === -1 ? "spectator" : seatName(page.viewer);
  q("#title").textContent = `replay: ${id} (${info.header.ruleset}, ${who})`;
  tableShell(`${id} — replay`);
  const viewers = [["spectator", "spectator"], ...(info.over ? [["god", "every hand"]] : [])];
  q("#controls").innerHTML = `
    <label>view <select id="viewer">${viewers.map(([k, t]) => `<option value="${k}" ${vq.get("viewer") === k || (!vq.get("viewer") && k === "spectator") ? "selected" : ""}>${t}</option>`).join("")}</select></label>
    <div class="controls">
      <button id="back" title="step back">◀ step</button><button id="play">▶ play</button><button id="fwd" title="step forward">step ▶</button>
      <label>speed <select id="speed"><option>1</option><option selected>4</option><option>16</option><option>64</option></select> ev/s</label>
    </div>
    <input id="seek" type="range" min="0" max="${steps.length}" value="0">
    <div>event <input id="at" type="number" min="0" max="${steps.length}" value="0"> / ${steps.length}</div>`;
  let at = 0;
  let timer = null;
  const show = (k) => {
    at = Math.max(0, Math.min(steps.length, k));
    const fold = newFold(page.viewer);
    const v = fold.view, hosted = fold.hosted;
    let done = 0;
    const lines = [];
    for (const x of entries) {
      if (x.kind === "event") { if (done >= at) break; done += 1; }
      foldEntry(fold, x);
      lines.push([x.seq, entryWords(x, n, S)]);
    }
    renderTable(v, info, n, { hosted });
    q("#log").innerHTML = "";
    addLog(lines.slice(-300));
    q("#seek").value = at;
    q("#at").value = at;
    q("#seq").dataset.index = at;
    history.replaceState(null, "", `#/replay/${encodeURIComponent(id)}?${new URLSearchParams({ ...Object.fromEntries(vq), at })}`);
  };
  const pause = () => { clearInterval(timer); timer = null; q("#play").textContent = "▶ play"; };
  const play = () => {
    if (at >= steps.length) show(0);
    timer = setInterval(() => { if (at >= steps.length) pause(); else show(at + 1); }, 1000 / Number(q("#speed").value));
    q("#play").textContent = "❚❚ pause";
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

async function route() {
  stopCurrent();
  stopCurrent = () => {};
  const [path, query] = (location.hash.slice(1) || "/").split("?");
  const params = new URLSearchParams(query || "");
  const parts = path.split("/").filter(Boolean).map(decodeURIComponent);
  try {
    if (parts[0] === "play" && parts[1] && parts[2] !== undefined) await playSeat(parts[1], Number(parts[2]));
    else if (parts[0] === "live" && parts[1]) await live(parts[1], params);
    else if (parts[0] === "replay" && parts[1]) await replay(parts[1], params);
    else await lobby();
  } catch (err) {
    app.innerHTML = `<p class="error"></p><p><a href="#/">back to the lobby</a></p>`;
    q(".error").textContent = err.message;
  }
}

window.addEventListener("hashchange", route);
route();
