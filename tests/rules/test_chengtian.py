"""Ruleset ``chengtian`` (seed 003): the deck is the seed's table, random 1v1 games end cleanly
with the invariants holding (the random policy orders camps and plays 走马换将), and the piece no
card of the deck reaches (白鸽, which forbids a 拼点 against its holder) works when a skill would
use it.

Default run: 50 games; ``-m slow`` plays 2,000.
"""

from __future__ import annotations

from collections import Counter

import pytest

from services.rules import api
from services.rules.core import events as ev
from services.rules.core.query import distance, hand_limit, in_range, prohibited
from services.rules.core.ruleset import RULESETS
from services.rules.core.state import Answer, Game
from services.rules.rulesets.chengtian import chengtian_deck
from services.rules.rulesets.chengtian.camp import camp_of
from services.rules.rulesets.chengtian.cards import give_baige
from services.rules.rulesets.chengtian.events import GeneralBenched, GeneralFell
from services.rules.scenario.loader import load_text
from services.rules.scenario.table import build
from tests.rules.invariants import check_cards, check_players, play_random

GAMES = 50
SLOW_GAMES = 2_000
MAX_DECISIONS = 20_000


def play(seed: int, options: dict[str, object] | None = None) -> tuple[Game, list[ev.Event]]:
    """One random game, the invariants checked after every submit."""
    g, log = play_random("chengtian", 2, seed, options, hp=False, max_decisions=MAX_DECISIONS)
    assert g.draw_game or len(g.winners) == 1
    if not g.draw_game:
        loser = g.players[1 - g.winners[0]]
        assert not loser.alive
        assert not camp_of(loser) or g.options["victory"] == "first_fall"
    return g, log


def test_random_games_end_with_invariants() -> None:
    """Seeded random games end; bots order camps, play 走马换将, generals fall and are replaced."""
    seen = Counter[str]()
    for seed in range(GAMES):
        _, log = play(70_000 + seed)
        seen.update(type(e).__name__ for e in log)
        seen.update(f"use:{e.name}" for e in log if isinstance(e, ev.CardUsed))
    assert seen["GeneralBenched"] > 0 and seen["GeneralFell"] > 0, seen
    assert seen["use:走马换将"] > 0 and seen["use:乐不思蜀"] > 0 and seen["use:火攻"] > 0
    assert seen["GameEnded"] == GAMES


# 25 games a variant: the first 6 by default, the other 19 under -m slow
@pytest.mark.parametrize(
    "seeds",
    [
        pytest.param(range(6), id="first"),
        pytest.param(range(6, 25), id="rest", marks=pytest.mark.slow),
    ],
)
def test_options_flipped_still_run(seeds: range) -> None:
    """Every U-003 switch at a non-default value keeps games sane."""
    variants: list[dict[str, object]] = [
        {"victory": "first_fall", "first_player": 1, "generals": "vanilla"},
        {"fall_ends_turn": False, "fall_discards_cards": True, "fall_deploy_face_down": True},
        {
            "benched_keeps_hp": False,
            "face_down_skills": True,
            "camp_size": 4,
            "generals": "honglou",
        },
        {
            "fan_play_phase_only": False,
            "fire_attack_any_card": False,
            "mount_hand_limit": 2,
            "camp_size": 0,
            "generals": "standard",
            "max_reshuffles": 2,
        },
    ]
    for i, opts in enumerate(variants):
        for seed in seeds:
            play(90_000 + 100 * i + seed, opts)


@pytest.mark.slow
def test_two_thousand_games() -> None:
    """The issue's full count."""
    for seed in range(SLOW_GAMES):
        play(3_000_000 + seed)


def test_deck_is_the_seed_table() -> None:
    """104 cards, two of every suit and rank, the seed's category counts; 白鸽 is extra."""
    deck = chengtian_deck()
    real = [c for c in deck if c.pack != "temporary"]
    assert len(real) == 104 and [c.name for c in deck if c.pack == "temporary"] == ["白鸽"]
    assert set(Counter((c.suit, c.rank) for c in real).values()) == {2}
    assert len({(c.suit, c.rank) for c in real}) == 52
    names = Counter(c.name for c in real)
    assert names["杀"] == 22 and names["火杀"] == 3 and names["雷杀"] == 5 and names["闪"] == 15
    assert names["桃"] == 8 and names["酒"] == 4 and names["走马换将"] == 2
    kinds = Counter(c.subtype if c.type == "equip" else c.type for c in real)
    assert kinds["weapon"] == 8 and kinds["armor"] == 4
    assert kinds["defensive_horse"] + kinds["offensive_horse"] == 2
    assert sum(1 for c in real if c.subtype == "delayed_trick") == 6
    assert [(c.suit, c.rank) for c in real if c.name == "闪电"] == [("H", 12)]
    assert sum(1 for c in real if c.suit == "S" and 2 <= c.rank <= 9) == 16


