"""Ruleset ``honglou`` (seed 000): random games end cleanly with the state invariants holding, the
draft follows A-000-10, and the seed's names resolve to the engine's.

Default run: 3 × 40 games at 5, 8 and 10 players; ``-m slow`` plays 2,000 per count.
"""

from __future__ import annotations

from collections import Counter

import pytest

from services.rules import api
from services.rules.core import events as ev
from services.rules.core.ruleset import RULESETS
from services.rules.core.skills import SKILLS
from services.rules.core.state import Answer, Game
from services.rules.rulesets.honglou.data import CHARACTERS, SKILL_ALIASES
from tests.rules.invariants import play_random
from tests.rules.test_properties import check_outcome

COUNTS = (5, 8, 10)
GAMES = 40
SLOW_GAMES = 2_000
MAX_DECISIONS = 20_000


def play(
    players: int, seed: int, options: dict[str, object] | None = None
) -> tuple[Game, list[ev.Event]]:
    """One random game, the invariants checked after every submit; returns it and its events."""
    g, log = play_random("honglou", players, seed, options, max_decisions=MAX_DECISIONS)
    check_outcome(g)
    return g, log


# GAMES a size: the first 10 by default (25-29 skills met), the other 30 under -m slow
@pytest.mark.parametrize(
    "seeds",
    [
        pytest.param(range(10), id="first"),
        pytest.param(range(10, GAMES), id="rest", marks=pytest.mark.slow),
    ],
)
@pytest.mark.parametrize("players", COUNTS)
def test_random_games_end_with_invariants(players: int, seeds: range) -> None:
    """Seeded random games at each table size end, every state at rest sane."""
    skills = Counter[str]()
    for seed in seeds:
        _, log = play(players, 50_000 * players + seed)
        skills.update(e.skill for e in log if isinstance(e, ev.SkillInvoked))
    # the random games exercise most of the seed's skills
    assert len(skills) >= 20, skills


def test_options_flipped_still_run() -> None:
    """Every A-000 switch at its non-default value keeps games sane."""
    opts = {
        "genders": "source",
        "huzhu_others_only": False,
        "ganglie_short_hand_discards": True,
        "zuima_optional": True,
        "tiandu_any_judgement": True,
        "jiuyuan_literal": True,
        "fanjian_damage_first": False,
        "zanghua_wounded_only": False,
        "shixue_self": True,
        "luoyi_play_phase_only": False,
        "lord_bonus_min_players": 5,
    }
    for seed in range(30):
        play(4 + seed % 7, 9_000 + seed, opts)


@pytest.mark.slow
@pytest.mark.parametrize("players", COUNTS)
def test_two_thousand_games(players: int) -> None:
    """The issue's full count per table size."""
    for seed in range(SLOW_GAMES):
        play(players, 2_000_000 + 10_000 * players + seed)


def _draft(players: int, seed: int) -> tuple[Game, list[ev.Event], list[api.Decision]]:
    g = api.new_game("honglou", players, seed)
    log = api.advance(g)
    asked = []
    while g.pending is not None and g.pending.kind == "draft":
        d = g.pending
        asked.append(d)
        log += api.submit(g, Answer(decision=d.id, seat=d.seat, picks=[d.options[-1]]))
    return g, log, asked


