"""The card catalogue a viewer reads a game by: what each card id is, and the names as the
ruleset prints them. Public: it depends only on the ruleset, the table size and the options
(the shuffle is what is secret), so it is built from the ruleset's deck alone, never by dealing
a game, and kept per table kind.

    cards(ruleset, players, options) -> [[name, suit, rank, type, subtype], …]  indexed by card id
    printed_names(ruleset)           -> {engine name: printed name}            (红楼梦: 桃 -> 药)
    generals(ruleset)                -> {general: (faction, max HP)}
    general_skills(ruleset)          -> {general: [skill, …]}
    skill_texts()                    -> {skill: its text, from the rules' registry}
"""

from __future__ import annotations

import inspect
import json
import re
from dataclasses import dataclass
from functools import lru_cache
from typing import Any

import msgspec

from ..eventlog.records import Header
from ..rules import api

_json = msgspec.json.Encoder()

# Roles by their printed names, for the role ids a ruleset shows as they are (seed 004's are
# pinyin: a page showed "S3 is chengxiang"); a ruleset's own display names come first.
ROLE_WORDS = {
    "lord": "主公",
    "loyalist": "忠臣",
    "rebel": "反贼",
    "renegade": "内奸",
    "chujun": "储君",
    "chengxiang": "丞相",
    "dajiang": "大将",
    "ninghuan": "佞宦",
    "dangren": "党人",
    "zeishou": "贼首",
    "qiongkou": "穷寇",
    "yizei": "义贼",
    "baomin": "暴民",
    "daofei": "盗匪",
    "pantu": "叛徒",
}


@lru_cache(maxsize=64)
def _cards(ruleset: str, players: int, options_json: str) -> bytes:
    opts = api.resolve_options(
        ruleset, api.table_options(ruleset, players, json.loads(options_json) or None)
    )
    deck = api.RULESETS[ruleset].deck(opts)
    return _json.encode([[c.name, c.suit, c.rank, c.type, c.subtype] for c in deck])


def cards_json(ruleset: str, players: int, options: dict[str, Any]) -> bytes:
    """The card table of a ``ruleset`` table of ``players`` with ``options`` as JSON
    ``[[name, suit, rank, type, subtype], …]``, indexed by card id (the game's own table:
    `api.new_game(...).cards`, without dealing a game)."""
    return _cards(ruleset, players, json.dumps(options, sort_keys=True))


def card_table(h: Header) -> bytes:
    """The card table of the game whose header is ``h`` (see `cards_json`)."""
    return cards_json(h.ruleset, h.players, h.options)


@lru_cache(maxsize=16)
def printed_names(ruleset: str) -> dict[str, str]:
    """Card, role and label names as ``ruleset`` prints them where they differ from the
    engine's (api.display_names: 红楼梦 prints 药 for 桃, 主人 for lord), and every role in its
    printed name (ROLE_WORDS): what pages and labels show."""
    return ROLE_WORDS | api.display_names(ruleset)


@lru_cache(maxsize=16)
def names_json(ruleset: str) -> bytes:
    """``printed_names(ruleset)`` as JSON."""
    return _json.encode(printed_names(ruleset))


@lru_cache(maxsize=16)
def generals(ruleset: str) -> dict[str, tuple[str, int]]:
    """Every general ``ruleset`` may deal: name -> (faction, max HP)."""
    return api.general_table(ruleset)


@dataclass(frozen=True)
class Catalogue:
    """One game's catalogue, as a page or a label reads it."""

    cards: list[list[Any]]  # [name, suit, rank, type, subtype] by card id
    names: dict[str, str]  # printed names (printed_names)
    generals: dict[str, tuple[str, int]]
    seat_names: list[str]  # the name each seat's player chose, else the player id


def catalogue(h: Header) -> Catalogue:
    """The catalogue of the game whose header is ``h``."""
    return Catalogue(
        cards=msgspec.json.decode(card_table(h)),
        names=printed_names(h.ruleset),
        generals=generals(h.ruleset),
        seat_names=[s.name or s.player for s in h.seats],
    )


_NOTE = re.compile(r"(?<=[。.）)])\s+(?=[A-Z])")  # where an implementation note begins
_CODE = re.compile(r"\s*[（(][^（()）]*``[^（()）]*[)）]")  # a parenthesis naming an option


def _skill_text(doc: str) -> str:
    parts = re.split(r"[:：]", doc, maxsplit=1)
    text = parts[1] if len(parts) == 2 else parts[0]
    # a line break inside Chinese text is no space; elsewhere it is one
    text = re.sub(r"(?<=[^\x00-\x7f])\s*\n\s*(?=[^\x00-\x7f])", "", text.strip())
    text = " ".join(text.split())
    text = _NOTE.split(text, maxsplit=1)[0]
    return _CODE.sub("", text).strip()


@lru_cache(maxsize=1)
def skill_texts() -> dict[str, str]:
    """Every skill's text as the rules' registry quotes it (the first part of each skill's
    docstring, after its name; the implementation notes that follow it are left out)."""
    return {
        name: _skill_text(inspect.getdoc(type(skill)) or name)
        for name, skill in sorted(api.SKILLS.items())
    }


@lru_cache(maxsize=16)
def general_skills(ruleset: str) -> dict[str, list[str]]:
    """Every general ``ruleset`` may deal: name -> its skills (lord skills included)."""
    return {name: list(g.skills) for name, g in api.RULESETS[ruleset].generals().items()}
