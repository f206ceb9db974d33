"""Property tests: seeded random games over 4–10 players.

Every game ends (a winner set or a draw) without an exception; the state invariants of
``invariants.check`` hold after every submit; the GOD-view event stream accounts for every card
move and every HP change; and illegal answers are rejected with ``IllegalAnswer`` while the
snapshot bytes stay identical.

The default run plays some fifty games; ``-m slow`` the rest of the 140 batched ones and the
issue's full 2,000.
"""

from __future__ import annotations

import time
from collections import Counter
from dataclasses import dataclass, field

import pytest

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.core import events as ev
from services.rules.core.state import Answer, Decision, Game
from tests.rules.invariants import CardTracker, HpTracker, check

MAX_DECISIONS = 20_000
PLAYER_COUNTS = range(4, 11)
GAMES_PER_COUNT = 20  # 7 × 20 = 140 games: the first 6 of each size by default, the rest slow
SEED_BATCHES = [
    pytest.param(range(6), id="first"),
    pytest.param(range(6, GAMES_PER_COUNT), id="rest", marks=pytest.mark.slow),
]
SLOW_GAMES = 2_000


@dataclass
class Outcome:
    """What one checked game did."""

    players: int
    seed: int
    decisions: int = 0
    events: int = 0
    illegal_tried: int = 0
    draw: bool = False
    winners: list[str] = field(default_factory=list)


def illegal_answers(g: Game, d: Decision) -> list[tuple[str, Answer]]:
    """A battery of answers the pending decision must reject."""
    n = len(g.players)
    opts = d.options
    first = opts[0]
    out = [
        ("stale decision id", Answer(decision=d.id - 1, seat=d.seat, picks=[first])),
        ("future decision id", Answer(decision=d.id + 1, seat=d.seat, picks=[first])),
        ("wrong seat", Answer(decision=d.id, seat=(d.seat + 1) % n, picks=[first])),
        ("no such seat", Answer(decision=d.id, seat=n + 3, picks=[first])),
        ("unknown option", Answer(decision=d.id, seat=d.seat, picks=["card:99999"])),
        ("garbage option", Answer(decision=d.id, seat=d.seat, picks=["end "])),
        ("duplicate picks", Answer(decision=d.id, seat=d.seat, picks=[first, first])),
        (
            "too many picks",
            Answer(
                decision=d.id, seat=d.seat, picks=list(opts) + [f"x{i}" for i in range(d.max + 1)]
            ),
        ),
    ]
    if len(opts) > d.max:
        out.append(("over max", Answer(decision=d.id, seat=d.seat, picks=list(opts[: d.max + 1]))))
    if d.min > 1:
        out.append(("under min", Answer(decision=d.id, seat=d.seat, picks=list(opts[: d.min - 1]))))
    if not d.declinable:
        out.append(("decline", Answer(decision=d.id, seat=d.seat, picks=[])))
    # well-formed keys the decision does not offer: each frame's refusal says why, and reads only
    last_seat, last_card = len(g.players) - 1, len(g.cards) - 1
    for pick in ("seat:0", f"seat:{last_seat}", "card:0", f"card:{last_card}", "recast:0"):
        if pick not in opts:
            out.append((f"not offered {pick}", Answer(decision=d.id, seat=d.seat, picks=[pick])))
    for pick in ("skill:仁德", "skill:八卦阵", "skill:护驾", "hand", "yes"):
        if pick not in opts:
            out.append((f"not offered {pick}", Answer(decision=d.id, seat=d.seat, picks=[pick])))
    # a legal pick list padded with an illegal one
    out.append(
        (
            "legal + unknown",
            Answer(decision=d.id, seat=d.seat, picks=[first, "seat:-7"][: max(2, d.max)]),
        )
    )
    return out


def assert_rejected(g: Game, d: Decision) -> int:
    """Submit every illegal answer; each must raise and leave the snapshot bytes unchanged."""
    before = api.snapshot(g)
    for what, a in illegal_answers(g, d):
        with pytest.raises(api.IllegalAnswer) as info:
            api.submit(g, a)
        assert info.value.reason, f"{what}: empty reason"
        after = api.snapshot(g)
        assert after == before, f"illegal answer ({what}) changed the state"
    return len(illegal_answers(g, d))


def check_outcome(g: Game) -> None:
    """The winner set is a camp that may win with the table as it ended."""
    assert g.over
    if g.draw_game:
        return
    roles = {g.players[s].role for s in g.winners}
    alive = {p.role for p in g.players if p.alive}
    lord_alive = g.players[0].alive
    if roles <= {"lord", "loyalist"}:
        assert lord_alive and not alive & {"rebel", "renegade"}, (roles, alive)
        assert set(g.winners) == {p.seat for p in g.players if p.role in ("lord", "loyalist")}
    elif roles == {"rebel"}:
        assert not lord_alive
        assert set(g.winners) == {p.seat for p in g.players if p.role == "rebel"}
    elif roles == {"renegade"}:
        assert not lord_alive and len(g.winners) == 1
        assert [p.seat for p in g.players if p.alive] == g.winners
    else:  # pragma: no cover - a failing case
        raise AssertionError(f"impossible winner set {roles}")


