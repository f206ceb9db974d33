"""A tiny deterministic card game with the same API shape as `services.rules.api`.

Lets the event-log tests exercise verify/replay without the real rules engine: each seat draws a
card from a seeded counter-based RNG and must play one card from its hand; after ROUNDS rounds
the highest total wins.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec

RULES_VERSION = "fake-1"
ROUNDS = 3


class IllegalAnswer(Exception):
    """The answer does not fit the pending decision."""


class Decision(msgspec.Struct, frozen=True):
    id: int
    seat: int
    kind: str
    options: list[str]
    min: int = 1
    max: int = 1
    declinable: bool = False


class Answer(msgspec.Struct, frozen=True):
    decision: int
    seat: int
    picks: list[str]


class Drawn(msgspec.Struct, frozen=True, tag="drawn"):
    seat: int
    card: int


class Played(msgspec.Struct, frozen=True, tag="played"):
    seat: int
    card: int


class Ended(msgspec.Struct, frozen=True, tag="ended"):
    winner_seats: list[int]


Event = Drawn | Played | Ended


class Game(msgspec.Struct):
    seed: int
    players: int
    counter: int = 0
    turn: int = 0
    next_decision: int = 1
    hands: list[list[int]] = []
    totals: list[int] = []
    pending: Decision | None = None
    over: bool = False


def _rand(g: Game) -> int:
    g.counter += 1
    digest = hashlib.sha256(f"{g.seed}:{g.counter}".encode()).digest()
    return digest[0] % 13 + 1


def new_game(ruleset: str, players: int, seed: int, options: dict[str, Any] | None = None) -> Game:
    return Game(seed, players, hands=[[] for _ in range(players)], totals=[0] * players)


def advance(g: Game) -> list[Event]:
    events: list[Event] = []
    if g.over or g.pending:
        return events
    if g.turn >= ROUNDS * g.players:
        g.over = True
        best = max(range(g.players), key=lambda s: (g.totals[s], -s))
        return [Ended([best])]
    seat = g.turn % g.players
    for _ in range(2 if not g.hands[seat] else 1):
        card = _rand(g)
        g.hands[seat].append(card)
        events.append(Drawn(seat, card))
    g.pending = Decision(g.next_decision, seat, "play", [f"card:{c}" for c in g.hands[seat]])
    g.next_decision += 1
    return events


def pending(g: Game) -> Decision | None:
    return g.pending


def submit(g: Game, a: Answer) -> list[Event]:
    d = g.pending
    if d is None or a.decision != d.id or a.seat != d.seat:
        raise IllegalAnswer("no such decision for that seat")
    if len(a.picks) != 1 or a.picks[0] not in d.options:
        raise IllegalAnswer(f"pick one of {d.options}")
    card = int(a.picks[0].split(":")[1])
    g.hands[d.seat].remove(card)
    g.totals[d.seat] += card
    g.pending = None
    g.turn += 1
    return [Played(d.seat, card), *advance(g)]


def is_over(g: Game) -> bool:
    return g.over


def winners(g: Game) -> list[int]:
    return [max(range(g.players), key=lambda s: (g.totals[s], -s))] if g.over else []


_enc = msgspec.msgpack.Encoder()
_dec = msgspec.msgpack.Decoder(Event)


def encode_event(e: Event) -> bytes:
    return _enc.encode(e)


def decode_event(b: bytes) -> Event:
    return _dec.decode(b)


def snapshot(g: Game) -> bytes:
    return _enc.encode(g)


def restore(b: bytes) -> Game:
    return msgspec.msgpack.decode(b, type=Game)
