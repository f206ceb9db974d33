"""Fit the role belief's likelihoods from self-play: how often an act of a seat of one class lands
on a seat of another, per opportunity, by round.

Every act the belief reads (:class:`.memory.Memory` turns events into hostile and friendly acts,
one seat's acts on one target in one turn counted once, as the belief counts them) is counted over
all-heuristic games with the true classes: for an act by a seat of class ``a`` on
a seat of class ``b`` in bucket ``k`` (the round's, or the one for acts once no rebel lives), ``count[k][a, b] += strength``; and every seat alive
then (but the actor) was a possible target, ``exposure[k][a, class] += strength``. The likelihood
is the rate ``count / exposure`` — P(this particular seat of class ``b`` is the target | an act by
class ``a``) — smoothed towards the act kind's overall rate, so a pair rarely seen stays near the
average. The belief uses the logs (:mod:`.likelihoods`).

    arena fit likelihoods --games 200 > services/bots/likelihoods.py

fits over standard 5 and 8, jinyu 8 谋攻 and extended 8 (seeds from 10,000, apart from the
measurement seeds).
"""

from __future__ import annotations

import argparse
import sys
from collections import defaultdict
from typing import Any

from ..rules import api
from ..rules.api import events as ev
from .likelihoods import bucket
from .memory import Memory
from .roles import POOLED, table_key
from .selfplay import Table, role_classes

FIT_TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 5, {}),
    ("standard", 8, {}),
    ("jinyu", 8, {"mougong": True}),
    ("extended", 8, {}),
]
# tables that read their own fitted rates; the others read the pooled ones. jinyu 谋攻's own
# fit (300 games) measured worse than the pooled one: heuristic-to-oracle gap of its lord's side
# -22.4 points against -12.6 (1,000 games by camp), its rebels -15.4 against -7.4
OWN_RATES = ("standard/5", "standard/8", "extended/8")
SMOOTH = 4.0  # pseudo-exposure pulling a rate towards its kind's mean
FLOOR = 0.01

Key = tuple[str, int, str, str, str]  # table, bucket, kind, actor class, target class


class Recorder(Memory):
    """A memory fed every event unredacted, recording each act with the true classes."""

    def __init__(self, roles: list[str], cls: dict[str, str], table: str = POOLED) -> None:
        super().__init__(-1, roles)
        self.table = table
        self.classes = [cls.get(r, "renegade") for r in roles]
        self.alive = set(range(len(roles)))
        self.count: dict[Key, float] = defaultdict(float)
        self.exposure: dict[Key, float] = defaultdict(float)

    def observe(self, e: ev.Event) -> None:
        """Fold one event; track who lives."""
        if isinstance(e, ev.Died):
            self.alive.discard(e.seat)
        super().observe(e)

    def _act(self, actor: int, target: int, hostile: bool, strength: float = 1.0) -> None:
        n = len(self.classes)
        if actor == target or not (0 <= actor < n and 0 <= target < n):
            return
        rebels = any(self.classes[s] == "rebel" for s in self.alive)  # the truth, not the guess
        kind, a = ("hostile" if hostile else "friendly"), self.classes[actor]
        k = bucket(self.round, rebels)
        self.count[(self.table, k, kind, a, self.classes[target])] += strength
        for s in self.alive:
            if s != actor:
                self.exposure[(self.table, k, kind, a, self.classes[s])] += strength