def test_setup_orders_camps_in_secret() -> None:
    """Each seat orders its 1 + camp_size generals; the battlefield ones are revealed."""
    g = api.new_game("chengtian", 2, 5)
    log = api.advance(g)
    asked = []
    while g.pending is not None and g.pending.kind == "draft":
        d = g.pending
        asked.append(d)
        log += api.submit(g, Answer(decision=d.id, seat=d.seat, picks=[d.options[-1]]))
    assert [d.seat for d in asked] == [0, 0, 1, 1]  # the last of three is not a choice
    offered = [e for e in log if isinstance(e, ev.DraftOffered)]
    assert all(e.seen_by == [e.seat] for e in offered)
    for p in g.players:
        assert len(camp_of(p)) == 2 and p.general not in camp_of(p) and len(p.hand) in (4, 6)
    public = [e for e in log if isinstance(e, ev.GeneralChosen) and e.seen_by is None]
    assert sorted(e.seat for e in public) == [0, 1]


TABLE = """
name: chengtian table
ruleset: chengtian
seats:
  - {general: 林黛玉, hand: [杀 S3], camp: [薛蟠]}
  - {general: vanilla, hand: [闪 D2]}
turn: {seat: 0, phase: play}
"""


def test_no_distance_every_seat_in_range() -> None:
    """Distance is 1 and each seat is in the other's range, whatever the mounts."""
    g, _ = build(load_text(TABLE, "t"))
    assert distance(g, 0, 1) == distance(g, 1, 0) == 1 and in_range(g, 0, 1)
    assert hand_limit(g, 0) == 3


def test_baige_forbids_pindian_and_shields_equipment() -> None:
    """白鸽 (produced by a skill): no 拼点 against its holder, its other equipment cannot be
    picked by the opponent; it is removed from the game when it leaves."""
    g, _ = build(
        load_text(
            TABLE.replace("hand: [闪 D2]", "hand: [闪 D2], equip: [藤甲 S2]") + "fill: true\n", "t"
        )
    )
    assert not prohibited(g, 1, 0, "拼点")
    assert give_baige(g, 1)
    assert prohibited(g, 1, 0, "拼点") and not prohibited(g, 0, 1, "拼点")
    rs = RULESETS["chengtian"]
    armor = g.players[1].equip["armor"]
    assert rs.equip_protected(g, 1, 0, armor) and not rs.equip_protected(g, 1, 1, armor)
    baige = g.players[1].equip["mount"]
    from services.rules.core.zones import move

    move(g, [baige], "equip", "discard", 1)
    assert baige in g.removed and baige not in g.discard
    check_cards(g)
    check_players(g)


def test_general_fell_event_names_the_fallen() -> None:
    """A general nobody saves leaves the game; the camp's top takes the battlefield."""
    g, _ = build(load_text(TABLE.replace("hand: [杀 S3]", "hp: 1, hand: [杀 S3]"), "t"))
    from services.rules.core.damage import Damage

    g.stack.append(Damage(source=1, target=0, amount=1))
    log = api.advance(g)
    fell = [e for e in log if isinstance(e, GeneralFell)]
    assert fell and fell[0].general == "林黛玉" and g.players[0].general == "薛蟠"
    assert g.players[0].alive and g.players[0].hp == 4 and not camp_of(g.players[0])
    assert not [e for e in log if isinstance(e, GeneralBenched)]


def test_lebu_seals_as_soon_as_it_is_placed() -> None:
    """乐不思蜀 seals the general the moment it is placed; taken away, the skills return."""
    g, _ = build(
        load_text(
            TABLE.replace("hand: [杀 S3]", "hand: [乐不思蜀 C6, 过河拆桥 S4]")
            .replace("{general: vanilla, hand: [闪 D2]}", "{general: 林黛玉, hand: [闪 D2]}")
            .replace("林黛玉, hand: [乐", "vanilla, hand: [乐"),
            "t",
        )
    )
    g.auto_forced = True
    api.advance(g)
    d = g.pending
    assert d is not None and g.players[1].skills == ["急救", "葬花"]
    lebu, chai = g.players[0].hand
    api.submit(g, Answer(decision=d.id, seat=0, picks=[f"card:{lebu}"]))
    d = g.pending
    assert d is not None and d.kind == "targets"
    api.submit(g, Answer(decision=d.id, seat=0, picks=["seat:1"]))
    while g.pending is not None and g.pending.kind != "play":
        api.submit(g, api.default_answer(g.pending))
    assert g.players[1].judge == [lebu] and g.players[1].skills == []
    d = g.pending
    assert d is not None
    api.submit(g, Answer(decision=d.id, seat=0, picks=[f"card:{chai}"]))
    while g.pending is not None and g.pending.kind != "pick_card":
        d = g.pending
        picks = ["seat:1"] if d.kind == "targets" else []
        api.submit(g, Answer(decision=d.id, seat=d.seat, picks=picks))
    d = g.pending
    api.submit(g, Answer(decision=d.id, seat=0, picks=[f"card:{lebu}"]))
    assert not g.players[1].judge and g.players[1].skills == ["急救", "葬花"]
