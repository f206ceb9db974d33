// The log in a player's words, in the page's language (i18n.js), and names as the game's
// ruleset prints them (the server sends them: /api/games/ID "names", /api/modes "names"; 红楼梦
// prints 药 for 桃, 主人 for lord). Seats are named by the caller's S(i): the general a seat
// plays, else its person's name or number.
"use strict";

const SUITS = { S: "♠", H: "♥", C: "♣", D: "♦" };
const RANKS = { 1: "A", 11: "J", 12: "Q", 13: "K" };
// A role in English, by the word the ruleset prints for it (红楼梦's 主人 is a master, not a lord).
const ROLE_EN = {
  主公: "lord", 主人: "master", 忠臣: "loyalist", 仆人: "servant", 反贼: "rebel", 内奸: "renegade",
  储君: "crown prince", 丞相: "chancellor", 大将: "grand general", 佞宦: "eunuch", 党人: "partisan",
  贼首: "bandit chief", 穷寇: "desperado", 义贼: "outlaw", 暴民: "rioter", 盗匪: "brigand", 叛徒: "traitor",
};
const ROLE_ZH = { lord: "主公", loyalist: "忠臣", rebel: "反贼", renegade: "内奸" };

const LOG = {
  zh: {
    phases: { start: "准备", judge: "判定", draw: "摸牌", play: "出牌", discard: "弃牌", finish: "结束" },
    counters: { armor: "护甲", jade: "玉佩", rage: "怒气" },
    natures: { fire: "火焰", thunder: "雷电" },
    zones: { hand: "手牌", equip: "装备区", judge: "判定区", draw: "牌堆", discard: "弃牌堆", processing: "处理区" },
    reasons: { deal: "发牌", discard_phase: "弃牌阶段", judge_phase: "判定", judge: "判定", recast: "重铸", replaced: "被替换", dismantle: "被拆", take: "被获得", death: "阵亡", penalty: "惩罚", reward: "奖励", turn_aborted: "回合中止" },
    hosting: { timeouts: "连续超时", asked: "玩家请求", resigned: "玩家认输离开", taken_back: "" },
    cards_n: "{n}张牌", tail: "（{why}）", to: "→ {seats}", sep: "、",
    game_started: "对局开始：{n}人，{deck}张牌", role_assigned: "{seat}的身份是{role}", role_hidden: "{seat}获得一张暗置的身份牌",
    role_learned: "{learner}得知{seat}是{role}", role_learned_secret: "有人暗中得知了一名角色的身份",
    general_chosen: "{seat}选择了武将{general}（{hp}/{max}）", general_hidden: "{seat}选择了一名暗置的武将",
    draft_offered: "{seat}可选武将：{generals}", draft_hidden: "{seat}获得候选武将",
    turn_started: "—— 第{round}轮：{seat}的回合 ——", phase_started: "{seat}：{phase}阶段", phase_skipped: "{seat}跳过{phase}阶段", turn_ended: "{seat}的回合结束",
    draws: "{seat}摸了{what}{tail}", equips: "{seat}装备了{what}", to_judge: "{what}进入{to}", discards: "{seat}弃置了{what}{tail}",
    takes: "{seat}从{from}获得{what}{tail}", leaves: "{what}从{from}进入弃牌堆{tail}", moves: "{what}：{from} → {to}{tail}",
    seat_zone: "{seat}的{zone}", zone: "{zone}",
    deck_reshuffled: "弃牌堆洗入牌堆（{n}张）", card_used: "{seat}使用了{card}{targets}{skill}", card_played: "{seat}打出了{card}{skill}",
    target_changed: "{card}的目标由{old}改为{new}{skill}", nullified: "{card}对{target}的效果被无懈可击抵消", ineffective: "{card}对{target}无效（{why}）",
    dodged: "{target}闪避了{card}", damaged: "{target}受到{source}{amount}点{nature}伤害，体力{hp}", damage_from: "{seat}造成的",
    hp_lost: "{seat}失去{n}点体力，体力{hp}", recovered: "{seat}回复{n}点体力，体力{hp}", max_hp_changed: "{seat}的体力上限变为{max}",
    dying: "{seat}进入濒死状态（体力{hp}）", died: "{seat}阵亡，身份是{role}{killer}", killed_by: "，被{seat}击杀",
    judged: "{seat}的{why}判定：{card}{result}", judged_yes: "，生效", judged_no: "，未生效",
    chained: "{seat}被横置", unchained: "{seat}被重置", skill_invoked: "{seat}发动{skill}{targets}", suit_named: "{seat}选择了{suit}",
    card_shown: "{seat}展示了{card}", counter_changed: "{seat}的{counter}变为{n}",
    insight: "{seat}洞察{target}：{result}", insight_use: "{seat}对{target}发动洞察", friend: "友方", enemy: "敌方",
    disguised: "{seat}伪装为{rebel}（{of}）", disguised_hidden: "{renegade}伪装为{rebel}",
    camp_formed: "{seat}组成了{n}名武将的阵容", deployed: "{seat}派出一名武将{face}（阵容剩余{camp}）", face_down: "（暗置）",
    benched: "{seat}将{general}撤回阵容", benched_hidden: "一名暗置的武将",
    fell: "{seat}的{general}阵亡{killer}", fell_to: "，被{seat}击败",
    draw: "对局以平局结束", ended_sides: "对局结束：{sides}获胜（{seats}）", ended_seats: "对局结束：{seats}获胜",
    other: "{seat}：{what}",
    timeout: "{seat}超时，系统代为作答", hosted_on: "{seat}进入托管：电脑代打（{why}）", hosted_off: "{seat}取消托管，玩家重新接手",
    reveal: "公开种子：{seed}（现在任何人都可以验证每一次洗牌）", header: "{n}人对局，规则{ruleset}；种子承诺 {commit}…",
    abandon: "平台结束了本局：{why}",
  },
  en: {
    phases: { start: "start", judge: "judgement", draw: "draw", play: "play", discard: "discard", finish: "finish" },
    counters: { armor: "armor", jade: "jade", rage: "rage" },
    natures: { fire: "fire", thunder: "thunder" },
    zones: { hand: "hand", equip: "equipment", judge: "judgement area", draw: "deck", discard: "discard pile", processing: "table" },
    reasons: { deal: "dealt", discard_phase: "discard phase", judge_phase: "judgement", judge: "judgement", recast: "recast", replaced: "replaced", dismantle: "dismantled", take: "taken", death: "on death", penalty: "penalty", reward: "reward", turn_aborted: "turn cut short" },
    hosting: { timeouts: "after its time-outs", asked: "at its player's request", resigned: "its player resigned", taken_back: "" },
    cards_n: "{n} card{s}", tail: " ({why})", to: " → {seats}", sep: ", ",
    game_started: "the game starts: {n} players, {deck} cards", role_assigned: "{seat} is {role}", role_hidden: "{seat} gets a hidden role",
    role_learned: "{learner} learns that {seat} is {role}", role_learned_secret: "someone learns a role in secret",
    general_chosen: "{seat} plays {general} ({hp}/{max})", general_hidden: "{seat} takes a general, face down",
    draft_offered: "{seat} is offered {generals}", draft_hidden: "{seat} is offered generals",
    turn_started: "— round {round}: {seat}'s turn —", phase_started: "{seat}: {phase} phase", phase_skipped: "{seat} skips the {phase} phase", turn_ended: "{seat}'s turn ends",
    draws: "{seat} draws {what}{tail}", equips: "{seat} equips {what}", to_judge: "{what} goes to {to}", discards: "{seat} discards {what}{tail}",
    takes: "{seat} takes {what} from {from}{tail}", leaves: "{what} leaves {from} for the discard pile{tail}", moves: "{what}: {from} → {to}{tail}",
    seat_zone: "{seat}'s {zone}", zone: "the {zone}",
    deck_reshuffled: "the discard pile is shuffled into the deck ({n})", card_used: "{seat} uses {card}{targets}{skill}", card_played: "{seat} plays {card}{skill}",
    target_changed: "{card} turns from {old} to {new}{skill}", nullified: "{card} on {target} is cancelled by 无懈可击", ineffective: "{card} has no effect on {target} ({why})",
    dodged: "{target} dodges {card}", damaged: "{target} takes {amount}{nature} damage{source} → HP {hp}", damage_from: " from {seat}",
    hp_lost: "{seat} loses {n} HP → {hp}", recovered: "{seat} recovers {n} → HP {hp}", max_hp_changed: "{seat}'s max HP is now {max}",
    dying: "{seat} is dying (HP {hp})", died: "{seat} dies — was {role}{killer}", killed_by: ", killed by {seat}",
    judged: "{seat}'s judgement for {why}: {card}{result}", judged_yes: " — it takes effect", judged_no: " — no effect",
    chained: "{seat} is chained", unchained: "{seat} is unchained", skill_invoked: "{seat} invokes {skill}{targets}", suit_named: "{seat} names {suit}",
    card_shown: "{seat} shows {card}", counter_changed: "{seat}: {counter} {n}",
    insight: "{seat} sees through {target}: {result}", insight_use: "{seat} uses 洞察 on {target}", friend: "a friend", enemy: "an enemy",
    disguised: "{seat} disguises as {rebel} ({of})", disguised_hidden: "{renegade} disguises as {rebel}",
    camp_formed: "{seat} forms a camp of {n} generals", deployed: "{seat} deploys a general{face} ({camp} left in camp)", face_down: " face down",
    benched: "{seat} sends {general} back to camp", benched_hidden: "a face-down general",
    fell: "{seat}'s {general} falls{killer}", fell_to: " to {seat}",
    draw: "the game ends in a draw", ended_sides: "the game ends: {sides} win ({seats})", ended_seats: "the game ends: {seats} {verb}",
    other: "{seat} — {what}",
    timeout: "{seat} ran out of time: the server answered", hosted_on: "{seat} is on 托管: its bot plays ({why})", hosted_off: "{seat} is played by its person again",
    reveal: "seed revealed: {seed} (anyone can now verify every shuffle)", header: "a table of {n}, ruleset {ruleset}; seed committed {commit}…",
    abandon: "the platform ended the game: {why}",
  },
};

