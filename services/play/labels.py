"""A decision in a player's words: a prompt, and every legal option with its label and what it
names (a card, a seat, a skill …), so that a page or any other client draws it from its kind and
never shows a raw option key. One language per request: Chinese (`zh`) or English (`en`).

Names come from the game's catalogue (services/readside/catalogue.py: the ruleset's deck and
printed names, generals with their skills, every skill's text from the rules' registry); a seat
is named by the general it plays now, and by its person's name where a person sits there (never
by a bot's player id). What a card's or skill's `choose` decision asks, and what its options
do, comes from the rules' registry too (api.CHOICES: arrange, take, suit, show, give, either,
enhance; the options' effects), so no word here is keyed by a card's or a skill's name. The words
here are the page's own: decision kinds, the fixed option keys of the rules, the kinds of choice
and their effects, suits and phases.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from typing import Any

from ..rules import api
from . import schema

SUITS = {"S": "♠", "H": "♥", "C": "♣", "D": "♦"}
RANKS = {1: "A", 11: "J", 12: "Q", 13: "K"}

# Every word of this module, by language: the same keys in both (a test checks).
ZH: dict[str, str] = {
    "seat": "{n}号位",
    "you": "你",
    "with_name": "{general}（{name}）",
    "card_n": "第{n}张牌",
    "suit.S": "♠ 黑桃",
    "suit.H": "♥ 红桃",
    "suit.C": "♣ 梅花",
    "suit.D": "♦ 方块",
    "word.end": "结束出牌阶段",
    "word.yes": "确定",
    "word.use": "发动{skill}",
    "word.hand": "随机一张手牌",
    "word.hand_n": "随机一张手牌（共{n}张）",
    "word.bottom": "其余置于牌堆底",
    "word.discard": "弃置一张牌",
    "word.draw": "摸一张牌",
    "word.damage": "受到1点伤害",
    "word.give": "交出一张牌",
    "word.slash": "使用一张杀",
    "word.recover": "回复1点体力",
    "word.extra_turn": "获得一个额外回合",
    "word.lose_hp": "失去1点体力",
    "effect.discard_hand": "弃置一张手牌",
    "effect.discard_hand_2": "弃置两张手牌",
    "effect.user_draws": "令使用者摸一张牌",
    "enhance.slash": "强化杀：不可被闪避",
    "enhance.dodge": "强化闪",
    "enhance.damage": "强化：伤害+1",
    "enhance.slash+damage": "强化杀：不可被闪避且伤害+1",
    "enhance.peach": "强化桃",
    "enhance.wine": "强化酒",
    "enhance.delayed": "强化延时锦囊",
    "recast": "重铸 {card}",
    "general": "{general}（{faction} {hp}血）",
    "play": "出牌阶段：使用一张牌或发动技能，或结束出牌阶段。",
    "targets": "选择{what}的{second}目标{cards}{skill}",
    "second": "第二个",
    "respond.use": "是否使用{need}{against}？",
    "respond.play": "是否打出{need}{against}？",
    "respond.pick": "是否选择{need}{against}？",
    "against": "响应{reason}",
    "dying": "{seat}濒死：是否对其使用{need}？",
    "dying.you": "你濒死：是否使用{need}？",
    "from": "（来自{seat}）",
    "on": "（对{seat}）",
    "discard": "弃置{n}张牌{why}{suit}",
    "discard.why": "（{reason}）",
    "discard.suit": "，须为{suit}",
    "cards": "{skill}：选择{n}张牌{as}",
    "cards.as": "当{name}使用",
    "pick_card": "{reason}：获得{seat}的一张牌",
    "confirm": "是否发动{skill}{on}？",
    "draft": "选择你的武将",
    "draft.camp": "选择阵容第{n}位的武将",
    "choose": "{about}：请选择",
    "asks.arrange": "{about}：按顺序选择置于牌堆顶的牌（先选的在最上）；其余留在其下，"
    "或选“其余置于牌堆底”",
    "asks.take": "{about}：选择一张牌获得",
    "asks.suit": "{about}：选择一种花色",
    "asks.show": "{about}：展示一张手牌",
    "asks.give": "{about}：将{card}交给一名角色",
    "asks.give.any": "{about}：交出一张牌",
    "asks.enhance": "是否{about}{card}（{rage}点怒气）？",
    "asks.either": "{about}：{options}",
    "or": "，或",
    "decide": "{kind}：请选择",
    "n": "{lo}–{hi}",
}
EN: dict[str, str] = {
    "seat": "seat {n}",
    "you": "you",
    "with_name": "{general} ({name})",
    "card_n": "card {n}",
    "suit.S": "♠ spades",
    "suit.H": "♥ hearts",
    "suit.C": "♣ clubs",
    "suit.D": "♦ diamonds",
    "word.end": "end the play phase",
    "word.yes": "yes, do it",
    "word.use": "use {skill}",
    "word.hand": "a random hand card",
    "word.hand_n": "a random hand card ({n} in hand)",
    "word.bottom": "the rest to the bottom",
    "word.discard": "discard a card",
    "word.draw": "draw a card",
    "word.damage": "take 1 damage",
    "word.give": "give a card",
    "word.slash": "use a 杀",
    "word.recover": "recover 1 HP",
    "word.extra_turn": "take an extra turn",
    "word.lose_hp": "lose 1 HP",
    "effect.discard_hand": "discard a hand card",
    "effect.discard_hand_2": "discard 2 hand cards",
    "effect.user_draws": "let the user draw a card",
    "enhance.slash": "强化 杀: cannot be dodged",
    "enhance.dodge": "强化 闪",
    "enhance.damage": "强化: +1 damage",
    "enhance.slash+damage": "强化 杀: cannot be dodged and +1 damage",
    "enhance.peach": "强化 桃",
    "enhance.wine": "强化 酒",
    "enhance.delayed": "强化 the delayed trick",
    "recast": "recast {card}",
    "general": "{general} ({faction}, {hp} HP)",
    "play": "Your play phase: use a card or a skill, or end the phase.",
    "targets": "Choose the {second}target{s} of {what}{cards}{skill}",
    "second": "second ",
    "respond.use": "Use {need}{against}?",
    "respond.play": "Play {need}{against}?",
    "respond.pick": "Pick {need}{against}?",
    "against": " against {reason}",
    "dying": "{seat} is dying: use {need} on them?",
    "dying.you": "You are dying: use {need}?",
    "from": " from {seat}",
    "on": " on {seat}",
    "discard": "Discard {n} card{s}{why}{suit}",
    "discard.why": " ({reason})",
    "discard.suit": " of {suit}",
    "cards": "{skill}: choose {n} card{s}{as}",
    "cards.as": " to use as {name}",
    "pick_card": "{reason}: take a card from {seat}",
    "confirm": "Use {skill}{on}?",
    "draft": "Choose your general",
    "draft.camp": "Choose the general for camp position {n}",
    "choose": "{about}: choose",
    "asks.arrange": "{about}: pick the cards to put on top, in order (top first); the rest stay "
    "below them, or go to the bottom",
    "asks.take": "{about}: take one of the cards shown",
    "asks.suit": "{about}: name a suit",
    "asks.show": "{about}: show a card from your hand",
    "asks.give": "{about}: give {card} to a player",
    "asks.give.any": "{about}: give a card",
    "asks.enhance": "{about} {card} ({rage} 怒气)?",
    "asks.either": "{about}: {options}",
    "or": ", or ",
    "decide": "{kind}: choose",
    "n": "{lo}–{hi}",
}
LANGS: dict[str, dict[str, str]] = {"zh": ZH, "en": EN}


@dataclass(frozen=True)
class Table:
    """What labels need to know of a game: its card table, the name each seat's person chose
    ("" for a bot), printed names, generals (faction, max HP) and their skills, skill texts."""

    cards: list[list[Any]]  # id -> [name, suit, rank, type, subtype] (catalogue.card_table)
    seat_names: list[str]  # a person's chosen name, "" for a bot's seat
    names: dict[str, str]  # engine name -> printed name (readside.catalogue.printed_names)
    generals: dict[str, tuple[str, int]]  # name -> (faction, max HP)
    skills: dict[str, list[str]] = field(default_factory=dict)  # general -> its skills
    texts: dict[str, str] = field(default_factory=dict)  # skill -> its text
    english: dict[str, str] = field(default_factory=dict)  # card -> its English name (api)


@dataclass(frozen=True)
class Words:
    """One decision's words: the game's table, the language, who is asked, and the general
    each seat plays now (from the asked seat's view)."""

    t: Table
    lang: str = "zh"
    me: int = -1
    playing: Sequence[str] = ()  # each seat's general now ("" unknown)

    def w(self, key: str, **args: Any) -> str:
        """A word of the language, filled in."""
        return LANGS[self.lang][key].format(**args)

    def name(self, n: str) -> str:
        """A card, role or skill name as the ruleset prints it (a card's English name in
        English: generals and skills keep their Chinese names)."""
        return (self.lang == "en" and self.t.english.get(n)) or self.t.names.get(n, n)

    def card(self, cid: int) -> str:
        """A card's face: printed name, suit and rank."""
        cards = self.t.cards
        if not 0 <= cid < len(cards):
            return self.w("card_n", n=cid)
        name, suit, rank = cards[cid][0], cards[cid][1], cards[cid][2]
        return f"{self.name(name)}{SUITS.get(suit, '')}{RANKS.get(rank, rank) if rank else ''}"

    def seat(self, i: int) -> str:
        """A seat as a player knows it: the general it plays (else its number), and the
        person's name where a person sits there (`you` for the asked seat)."""
        general = self.playing[i] if 0 <= i < len(self.playing) else ""
        if self.t.generals.get(general, ("?", 0))[0] == "":
            general = ""  # no general of its own (a vanilla table's seats): its number
        label = self.name(general) if general else self.w("seat", n=i + 1)
        person = self.w("you") if i == self.me else ""
        if not person and 0 <= i < len(self.t.seat_names):
            person = self.t.seat_names[i]
        return self.w("with_name", general=label, name=person) if person else label

    def about_general(self, general: str) -> str:
        """A general's skills with their text, one a line."""
        sep = "：" if self.lang == "zh" else ": "
        return "\n".join(
            f"{self.name(s)}{sep}{self.t.texts.get(s, '')}" if self.t.texts.get(s) else self.name(s)
            for s in self.t.skills.get(general, [])
        )

    def word(self, about: str, key: str) -> str | None:
        """The label of a named option of a decision ``about`` a card or skill, if it has one:
        the effect the rules' registry names for it, else the word of its choice's kind, else
        the key's own word."""
        words = LANGS[self.lang]
        choice = api.CHOICES.get(about)
        if choice is not None:
            effect = choice.options.get(key)
            label = words.get(f"effect.{effect}") if effect else words.get(f"{choice.asks}.{key}")
            if label:
                return label
        return words.get(f"word.{key}")

    def count(self, lo: int, hi: int) -> str:
        """A number of picks: `2`, or `1–3`."""
        return str(lo) if lo == hi else self.w("n", lo=lo, hi=hi)


def option(key: str, d: api.Decision, t: Words) -> schema.Option:
    """One option, labelled; a key of an unknown shape raises ValueError (tests enumerate every
    kind the rulesets produce, so none reaches a player unlabelled)."""
    about = str(d.info.get("about", ""))
    kind, sep, rest = key.partition(":")
    number = api.keys.is_number(rest)
    if sep and kind == "card" and number:
        return schema.Option(key=key, type="card", text=t.card(int(rest)), card=int(rest))
    if sep and kind == "recast" and number:
        text = t.w("recast", card=t.card(int(rest)))
        return schema.Option(key=key, type="recast", text=text, card=int(rest))
    if sep and kind == "seat" and number:
        return schema.Option(key=key, type="seat", text=t.seat(int(rest)), seat=int(rest))
    if sep and kind == "skill" and rest:
        text = t.t.texts.get(rest, "")
        return schema.Option(key=key, type="skill", text=t.name(rest), about=text)
    if sep and kind == "general" and rest:
        faction, hp = t.t.generals.get(rest, ("", 0))
        text = t.w("general", general=t.name(rest), faction=t.name(faction), hp=hp)
        if not faction and not hp:
            text = t.name(rest)
        return schema.Option(key=key, type="general", text=text, about=t.about_general(rest))
    if sep and kind == "suit" and rest in SUITS:
        return schema.Option(key=key, type="suit", text=t.w(f"suit.{rest}"))
    if key == "hand":
        count = d.info.get("hand_count")
        text = t.w("word.hand_n", n=count) if count is not None else t.w("word.hand")
        owner = d.info.get("owner", -1)
        return schema.Option(key=key, type="hand", text=text, seat=int(owner))
    label = t.word(about, key)
    if key == "yes" and (d.info.get("skill") or about):
        label = t.w("word.use", skill=t.name(str(d.info.get("skill") or about)))
    if label is None:
        raise ValueError(f"no label for option {key!r} of a {d.kind} decision ({about or '-'})")
    return schema.Option(key=key, type="word", text=label)


def _cards(ids: object, t: Words) -> str:
    return " ".join(t.card(int(c)) for c in ids) if isinstance(ids, list) else ""


def _respond(d: api.Decision, t: Words) -> str:
    i = d.info
    how = {"use": "use", "play": "play"}.get(str(i.get("mode")), "pick")
    src, tgt, reason = int(i.get("source", -1)), int(i.get("target", -1)), str(i.get("reason", ""))
    need = t.name(str(i.get("need")))
    if reason == "dying":  # a seat at 0 HP: who it is, not a card or a skill
        if tgt < 0 or tgt == t.me:
            return t.w("dying.you", need=need)
        return t.w("dying", seat=t.seat(tgt), need=need)
    against = ""
    if reason:
        what = t.name(reason)
        if src >= 0:
            what += t.w("from", seat=t.seat(src))
        if tgt >= 0:  # whom it is for (AskCard.target: a 无懈可击's trick target, 青龙's 杀's)
            what += t.w("on", seat=t.seat(tgt))
        against = t.w("against", reason=what)
    return t.w(f"respond.{how}", need=need, against=against)


def _targets(d: api.Decision, t: Words) -> str:
    i = d.info
    cards = f" ({_cards(i.get('cards'), t)})" if i.get("cards") else ""
    skill = f" [{t.name(str(i['skill']))}]" if i.get("card") and i.get("skill") else ""
    return t.w(
        "targets",
        what=t.name(str(i.get("card") or i.get("skill") or "")),
        second=t.w("second") if i.get("second") else "",
        s="s" if d.max > 1 else "",
        cards=cards,
        skill=skill,
    )


def _discard(d: api.Decision, t: Words) -> str:
    reason = d.info.get("reason")
    why = (
        t.w("discard.why", reason=t.name(str(reason)))
        if reason not in (None, "discard_phase")
        else ""
    )
    suit = str(d.info.get("suit") or "")
    return t.w(
        "discard",
        n=t.count(d.min, d.max),
        s="s" if d.max > 1 else "",
        why=why,
        suit=t.w("discard.suit", suit=t.w(f"suit.{suit}")) if suit in SUITS else "",
    )


def _cards_prompt(d: api.Decision, t: Words) -> str:
    as_ = t.w("cards.as", name=t.name(str(d.info["as"]))) if d.info.get("as") else ""
    return t.w(
        "cards",
        skill=t.name(str(d.info.get("skill", ""))),
        n=t.count(d.min, d.max),
        s="s" if d.max > 1 else "",
        **{"as": as_},
    )


def _confirm(d: api.Decision, t: Words) -> str:
    skill = t.name(str(d.info.get("skill") or d.info.get("about") or ""))
    on = t.w("on", seat=t.seat(int(d.info["target"]))) if "target" in d.info else ""
    return t.w("confirm", skill=skill, on=on)


def _draft(d: api.Decision, t: Words) -> str:
    if d.info.get("about") == "camp":
        return t.w("draft.camp", n=int(d.info["position"]) + 1)
    return t.w("draft")


def _choose(d: api.Decision, t: Words) -> str:
    about = str(d.info.get("about", ""))
    choice = api.CHOICES.get(about)
    if choice is None:
        return t.w("choose", about=t.name(about))
    name = t.name(choice.name or about)
    if choice.asks == "give":
        if "card" in d.info:
            return t.w("asks.give", about=name, card=t.card(int(d.info["card"])))
        return t.w("asks.give.any", about=name)
    if choice.asks == "enhance":
        card = t.name(str(d.info.get("card", "")))
        return t.w("asks.enhance", about=name, card=card, rage=d.info.get("rage", 0))
    if choice.asks == "either":
        options = LANGS[t.lang]["or"].join(t.word(about, o) or o for o in d.options)
        return t.w("asks.either", about=name, options=options)
    return t.w(f"asks.{choice.asks}", about=name)


PROMPTS: dict[str, Callable[[api.Decision, Words], str]] = {
    "play": lambda d, t: t.w("play"),
    "targets": _targets,
    "respond": _respond,
    "discard": _discard,
    "cards": _cards_prompt,
    "pick_card": lambda d, t: t.w(
        "pick_card",
        reason=t.name(str(d.info.get("reason", ""))),
        seat=t.seat(int(d.info.get("owner", -1))),
    ),
    "confirm": _confirm,
    "choose": _choose,
    "draft": _draft,
}


def _ordered(d: api.Decision) -> bool:
    """Whether the picks' order matters, as the rules' registry says of the decision's choice."""
    choice = api.CHOICES.get(str(d.info.get("about", ""))) if d.kind == "choose" else None
    return choice is not None and choice.ordered


def prompt(d: api.Decision, t: Words) -> str:
    """What the decision asks, in a player's words."""
    make = PROMPTS.get(d.kind)
    return make(d, t) if make is not None else t.w("decide", kind=d.kind)


def decision(
    d: api.Decision,
    t: Table,
    version: int,
    deadline_ms: int,
    lang: str = "zh",
    playing: Sequence[str] = (),
) -> schema.Decision:
    """The decision as the play API sends it to its seat, in `lang`; `playing`: the general
    each seat plays now, as the seat knows it (seats are named by them)."""
    words = Words(t, lang, d.seat, playing)
    return schema.Decision(
        id=d.id,
        seat=d.seat,
        kind=d.kind,
        prompt=prompt(d, words),
        options=[option(o, d, words) for o in d.options],
        min=d.min,
        max=d.max,
        declinable=d.declinable,
        ordered=bool(d.info.get("ordered")) or _ordered(d),
        info=dict(d.info),
        version=version,
        deadline_ms=deadline_ms,
    )
