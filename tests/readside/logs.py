"""Seeded game logs in memory, recorded as the engine records them (header, the events of each
step, one answer entry before each answer's events, a control entry where asked, the seed
reveal), for the read side's unit tests: no store, no network."""

from __future__ import annotations

from typing import Any

from services.bots.random_policy import RandomPolicy
from services.eventlog.entry import (
    ANSWER,
    CONTROL,
    EVENT,
    GENESIS,
    HEADER,
    SEED_REVEAL,
    Entry,
    seal,
)
from services.eventlog.records import (
    AnswerRecord,
    Header,
    Seat,
    SeatControl,
    SeedReveal,
    commit_seed,
    encode_payload,
)
from services.rules import api

TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 5, {"generals": "draft"}),
    ("honglou", 6, {}),
    ("jinyu", 6, {"mougong": True}),
    ("extended", 8, {}),
    ("chengtian", 2, {}),
]


def record(
    ruleset: str,
    players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    limit: int = 10_000,
    controls: dict[int, SeatControl] | None = None,
    extra: dict[int, tuple[str, bytes]] | None = None,
) -> tuple[list[Entry], api.Game]:
    """The log of a seeded random game, up to ``limit`` answers (the seed reveal only if it
    ended); ``controls`` puts a control entry before answer k, ``extra`` any (kind, payload)
    entry there (a kind no reader knows, say: the log is not re-run)."""
    opts = dict(options or {})
    header = Header(
        game_id="g",
        ruleset=ruleset,
        players=players,
        rules_version=api.RULES_VERSION,
        seats=[Seat(f"p{i}", i % 2 == 1, f"P{i}") for i in range(players)],
        seed_commitment=commit_seed(seed, b"\x01" * 16),
        options=opts,
        started_at_ms=1,
    )
    items: list[tuple[str, bytes]] = [(HEADER, encode_payload(header))]
    g = api.new_game(ruleset, players, seed, opts)
    items += [(EVENT, api.encode_event(e)) for e in api.advance(g)]
    policy = RandomPolicy(seed)
    k = 0
    while not g.over and (d := api.pending(g)) is not None and k < limit:
        if controls and k in controls:
            items.append((CONTROL, encode_payload(controls[k])))
        if extra and k in extra:
            items.append(extra[k])
        a = policy.act(d)
        try:
            events = api.submit(g, a)
        except api.IllegalAnswer:
            a = api.default_answer(d)
            events = api.submit(g, a)
        items.append((ANSWER, encode_payload(AnswerRecord(a.decision, a.seat, list(a.picks)))))
        items += [(EVENT, api.encode_event(e)) for e in events]
        k += 1
    if g.over:
        reveal = SeedReveal(seed=seed, salt=b"\x01" * 16, winners=list(g.winners))
        items.append((SEED_REVEAL, encode_payload(reveal)))
    return seal(GENESIS, 1, items), g
