"""Option keys: the strings a decision offers and an answer picks, built and read in one place.

A key is ``card:ID``, ``seat:N``, ``skill:NAME``, ``recast:ID``, ``general:NAME``, ``suit:S`` or a
bare word (``hand``, ``end``, ``yes``, ``discard`` …); the README lists which decision offers
which. These strings are the wire format and never change. Inside the rules a key is built with
the ``*_key`` functions and read back once, at the step that receives the answer, into a typed
value: ``card_of``/``seat_of`` where a decision offers one kind, :func:`parse` (a :data:`Pick`)
where it mixes kinds (the play phase, a ``respond`` decision).
"""

from __future__ import annotations

from collections.abc import Iterable

import msgspec

CARD, SEAT, SKILL, RECAST, GENERAL, SUIT = (
    "card:",
    "seat:",
    "skill:",
    "recast:",
    "general:",
    "suit:",
)


# made once: keys are asked for often (card ids and seats below this are the usual ones)
_MADE = 1024
_CARD_KEYS = tuple(f"{CARD}{c}" for c in range(_MADE))
_SEAT_KEYS = tuple(f"{SEAT}{s}" for s in range(_MADE))


def card_key(cid: int) -> str:
    """``card:ID``."""
    return _CARD_KEYS[cid] if 0 <= cid < _MADE else f"{CARD}{cid}"


def card_keys(cids: Iterable[int]) -> list[str]:
    """``card:ID`` for each card, in order."""
    return [_CARD_KEYS[c] if 0 <= c < _MADE else f"{CARD}{c}" for c in cids]


_TABLES: dict[int, tuple[str, ...]] = {}


def card_key_table(n: int) -> tuple[str, ...]:
    """``card:ID`` for every id of a card table of ``n`` cards, by id (made once per size)."""
    table = _TABLES.get(n)
    if table is None:
        table = _TABLES[n] = tuple(card_key(c) for c in range(n))
    return table


def seat_key(seat: int) -> str:
    """``seat:N``."""
    return _SEAT_KEYS[seat] if 0 <= seat < _MADE else f"{SEAT}{seat}"


def seat_keys(seats: Iterable[int]) -> list[str]:
    """``seat:N`` for each seat, in order."""
    return [_SEAT_KEYS[s] if 0 <= s < _MADE else f"{SEAT}{s}" for s in seats]


def skill_key(name: str) -> str:
    """``skill:NAME``."""
    return SKILL + name


def recast_key(cid: int) -> str:
    """``recast:ID`` (重铸)."""
    return f"{RECAST}{cid}"


def general_key(name: str) -> str:
    """``general:NAME`` (a draft pick)."""
    return GENERAL + name


def suit_key(suit: str) -> str:
    """``suit:S`` (S, H, C or D)."""
    return SUIT + suit


def _value(key: str, prefix: str) -> str:
    if not key.startswith(prefix):
        raise ValueError(f"{key!r} is not a {prefix[:-1]} key")
    return key[len(prefix) :]


_NUMBERS = {str(n): n for n in range(_MADE)}


MAX_DIGITS = 19
"""The longest number this platform writes (any 64-bit count, seat, card or position)."""


def is_number(text: str) -> bool:
    """Whether ``text`` is a number as this platform writes one: ASCII digits only, at most
    :data:`MAX_DIGITS` of them, so ``int(text)`` always succeeds. Neither ``str.isdigit`` (true
    of "²", which ``int`` refuses) nor ``int`` (which takes " 1", "+1", "-1" or "١", and refuses
    more than 4,300 digits) is that test; every parser of numbers from outside uses this one."""
    return len(text) <= MAX_DIGITS and text.isascii() and text.isdecimal()


def _number(text: str) -> int:
    """A seat or card number as keys write it (:func:`is_number`: an answer may carry
    anything)."""
    n = _NUMBERS.get(text)
    if n is not None:
        return n
    if not is_number(text):
        raise ValueError(f"{text!r} is not a number of a key")
    return int(text)


