// The log in a player's words, and names as the game's ruleset prints them (the server sends
// them: /api/games/ID "names", /api/modes "names"; 红楼梦 prints 药 for 桃, 主人 for lord).
"use strict";

const ROLES = { lord: "主公", loyalist: "忠臣", rebel: "反贼", renegade: "内奸" };
const PHASES = { start: "准备", judge: "判定", draw: "摸牌", play: "出牌", discard: "弃牌", finish: "结束" };
const SUITS = { S: "♠", H: "♥", C: "♣", D: "♦" };
const RANKS = { 1: "A", 11: "J", 12: "Q", 13: "K" };
const COUNTERS = { armor: "护甲", jade: "玉佩", rage: "怒气" };
const NATURES = { fire: "fire", thunder: "thunder" };
// why cards moved, for the reasons that are not a card's or a skill's name
const REASONS = {
  deal: "dealt", draw_phase: "", discard_phase: "discard phase", judge_phase: "judgement",
  judge: "judgement", use: "", play: "", recast: "重铸", equip: "", replaced: "replaced",
  dismantle: "dismantled", take: "taken", death: "on death", penalty: "penalty", reward: "reward",
  identity: "", turn_aborted: "turn cut short",
};
const ZONES = { hand: "hand", equip: "equipment", judge: "judgement area", draw: "deck", discard: "discard pile", processing: "table" };
const HOSTING = { timeouts: "after its time-outs", asked: "at its player's request", resigned: "its player resigned", taken_back: "" };

function namer(ruleset, cards, names) {
  const printed = names || {};
  const word = (w) => printed[w] || w;
  const role = (r) => (r ? printed[r] || ROLES[r] || r : "");
  const card = (id) => {
    const c = cards[id];
    if (!c) return `#${id}`;
    return `${word(c[0])}${SUITS[c[1]] || ""}${c[2] ? RANKS[c[2]] || c[2] : ""}`;
  };
  const red = (id) => cards[id] && (cards[id][1] === "H" || cards[id][1] === "D");
  return { word, role, card, red, ruleset };
}

function reasonWords(r, n) {
  if (!r) return "";
  return r in REASONS ? REASONS[r] : n.word(r);
}

function moved(e, n, S) {
  if (e.dst === "processing" || e.src === "processing") return null; // the use is logged itself
  const what = e.cards && e.cards.length ? e.cards.map(n.card).join(" ") : `${e.count} card${e.count === 1 ? "" : "s"}`;
  const why = reasonWords(e.reason, n);
  const tail = why ? ` (${why})` : "";
  const from = e.src_seat >= 0 ? `${S(e.src_seat)}'s ${ZONES[e.src] || e.src}` : `the ${ZONES[e.src] || e.src}`;
  const to = e.dst_seat >= 0 ? `${S(e.dst_seat)}'s ${ZONES[e.dst] || e.dst}` : `the ${ZONES[e.dst] || e.dst}`;
  if (e.src === "draw" && e.dst === "hand") return `${S(e.dst_seat)} draws ${what}${tail}`;
  if (e.dst === "equip" && e.src_seat === e.dst_seat) return `${S(e.dst_seat)} equips ${what}`;
  if (e.dst === "judge") return `${what} goes to ${to}`;
  if (e.src === "hand" && e.dst === "discard") return `${S(e.src_seat)} discards ${what}${tail}`;
  if (e.src_seat >= 0 && e.dst === "hand" && e.dst_seat >= 0 && e.src_seat !== e.dst_seat) return `${S(e.dst_seat)} takes ${what} from ${from}${tail}`;
  if (e.src_seat >= 0 && e.dst === "discard") return `${what} leaves ${from} for the discard pile${tail}`;
  return `${what}: ${from} → ${to}${tail}`;
}