// A log word of the page's language, filled in.
function lw(key, args = {}) {
  const table = LOG[LANG] || LOG.en;
  const text = typeof table[key] === "string" ? table[key] : LOG.en[key];
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in args ? String(args[k]) : m));
}
const logTable = (name) => (LOG[LANG] || LOG.en)[name];

// english: each card's English name (the game's `english`, from the rules' registry), shown on
// an English page; generals and skills keep their Chinese names
function namer(ruleset, cards, names, english) {
  const printed = names || {};
  const en = LANG === "en" ? english || {} : {};
  const word = (w) => en[w] || printed[w] || w;
  const role = (r) => {
    if (!r) return "";
    const zh = printed[r] || ROLE_ZH[r] || r;
    return LANG === "zh" ? zh : ROLE_EN[zh] || r;
  };
  const face = (c) => `${word(c[0])}${SUITS[c[1]] || ""}${c[2] ? RANKS[c[2]] || c[2] : ""}`;
  const card = (id) => (cards[id] ? face(cards[id]) : `#${id}`);
  const red = (id) => cards[id] && (cards[id][1] === "H" || cards[id][1] === "D");
  // a card as used: its name, with the real card(s) beside it when it is something else (大乔's
  // 国色 uses 闪♦J as 乐不思蜀: "乐不思蜀 (闪♦J)")
  const used = (name, suit, ids) => {
    const real = (ids || []).filter((id) => cards[id]);
    if (real.length === 1 && cards[real[0]][0] === name) return card(real[0]);
    const as = `${word(name)}${SUITS[suit] || ""}`;
    return real.length ? `${as} (${real.map(card).join(" ")})` : as;
  };
  return { word, role, card, red, used, ruleset, cards };
}