def collect(games: int, seed: int = 10_000) -> tuple[dict[Key, float], dict[Key, float]]:
    """Counts and exposures over ``games`` all-heuristic games of every fit table."""
    count: dict[Key, float] = defaultdict(float)
    exposure: dict[Key, float] = defaultdict(float)
    for ruleset, players, options in FIT_TABLES:
        opts = api.table_options(ruleset, players, options)
        cls = role_classes(ruleset, players, opts)
        table = table_key(ruleset, players, opts)
        for i in range(games):
            g = api.new_game(ruleset, players, seed + i, opts)
            t = Table(g, ["heuristic"] * players, seed + i)
            rec = Recorder([p.role for p in g.players], cls, table)
            events = api.advance(g)
            while True:
                t.feed(events)
                for e in events:
                    rec.observe(e)
                if g.over:
                    break
                d = g.pending
                assert d is not None
                events = api.submit(g, t.act(d))
            for key, v in rec.count.items():
                count[key] += v
                count[(POOLED, *key[1:])] += v
            for key, v in rec.exposure.items():
                exposure[key] += v
                exposure[(POOLED, *key[1:])] += v
    return count, exposure


def rates(count: dict[Key, float], exposure: dict[Key, float]) -> dict[Key, float]:
    """Smoothed rates per (table, bucket, kind, actor class, target class)."""
    mean: dict[tuple[str, int, str], float] = {}
    for key in exposure:
        if key[:3] not in mean:
            c = sum(v for k, v in count.items() if k[:3] == key[:3])
            x = sum(v for k, v in exposure.items() if k[:3] == key[:3])
            mean[key[:3]] = c / x if x else 0.1
    out: dict[Key, float] = {}
    for key, x in exposure.items():
        m = mean[key[:3]]
        out[key] = max((count.get(key, 0.0) + SMOOTH * m) / (x + SMOOTH), FLOOR)
    return out


def render(r: dict[Key, float], games: int) -> str:
    """The likelihoods module's text."""
    tables = ", ".join(f"{rs} {n}{' 谋攻' if o else ''}" for rs, n, o in FIT_TABLES)
    lines = [
        '"""The role belief\'s likelihoods, fitted from self-play by services/bots/fit.py',
        f"(`arena fit likelihoods --games {games} > services/bots/likelihoods.py`: {games}",
        f"all-heuristic games of each of {tables}).",
        "",
        "RATES[(table, bucket, kind, actor class, target class)] is P(a given seat of the target",
        "class is the one an act of that kind by the actor class lands on) in that bucket, at that",
        f'table (roles.table_key; "{POOLED}": over every fit table, for the tables not fitted).',
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "ROUND_BUCKETS = (1, 3, 6)  # round 1, rounds 2-3, rounds 4-6, later",
        "NO_REBELS = 4  # the bucket of every act once no rebel is left alive",
        "",
        "",
        "def bucket(rnd: int, rebels_left: bool = True) -> int:",
        '    """The bucket of an act in round ``rnd`` (every round alike once no rebel is left)."""',
        "    if not rebels_left:",
        "        return NO_REBELS",
        "    return sum(1 for b in ROUND_BUCKETS if rnd > b)",
        "",
        "",
        "RATES: dict[tuple[str, int, str, str, str], float] = {",
    ]
    for key in sorted(r):
        t, k, kind, a, b = key
        if t != POOLED and t not in OWN_RATES:
            continue
        lines.append(f'    ("{t}", {k}, "{kind}", "{a}", "{b}"): {r[key]:.4f},')
    lines.append("}")
    return "\n".join(lines) + "\n"


def _games(text: str) -> int:
    n = int(text)
    if n < 1:
        raise argparse.ArgumentTypeError(f"{text}: at least one game per table")
    return n


def fit_options(p: argparse.ArgumentParser, games: int, seed: int) -> None:
    """The options of every `arena fit` command: how many games per fit table, from which
    seed (each fitter's own seeds, apart from the measurement seeds)."""
    p.add_argument("--games", type=_games, default=games, help="all-heuristic games per fit table")
    p.add_argument(
        "--seed", type=int, default=seed, help="game i of a table is dealt seed SEED + i"
    )


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena fit likelihoods`'s options."""
    fit_options(p, games=200, seed=10_000)


def main(a: argparse.Namespace) -> int:
    """`arena fit likelihoods`: fit and print the likelihoods module."""
    count, exposure = collect(a.games, a.seed)
    sys.stdout.write(render(rates(count, exposure), a.games))
    return 0