def kind_of(key: str) -> str:
    """What a key names, its prefix without the colon: ``card``, ``seat``, ``skill`` …; ""
    for a bare word (``end``, ``yes`` …)."""
    kind, sep, _ = key.partition(":")
    return kind if sep else ""


def value_of(key: str) -> str:
    """What follows a key's prefix, as written (``seat:x`` -> ``x``); the word itself for a
    bare word."""
    _, sep, rest = key.partition(":")
    return rest if sep else key


def card_of(key: str) -> int:
    """The card id of a ``card:ID`` key."""
    known = _PARSED.get(key)
    if isinstance(known, CardPick):
        return known.id
    return _number(_value(key, CARD))


def cards_of(keys: Iterable[str]) -> list[int]:
    """The card ids of ``card:ID`` keys, in order (card_of each, without a call a key)."""
    out = []
    for k in keys:
        known = _PARSED.get(k)
        out.append(known.id if isinstance(known, CardPick) else _number(_value(k, CARD)))
    return out


def seat_of(key: str) -> int:
    """The seat of a ``seat:N`` key."""
    known = _PARSED.get(key)
    if isinstance(known, SeatPick):
        return known.seat
    return _number(_value(key, SEAT))


def seats_of(keys: Iterable[str]) -> list[int]:
    """The seats of ``seat:N`` keys, in order."""
    return [seat_of(k) for k in keys]


def general_of(key: str) -> str:
    """The general of a ``general:NAME`` key."""
    return _value(key, GENERAL)


def suit_of(key: str) -> str:
    """The suit of a ``suit:S`` key."""
    return _value(key, SUIT)


class CardPick(msgspec.Struct, frozen=True):
    """``card:ID``: a card (use it, play it, pick it)."""

    id: int


class SeatPick(msgspec.Struct, frozen=True):
    """``seat:N``: a seat."""

    seat: int


class SkillPick(msgspec.Struct, frozen=True):
    """``skill:NAME``: activate or call on a skill."""

    name: str


class RecastPick(msgspec.Struct, frozen=True):
    """``recast:ID``: 重铸 a card."""

    id: int


class GeneralPick(msgspec.Struct, frozen=True):
    """``general:NAME``: a general."""

    name: str


class SuitPick(msgspec.Struct, frozen=True):
    """``suit:S``: a suit."""

    suit: str


class Word(msgspec.Struct, frozen=True):
    """A bare word: ``hand``, ``end``, ``yes``, ``discard``, ``damage`` …"""

    word: str


Pick = CardPick | SeatPick | SkillPick | RecastPick | GeneralPick | SuitPick | Word
"""An option key read into a typed value."""


# the usual numbered keys read once (the values are frozen: one may serve every reader)
_PARSED: dict[str, Pick] = {
    **{k: CardPick(c) for c, k in enumerate(_CARD_KEYS)},
    **{k: SeatPick(s) for s, k in enumerate(_SEAT_KEYS)},
    **{f"{RECAST}{c}": RecastPick(c) for c in range(_MADE)},
}


def parse(key: str) -> Pick:
    """The typed value of any option key (ValueError if it is none: an unknown prefix, or no
    number where one belongs)."""
    known = _PARSED.get(key)
    if known is not None:
        return known
    kind, sep, rest = key.partition(":")
    if not sep:
        return Word(key)
    if kind == "card":
        return CardPick(_number(rest))
    if kind == "seat":
        return SeatPick(_number(rest))
    if kind == "skill":
        return SkillPick(rest)
    if kind == "recast":
        return RecastPick(_number(rest))
    if kind == "general":
        return GeneralPick(rest)
    if kind == "suit":
        return SuitPick(rest)
    raise ValueError(f"{key!r} is not an option key")


def read(key: str) -> Pick | None:
    """:func:`parse` for a key an answer may carry although no decision offered it: None if it
    is no option key at all (what a refusal reads)."""
    try:
        return parse(key)
    except ValueError:
        return None
