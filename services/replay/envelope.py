"""One log entry as one viewer may receive it: JSON bytes, or None when the viewer gets nothing.

    {"seq":N,"kind":"header","header":{...}}           public (seed commitment in hex)
    {"seq":N,"kind":"event","event":{...}}             redacted by services.rules views.redact
    {"seq":N,"kind":"answer","answer":{...}}           only to GOD and to the seat that answered
                                                       (the seat: the decision's opaque id)
    {"seq":N,"kind":"seed_reveal","reveal":{...}}      public (it is the last entry)
    {"seq":N,"kind":"control","control":{...}}         public: a seat goes on 托管 or comes back
    {"seq":N,"kind":"other","type":KIND}               an entry kind this code does not know

Answers are withheld from everyone else, not just emptied: that a seat was asked at all is a
secret (the engine never asks a seat that has no legal answer, so a 无懈可击 prompt tells that the
seat holds one). The answering seat gets its answer with the decision's opaque id, the one it was
shown (contracts/decision_ids.py), or none when the server has no key for them: the engine's
decision number would count the decisions asked of other seats between two of its own. The event JSON is msgspec's encoding of the redacted event, so the byte searches
of tests/rules/test_redaction.py apply unchanged to what a browser receives.
"""

from __future__ import annotations

import json
from collections.abc import Callable
from functools import lru_cache
from typing import Any

import msgspec

from ..eventlog.entry import ANSWER, CONTROL, EVENT, HEADER, SEED_REVEAL, decode_entry, upgrade
from ..eventlog.records import AnswerRecord, Header, SeatControl, SeedReveal, decode_payload
from ..rules import api

_json = msgspec.json.Encoder()


def header_json(h: Header) -> dict[str, Any]:
    """A header as plain JSON data (bytes as hex)."""
    return {
        "game_id": h.game_id,
        "ruleset": h.ruleset,
        "players": h.players,
        "rules_version": h.rules_version,
        "seats": [{"player": s.player, "bot": s.bot, "name": s.name} for s in h.seats],
        "seed_commitment": h.seed_commitment.hex(),
        "commitment_scheme": h.commitment_scheme,
        "options": h.options,
        "started_at_ms": h.started_at_ms,
    }


def reveal_json(r: SeedReveal) -> dict[str, Any]:
    """A seed reveal as plain JSON data."""
    return {
        "seed": r.seed,
        "salt": r.salt.hex(),
        "ended_at_ms": r.ended_at_ms,
        "winners": list(r.winners),
        "sides": list(r.sides),
    }


def _wrap(seq: int, kind: str, key: str, body: bytes) -> bytes:
    return b'{"seq":%d,"kind":"%s","%s":%s}' % (seq, kind.encode(), key.encode(), body)


OpaqueId = Callable[[int], int]
"""A game's decision number -> the opaque id its seats are shown (contracts/decision_ids.py)."""


def envelope(seq: int, data: bytes, viewer: int, opaque: OpaqueId | None = None) -> bytes | None:
    """The JSON ``viewer`` receives for stored entry ``seq`` (None: nothing); ``opaque`` gives
    the answering seat its decisions' opaque ids (without it, its answers carry none)."""
    entry = upgrade(decode_entry(data))
    if entry.kind == EVENT:
        event = api.redact(api.decode_event(entry.payload), viewer)
        return _wrap(seq, "event", "event", _json.encode(event))
    if entry.kind == ANSWER:
        answer = decode_payload(entry.payload, AnswerRecord)
        if viewer == api.GOD:  # the log as it is
            return _wrap(seq, "answer", "answer", _json.encode(answer))
        if viewer != answer.seat:
            return None
        mine: dict[str, Any] = {"seat": answer.seat, "picks": answer.picks, "auto": answer.auto}
        if opaque is not None:
            mine = {"decision": opaque(answer.decision), **mine}
        return _wrap(seq, "answer", "answer", _json.encode(mine))
    if entry.kind == HEADER:
        body = _json.encode(header_json(decode_payload(entry.payload, Header)))
        return _wrap(seq, "header", "header", body)
    if entry.kind == SEED_REVEAL:
        body = _json.encode(reveal_json(decode_payload(entry.payload, SeedReveal)))
        return _wrap(seq, "seed_reveal", "reveal", body)
    if entry.kind == CONTROL:
        body = _json.encode(decode_payload(entry.payload, SeatControl))
        return _wrap(seq, "control", "control", body)
    return b'{"seq":%d,"kind":"other","type":%s}' % (seq, _json.encode(entry.kind))


def is_terminal(data: bytes) -> tuple[bool, bool]:
    """(over, closed) for one stored entry: the game has ended / the log is complete."""
    entry = decode_entry(data)
    if entry.kind == SEED_REVEAL:
        return True, True
    if entry.kind == EVENT and b"game_ended" in entry.payload:  # skip decoding most events
        event = api.decode_event(entry.payload)
        return type(event).__struct_config__.tag == "game_ended", False
    return False, False


@lru_cache(maxsize=64)
def _card_table(ruleset: str, players: int, options_json: str) -> bytes:
    options = json.loads(options_json) or None
    game = api.new_game(ruleset, players, 0, options)
    rows = [[c.name, c.suit, c.rank, c.type, c.subtype] for c in game.cards]
    return _json.encode(rows)


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


@lru_cache(maxsize=16)
def printed_names(ruleset: str) -> dict[str, str]:
    """Card, role and label names as ``ruleset`` prints them where they differ from the
    engine's (api.display_names: 红楼梦 prints 药 for 桃, 主人 for lord), and every role in
    its printed name (ROLE_WORDS): what pages and labels show."""
    return ROLE_WORDS | api.display_names(ruleset)


@lru_cache(maxsize=16)
def names_json(ruleset: str) -> bytes:
    """``printed_names(ruleset)`` as JSON: pages show cards, roles and labels by these."""
    return _json.encode(printed_names(ruleset))


def card_table(h: Header) -> bytes:
    """The game's physical card table as JSON ``[[name, suit, rank, type, subtype], …]``, indexed
    by card id. Public: it depends only on the ruleset and options (the shuffle is what is secret).
    """
    return _card_table(h.ruleset, h.players, json.dumps(h.options, sort_keys=True))