function reasonWords(r, n) {
  if (!r) return "";
  const reasons = logTable("reasons");
  if (r in reasons) return reasons[r];
  return ["draw_phase", "use", "play", "equip", "identity"].includes(r) ? "" : n.word(r);
}

function moved(e, n, S) {
  if (e.dst === "processing" || e.src === "processing") return null; // the use is logged itself
  const zones = logTable("zones");
  const what = e.cards && e.cards.length ? e.cards.map(n.card).join(" ") : lw("cards_n", { n: e.count, s: e.count === 1 ? "" : "s" });
  const why = reasonWords(e.reason, n);
  const tail = why ? lw("tail", { why }) : "";
  const place = (seat, zone) => (seat >= 0 ? lw("seat_zone", { seat: S(seat), zone: zones[zone] || zone }) : lw("zone", { zone: zones[zone] || zone }));
  const from = place(e.src_seat, e.src), to = place(e.dst_seat, e.dst);
  if (e.src === "draw" && e.dst === "hand") return lw("draws", { seat: S(e.dst_seat), what, tail });
  if (e.dst === "equip" && e.src_seat === e.dst_seat) return lw("equips", { seat: S(e.dst_seat), what });
  if (e.dst === "judge") return lw("to_judge", { what, to });
  if (e.src === "hand" && e.dst === "discard") return lw("discards", { seat: S(e.src_seat), what, tail });
  if (e.src_seat >= 0 && e.dst === "hand" && e.dst_seat >= 0 && e.src_seat !== e.dst_seat) return lw("takes", { seat: S(e.dst_seat), what, from, tail });
  if (e.src_seat >= 0 && e.dst === "discard") return lw("leaves", { what, from, tail });
  return lw("moves", { what, from, to, tail });
}

