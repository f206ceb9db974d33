"""Bot levels (services/contracts/levels.py) and the hard policy's look-ahead (bots/search.py)."""

from __future__ import annotations

import pytest

from services.bots.heuristic import HeuristicPolicy, legal
from services.bots.search import SearchPolicy
from services.bots.seats import Minds, policy_name
from services.bots.selfplay import Table, play_game
from services.contracts.levels import LEVELS, accepted, offered, policy_of
from services.matchmaking.tables import TableSettings, bot_levels
from services.rules import api


def test_levels_are_offered_and_served() -> None:
    """normal (the default), easy and hard are offered to tables with people (hard's worlds are
    dealt by the engine: tests/bots/test_worker.py); a seat named bot:LEVEL plays that level's
    policy."""
    assert offered() == ["normal", "easy", "hard"] == bot_levels()
    assert set(LEVELS) == {"easy", "normal", "hard"} and "godlike" not in accepted()
    assert TableSettings(ruleset="standard", players=5).checked().bot_level == "normal"
    minds = Minds("heuristic")
    for level, cls in (("normal", "heuristic"), ("easy", "easy"), ("hard", "hard")):
        assert policy_name(f"bot:{level}", "random") == level
        assert minds.get(f"g-{level}", 0, f"bot:{level}").policy.name == cls == policy_of(level)


# a game by default, the second under -m slow
@pytest.mark.parametrize("seed", [3, pytest.param(4, marks=pytest.mark.slow)])
def test_hard_plays_legal_answers_and_searches(seed: int) -> None:
    """Hard against the heuristic, strict (a bug raises): every answer is accepted, and key
    decisions were searched."""
    tables: list[Table] = []
    g, counts = play_game("standard", 5, seed, ["hard", "heuristic"], strict=True, table_out=tables)
    assert g.over and counts["decisions"] > 0
    hard = [p for t in tables for p in t.policies if isinstance(p, SearchPolicy)]
    assert sum(p.searched for p in hard) > 0 and sum(p.errors for p in hard) == 0


def test_the_budget_bounds_the_search() -> None:
    """With no budget every search is cut before it finishes a round, and the answer is the
    heuristic's: the hard seat plays exactly the heuristic's game."""

    def run(zero_budget: bool) -> list[list[str]]:
        g = api.new_game("standard", 5, 8)
        t = Table(g, ["hard"] * 5, 8)
        for p in t.policies:
            assert isinstance(p, SearchPolicy)
            if zero_budget:
                p.search_budget_ms = 0.0
        answers: list[list[str]] = []
        t.feed(api.advance(g))
        while not g.over:
            d = g.pending
            assert d is not None
            a = t.act(d)
            assert legal(d, a.picks)
            answers.append(a.picks)
            t.feed(api.submit(g, a))
        if zero_budget:
            assert sum(p.cut for p in t.policies) > 0  # type: ignore[attr-defined]
        return answers

    g = api.new_game("standard", 5, 8)
    t = Table(g, ["heuristic"] * 5, 8)
    plain: list[list[str]] = []
    t.feed(api.advance(g))
    while not g.over:
        d = g.pending
        assert d is not None
        a = t.act(d)
        plain.append(a.picks)
        t.feed(api.submit(g, a))
    assert isinstance(t.policies[0], HeuristicPolicy)
    assert run(zero_budget=True) == plain


def test_skipped_classes_never_search() -> None:
    """A seat whose role class is in ``skip`` plans no search (the heuristic's answer stands);
    the others still search."""
    tables: list[Table] = []
    g, _ = play_game("standard", 5, 3, ["hard"], strict=True, table_out=tables)
    assert g.over
    ran = [p for p in tables[0].policies if isinstance(p, SearchPolicy)]
    assert sum(p.searched for p in ran) > 0
    g = api.new_game("standard", 5, 3)
    t = Table(g, ["hard"] * 5, 3)
    for p in t.policies:
        assert isinstance(p, SearchPolicy)
        p.skip = frozenset(("lord", "loyalist", "rebel", "renegade"))
    t.feed(api.advance(g))
    while not g.over:
        d = g.pending
        assert d is not None
        t.feed(api.submit(g, t.act(d)))
    assert sum(p.searched for p in t.policies) == 0  # type: ignore[attr-defined]


def test_a_quiet_phase_never_searches() -> None:
    """A seat whose phase (its class while a rebel lives, else CLASS/late, read from its belief)
    is in ``quiet`` plans no search then: with ``quiet`` = {"renegade"} the renegade searches
    only once every rebel is dead (by the true roles), and it does search then; without it the
    same renegade also searches while rebels live."""

    def run(quiet: frozenset[str]) -> tuple[int, int]:
        g = api.new_game("standard", 5, 5)
        t = Table(g, ["heuristic"] * 5, 5)
        seat = next(p.seat for p in g.players if p.role == "renegade")
        hard = SearchPolicy(5 * 1000 + seat, seat, strict=True)
        hard.attach(lambda: g)
        hard.quiet = quiet
        t.policies[seat] = hard
        early = late = 0
        t.feed(api.advance(g))
        while not g.over:
            d = g.pending
            assert d is not None
            before = hard.searched
            a = t.act(d)
            if hard.searched > before:
                rebels = any(p.alive and p.role == "rebel" for p in g.players)
                assert hard.phase(t.views[seat]) == ("renegade" if rebels else "renegade/late")
                early, late = early + rebels, late + (not rebels)
            t.feed(api.submit(g, a))
        return early, late

    early, late = run(frozenset({"renegade"}))
    assert early == 0 and late > 0
    assert run(frozenset())[0] > 0
