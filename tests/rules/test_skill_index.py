"""The skill index (core/index.py) answers as a fresh scan of the plain state would.

Random games of every ruleset and variant (the tables of test_event_digests) run step by step;
after every step each cached entry of the index — a seat's skills, the skills overriding a hook,
the timing points heard, the distances, the seats in range and turn orders kept — must equal what the state gives
now. A mutation that
forgets ``skills_changed`` (a general replaced, equipment moved, a role or identity changed)
leaves a stale entry and fails here at the step that made it.
"""

from __future__ import annotations

from collections.abc import Callable
from functools import cache
from typing import Any

import pytest

from services.rules import api
from services.rules.core.engine import GameOver, validate
from services.rules.core.index import (
    SkillIndex,
    hooked,
    listening,
    scan_skills,
    seat_skills,
    skills_changed,
)
from services.rules.core.query import attack_range, distances, in_reach, order_from
from services.rules.core.skills import HOOK_SETS, SKILLS
from services.rules.core.state import Game
from tests.rules.test_event_digests import CASES, Picker, case_id


def stale(g: Game) -> list[str]:
    """Every cached entry of ``g``'s index that disagrees with the state."""
    idx: SkillIndex | None = g.skill_index
    if idx is None:
        return []
    out = []
    held = [tuple(scan_skills(g, p)) for p in g.players]
    # the timing points each seat's skills listen at (asked below of every entry and point)
    heard = [{ev for name in have for ev in SKILLS[name].events} for have in held]
    for seat, entry in enumerate(idx.seats):
        if entry is None:
            continue
        now = held[seat]
        if entry.names != now:
            out.append(f"seat {seat}: {entry.names} cached, {now} held")
        for hook, skills in entry.hooks.items():
            want = tuple(SKILLS[s] for s in now if s in HOOK_SETS[hook])
            if skills != want:
                out.append(f"seat {seat} hook {hook}: {skills} cached, {want} now")
        want_points = heard[seat]
        if entry.points != want_points:
            out.append(f"seat {seat}: listens at {set(entry.points)}, its skills at {want_points}")
    if idx.dead == g.dead:  # the distances and ranges kept must be what the seats give now
        distance_now = distances_now(g)
        for a, row in enumerate(idx.rows):
            if row is None:
                continue
            for b, p in enumerate(g.players):
                if a != b and p.alive and row[b] != distance_now(a, b):
                    out.append(f"distance {a}->{b}: {row[b]} kept, {distance_now(a, b)} now")
        for a, kept in enumerate(idx.reach):
            if kept is None:
                continue
            r, reach = kept  # the range they were found for: a seat's own unless it has a
            if not hooked(g, a, "attack_range") and r != attack_range(g, a):  # range skill
                out.append(f"seat {a}'s range: {r} kept, {attack_range(g, a)} now")
            want_reach = tuple(b for b in order_from(g, a, False) if distance_now(a, b) <= r)
            if reach != want_reach:
                out.append(f"seats in {a}'s range {r}: {reach} kept, {want_reach} now")
    if idx.orders and idx.order_dead == g.dead:
        for (start, first), order in idx.orders.items():
            n = len(g.players)
            want = tuple(
                (start + k) % n
                for k in range(0 if first else 1, n)
                if g.players[(start + k) % n].alive
            )
            if order != want:
                out.append(f"order from {start}: {order} kept, {want} now")
    for point, seats in idx.points.items():
        want_seats = tuple(s for s, points in enumerate(heard) if point in points)
        if seats != want_seats:
            out.append(f"point {point}: seats {seats} kept, {want_seats} now")
    if idx.heard is not None:
        want = set().union(*heard)
        if idx.heard != want:
            out.append(f"points heard: {set(idx.heard)} cached, {want} now")
    return out


def distances_now(g: Game) -> Callable[[int, int], int]:
    """Distance(a → b) by §1.7 read off the state as it is now, one pair at a time (not the
    engine's row); each pair worked out once (an audit asks for most pairs twice, after every
    step: the seats alive are listed once, and a pair's hooks summed once)."""
    if not api.RULESETS[g.ruleset].measures_distance:
        return lambda a, b: 1
    alive = [p.seat for p in g.players if p.alive]
    at = {seat: i for i, seat in enumerate(alive)}

    @cache
    def distance(a: int, b: int) -> int:
        i, j = at[a], at[b]
        d = min(abs(i - j), len(alive) - abs(i - j))
        d += ("plus" in g.players[b].equip) - ("minus" in g.players[a].equip)
        d += sum(s.distance_from(g, a, b) for s in hooked(g, a, "distance_from"))
        d += sum(s.distance_to(g, b, a) for s in hooked(g, b, "distance_to"))
        return max(d, 1)

    return distance


