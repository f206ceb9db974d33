// Every word the page says, in one place and in two languages: 中文 (zh) and English (en).
// The page speaks one of them: the one chosen with the switch in the header (kept in this
// browser), else the browser's own language (zh… → zh, else en). Names of cards, generals and
// skills are the game's own (as the ruleset prints them); the words around them follow the
// language. The server labels decisions in the same language (`lang` on the seat's routes).
"use strict";

const LANGS = ["zh", "en"];
let LANG = (() => {
  try {
    const kept = localStorage.getItem("arena.lang");
    if (LANGS.includes(kept)) return kept;
  } catch (e) { /* no storage: the browser's language */ }
  return /^zh/i.test(navigator.language || "") ? "zh" : "en";
})();

function setLang(lang) {
  if (!LANGS.includes(lang)) return;
  LANG = lang;
  document.documentElement.lang = lang;
  try { localStorage.setItem("arena.lang", lang); } catch (e) { /* kept for this page only */ }
}

const WORDS = {
  zh: {
    "lang.switch": "English", "lang.title": "切换到英文",
    "lobby": "大厅", "loading": "载入中…", "back": "返回大厅",
    "conn.live": "实时", "conn.over": "对局结束", "conn.reconnecting": "重新连接中…",
    "open_tables": "等待中的牌桌", "live_games": "进行中的对局", "recent_games": "最近的对局",
    "none_now": "暂无", "none_yet": "暂无",
    "no_matchmaker": "此服务器只提供观战与回放（没有匹配服务）。",
    "your_name": "你的名字", "name_placeholder": "游戏中显示的名字", "sit_down": "入座",
    "playing_as": "玩家：", "waiting_at": "正在等待开局…", "leave": "离开",
    "ruleset": "规则", "players": "人数", "preset": "玩法", "bots": "电脑难度",
    "bots_after": "电脑补位等待", "time_per_decision": "每步限时", "hosted_after": "托管：超时",
    "times": "次后", "seconds": "秒",
    "quick_play": "快速开始", "open_table": "开新桌", "join": "加入",
    "seated_n": "{n}/{m} 人", "bots_level": "电脑：{level}，{s} 秒后补位",
    "entries_n": "{n} 条记录", "from_start": "从头回放", "winners": "胜者：{who}",
    "level.normal": "普通", "level.easy": "简单", "level.hard": "困难", "level.random": "随机", "level.heuristic": "普通",
    "rs.standard": "标准身份局", "rs.honglou": "红楼梦", "rs.jinyu": "金鱼", "rs.extended": "扩展身份局", "rs.chengtian": "承天（1v1）",
    "dead_banner": "你在对局 {game} 中已阵亡，对局仍在继续。", "watch_seat": "从你的座位观战", "leave_seat": "离开该座位",
    "left_banner": "你已离开对局 {game}，电脑将替你打完。", "watch": "观战",
    "live_title": "观战：{game}", "replay_title": "回放：{game}", "seat_title": "对局 {game}",
    "replay_from_start": "从头回放", "view": "视角", "spectator": "旁观者", "every_hand": "所有手牌",
    "step_back": "◀ 后退", "play_btn": "▶ 播放", "pause_btn": "❚❚ 暂停", "step_fwd": "前进 ▶", "speed": "速度", "per_s": "条/秒",
    "event_n": "第 {n} / {m} 条",
    "hosting": "托管", "take_back": "取消托管", "hosting_level": "托管的电脑难度（你的默认设置，各牌桌通用）", "level.table": "本桌难度", "resign": "认输离开", "spectate": "旁观视角",
    "resign_confirm": "离开本局？你的座位将由电脑打完本局。",
    "your_hand": "你的手牌", "hand": "手牌", "no_equip": "无装备", "judge_area": "判定区",
    "seat_n": "{n}号位", "you": "你", "bot": "电脑",
    "round": "第 {n} 轮", "phase": "{phase}阶段", "dealing": "发牌中", "game_over": "对局结束",
    "deck": "牌堆", "discard_pile": "弃牌堆",
    "waiting_for": "等待 {seat}{what}",
    "ask.play": "出牌", "ask.discard": "弃牌", "ask.targets": "选择目标", "ask.draft": "选将", "ask.other": "决策",
    "waiting": "等待其他玩家…", "hosted_plays": "托管中：电脑替你出牌", "bot_answers": "托管中：电脑作答",
    "over_won": "对局结束：你赢了！", "over_lost": "对局结束：你输了。", "over_draw": "对局结束：平局。",
    "dead": "你已阵亡{by}。对局仍在继续：你可以从你的座位继续观战，或返回大厅开始新的对局。",
    "dead_by": "（被 {seat} 击杀）",
    "ok": "确定（{n}）", "decline.play": "结束出牌", "decline.respond": "不出", "decline.targets": "取消", "decline.confirm": "不发动",
    "decline.discard": "不弃", "decline.cards": "取消", "decline.choose": "跳过", "decline.pick_card": "跳过", "decline.other": "放弃",
    "seconds_left": "{n} 秒", "skills": "技能",
    "error.back": "返回大厅",
  },
  en: {
    "lang.switch": "中文", "lang.title": "切换到中文 (Chinese)",
    "lobby": "lobby", "loading": "Loading…", "back": "back to the lobby",
    "conn.live": "live", "conn.over": "game over", "conn.reconnecting": "reconnecting…",
    "open_tables": "Open tables", "live_games": "Live games", "recent_games": "Recent games",
    "none_now": "none right now", "none_yet": "none yet",
    "no_matchmaker": "This server only shows games (no matchmaker): watch and replay below.",
    "your_name": "Your name", "name_placeholder": "a name to play under", "sit_down": "sit down",
    "playing_as": "Playing as ", "waiting_at": "Waiting at a table…", "leave": "leave",
    "ruleset": "ruleset", "players": "players", "preset": "options", "bots": "bots",
    "bots_after": "bots join after", "time_per_decision": "time per decision", "hosted_after": "托管 after",
    "times": "time-outs", "seconds": "s",
    "quick_play": "quick play", "open_table": "open a table", "join": "join",
    "seated_n": "{n}/{m} seated", "bots_level": "bots: {level} after {s} s",
    "entries_n": "{n} entries", "from_start": "from the start", "winners": "winners: {who}",
    "level.normal": "normal", "level.easy": "easy", "level.hard": "hard", "level.random": "random", "level.heuristic": "normal",
    "rs.standard": "standard identity", "rs.honglou": "红楼梦 (honglou)", "rs.jinyu": "金鱼 (jinyu)", "rs.extended": "extended identity", "rs.chengtian": "承天 (chengtian, 1v1)",
    "dead_banner": "You died in game {game}; it goes on.", "watch_seat": "watch from your seat", "leave_seat": "leave the seat",
    "left_banner": "You left game {game}: your bot plays it to the end.", "watch": "watch",
    "live_title": "live: {game}", "replay_title": "replay: {game}", "seat_title": "game {game}",
    "replay_from_start": "replay from the start", "view": "view", "spectator": "spectator", "every_hand": "every hand",
    "step_back": "◀ step", "play_btn": "▶ play", "pause_btn": "❚❚ pause", "step_fwd": "step ▶", "speed": "speed", "per_s": "ev/s",
    "event_n": "entry {n} / {m}",
    "hosting": "托管", "take_back": "take back", "hosting_level": "the level your bot plays at on 托管 (your default, at every table)", "level.table": "the table's level", "resign": "resign", "spectate": "spectate",
    "resign_confirm": "Leave the game? Your bot will play your seat to the end.",
    "your_hand": "your hand", "hand": "hand", "no_equip": "no equipment", "judge_area": "judge",
    "seat_n": "seat {n}", "you": "you", "bot": "bot",
    "round": "round {n}", "phase": "{phase} phase", "dealing": "dealing", "game_over": "game over",
    "deck": "deck", "discard_pile": "discard",
    "waiting_for": "waiting for {seat} {what}",
    "ask.play": "to play", "ask.discard": "to discard", "ask.targets": "to pick targets", "ask.draft": "to pick a general", "ask.other": "to decide",
    "waiting": "waiting…", "hosted_plays": "托管: your bot plays this seat", "bot_answers": "托管: your bot answers",
    "over_won": "the game is over: you won", "over_lost": "the game is over: you lost", "over_draw": "the game is over: a draw",
    "dead": "You died{by}. The game goes on: watch the rest from your seat, or go back to the lobby for a new game.",
    "dead_by": " (killed by {seat})",
    "ok": "OK ({n})", "decline.play": "end the phase", "decline.respond": "don't", "decline.targets": "cancel", "decline.confirm": "no",
    "decline.discard": "don't", "decline.cards": "cancel", "decline.choose": "skip", "decline.pick_card": "skip", "decline.other": "pass",
    "seconds_left": "{n} s", "skills": "skills",
    "error.back": "back to the lobby",
  },
};

// A word of the page's language, with {name} filled in from `args`.
function t(key, args = {}) {
  const table = WORDS[LANG] || WORDS.en;
  const text = key in table ? table[key] : key in WORDS.en ? WORDS.en[key] : key;
  return text.replace(/\{(\w+)\}/g, (m, k) => (k in args ? String(args[k]) : m));
}

// The word for `key` if the language has one, else `fallback`.
function tOr(key, fallback) {
  const table = WORDS[LANG] || WORDS.en;
  return key in table ? table[key] : fallback;
}
