"""A decision in a player's words: a prompt, and every legal option with its label and what it
names (a card, a seat, a skill …), so that a page or any other client draws it from its kind and
never shows a raw option key. Names come from the ruleset (红楼梦 prints 药 for 桃)."""

from __future__ import annotations

from collections.abc import Callable
from dataclasses import dataclass
from typing import Any

from ..rules import api
from . import schema

SUITS = {"S": "♠", "H": "♥", "C": "♣", "D": "♦"}
SUIT_WORDS = {"S": "♠ spades", "H": "♥ hearts", "C": "♣ clubs", "D": "♦ diamonds"}
RANKS = {1: "A", 11: "J", 12: "Q", 13: "K"}

# Named choices (`choose` words, and the fixed keys of other kinds): (about, key) first, then key.
WORDS: dict[tuple[str, str], str] = {
    ("", "end"): "end the play phase",
    ("", "yes"): "yes, do it",
    ("", "hand"): "a random hand card",
    ("", "bottom"): "the rest to the bottom",
    ("", "discard"): "discard",
    ("", "draw"): "draw a card",
    ("", "damage"): "take 1 damage",
    ("", "give"): "give a card",
    ("", "slash"): "use a 杀",
    ("", "recover"): "recover 1 HP",
    ("", "extra_turn"): "take an extra turn",
    ("", "lose_hp"): "lose 1 HP",
    ("雌雄双股剑", "discard"): "discard a hand card",
    ("雌雄双股剑", "draw"): "let the user draw a card",
    ("刚烈", "discard"): "discard 2 hand cards",
    ("刚烈", "damage"): "take 1 damage",
    ("强化", "slash"): "强化 杀: cannot be dodged",
    ("强化", "dodge"): "强化 闪",
    ("强化", "damage"): "强化: +1 damage",
    ("强化", "slash+damage"): "强化 杀: cannot be dodged and +1 damage",
    ("强化", "peach"): "强化 桃",
    ("强化", "wine"): "强化 酒",
    ("强化", "delayed"): "强化 the delayed trick",
}

NEEDS = {"闪": "a 闪", "杀": "a 杀", "桃": "a 桃", "无懈可击": "a 无懈可击"}


def word(about: str, key: str) -> str | None:
    """The label of a named choice, if it has one."""
    return WORDS.get((about, key)) or WORDS.get(("", key))


@dataclass(frozen=True)
class Table:
    """What labels need to know of a game: its card table, seat names and printed names."""

    cards: list[list[Any]]  # id -> [name, suit, rank, type, subtype] (envelope.card_table)
    seat_names: list[str]
    names: dict[str, str]  # engine name -> printed name (readside.catalogue.printed_names)
    generals: dict[str, tuple[str, int]]  # name -> (faction, max HP)

    def name(self, n: str) -> str:
        """A card, role or skill name as the ruleset prints it."""
        return self.names.get(n, n)

    def card(self, cid: int) -> str:
        """A card's face: printed name, suit and rank."""
        if not 0 <= cid < len(self.cards):
            return f"card {cid}"
        name, suit, rank = self.cards[cid][0], self.cards[cid][1], self.cards[cid][2]
        return f"{self.name(name)}{SUITS.get(suit, '')}{RANKS.get(rank, rank) if rank else ''}"

    def seat(self, i: int) -> str:
        """A seat by number and name."""
        return f"S{i} {self.seat_names[i]}" if 0 <= i < len(self.seat_names) else f"S{i}"


def option(key: str, d: api.Decision, t: Table) -> schema.Option:
    """One option, labelled; a key of an unknown shape raises ValueError (tests enumerate every
    kind the rulesets produce, so none reaches a player unlabelled)."""
    about = str(d.info.get("about", ""))
    kind, sep, rest = key.partition(":")
    if sep and kind == "card" and api.keys.is_number(rest):
        return schema.Option(key=key, type="card", text=t.card(int(rest)), card=int(rest))
    if sep and kind == "recast" and api.keys.is_number(rest):
        return schema.Option(
            key=key, type="recast", text=f"重铸 {t.card(int(rest))}", card=int(rest)
        )
    if sep and kind == "seat" and api.keys.is_number(rest):
        return schema.Option(key=key, type="seat", text=t.seat(int(rest)), seat=int(rest))
    if sep and kind == "skill" and rest:
        return schema.Option(key=key, type="skill", text=t.name(rest))
    if sep and kind == "general" and rest:
        faction, hp = t.generals.get(rest, ("", 0))
        extra = f" ({t.name(faction)} {hp})" if faction or hp else ""
        return schema.Option(key=key, type="general", text=f"{t.name(rest)}{extra}")
    if sep and kind == "suit" and rest in SUIT_WORDS:
        return schema.Option(key=key, type="suit", text=SUIT_WORDS[rest])
    if key == "hand":
        count = d.info.get("hand_count")
        text = (
            f"a random hand card ({count} in hand)" if count is not None else "a random hand card"
        )
        owner = d.info.get("owner", -1)
        return schema.Option(key=key, type="hand", text=text, seat=int(owner))
    label = word(about, key)
    if key == "yes" and (d.info.get("skill") or about):
        label = f"use {t.name(str(d.info.get('skill') or about))}"
    if label is None:
        raise ValueError(f"no label for option {key!r} of a {d.kind} decision ({about or '-'})")
    return schema.Option(key=key, type="word", text=label)


