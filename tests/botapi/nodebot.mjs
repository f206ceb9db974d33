// A bot for Arena's Bot API, written from docs/botapi.md and the OpenAPI document alone, with
// Node.js's standard library only (fetch and streams: Node >= 18). It plays every seat it is
// given: random legal picks (declining now and then where it may), answered at once.
//
//   node nodebot.mjs --url http://127.0.0.1:8080 --token bot_… [--quickplay standard:5]
//                    [--games N] [--seed S] [--slow-ms MS]
//
// Prints one JSON line per finished game to stdout ({"game","seat","answers","refused"}) and,
// once --games games have ended (or on SIGTERM), a summary line {"done": {...}}.
"use strict";

const args = {};
for (let i = 2; i < process.argv.length; i += 2) args[process.argv[i].replace(/^--/, "")] = process.argv[i + 1];
const BASE = (args.url || "").replace(/\/$/, "");
const TOKEN = args.token || process.env.ARENA_BOT_TOKEN || "";
const WANT = Number(args.games || 0);
const SLOW = Number(args["slow-ms"] || 0);
if (!BASE || !TOKEN) {
  console.error("usage: node nodebot.mjs --url URL --token TOKEN [--quickplay RULESET:PLAYERS] [--games N]");
  process.exit(2);
}

// A small seeded generator (mulberry32), so a run can be repeated.
let state = Number(args.seed || 1) >>> 0;
function random() {
  state = (state + 0x6d2b79f5) >>> 0;
  let t = state;
  t = Math.imul(t ^ (t >>> 15), t | 1);
  t ^= t + Math.imul(t ^ (t >>> 7), t | 61);
  return ((t ^ (t >>> 14)) >>> 0) / 4294967296;
}

const headers = { Authorization: `Bearer ${TOKEN}` };

async function call(method, path, body) {
  const init = { method, headers: { ...headers } };
  if (body !== undefined) {
    init.headers["Content-Type"] = "application/json";
    init.body = JSON.stringify(body);
  }
  const r = await fetch(BASE + path, init);
  const text = await r.text();
  let data = null;
  try { data = text ? JSON.parse(text) : null; } catch (e) { data = { error: text }; }
  return { status: r.status, data };
}

// Server-Sent Events over fetch: yields {id, event, data} per message (comments skipped).
async function* sse(path, lastId) {
  const h = { ...headers, Accept: "text/event-stream" };
  if (lastId) h["Last-Event-ID"] = lastId;
  const r = await fetch(BASE + path, { headers: h });
  if (!r.ok) throw new Error(`${path}: ${r.status} ${await r.text()}`);
  const decoder = new TextDecoder();
  let buf = "";
  for await (const chunk of r.body) {
    buf += decoder.decode(chunk, { stream: true });
    let cut;
    while ((cut = buf.indexOf("\n\n")) >= 0) {
      const block = buf.slice(0, cut);
      buf = buf.slice(cut + 2);
      const msg = { id: null, event: "message", data: "" };
      let fields = 0;
      for (const line of block.split("\n")) {
        if (line === "" || line.startsWith(":")) continue;
        const colon = line.indexOf(":");
        const field = colon < 0 ? line : line.slice(0, colon);
        let value = colon < 0 ? "" : line.slice(colon + 1);
        if (value.startsWith(" ")) value = value.slice(1);
        if (field === "data") msg.data += (msg.data ? "\n" : "") + value;
        else if (field === "event") msg.event = value;
        else if (field === "id") msg.id = value;
        else continue;
        fields += 1;
      }
      if (fields) yield msg;
    }
  }
}

// Random legal picks: min..max distinct option keys, or [] to decline now and then.
function choose(d) {
  if (d.declinable && (d.options.length === 0 || random() < 0.25)) return [];
  const keys = d.options.map((o) => o.key);
  for (let i = keys.length - 1; i > 0; i--) {
    const j = Math.floor(random() * (i + 1));
    [keys[i], keys[j]] = [keys[j], keys[i]];
  }
  const lo = Math.max(d.min, d.declinable ? 0 : 1, 0);
  const hi = Math.max(lo, Math.min(d.max, keys.length));
  const n = lo + Math.floor(random() * (hi - lo + 1));
  return keys.slice(0, Math.min(n, keys.length));
}