function describe(e, n, S) {
  const sep = lw("sep");
  const tg = (ts) => (ts && ts.length ? lw("to", { seats: ts.map(S).join(sep) }) : "");
  const sk = (s) => (s ? ` [${n.word(s)}]` : "");
  const phase = (p) => logTable("phases")[p] || p;
  switch (e.type) {
    case "game_started": return lw("game_started", { n: e.players, deck: e.deck });
    case "role_assigned": return e.role ? lw("role_assigned", { seat: S(e.seat), role: n.role(e.role) }) : lw("role_hidden", { seat: S(e.seat) });
    case "role_learned": return e.learner >= 0 ? lw("role_learned", { learner: S(e.learner), seat: S(e.seat), role: n.role(e.role) }) : lw("role_learned_secret");
    case "general_chosen": return e.general ? lw("general_chosen", { seat: S(e.seat), general: n.word(e.general), hp: e.hp, max: e.max_hp }) : lw("general_hidden", { seat: S(e.seat) });
    case "draft_offered": return e.generals && e.generals.length ? lw("draft_offered", { seat: S(e.seat), generals: e.generals.map(n.word).join(sep) }) : lw("draft_hidden", { seat: S(e.seat) });
    case "turn_started": return lw("turn_started", { round: e.round, seat: S(e.seat) });
    case "phase_started": return lw("phase_started", { seat: S(e.seat), phase: phase(e.phase) });
    case "phase_skipped": return lw("phase_skipped", { seat: S(e.seat), phase: phase(e.phase) });
    case "turn_ended": return lw("turn_ended", { seat: S(e.seat) });
    case "cards_moved": return moved(e, n, S);
    case "deck_reshuffled": return lw("deck_reshuffled", { n: e.count });
    case "card_used": return lw("card_used", { seat: S(e.user), card: n.used(e.name, e.suit, e.cards), targets: tg(e.targets), skill: sk(e.skill) });
    case "card_played": return lw("card_played", { seat: S(e.seat), card: n.used(e.name, e.suit, e.cards), skill: sk(e.skill) });
    case "target_changed": return lw("target_changed", { card: n.word(e.card), old: S(e.old), new: S(e.new), skill: sk(e.skill) });
    case "nullified": return lw("nullified", { card: n.word(e.name), target: S(e.target) });
    case "ineffective": return lw("ineffective", { card: n.word(e.name), target: S(e.target), why: n.word(e.reason) });
    case "dodged": return lw("dodged", { target: S(e.target), card: n.word(e.name) });
    case "damaged": {
      const nature = logTable("natures")[e.nature];
      return lw("damaged", { target: S(e.target), amount: e.amount, nature: nature ? (LANG === "zh" ? nature : ` ${nature}`) : "", source: e.source >= 0 ? lw("damage_from", { seat: S(e.source) }) : "", hp: e.hp });
    }
    case "hp_lost": return lw("hp_lost", { seat: S(e.seat), n: e.amount, hp: e.hp });
    case "recovered": return lw("recovered", { seat: S(e.seat), n: e.amount, hp: e.hp });
    case "max_hp_changed": return lw("max_hp_changed", { seat: S(e.seat), max: e.max_hp });
    case "dying": return lw("dying", { seat: S(e.seat), hp: e.hp });
    case "died": return lw("died", { seat: S(e.seat), role: n.role(e.role) || "?", killer: e.killer >= 0 ? lw("killed_by", { seat: S(e.killer) }) : "" });
    case "judged": return lw("judged", { seat: S(e.seat), why: reasonWords(e.reason, n) || n.word(e.reason), card: n.card(e.card), result: lw(e.result ? "judged_yes" : "judged_no") });
    case "chain_toggled": return lw(e.chained ? "chained" : "unchained", { seat: S(e.seat) });
    case "skill_invoked": return lw("skill_invoked", { seat: S(e.seat), skill: n.word(e.skill), targets: tg(e.targets) });
    case "suit_named": return lw("suit_named", { seat: S(e.seat), suit: SUITS[e.suit] || e.suit });
    case "card_shown": return lw("card_shown", { seat: S(e.seat), card: n.card(e.card) });
    case "counter_changed": return lw("counter_changed", { seat: S(e.seat), counter: logTable("counters")[e.counter] || n.word(e.counter), n: e.value });
    case "insight_revealed":
      if (!e.result) return lw("insight_use", { seat: S(e.seat), target: S(e.target) });
      return lw("insight", { seat: S(e.seat), target: S(e.target), result: e.result === "friend" ? lw("friend") : e.result === "enemy" ? lw("enemy") : n.role(e.result) });
    case "rebel_disguised": return e.seat >= 0 ? lw("disguised", { seat: S(e.seat), rebel: n.role("rebel"), of: S(e.rebel) }) : lw("disguised_hidden", { renegade: n.role("renegade"), rebel: n.role("rebel") });
    case "camp_formed": return lw("camp_formed", { seat: S(e.seat), n: e.count });
    case "general_deployed": return lw("deployed", { seat: S(e.seat), face: e.face_down ? lw("face_down") : "", camp: e.camp });
    case "general_benched": return lw("benched", { seat: S(e.seat), general: e.general ? n.word(e.general) : lw("benched_hidden") });
    case "general_fell": return lw("fell", { seat: S(e.seat), general: n.word(e.general), killer: e.killer >= 0 ? lw("fell_to", { seat: S(e.killer) }) : "" });
    case "game_ended": {
      const sides = (e.winners || []).filter(Boolean); // a game without roles (1v1) names none
      if (e.draw) return lw("draw");
      const seats = e.winner_seats.map(S).join(sep);
      if (sides.length) return lw("ended_sides", { sides: sides.map(n.role).join(sep), seats });
      return lw("ended_seats", { seats, verb: e.winner_seats.length === 1 ? "wins" : "win" });
    }
    default: return lw("other", { seat: S(e.seat ?? -1), what: e.type.replace(/_/g, " ") });
  }
}

// One log line for an entry (null: nothing worth a line). A seat's own answers are not
// news to it, except the server's answer for it when its clock ran out.
function entryWords(x, n, S) {
  if (x.kind === "event") return describe(x.event, n, S);
  if (x.kind === "answer") return x.answer.auto ? lw("timeout", { seat: S(x.answer.seat) }) : null;
  if (x.kind === "control") {
    const c = x.control;
    if (c.reason === "level") return null; // the seat's 托管 level alone: who plays it is unchanged
    if (!c.hosted) return lw("hosted_off", { seat: S(c.seat) });
    return lw("hosted_on", { seat: S(c.seat), why: logTable("hosting")[c.reason] ?? c.reason });
  }
  if (x.kind === "seed_reveal") return lw("reveal", { seed: x.reveal.seed });
  if (x.kind === "header") return lw("header", { n: x.header.players, ruleset: tOr(`rs.${x.header.ruleset}`, x.header.ruleset), commit: x.header.seed_commitment.slice(0, 12) });
  if (x.kind === "abandon") return lw("abandon", { why: x.abandon.detail || x.abandon.reason });
  return null;
}
