"""The heuristic policy: legal answers in many random games, view-only, deterministic."""

from __future__ import annotations

import msgspec
import pytest

from services.bots.heuristic import HeuristicPolicy, legal
from services.bots.selfplay import Table, play_game
from services.rules import api
from services.rules.api import Decision, Game, new_view, redact
from services.rules.api import fold_view as apply

TABLES = [("standard", 8), ("standard", 4), ("standard", 6), ("honglou", 10), ("honglou", 5)]


# 20 games a table: the first 6 (all-heuristic and mixed alike) by default, the rest slow
SEED_BATCHES = [
    pytest.param(range(6), id="first"),
    pytest.param(range(6, 20), id="rest", marks=pytest.mark.slow),
]


@pytest.mark.parametrize("seeds", SEED_BATCHES)
@pytest.mark.parametrize(("ruleset", "players"), TABLES)
def test_every_answer_is_accepted(ruleset: str, players: int, seeds: range) -> None:
    """All-heuristic and mixed tables: api.submit accepts every answer (strict mode raises on
    any internal error instead of falling back)."""
    for seed in seeds:
        mix = ["heuristic"] if seed % 2 else ["heuristic", "random", "oracle"]
        g, counts = play_game(ruleset, players, 900 + seed, mix, strict=True)
        assert g.over and counts["decisions"] > 0


def _contains_game(obj: object, depth: int = 0) -> bool:
    if isinstance(obj, Game):
        return True
    if depth > 4:
        return False
    if isinstance(obj, dict):
        return any(_contains_game(v, depth + 1) for v in obj.values())
    if isinstance(obj, list | tuple | set):
        return any(_contains_game(v, depth + 1) for v in obj)
    if hasattr(obj, "__dict__"):
        return any(_contains_game(v, depth + 1) for v in vars(obj).values())
    return False


def test_plays_from_bytes_of_its_own_view_only() -> None:
    """A twin heuristic fed only the encoded redacted events and decisions of its seat (as a
    remote bot would be) answers exactly like the in-process one, and holds no game state."""
    tables: list[Table] = []
    play_game("standard", 8, 77, ["heuristic"], table_out=tables)
    assert not any(_contains_game(p) for p in tables[0].policies)

    seat = 0  # the lord: it plays until the game ends
    twin = HeuristicPolicy(77 * 1000 + seat, seat)
    view = new_view(seat)
    g2 = api.new_game("standard", 8, 77)
    t = Table(g2, ["heuristic"] * 8, 77)

    def feed(events: list[api.Event]) -> None:
        t.feed(events)
        for e in events:
            wire = api.decode_event(api.encode_event(redact(e, seat)))
            apply(view, wire)
            twin.observe(wire)

    feed(api.advance(g2))
    compared = 0
    while not g2.over:
        d = g2.pending
        assert d is not None
        a = t.act(d)
        if d.seat == seat:
            wire_d = msgspec.msgpack.decode(msgspec.msgpack.encode(d), type=Decision)
            assert twin.act(wire_d, view).picks == a.picks
            compared += 1
        feed(api.submit(g2, a))
    assert compared > 20


def test_deterministic_for_a_seed() -> None:
    """The same seeds give the same game, answer for answer."""

    def run() -> list[list[str]]:
        answers: list[list[str]] = []
        g = api.new_game("honglou", 10, 5)
        t = Table(g, ["heuristic"] * 10, 5)
        t.feed(api.advance(g))
        while not g.over:
            d = g.pending
            assert d is not None
            a = t.act(d)
            answers.append(a.picks)
            t.feed(api.submit(g, a))
        return answers

    assert run() == run()


def test_unknown_kind_falls_back_safely() -> None:
    """A decision kind the heuristic does not know: decline if it may, else a legal pick."""
    p = HeuristicPolicy(1, 0)
    tables: list[Table] = []
    play_game("standard", 4, 3, ["heuristic"], table_out=tables)
    view = tables[0].views[0]
    p.mem = tables[0].policies[0].mem  # type: ignore[attr-defined]
    for declinable in (True, False):
        d = Decision(
            id=1,
            seat=0,
            kind="mystery",
            options=["a", "b", "c"],
            min=2,
            max=2,
            declinable=declinable,
        )
        picks = p.act(d, view).picks
        assert legal(d, picks) and (picks == [] if declinable else len(picks) == 2)
