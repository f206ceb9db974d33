"""Ruleset ``jinyu`` (seed 002): random games with and without 谋攻 end cleanly, with the state
invariants and the card/HP folds holding after every answer, and the redaction of every event.

Default run: 20 games per configuration (5, 8, 10 players × 谋攻 off/on); ``-m slow`` plays 2,000.
"""

from __future__ import annotations

from collections import Counter

import pytest

from services.rules import api
from services.rules.core import events as ev
from services.rules.core.ruleset import RULESETS
from services.rules.core.state import Game
from services.rules.core.views import SPECTATOR
from services.rules.rulesets.jinyu.counters import counters
from tests.rules.invariants import play_random

COUNTS = (5, 8, 10)
GAMES = 20  # a configuration's games: the first 6 by default, the rest slow
SEED_BATCHES = [
    pytest.param(range(6), id="first"),
    pytest.param(range(6, GAMES), id="rest", marks=pytest.mark.slow),
]
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
        c = counters(g, p.seat)
        assert c.armor >= 0 and c.jade >= 0 and c.rage >= 0
        assert c.armor <= 5
    return log


def run_many(players: int, mougong: bool, seeds: range) -> Counter[str]:
    """Play the games of ``seeds``; count the skills invoked."""
    skills = Counter[str]()
    for seed in seeds:
        log = play(
            players, 70_000 * players + seed + (500_000 if mougong else 0), {"mougong": mougong}
        )
        skills.update(e.skill for e in log if isinstance(e, ev.SkillInvoked))
    return skills


@pytest.mark.parametrize("seeds", SEED_BATCHES)
@pytest.mark.parametrize("mougong", [False, True])
@pytest.mark.parametrize("players", COUNTS)
def test_random_games_end_with_invariants(players: int, mougong: bool, seeds: range) -> None:
    """Seeded random games end; with 谋攻 the new decisions are played."""
    skills = run_many(players, mougong, seeds)
    if mougong:
        assert skills["强化"] and skills["洞察"], skills


@pytest.mark.slow
@pytest.mark.parametrize("mougong", [False, True])
@pytest.mark.parametrize("players", COUNTS)
def test_many_random_games(players: int, mougong: bool) -> None:
    """2,000 seeded games per configuration."""
    run_many(players, mougong, range(SLOW_GAMES))


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
    assert counters(g, lord.seat).jade == 2 and lord.max_hp == gen.hp + 1
    assert len(lord.hand) >= 5 or g.current != 0
    assert all(len(p.hand) == 4 for p in g.players[1:])


def test_hidden_lord_secret() -> None:
    """谋攻: the lord's role is seen by itself only, and it gets no start bonus."""
    g = api.new_game("jinyu", 8, 5, {"mougong": True})
    events = api.advance(g)
    roles = [e for e in events if isinstance(e, ev.RoleAssigned)]
    assert all(e.seen_by == [e.seat] for e in roles)
    lord = next(p for p in g.players if p.role == "lord")
    assert counters(g, lord.seat).jade == 0 and not lord.role_revealed


def _offers(players: int, seed: int, options: dict[str, object]) -> list[ev.DraftOffered]:
    """Every draft offer of a fresh game (the lord's first; the lord picks its first option)."""
    g = api.new_game("jinyu", players, seed, options)
    offers = [e for e in api.advance(g) if isinstance(e, ev.DraftOffered)]
    d = api.pending(g)
    if d is not None and d.kind == "draft" and len(offers) == 1:
        events = api.submit(g, api.Answer(decision=d.id, seat=d.seat, picks=[d.options[0]]))
        offers += [e for e in events if isinstance(e, ev.DraftOffered)]
    return offers


def test_pool_all_offers_the_seeds_six() -> None:
    """`pool: all` drafts from every general the project has (27 + 20): each other seat is
    offered the seed's 6 (3 at 10 players), which the 27 standard ones cannot give at 8."""
    for players, k in ((8, 6), (9, 5), (10, 3)):
        others = _offers(players, 4, {"pool": "all"})[1:]
        assert [len(e.generals) for e in others] == [k] * (players - 1)
    names = {n for e in _offers(8, 4, {"pool": "all"}) for n in e.generals}
    assert names <= set(RULESETS["jinyu"].generals()) - {"vanilla"}
    assert names & {"曹操", "刘备", "孙权"} and names & {"贾珍", "薛姨妈"}  # both seeds' lords


@pytest.mark.parametrize("pool", ["standard", "honglou", "all"])
def test_no_draft_leaves_a_single_choice(pool: str) -> None:
    """Whatever the pool, tier, table and 谋攻 draft, every seat is offered at least 2 generals (a
    tier too small for that falls back to the whole pool; a hidden lord's extras shrink)."""
    for players in range(4, 11):
        for tier in (0, 1, 2, 3):
            for mougong, draft in ((False, "shared"), (True, "shared"), (True, "lord_offer")):
                opts = {"pool": pool, "tier": tier, "mougong": mougong, "mougong_draft": draft}
                offers = _offers(players, players * 7 + tier, opts)
                assert len(offers) == players, (opts, players)
                assert min(len(e.generals) for e in offers) >= 2, (opts, players, offers)


def test_tier_restricts_the_draft_when_it_can() -> None:
    from services.rules.rulesets.jinyu.data import GENERAL_TIERS

    for tier in (1, 2, 3):
        names = {n for e in _offers(4, 2, {"pool": "all", "tier": tier}) for n in e.generals}
        assert {GENERAL_TIERS[n] for n in names} == {tier}


def test_pool_vanilla_is_the_seeds_game_without_generals() -> None:
    """若没有加入武将牌: everyone a 4-HP general without skills; the lord 5 and 2 玉佩 (and 5
    cards); no draft."""
    g = api.new_game("jinyu", 6, 8, {"pool": "vanilla"})
    events = api.advance(g)
    assert not [e for e in events if isinstance(e, ev.DraftOffered)]
    assert g.pending is not None and g.pending.kind != "draft"
    for p in g.players:
        assert p.general == "vanilla" and set(p.skills) <= {"金鱼"}
        lord = p.role == "lord"
        assert (p.max_hp, p.hp, counters(g, p.seat).jade) == ((5, 5, 2) if lord else (4, 4, 0))
    lord = next(p for p in g.players if p.role == "lord")
    assert len(lord.hand) >= 5 and all(len(p.hand) == 4 for p in g.players if p is not lord)


@pytest.mark.parametrize(
    ("key", "value", "allowed"),
    [
        ("pool", "bogus", "standard, honglou, all, vanilla"),
        ("tier", 7, "0, 1, 2, 3"),
        ("mougong", "yes", "false, true"),
        ("armor_cap", -1, "an integer in 0..999"),
        ("enhanced_wine_scope", "round", "turn, play_phase"),
    ],
)
def test_invalid_option_values_list_the_allowed(key: str, value: object, allowed: str) -> None:
    with pytest.raises(api.UnknownOption) as info:
        api.new_game("jinyu", 8, 1, {key: value})
    assert f"option {key!r}" in str(info.value) and f"(allowed: {allowed})" in str(info.value)