@pytest.mark.parametrize("players", [4, 5, 8, 10])
def test_draft_follows_a_000_10(players: int) -> None:
    """Lord: 贾珍 + 薛姨妈 + 2 random, public pick; others k each, secret, then revealed."""
    g, log, asked = _draft(players, 11)
    assert [d.seat for d in asked] == list(range(players))
    lord = asked[0].options
    assert lord[:2] == ["general:贾珍", "general:薛姨妈"] and len(lord) == 4
    k = min(3, 19 // (players - 1))
    assert all(len(d.options) == k for d in asked[1:])
    offered = [o for d in asked[1:] for o in d.options]
    assert len(set(offered)) == len(offered) and asked[0].options[-1] not in offered
    chosen = [e for e in log if isinstance(e, ev.GeneralChosen)]
    secret = [e for e in chosen if e.seen_by is not None]
    public = [e for e in chosen if e.seen_by is None]
    assert [e.seat for e in secret] == list(range(1, players))
    assert sorted(e.seat for e in public) == list(range(players))
    assert chosen.index(public[-1]) > chosen.index(secret[-1])  # revealed after all picks
    for e in secret:
        assert e.seen_by == [e.seat]
        assert api.redact(e, (e.seat + 1) % players).general == ""
    lord_p = g.players[0]
    assert lord_p.max_hp == {"贾珍": 5, "薛姨妈": 5}.get(lord_p.general, lord_p.max_hp)
    assert all(len(p.hand) == 4 for p in g.players[1:])  # the lord is in its first turn


def test_roles_of_ten() -> None:
    """10 players: 1 主人, 3 仆人, 4 反贼, 2 内奸."""
    g = api.new_game("honglou", 10, 1)
    assert Counter(p.role for p in g.players) == {
        "lord": 1,
        "loyalist": 3,
        "rebel": 4,
        "renegade": 2,
    }


def test_names_and_deck() -> None:
    """108 cards without 军争; seed names parse to engine names and print back."""
    rs = RULESETS["honglou"]
    deck = rs.deck(rs.option_defaults())
    assert len(deck) == 108 and all(c.pack != "maneuvering" for c in deck)
    for printed, engine in {
        "药": "桃",
        "护官符": "八卦阵",
        "鸳鸯剑": "雌雄双股剑",
        "连弩": "诸葛连弩",
        "青龙刀": "青龙偃月刀",
        "画戟": "方天画戟",
        "主人": "lord",
        "仆人": "loyalist",
    }.items():
        assert rs.aliases[printed] == engine
        assert rs.display_name(engine) == printed
    gens = rs.generals()
    assert len(gens) == 21 and len(CHARACTERS) == 20
    males = {n for n, g in gens.items() if g.gender == "male" and n != "vanilla"}
    assert males == {"贾珍", "贾蓉", "焦大", "薛蟠", "薛蝌", "柳湘莲", "蒋玉涵"}
    assert Counter(g.faction for n, g in gens.items() if n != "vanilla") == {
        "宁国府": 7,
        "薛府": 8,
        "群": 5,
    }


def test_aliases_share_the_implementation() -> None:
    """Every seed skill name is the standard skill's class (a subclass changing only names and
    switches), so other rulesets reuse exactly the same logic."""
    for new, (old, _) in SKILL_ALIASES.items():
        a, b = type(SKILLS[new]), type(SKILLS[old])
        assert issubclass(a, b) and a.__mro__[1] is b
        own = set(vars(a)) - {"name", "text", "__doc__", "__module__", "__qualname__"}
        assert own <= {"optional", "optional_key", "others_key", "self_key"}, (new, own)
    for gen in RULESETS["honglou"].generals().values():
        assert all(s in SKILLS for s in gen.skills)


SHIXUE = """
name: 噬血 per point
ruleset: honglou
seats:
  - {general: 薛蟠, role: lord, hp: 1}
  - {general: vanilla, role: rebel}
  - {general: vanilla, role: loyalist}
  - {general: vanilla, role: renegade}
turn: {seat: 0, phase: play}
"""


@pytest.mark.parametrize("target,healed", [(1, 2), (2, 0), (0, 0)])
def test_shixue_heals_per_point_at_distance_one(target: int, healed: int) -> None:
    """噬血/狂骨: 2 damage to a seat at distance 1 heals 2; at distance 2 nothing; to yourself
    nothing by default (A-000-11). No seed card deals 2 from 薛蟠, so the damage is pushed."""
    from services.rules.core.damage import Damage
    from services.rules.scenario.loader import load_text
    from services.rules.scenario.table import build

    g, _ = build(load_text(SHIXUE, "shixue"))
    g.players[0].hp = 3
    g.stack.append(Damage(source=0, target=target, amount=2))
    api.advance(g)
    assert g.players[0].hp == (1 if target == 0 else 3) + healed


@pytest.mark.parametrize("ruleset", ["jinyu", "extended", "chengtian"])
def test_characters_keep_their_seed_texts_in_every_ruleset(ruleset: str) -> None:
    """Where a ruleset has no seed-000 option, a character's skills follow the seed's text
    (A-000-xx: 裸衣 in the play phase only, 反间 damage first …) and a standard general's the
    standard text, at the same table; an explicit honglou option still wins in honglou."""
    from services.rules.rulesets.honglou.data import SEED_TEXTS
    from services.rules.scenario.loader import load_text
    from services.rules.scenario.table import build
    from services.rules.skills.base import opt

    roles = "" if ruleset == "chengtian" else ", role: lord"
    other = "" if ruleset == "chengtian" else ", role: rebel"
    extra = (
        ""
        if ruleset == "chengtian"
        else "\n".join(
            f"  - {{general: vanilla, role: {r}}}"
            for r in (
                ["loyalist", "renegade"]
                if ruleset == "jinyu"
                else ["chujun", "loyalist", "zeishou", "rebel", "rebel", "renegade"]
            )
        )
    )
    text = (
        f"name: t\nruleset: {ruleset}\nseats:\n  - {{general: 惜春{roles}}}\n"
        f"  - {{general: 许褚{other}}}\n{extra}\n"
    )
    g, _ = build(load_text(text, "t.yaml"))
    for key, seed in SEED_TEXTS.items():
        assert opt(g, key, not seed, 0) is seed, key
        assert opt(g, key, not seed, 1) is (not seed), key
    g, _ = build(
        load_text(
            "name: t\nruleset: honglou\noptions: {luoyi_play_phase_only: false}\nseats:\n"
            "  - {general: 惜春, role: lord}\n  - {general: vanilla, role: rebel}\n",
            "t.yaml",
        )
    )
    assert opt(g, "luoyi_play_phase_only", True, 0) is False