// The server's default for a decision: what the docs say a silent seat gets.
function fallback(d) {
  return d.declinable ? [] : d.options.slice(0, d.min).map((o) => o.key);
}

const totals = { games: 0, answers: 0, refused: 0, illegal: 0, throttled: 0, errors: 0 };
const playing = new Set();
let finish = null;
const finished = new Promise((resolve) => { finish = resolve; });

async function answer(game, seat, d) {
  if (SLOW) await new Promise((r) => setTimeout(r, SLOW));
  const path = `/api/bot/games/${encodeURIComponent(game)}/seats/${seat}/answer`;
  const send = async (picks) => {
    for (;;) {
      const r = await call("POST", path, { decision: d.id, picks });
      if (r.status !== 429) return r;
      totals.throttled += 1; // more than 20 answers a second for the seat: wait, send again
      await new Promise((done) => setTimeout(done, 250));
    }
  };
  let r = await send(choose(d));
  if (r.status === 400) {
    totals.illegal += 1; // a random combination the rules refuse: the default is always legal
    r = await send(fallback(d));
  }
  if (r.status === 200) totals.answers += 1;
  else if (r.status === 409) totals.refused += 1; // no longer pending: the stream says what is
  else { totals.errors += 1; console.error(`answer ${game}/${seat}: ${r.status} ${JSON.stringify(r.data)}`); }
  return r.status;
}

async function play(game, seat) {
  const key = `${game}/${seat}`;
  if (playing.has(key)) return;
  playing.add(key);
  let last = null;
  let answers = 0;
  let refused = 0;
  for (let attempt = 0; attempt < 20; attempt++) {
    try {
      for await (const m of sse(`/api/bot/games/${encodeURIComponent(game)}/seats/${seat}/stream`, last)) {
        if (m.id) last = m.id;
        if (m.event === "decision") {
          const body = JSON.parse(m.data);
          if (body.decision && body.decision.seat === seat) {
            const status = await answer(game, seat, body.decision);
            if (status === 200) answers += 1; else refused += 1;
          }
        } else if (m.event === "end") {
          totals.games += 1;
          console.log(JSON.stringify({ game, seat, answers, refused }));
          playing.delete(key);
          if (WANT && totals.games >= WANT) finish();
          return;
        } else if (m.event === "refused") {
          throw new Error(m.data);
        }
      }
    } catch (e) {
      totals.errors += 1;
      console.error(`seat ${key}: ${e.message}`);
    }
    await new Promise((r) => setTimeout(r, 500)); // the stream dropped: resume from `last`
  }
  playing.delete(key);
}

async function events() {
  let last = null;
  for (;;) {
    try {
      for await (const m of sse("/api/bot/events", last)) {
        if (m.id) last = m.id;
        if (m.event === "seated") {
          const s = JSON.parse(m.data);
          play(s.game, s.seat);
        }
      }
    } catch (e) {
      console.error(`events: ${e.message}`);
    }
    await new Promise((r) => setTimeout(r, 500));
  }
}

async function main() {
  const me = await call("GET", "/api/bot/me");
  if (me.status !== 200) {
    console.error(`not a bot token: ${me.status} ${JSON.stringify(me.data)}`);
    process.exit(1);
  }
  console.error(`playing as ${me.data.name} (${me.data.player})`);
  events();
  for (const s of me.data.seats) play(s.game, s.seat); // seats from before a restart
  if (args.quickplay) {
    const [ruleset, players] = args.quickplay.split(":");
    const settings = { ruleset, players: Number(players), bot_after_ms: 500, time_limit_ms: 10000 };
    const r = await call("POST", "/api/bot/quickplay", { settings });
    if (r.status !== 200 && r.status !== 201) {
      console.error(`quickplay: ${r.status} ${JSON.stringify(r.data)}`);
      process.exit(1);
    }
  }
  await finished;
  console.log(JSON.stringify({ done: totals }));
  process.exit(0);
}

process.on("SIGTERM", () => { console.log(JSON.stringify({ done: totals })); process.exit(0); });
main();
