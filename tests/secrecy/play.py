"""Seeded in-process games for the secrecy tests: every event as logged (the GOD view) and the
answers that produced it, with an optional permutation of the dealt roles.

Permuting roles keeps everything else of the game: every ruleset deals roles as
``table[shuffle(...)[seat]]``, so replacing the role table by a permutation of itself (same
length, same random draws) moves roles between seats and leaves the deck shuffle, the draft
and every other draw of the seed untouched.
"""

from __future__ import annotations

import contextlib
from collections.abc import Iterator
from dataclasses import dataclass
from typing import Any

import msgspec

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.api import RULESETS
from services.rules.api import events as ev


@contextlib.contextmanager
def role_table(ruleset: str, perm: dict[int, int] | None) -> Iterator[None]:
    """While active, the ruleset's role table has entry ``i`` replaced by entry ``perm[i]``."""
    if not perm:
        yield
        return
    rs = RULESETS[ruleset]
    cls = rs if isinstance(rs, type) else type(rs)
    original = cls.roles
    own = "roles" in cls.__dict__

    def roles(self: Any, players: int, options: dict[str, Any]) -> list[str]:
        table = original(self, players, options)
        return [table[perm.get(i, i)] for i in range(len(table))]

    cls.roles = roles  # type: ignore[method-assign]
    try:
        yield
    finally:
        if own:
            cls.roles = original  # type: ignore[method-assign]
        else:
            del cls.roles


@dataclass
class Played:
    """A game as played: its state, every event, the answers, and ``cuts[k]``: the number of
    events logged before answer ``k`` (the last cut: all of them)."""

    game: api.Game
    events: list[ev.Event]
    answers: list[api.Answer]
    cuts: list[int]

    def batch_end(self, i: int) -> int:
        """The index after the last event of the batch that holds event ``i``."""
        return next(c for c in self.cuts if c > i)


def swap_perm(
    ruleset: str, players: int, options: dict[str, Any], a: str, b: str
) -> dict[int, int]:
    """A table permutation exchanging the first ``a`` and the first ``b`` role."""
    table = RULESETS[ruleset].roles(players, dict(options))
    i, j = table.index(a), table.index(b)
    return {i: j, j: i}


def play(
    ruleset: str,
    players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    picks: list[list[str]] | None = None,
    limit: int = 400,
    perm: dict[int, int] | None = None,
) -> Played:
    """Play up to ``limit`` answers: the given ``picks`` in order while they stay legal (then
    stop), else seeded random answers."""
    opts = dict(options or {})
    with role_table(ruleset, perm):
        g = api.new_game(ruleset, players, seed, opts)
        events = list(api.advance(g))
    policy = RandomPolicy(seed)
    answers: list[api.Answer] = []
    cuts = [len(events)]
    while len(answers) < limit and not g.over:
        d = api.pending(g)
        if d is None:
            break
        if picks is not None:
            if len(answers) >= len(picks):
                break
            a = api.Answer(decision=d.id, seat=d.seat, picks=list(picks[len(answers)]))
        else:
            a = policy.act(d)
        try:
            events += api.submit(g, a)
        except api.IllegalAnswer:
            break
        answers.append(a)
        cuts.append(len(events))
    return Played(g, events, answers, cuts)


def _swap_dealt(g: api.Game, x: int, y: int, since: int) -> None:
    """Give seats x and y each other's starting hand, and the deal's events (each seat's, seen
    by it alone) after `since` in g.out the cards they now hold."""
    hx, hy = g.players[x].hand, g.players[y].hand
    g.players[x].hand, g.players[y].hand = hy, hx
    new = {x: hy, y: hx}
    for i, e in enumerate(g.out[since:], since):
        if isinstance(e, ev.CardsMoved) and e.reason == "deal" and e.dst_seat in new:
            g.out[i] = msgspec.structs.replace(e, cards=list(new[e.dst_seat]))


@contextlib.contextmanager
def hands_swapped(ruleset: str, x: int, y: int) -> Iterator[None]:
    """While active, the starting deal gives seat x the cards seat y would get and the other
    way round (same cards drawn, same events in the same order, only those two hands moved).
    The deal is the ruleset's `deal`; 承天之弈 deals after the camps are ordered (answers
    later), from the top of the deck its setup shuffled: seat 0 the last four cards, seat 1
    the four before them, so swapping those two runs there swaps the hands to come."""
    cls = type(RULESETS[ruleset])
    if ruleset == "chengtian":
        assert {x, y} == {0, 1}
        setup = cls.setup

        def shuffled(self: Any, g: api.Game) -> None:
            setup(self, g)
            d = g.draw
            d[-8:-4], d[-4:] = d[-4:], d[-8:-4]

        cls.setup = shuffled  # type: ignore[method-assign]
        try:
            yield
        finally:
            cls.setup = setup  # type: ignore[method-assign]
        return
    original = cls.deal
    own = "deal" in cls.__dict__

    def deal(self: Any, g: api.Game, per_seat: int = 4) -> None:
        since = len(g.out)
        original(self, g, per_seat)
        _swap_dealt(g, x, y, since)

    cls.deal = deal  # type: ignore[method-assign]
    try:
        yield
    finally:
        if own:
            cls.deal = original  # type: ignore[method-assign]
        else:
            del cls.deal
