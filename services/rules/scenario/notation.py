"""The scenario notation (SCENARIOS.md): cards `NAME SUIT RANK [#N]` and script intents."""

from __future__ import annotations

import re
from typing import cast

from ..core.keys import is_number
from .model import CardRef, Intent, IntentKind, Suit

_SUIT_MAP = {"S": "S", "H": "H", "C": "C", "D": "D", "♠": "S", "♥": "H", "♣": "C", "♦": "D"}
_RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13, **{str(n): n for n in range(2, 11)}}
_SUIT_RANK = r"([SHCD♠♥♣♦])\s*(A|10|[2-9]|J|Q|K)"
CARD_RE = re.compile(rf"^(\S+)\s+{_SUIT_RANK}(?:\s*#(\d+))?$")
_SUIT_RANK_RE = re.compile(rf"^{_SUIT_RANK}$")
_COPY_RE = re.compile(r"^#(\d+)$")
CARD_FORMAT = "a card `NAME SUIT RANK [#N]` (suit S H C D or ♠ ♥ ♣ ♦, rank A 2..10 J Q K)"
INTENT_FORMAT = (
    "an intent: `use CARD [+ CARD…] [as NAME] [-> T, …]`, `play CARD [as NAME]`, "
    "`skill NAME [with CARD, …] [-> T, …]`, `choose WORD…`, `discard CARD, …`, `pass` or `end`"
)


class NotationError(ValueError):
    """A card or intent text that does not follow the notation (the loader adds file and path)."""


def parse_card(text: str) -> CardRef:
    """Parse `NAME SUIT RANK [#N]`, e.g. `杀 S7`, `闪电 ♠A`, `杀 S8 #2`."""
    text = text.strip()
    match = CARD_RE.match(text)
    if not match:
        raise NotationError(f"expected {CARD_FORMAT}, got {text!r}")
    name, suit, rank, copy = match.groups()
    if copy is not None and int(copy) < 1:
        raise NotationError(f"expected a copy number #1 or more, got {text!r}")
    return CardRef(name, cast(Suit, _SUIT_MAP[suit]), _RANKS[rank], int(copy or 1))


def _cards(text: str, sep: str) -> tuple[CardRef, ...]:
    return tuple(parse_card(part) for part in text.split(sep))


def _targets(text: str) -> tuple[int, ...]:
    parts = [part.strip() for part in text.split(",")]
    if not all(is_number(part) for part in parts):
        raise NotationError(f"expected targets as seat numbers `-> 1, 2`, got {text!r}")
    return tuple(int(part) for part in parts)


def _choices(text: str) -> Intent:
    tokens = text.split()
    cards: list[CardRef] = []
    seats: list[int] = []
    words: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token == "seat" and is_number(nxt):
            seats.append(int(nxt))
            i += 2
        elif _SUIT_RANK_RE.match(nxt):
            copy = tokens[i + 2] if i + 2 < len(tokens) and _COPY_RE.match(tokens[i + 2]) else ""
            cards.append(parse_card(f"{token} {nxt} {copy}"))
            i += 3 if copy else 2
        else:
            words.append(_SUIT_MAP.get(token, token))
            i += 1
    return Intent("choose", cards=tuple(cards), targets=tuple(seats), words=tuple(words))


def parse_intent(text: str) -> Intent:
    """Parse one intent of the script language into its structure."""
    head, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if head in ("pass", "end"):
        if rest:
            raise NotationError(f"expected `{head}` alone, got {text!r}")
        return Intent(cast(IntentKind, head))
    if not rest:
        raise NotationError(f"expected {INTENT_FORMAT}, got {text!r}")
    if head == "choose":
        return _choices(rest)
    if head == "discard":
        return Intent("discard", cards=_cards(rest, ","))
    body, arrow, tail = rest.partition("->")
    targets = _targets(tail) if arrow else ()
    if head == "skill":
        name, _, with_ = body.partition(" with ")
        if not name.strip() or " " in name.strip():
            raise NotationError(f"expected `skill NAME [with CARD, …]`, got {text!r}")
        cards = _cards(with_, ",") if with_.strip() else ()
        return Intent("skill", cards=cards, targets=targets, skill=name.strip())
    if head in ("use", "play"):
        if head == "play" and arrow:
            raise NotationError(
                f"expected no targets for `play` (it answers a demand), got {text!r}"
            )
        cards_text, as_, as_name = body.partition(" as ")
        if as_ and (not as_name.strip() or " " in as_name.strip()):
            raise NotationError(f"expected one card name after `as`, got {text!r}")
        return Intent(
            cast(IntentKind, head),
            cards=_cards(cards_text, "+"),
            as_name=as_name.strip() if as_ else None,
            targets=targets,
        )
    raise NotationError(f"expected {INTENT_FORMAT}, got {text!r}")