def play_checked(players: int, seed: int, illegal_every: int = 0) -> Outcome:
    """Play one random game, checking everything after every submit.

    ``illegal_every`` > 0 also throws the illegal battery at every n-th decision.
    """
    out = Outcome(players=players, seed=seed)
    g = api.new_game("standard", players, seed)
    policies = [RandomPolicy(seed * 1000 + i) for i in range(players)]
    cards, hp = CardTracker(len(g.cards)), HpTracker(players)

    def fold(events: list[ev.Event]) -> None:
        out.events += len(events)
        for e in events:
            cards.apply(e)
            hp.apply(e)
        ended = [i for i, e in enumerate(events) if isinstance(e, ev.GameEnded)]
        assert ended in ([], [len(events) - 1]), "game_ended must be the last event, once"
        assert bool(ended) == g.over
        cards.matches(g)
        check(g)

    fold(api.advance(g))
    while not g.over:
        d = api.pending(g)
        assert d is not None
        if illegal_every and out.decisions % illegal_every == 0:
            out.illegal_tried += assert_rejected(g, d)
        fold(api.submit(g, policies[d.seat].act(d)))
        out.decisions += 1
        assert out.decisions < MAX_DECISIONS, f"{players}p seed {seed}: no end in sight"
    with pytest.raises(api.IllegalAnswer):
        api.submit(g, Answer(decision=g.next_decision - 1, seat=0, picks=[]))
    check_outcome(g)
    out.draw = g.draw_game
    out.winners = sorted({g.players[s].role for s in g.winners})
    return out


@pytest.mark.parametrize("seeds", SEED_BATCHES)
@pytest.mark.parametrize("players", PLAYER_COUNTS)
def test_random_games_end_with_invariants(players: int, seeds: range) -> None:
    """A batch of seeded games per table size, invariants after every submit."""
    for seed in seeds:
        o = play_checked(players, 10_000 * players + seed, illegal_every=0)
        assert o.draw or o.winners


@pytest.mark.parametrize("players", [4, 7, 10])
def test_illegal_answers_change_nothing(players: int) -> None:
    """The illegal battery at every 7th decision of a few whole games."""
    tried = 0
    for seed in range(3):
        tried += play_checked(players, 777 + seed, illegal_every=7).illegal_tried
    assert tried > 100


def test_submit_after_game_over_and_before_start() -> None:
    """No decision pending: any answer is illegal and changes nothing."""
    g = api.new_game("standard", 5, 3)
    before = api.snapshot(g)
    with pytest.raises(api.IllegalAnswer):
        api.submit(g, Answer(decision=1, seat=0, picks=["end"]))
    assert api.snapshot(g) == before


def test_default_answer_is_legal() -> None:
    """A silent seat's default answer is accepted at every decision of a game."""
    g = api.new_game("standard", 6, 42)
    api.advance(g)
    n = 0
    while not g.over and n < 5_000:
        d = api.pending(g)
        assert d is not None
        api.submit(g, api.default_answer(d))
        check(g)
        n += 1
    # an all-silent table may legitimately never end within the cap; it must just stay sane


@pytest.mark.slow
def test_two_thousand_games() -> None:
    """The issue's full count: 2,000 seeded games over 4–10 players."""
    t0 = time.perf_counter()
    results = Counter[str]()
    decisions = 0
    for i in range(SLOW_GAMES):
        players = PLAYER_COUNTS[i % len(PLAYER_COUNTS)]
        o = play_checked(players, 1_000_000 + i, illegal_every=50)
        decisions += o.decisions
        results["draw" if o.draw else "+".join(o.winners)] += 1
    secs = time.perf_counter() - t0
    print(f"\n{SLOW_GAMES} games, {decisions} decisions in {secs:.1f}s: {dict(results)}")
    assert sum(results.values()) == SLOW_GAMES


def test_checker_catches_broken_states() -> None:
    """The invariants themselves bite: a duplicated card, a lost card, HP above max."""
    g = api.new_game("standard", 4, 5)
    api.advance(g)
    check(g)
    for breakage in ("dup", "lost", "hp", "dead"):
        b = api.fork(g)
        if breakage == "dup":
            b.players[1].hand.append(b.players[2].hand[0])
        elif breakage == "lost":
            b.draw.pop()
        elif breakage == "hp":
            b.players[3].hp = b.players[3].max_hp + 1
        else:
            b.players[2].alive = False
            b.players[2].role_revealed = True
        with pytest.raises(AssertionError):
            check(b)