def run_audited(g: Game) -> int:
    """``advance`` one step at a time, auditing the index after each; returns the steps run."""
    stack, steps = g.stack, 0
    try:
        while g.pending is None and not g.over and stack:
            top = stack[-1]
            g.top = len(stack) - 1
            getattr(top, top.step)(g)
            steps += 1
            bad = stale(g)
            assert not bad, f"after {type(top).__name__}.{top.step}: {bad}"
    except GameOver:
        g.pending = None
    g.out = []
    return steps


def _audited() -> list[Any]:
    """CASES[::4], but for the three longest of them (extended, seeds 402, 412 and 430: 60% of
    the audit's time) another seed of the same table, shorter; those three under -m slow."""
    shorter = {402: 403, 412: 410, 430: 431}
    cases: list[Any] = []
    for c in CASES[::4]:
        if c[3] in shorter:
            cases.append(pytest.param(*c, marks=pytest.mark.slow))
            cases.append(next(x for x in CASES if x[:3] == c[:3] and x[3] == shorter[c[3]]))
        else:
            cases.append(c)
    return cases


@pytest.mark.parametrize(
    ("ruleset", "players", "options", "seed"), _audited(), ids=lambda v: str(v)
)
def test_index_never_stale(ruleset: str, players: int, options: dict[str, Any], seed: int) -> None:
    audit_game(ruleset, players, options, seed)


@pytest.mark.slow
@pytest.mark.parametrize(("ruleset", "players", "options", "seed"), CASES, ids=lambda v: str(v))
def test_index_never_stale_all(
    ruleset: str, players: int, options: dict[str, Any], seed: int
) -> None:
    for more in range(5):  # the pinned games and four more seeds of each table
        audit_game(ruleset, players, options, seed + 1000 * more)


def audit_game(ruleset: str, players: int, options: dict[str, Any], seed: int) -> None:
    """Play one random game to its end, auditing the index after every step."""
    g = api.new_game(ruleset, players, seed, options)
    picker = Picker(seed * 7919 + players)
    run_audited(g)
    while (d := api.pending(g)) is not None:
        # query the index as the engine's callers do, so that entries exist to be audited
        for s in range(players):
            seat_skills(g, s)
            for hook in ("provides", "prohibits", "distance_from", "card_ineffective"):
                hooked(g, s, hook)
        for a in range(players):
            if g.players[a].alive:
                distances(g, a)
                in_reach(g, a)
            order_from(g, a)
        for point in ("damaged", "turn_start", "equip_lost", "card_using"):
            assert listening(g, point) == tuple(
                s
                for s in range(players)
                if point in {e for n in scan_skills(g, g.players[s]) for e in SKILLS[n].events}
            )
        a = picker.act(d)
        validate(d, a)
        g.pending, g.answer = None, list(a.picks)
        run_audited(g)
    assert g.over, case_id(ruleset, players, options, seed)


def test_a_restored_game_builds_its_own_index() -> None:
    """Snapshots carry no index; a fork answers from its own state."""
    g = api.new_game("standard", 5, 3, {"generals": "standard"})
    api.advance(g)
    before = [seat_skills(g, s) for s in range(5)]
    data = api.snapshot(g)
    f = api.restore(data)
    assert f.skill_index is None and api.snapshot(f) == data
    assert [seat_skills(f, s) for s in range(5)] == before
    f.players[1].skills = ["英姿"]
    skills_changed(f, 1)
    assert seat_skills(f, 1) == ("英姿",) and seat_skills(g, 1) == before[1]


def test_the_audit_finds_a_stale_distance_and_range() -> None:
    """A weapon or a horse put in place without ``skills_changed`` leaves the range and the
    distances kept stale: the audit says so."""
    g = api.new_game("standard", 5, 4)
    api.advance(g)
    assert in_reach(g, 0) == (1, 4) and distances(g, 0)[2] == 2
    assert stale(g) == []
    bow = next(i for i, c in enumerate(g.cards) if c.name == "麒麟弓")
    horse = next(i for i, c in enumerate(g.cards) if c.subtype == "defensive_horse")
    g.players[0].equip["weapon"] = bow
    g.players[2].equip["plus"] = horse
    found = stale(g)
    assert any("seat 0's range" in s for s in found), found
    assert any(s.startswith("distance 0->2") for s in found), found
    skills_changed(g, 0, distances=False)  # a weapon: the distances stay, the range goes
    assert in_reach(g, 0) == (1, 2, 3, 4)
    assert not any("range" in s for s in stale(g))
    skills_changed(g, 2)  # a horse: every distance goes
    assert stale(g) == [] and distances(g, 0)[2] == 3
