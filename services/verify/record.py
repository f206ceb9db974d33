"""Record a whole game into a log by driving the engine: for tests, benchmarks and demos.

The engine worker records live games the same way, one decision at a time: header first, then
the events `advance` produced, then each accepted answer with the events it produced, and the
seed reveal last. Here the answers come from a seeded chooser instead of players; a ``pace``
awaited before every answer makes a live game that spectators can watch unfold
(services/bots/demo.py: `play_live`).
"""

from __future__ import annotations

import random
import time
from collections.abc import Awaitable, Callable, Sequence
from typing import Any

from ..eventlog.gamelog import GameLog, snapshot_due
from ..eventlog.records import AnswerRecord, Header, Seat, SeedReveal, commit_seed, new_salt
from ..eventlog.store import EventStore
from .rerun import Engine

Chooser = Callable[[Any, random.Random], list[str]]
MAX_DECISIONS = 100_000  # a runaway engine must not hang a test or a benchmark
Pace = Callable[[int], Awaitable[None]]
"""Awaited before each answer with the log version so far."""


def random_picks(decision: Any, rng: random.Random) -> list[str]:
    """A legal-looking random choice: between `min` and `max` of the offered option keys."""
    keys = list(decision.options)
    low, high = int(decision.min), min(int(decision.max), len(keys))
    if decision.declinable and (not keys or rng.random() < 0.2):
        return []
    return rng.sample(keys, rng.randint(min(low, high), high)) if keys else []


def _winners(events: Sequence[Any]) -> list[int]:
    for e in reversed(events):
        seats = getattr(e, "winner_seats", None)
        if seats is not None:
            return [int(s) for s in seats]
    return []


async def record_game(
    store: EventStore,
    game_id: str,
    engine: Engine,
    ruleset: str,
    players: int,
    seed: int,
    *,
    seats: list[Seat] | None = None,
    options: dict[str, Any] | None = None,
    choose: Chooser = random_picks,
    snapshot_every: int = 0,
    pace: Pace | None = None,
) -> GameLog:
    """Play one game to the end with `choose` answering every decision, awaiting `pace` (if
    any) before each answer; returns the log."""
    salt = new_salt()
    header = Header(
        game_id=game_id,
        ruleset=ruleset,
        players=players,
        rules_version=engine.RULES_VERSION,
        seats=seats or [Seat(f"bot{i}", True) for i in range(players)],
        seed_commitment=commit_seed(seed, salt),
        options=options or {},
        started_at_ms=int(time.time() * 1000),
    )
    log = await GameLog.start(store, header)
    game = engine.new_game(ruleset, players, seed, options)
    events = list(engine.advance(game))
    await log.record_events([engine.encode_event(e) for e in events])
    rng = random.Random(seed)
    pending: Callable[[Any], Any] = getattr(engine, "pending")  # noqa: B009 - not in Engine
    for _ in range(MAX_DECISIONS):
        decision = pending(game)
        if decision is None or engine.is_over(game):
            break
        if pace is not None:
            await pace(log.version)
        before = log.version
        answer = AnswerRecord(decision.id, decision.seat, choose(decision, rng))
        try:
            new = engine.submit(
                game,
                engine.Answer(decision=answer.decision, seat=answer.seat, picks=list(answer.picks)),
            )
        except engine.IllegalAnswer:
            # A chooser's bad pick is not logged: only accepted answers are inputs.
            continue
        events = list(new)
        await log.record_answer(answer, [engine.encode_event(e) for e in events])
        snap = getattr(engine, "snapshot", None)
        if snap and snapshot_due(before, log.version, snapshot_every):
            await log.save_snapshot(snap(game))
    reveal = SeedReveal(
        seed=seed, salt=salt, ended_at_ms=int(time.time() * 1000), winners=_winners(events)
    )
    await log.finish(reveal)
    return log