def _cards(ids: object, t: Table) -> str:
    return " ".join(t.card(int(c)) for c in ids) if isinstance(ids, list) else ""


def _respond(d: api.Decision, t: Table) -> str:
    i = d.info
    need = NEEDS.get(str(i.get("need")), str(i.get("need")))
    how = {"use": "use", "play": "play"}.get(str(i.get("mode")), "pick")
    src, tgt, reason = int(i.get("source", -1)), int(i.get("target", -1)), str(i.get("reason", ""))
    about = t.name(reason) if reason else ""
    if src >= 0 and about:
        about += f" from {t.seat(src)}"
    if i.get("need") == "无懈可击" and tgt >= 0:
        about += f" on {t.seat(tgt)}"
    return f"{how} {need}" + (f" against {about}" if about else "") + "?"


PROMPTS: dict[str, Callable[[api.Decision, Table], str]] = {
    "play": lambda d, t: "Your play phase: use a card or a skill, or end the phase.",
    "targets": lambda d, t: (
        f"Choose the {'second ' if d.info.get('second') else ''}target"
        f"{'s' if d.max > 1 else ''} of "
        f"{t.name(str(d.info.get('card') or d.info.get('skill') or ''))}"
        + (f" ({_cards(d.info.get('cards'), t)})" if d.info.get("cards") else "")
        + (
            f" [{t.name(str(d.info['skill']))}]"
            if d.info.get("card") and d.info.get("skill")
            else ""
        )
    ),
    "respond": _respond,
    "discard": lambda d, t: (
        f"Discard {d.min if d.min == d.max else f'{d.min}–{d.max}'} card"
        f"{'s' if d.max > 1 else ''}"
        + (
            f" ({t.name(str(d.info['reason']))})"
            if d.info.get("reason") not in (None, "discard_phase")
            else ""
        )
        + (f" of {SUIT_WORDS.get(str(d.info.get('suit')), '')}" if d.info.get("suit") else "")
    ),
    "cards": lambda d, t: (
        f"{t.name(str(d.info.get('skill', '')))}: choose "
        f"{d.min if d.min == d.max else f'{d.min}–{d.max}'} card{'s' if d.max > 1 else ''}"
        + (f" to use as {t.name(str(d.info['as']))}" if d.info.get("as") else "")
    ),
    "pick_card": lambda d, t: (
        f"{t.name(str(d.info.get('reason', '')))}: take a card from "
        f"{t.seat(int(d.info.get('owner', -1)))}"
    ),
    "confirm": lambda d, t: (
        f"Use {t.name(str(d.info.get('skill') or d.info.get('about') or ''))}"
        + (f" on {t.seat(int(d.info['target']))}" if "target" in d.info else "")
        + "?"
    ),
    "choose": lambda d, t: _choose(d, t),
    "draft": lambda d, t: (
        f"Choose the general for camp position {int(d.info['position']) + 1}"
        if d.info.get("about") == "camp"
        else "Choose your general"
    ),
}


def _choose(d: api.Decision, t: Table) -> str:
    about = str(d.info.get("about", ""))
    if about == "观星":
        return "观星: pick the cards to put on top, in order (top first); the rest stay below them, or go to the bottom"
    if about == "五谷丰登":
        return "五谷丰登: take one of the cards shown"
    if about == "反间":
        return "反间: name a suit"
    if about == "火攻_show":
        return "火攻: show a card from your hand"
    if about == "遗计":
        return (
            f"遗计: give {t.card(int(d.info['card']))} to a player"
            if "card" in d.info
            else "遗计: give a card"
        )
    if about == "强化":
        return f"强化 {t.name(str(d.info.get('card', '')))} ({d.info.get('rage', 0)} 怒气)?"
    return f"{t.name(about)}: choose"


def prompt(d: api.Decision, t: Table) -> str:
    """What the decision asks, in a player's words."""
    make = PROMPTS.get(d.kind)
    return make(d, t) if make is not None else f"{d.kind}: choose"


ORDERED = frozenset({"观星"})  # choices whose picks' order matters


def decision(d: api.Decision, t: Table, version: int, deadline_ms: int) -> schema.Decision:
    """The decision as the play API sends it to its seat."""
    return schema.Decision(
        id=d.id,
        seat=d.seat,
        kind=d.kind,
        prompt=prompt(d, t),
        options=[option(o, d, t) for o in d.options],
        min=d.min,
        max=d.max,
        declinable=d.declinable,
        ordered=bool(d.info.get("ordered")) or d.info.get("about") in ORDERED,
        info=dict(d.info),
        version=version,
        deadline_ms=deadline_ms,
    )
