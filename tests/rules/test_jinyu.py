"""Ruleset ``jinyu`` (seed 002): random games with and without 谋攻 end cleanly, with the state
invariants and the card/HP folds holding after every answer, and the redaction of every event.

Default run: 40 games per configuration (5, 8, 10 players × 谋攻 off/on); ``-m slow`` plays 2,000.
"""

from __future__ import annotations

from collections import Counter

import pytest

from services.rules import api
from services.rules.core import events as ev
from services.rules.core.ruleset import RULESETS
from services.rules.core.state import Game
from services.rules.core.views import SPECTATOR
from tests.rules.invariants import play_random

COUNTS = (5, 8, 10)
GAMES = 40
SLOW_GAMES = 2_000
MAX_DECISIONS = 20_000


def check_outcome(g: Game) -> None:
    """The winners are a camp that may win with the table as it ended (the lord may sit
    anywhere when 谋攻 hides it)."""
    assert g.over
    if g.draw_game:
        return
    roles = {g.players[s].role for s in g.winners}
    lord_alive = any(p.alive and p.role == "lord" for p in g.players)
    alive = {p.role for p in g.players if p.alive}
    if roles <= {"lord", "loyalist"}:
        assert lord_alive and not alive & {"rebel", "renegade"}
    elif roles == {"rebel"}:
        assert not lord_alive
    else:
        assert roles == {"renegade"} and not lord_alive
        assert [p.seat for p in g.players if p.alive] == g.winners


def play(players: int, seed: int, options: dict[str, object]) -> list[ev.Event]:
    """One random game, checked after every answer; returns its events."""

    def redacts(events: list[ev.Event]) -> None:
        for e in events:
            for viewer in (SPECTATOR, 0):
                api.redact(e, viewer)  # every guarded event has a redaction rule

    g, log = play_random(
        "jinyu", players, seed, options, hp=False, max_decisions=MAX_DECISIONS, on_events=redacts
    )
    check_outcome(g)
    for p in g.players:
        assert p.armor >= 0 and p.jade >= 0 and p.rage >= 0
        assert p.armor <= 5
    return log


def run_many(players: int, mougong: bool, games: int) -> Counter[str]:
    """Play ``games`` seeded games; count the skills invoked."""
    skills = Counter[str]()
    for seed in range(games):
        log = play(
            players, 70_000 * players + seed + (500_000 if mougong else 0), {"mougong": mougong}
        )
        skills.update(e.skill for e in log if isinstance(e, ev.SkillInvoked))
    return skills


@pytest.mark.parametrize("mougong", [False, True])
@pytest.mark.parametrize("players", COUNTS)
def test_random_games_end_with_invariants(players: int, mougong: bool) -> None:
    """Seeded random games end; with 谋攻 the new decisions are played."""
    skills = run_many(players, mougong, GAMES)
    if mougong:
        assert skills["强化"] and skills["洞察"], skills


@pytest.mark.slow
@pytest.mark.parametrize("mougong", [False, True])
@pytest.mark.parametrize("players", COUNTS)
def test_many_random_games(players: int, mougong: bool) -> None:
    """2,000 seeded games per configuration."""
    run_many(players, mougong, SLOW_GAMES)


def test_options_flipped_still_run() -> None:
    """The interpretation switches at their other values keep games sane."""
    opts = {
        "mougong": True,
        "double_renegade": True,
        "pool": "honglou",
        "tier": 2,
        "maneuvering": False,
        "loyalist_penalty_scope": "allies_only",
        "lightning_passes_on_death": False,
        "rage_cap": 4,
        "rage_per_point": True,
        "insight_renegades_same_camp": True,
        "enhanced_wine_scope": "play_phase",
        "enhanced_peach_full_hp": "jade_only",
        "mougong_hidden_lord": False,
        "overheal_to_jade": "always",
        "jade_cap": 6,
        "disguised_rebel_draw": 3,
    }
    for seed in range(12):
        play(6 if seed % 2 else 8, 900 + seed, opts)


def test_draft_offers() -> None:
    """The lord is offered 曹操, 刘备, 孙权 + 2; others min(6, or 3 at 10 players, the 26 left
    shared out) — A-002-04: 6 at 5 players, 2 at 10 — secretly."""
    for players, k in ((5, 6), (10, 2)):
        g = api.new_game("jinyu", players, 1)
        offers = [e for e in api.advance(g) if isinstance(e, ev.DraftOffered)]
        assert offers[0].seat == 0 and offers[0].generals[:3] == ["曹操", "刘备", "孙权"]
        assert len(offers[0].generals) == 5
        d = api.pending(g)
        assert d is not None
        events = api.submit(g, api.Answer(decision=d.id, seat=0, picks=[d.options[0]]))
        others = [e for e in events if isinstance(e, ev.DraftOffered)]
        assert [len(e.generals) for e in others] == [k] * (players - 1)
        assert all(api.redact(e, SPECTATOR).generals == [] for e in others)


def test_lord_start() -> None:
    """Lord: +1 max HP, 2 玉佩, 5 cards; others 4 cards (base rules)."""
    g = api.new_game("jinyu", 5, 3)
    api.advance(g)
    while g.pending is not None and g.pending.kind == "draft":
        d = g.pending
        api.submit(g, api.Answer(decision=d.id, seat=d.seat, picks=[d.options[0]]))
    lord = g.players[0]
    gen = RULESETS["jinyu"].generals()[lord.general]
    assert lord.jade == 2 and lord.max_hp == gen.hp + 1
    assert len(lord.hand) >= 5 or g.current != 0
    assert all(len(p.hand) == 4 for p in g.players[1:])


def test_hidden_lord_secret() -> None:
    """谋攻: the lord's role is seen by itself only, and it gets no start bonus."""
    g = api.new_game("jinyu", 8, 5, {"mougong": True})
    events = api.advance(g)
    roles = [e for e in events if isinstance(e, ev.RoleAssigned)]
    assert all(e.seen_by == [e.seat] for e in roles)
    lord = next(p for p in g.players if p.role == "lord")
    assert lord.jade == 0 and not lord.role_revealed