function describe(e, n, S) {
  const list = (ids) => (ids || []).map(n.card).join(" ");
  const tg = (ts) => (ts && ts.length ? " → " + ts.map(S).join(", ") : "");
  const face = (name, suit) => `${n.word(name)}${SUITS[suit] || ""}`;
  switch (e.type) {
    case "game_started": return `the game starts: ${e.players} players, ${e.deck} cards`;
    case "role_assigned": return e.role ? `${S(e.seat)} is ${n.role(e.role)}` : `${S(e.seat)} gets a hidden role`;
    case "role_learned": return e.learner >= 0 ? `${S(e.learner)} learns that ${S(e.seat)} is ${n.role(e.role)}` : "someone learns a role in secret";
    case "general_chosen": return e.general ? `${S(e.seat)} plays ${n.word(e.general)} (${e.hp}/${e.max_hp})` : `${S(e.seat)} takes a general, face down`;
    case "draft_offered": return e.generals && e.generals.length ? `${S(e.seat)} is offered ${e.generals.map(n.word).join(", ")}` : `${S(e.seat)} is offered generals`;
    case "turn_started": return `— round ${e.round}: ${S(e.seat)}'s turn —`;
    case "phase_started": return `${S(e.seat)}: ${PHASES[e.phase] || e.phase} phase`;
    case "phase_skipped": return `${S(e.seat)} skips the ${PHASES[e.phase] || e.phase} phase`;
    case "turn_ended": return `${S(e.seat)}'s turn ends`;
    case "cards_moved": return moved(e, n, S);
    case "deck_reshuffled": return `the discard pile is shuffled into the deck (${e.count})`;
    case "card_used": return `${S(e.user)} uses ${face(e.name, e.suit)}${tg(e.targets)}${e.skill ? ` [${n.word(e.skill)}]` : ""}`;
    case "card_played": return `${S(e.seat)} plays ${face(e.name, e.suit)}${e.skill ? ` [${n.word(e.skill)}]` : ""}`;
    case "target_changed": return `${n.word(e.card)} turns from ${S(e.old)} to ${S(e.new)}${e.skill ? ` [${n.word(e.skill)}]` : ""}`;
    case "nullified": return `${n.word(e.name)} on ${S(e.target)} is cancelled by 无懈可击`;
    case "ineffective": return `${n.word(e.name)} has no effect on ${S(e.target)} (${n.word(e.reason)})`;
    case "dodged": return `${S(e.target)} dodges ${n.word(e.name)}`;
    case "damaged": return `${S(e.target)} takes ${e.amount}${NATURES[e.nature] ? " " + NATURES[e.nature] : ""} damage${e.source >= 0 ? ` from ${S(e.source)}` : ""} → HP ${e.hp}`;
    case "hp_lost": return `${S(e.seat)} loses ${e.amount} HP → ${e.hp}`;
    case "recovered": return `${S(e.seat)} recovers ${e.amount} → HP ${e.hp}`;
    case "max_hp_changed": return `${S(e.seat)}'s max HP is now ${e.max_hp}`;
    case "dying": return `${S(e.seat)} is dying (HP ${e.hp})`;
    case "died": return `${S(e.seat)} dies — was ${n.role(e.role) || "?"}${e.killer >= 0 ? `, killed by ${S(e.killer)}` : ""}`;
    case "judged": return `${S(e.seat)}'s judgement for ${n.word(e.reason)}: ${n.card(e.card)} ${e.result ? "— it takes effect" : "— no effect"}`;
    case "chain_toggled": return `${S(e.seat)} is ${e.chained ? "chained" : "unchained"}`;
    case "skill_invoked": return `${S(e.seat)} invokes ${n.word(e.skill)}${tg(e.targets)}`;
    case "suit_named": return `${S(e.seat)} names ${SUITS[e.suit] || e.suit}`;
    case "card_shown": return `${S(e.seat)} shows ${n.card(e.card)}`;
    case "counter_changed": return `${S(e.seat)}: ${COUNTERS[e.counter] || n.word(e.counter)} ${e.value}`;
    case "insight_revealed": return e.result ? `${S(e.seat)} sees through ${S(e.target)}: ${e.result === "friend" ? "a friend" : e.result === "enemy" ? "an enemy" : n.role(e.result)}` : `${S(e.seat)} uses 洞察 on ${S(e.target)}`;
    case "rebel_disguised": return e.seat >= 0 ? `${S(e.seat)} disguises as ${n.role("rebel")} (${S(e.rebel)})` : `${n.role("renegade")} disguises as ${n.role("rebel")}`;
    case "camp_formed": return `${S(e.seat)} forms a camp of ${e.count} generals`;
    case "general_deployed": return `${S(e.seat)} deploys a general${e.face_down ? " face down" : ""} (${e.camp} left in camp)`;
    case "general_benched": return `${S(e.seat)} sends ${e.general ? n.word(e.general) : "a face-down general"} back to camp`;
    case "general_fell": return `${S(e.seat)}'s ${n.word(e.general)} falls${e.killer >= 0 ? ` to ${S(e.killer)}` : ""}`;
    case "game_ended": {
      const sides = (e.winners || []).filter(Boolean); // a game without roles (1v1) names none
      if (e.draw) return "the game ends in a draw";
      const seats = e.winner_seats.map(S).join(", ");
      return sides.length ? `the game ends: ${sides.map(n.role).join(", ")} win (${seats})` : `the game ends: ${seats} ${e.winner_seats.length === 1 ? "wins" : "win"}`;
    }
    default: return `${S(e.seat ?? -1)} — ${e.type.replace(/_/g, " ")}`;
  }
}

// One log line for an entry (null: nothing worth a line).
function entryWords(x, n, S) {
  if (x.kind === "event") return describe(x.event, n, S);
  if (x.kind === "answer") {
    const a = x.answer;
    return `${S(a.seat)} ${a.auto ? "ran out of time" : "answered"}${a.picks && a.picks.length ? "" : " (passed)"}`;
  }
  if (x.kind === "control") {
    const c = x.control;
    return c.hosted ? `${S(c.seat)} is on 托管: its bot plays (${HOSTING[c.reason] || c.reason})` : `${S(c.seat)} is played by its person again`;
  }
  if (x.kind === "abandon") return `the platform ended the game: ${x.abandon.detail || x.abandon.reason}`;
  if (x.kind === "seed_reveal") return `seed revealed: ${x.reveal.seed} (anyone can now verify every shuffle)`;
  if (x.kind === "header") return `a table of ${x.header.players}, ruleset ${x.header.ruleset}; seed committed ${x.header.seed_commitment.slice(0, 12)}…`;
  return null;
}
