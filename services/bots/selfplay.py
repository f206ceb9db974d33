"""In-process self-play: seeded games with a policy per seat, each fed only its seat's view.

Every policy gets its own :class:`View`, maintained incrementally: each new event is redacted for
the seat and folded (``apply(view, redact(event, seat))``) and also handed to the policy's
``observe``. Policies rotate over seats (game ``i`` gives seat ``s`` policy ``(s + i) mod k``), so
with the dealt roles every policy meets every seat and role under fixed seeds.
"""

from __future__ import annotations

import argparse
import json
import math
import sys
import time
from typing import Any, Protocol

from ..cliargs import game_options
from ..rules import api
from ..rules.api import RULESETS, Answer, Decision, Event, Game, View, new_view, redact
from ..rules.api import events as ev
from ..rules.api import fold_view as apply
from .heuristic import HeuristicPolicy
from .oracle import LordSightPolicy, OraclePolicy
from .random_policy import EasyPolicy, RandomPolicy
from .roles import classes_of
from .search import SearchPolicy
from .summary import GameRecord, summarise

POLICIES = ("random", "heuristic", "oracle", "lordsight", "easy", "hard")
ACCURACY_ROUNDS = (1, 2, 3, 5, 8, 10)


class Policy(Protocol):
    """Anything that answers a decision from its seat's view and observed events."""

    name: str

    def observe(self, e: Event) -> None: ...

    def act(self, d: Decision, view: View | None = None) -> Answer: ...


def make_policy(
    name: str, seed: int, seat: int = -1, true_roles: list[str] | None = None, strict: bool = False
) -> Policy:
    """A policy by name; only ``oracle`` and ``lordsight`` are given ``true_roles``."""
    if name == "random":
        return RandomPolicy(seed)
    if name == "heuristic":
        return HeuristicPolicy(seed, seat, strict=strict)
    if name == "oracle":
        return OraclePolicy(seed, seat, list(true_roles or []), strict=strict)
    if name == "lordsight":
        return LordSightPolicy(seed, seat, list(true_roles or []), strict=strict)
    if name == "easy":
        return EasyPolicy(seed, seat, strict=strict)
    if name == "hard":
        return SearchPolicy(seed, seat, strict=strict)
    raise ValueError(f"unknown policy {name!r} (known: {', '.join(POLICIES)})")


CAMPS = {"lord": 0, "loyalist": 0, "rebel": 1, "renegade": 2, "third": 2}


def rotation(names: list[str], players: int, game: int) -> list[str]:
    """Policy names by seat for game number ``game``."""
    return [names[(s + game) % len(names)] for s in range(players)]


def camp_rotation(
    names: list[str], roles: list[str], game: int, cls: dict[str, str] | None = None
) -> list[str]:
    """Policy names by seat when whole camps share a policy: the lord's side, the rebels and the
    renegades (with any third camp) each take a digit of ``game`` in base k, so k**3 consecutive
    games cover every pairing of camps and policies. ``cls``: role -> class
    (:func:`.roles.classes_of`; standard roles are their own class)."""
    k = len(names)
    c = cls or {}
    return [names[(game // k ** CAMPS.get(c.get(r, r), 0)) % k] for r in roles]


def role_classes(ruleset: str, players: int, options: dict[str, Any] | None) -> dict[str, str]:
    """Role -> class for a table of ``ruleset``."""
    rs = RULESETS[ruleset]
    return classes_of(set(rs.roles(players, dict(options or {}))) | set(rs.camps), rs.camps)


class Table:
    """The seats of one game: a policy and a view each, fed every new event redacted."""

    def __init__(self, g: Game, names: list[str], seed: int, strict: bool = False) -> None:
        roles = [p.role for p in g.players]
        self.views = [new_view(s) for s in range(len(g.players))]
        self.policies = [
            make_policy(n, seed * 1000 + s, s, roles, strict) for s, n in enumerate(names)
        ]
        for p in self.policies:
            if isinstance(p, SearchPolicy):
                p.attach(lambda: g)  # look-ahead determinizes from it with its own view only
        self.names = names
        self.roles = roles
        self.times: dict[str, list[float]] = {}
        # round, P(true role), its prior, Brier, log-loss, prior Brier, prior log-loss
        self.accuracy: list[tuple[int, float, float, float, float, float, float]] = []
        self.cls = role_classes(g.ruleset, len(g.players), g.options)

    def feed(self, events: list[Event]) -> None:
        """Fold ``events`` into every seat's view and memory."""
        for e in events:
            for s, (v, p) in enumerate(zip(self.views, self.policies, strict=True)):
                re = redact(e, s)
                apply(v, re)
                p.observe(re)
            if isinstance(e, ev.TurnStarted) and e.round in ACCURACY_ROUNDS and e.seat == 0:
                self._guess(e.round)

    def act(self, d: Decision) -> Answer:
        """Ask the deciding seat's policy, timing it in CPU time of this thread (wall time on a
        shared machine mostly measures the scheduler)."""
        p = self.policies[d.seat]
        t0 = time.thread_time()
        a = p.act(d, self.views[d.seat])
        self.times.setdefault(p.name, []).append((time.thread_time() - t0) * 1000)
        return a

    def _guess(self, rnd: int) -> None:
        """Role-guess accuracy of the heuristic seats: P(true role) of each still-hidden seat."""
        for s, p in enumerate(self.policies):
            if not isinstance(p, HeuristicPolicy) or isinstance(p, OraclePolicy):
                continue
            b = p.mem.belief
            if b is None or not self.views[s].seats[s].alive:
                continue
            hidden = [t for t in b.hidden if t not in b.known]
            if not hidden:
                continue
            pool = [self.roles[t] for t in hidden]
            got = sum(b.prob(t, self.roles[t]) for t in hidden) / len(hidden)
            prior = sum(pool.count(self.roles[t]) / len(pool) for t in hidden) / len(hidden)
            marg = b.marginals()
            true = [self.cls.get(self.roles[t], "renegade") for t in hidden]
            flat = {c: true.count(c) / len(true) for c in set(true)}
            score = [calibration(marg[t], c) for t, c in zip(hidden, true, strict=True)]
            prior_scores = [calibration(flat, c) for c in true]
            self.accuracy.append(
                (
                    rnd,
                    got,
                    prior,
                    sum(x[0] for x in score) / len(score),
                    sum(x[1] for x in score) / len(score),
                    sum(x[0] for x in prior_scores) / len(prior_scores),
                    sum(x[1] for x in prior_scores) / len(prior_scores),
                )
            )


def calibration(p: dict[str, float], true: str) -> tuple[float, float]:
    """Brier score (sum over classes of the squared error) and log-loss of one class guess."""
    brier = sum((q - (c == true)) ** 2 for c, q in p.items()) + (0.0 if true in p else 1.0)
    return brier, -math.log(max(p.get(true, 0.0), 1e-6))


MAX_DECISIONS = 200_000


class Runaway(RuntimeError):
    """A game that did not end within the decisions allowed (``seed``, ``decisions``)."""

    def __init__(self, seed: int, decisions: int) -> None:
        super().__init__(f"game {seed} did not end within {decisions} decisions")
        self.seed, self.decisions = seed, decisions


class Watch(Protocol):
    """What sees every answer of a game `play_game` plays (the blunder audit, audit.py)."""

    def before(self, g: Game, d: Decision, a: Answer, t: Table) -> None:
        """``a`` answers ``d``, not yet submitted."""

    def after(self, g: Game, events: list[Event]) -> None:
        """``events``: what the answer produced, before the seats are fed them."""


def play_game(
    ruleset: str,
    players: int,
    seed: int,
    policies: list[str] | None = None,
    options: dict[str, Any] | None = None,
    max_decisions: int = MAX_DECISIONS,
    strict: bool = False,
    table_out: list[Table] | None = None,
    camp_game: int = -1,
    watch: Watch | None = None,
) -> tuple[Game, dict[str, int]]:
    """Play one game to its end (``policies`` by seat, cycled; or by camp for game number
    ``camp_game`` ≥ 0), every answer shown to ``watch``; returns the final state and counts."""
    g = api.new_game(ruleset, players, seed, options)
    names = policies or ["random"]
    by_seat = (
        [names[i % len(names)] for i in range(players)]
        if camp_game < 0
        else camp_rotation(
            names, [p.role for p in g.players], camp_game, role_classes(ruleset, players, options)
        )
    )
    t = Table(g, by_seat, seed, strict)
    if table_out is not None:
        table_out.append(t)
    first = api.advance(g)
    t.feed(first)
    events, decisions = len(first), 0
    while not g.over:
        d = g.pending
        assert d is not None, "engine stopped without a decision or an end"
        a = t.act(d)
        if watch is not None:
            watch.before(g, d, a, t)
        new = api.submit(g, a)
        if watch is not None:
            watch.after(g, new)
        t.feed(new)
        events += len(new)
        decisions += 1
        if decisions >= max_decisions:
            raise Runaway(seed, max_decisions)
    return g, {"decisions": decisions, "events": events, "turns": g.round}


def selfplay(
    ruleset: str,
    players: int,
    games: int,
    seed: int,
    policies: list[str] | None = None,
    options: dict[str, Any] | None = None,
    assign: str = "seat",
    max_decisions: int = MAX_DECISIONS,
) -> dict[str, Any]:
    """Play ``games`` seeded games and return the JSON summary. ``assign`` ``seat`` rotates the
    policies over seats; ``camp`` gives each camp (lord's side, rebels, renegades) one policy and
    rotates those, so per-role rates compare whole teams. A game that does not end within
    ``max_decisions`` is left out of the summary and listed under ``unfinished`` (its seed);
    the other games' results stand."""
    if assign not in ("seat", "camp"):
        raise ValueError(f"unknown assignment {assign!r} (seat or camp)")
    names = policies or ["random"]
    for n in names:
        make_policy(n, 0)  # unknown names fail before any game is played
    records: list[GameRecord] = []
    times: dict[str, list[float]] = {}
    accuracy: list[tuple[int, float, float, float, float, float, float]] = []
    decisions = events = turns = 0
    unfinished: list[int] = []
    t0 = time.perf_counter()
    for i in range(games):
        tables: list[Table] = []
        try:
            if assign == "camp":
                g, c = play_game(
                    ruleset,
                    players,
                    seed + i,
                    names,
                    options,
                    max_decisions,
                    table_out=tables,
                    camp_game=i,
                )
            else:
                by_seat = rotation(names, players, i)
                g, c = play_game(
                    ruleset, players, seed + i, by_seat, options, max_decisions, table_out=tables
                )
        except Runaway as exc:
            unfinished.append(exc.seed)
            decisions += exc.decisions
            continue
        tab = tables[0]
        camps = RULESETS[ruleset].camps
        records.append(
            GameRecord(
                seats=tab.names,
                roles=tab.roles,
                winners=list(g.winners),
                draw=g.draw_game,
                camps=[camps.get(r) or r or f"seat{s}" for s, r in enumerate(tab.roles)],
            )
        )
        for k, v in tab.times.items():
            times.setdefault(k, []).extend(v)
        accuracy.extend(tab.accuracy)
        decisions += c["decisions"]
        events += c["events"]
        turns += c["turns"]
    secs = time.perf_counter() - t0
    out = {
        "ruleset": ruleset,
        "players": players,
        "games": games,
        "seed": seed,
        "policies": names,
        "assign": assign,
        "mean_rounds": turns / max(games, 1),
        "decisions": decisions,
        "events": events,
        "seconds": round(secs, 3),
        # seeds of games that did not end within max_decisions (left out of what follows)
        "unfinished": unfinished,
        "max_decisions": max_decisions,
    }
    out.update(summarise(records, times, accuracy, assign))
    return out


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena selfplay` options."""
    game_options(p, players=8, games=100)
    p.add_argument(
        "--policies",
        default="random",
        help=f"comma-separated, rotated over seats: {', '.join(POLICIES)}",
    )
    p.add_argument(
        "--assign",
        default="seat",
        choices=["seat", "camp"],
        help="rotate the policies over seats (game i: seat s plays policy (s+i) mod k)"
        " or over whole camps (lord's side, rebels, renegades)",
    )
    p.add_argument("--json", action="store_true", help="one line of JSON (default: indented)")
    p.add_argument(
        "--audit",
        action="store_true",
        help="count the policies' blunders over the same seeded games instead (bots/audit.py: "
        "with the true roles, e.g. a teammate killed, a 桃 held while the lord died)",
    )
    p.add_argument(
        "--max-decisions",
        type=int,
        default=MAX_DECISIONS,
        help="a game still going after this many decisions is reported and left out of the "
        "summary (the other games' results stand)",
    )


def main(args: argparse.Namespace) -> int:
    """`arena selfplay`: play the games, print the summary (or, with --audit, the blunder
    counts) as JSON."""
    games = (args.ruleset, args.players, args.games, args.seed, args.policies.split(","))
    try:
        if args.audit:
            from .audit import audit_games

            au = audit_games(*games, args.options, args.assign)
            print(json.dumps(dict(au.counts), ensure_ascii=False, indent=None if args.json else 2))
            return 0
        out = selfplay(*games, args.options, args.assign, args.max_decisions)
    except ValueError as err:  # an unknown ruleset, option or policy (UnknownOption included)
        print(f"arena selfplay: {err}", file=sys.stderr)
        return 2
    for seed in out["unfinished"]:
        print(
            f"arena selfplay: game {seed} did not end within {args.max_decisions} decisions "
            f"(repeat it: --games 1 --seed {seed}); left out of the summary",
            file=sys.stderr,
        )
    print(json.dumps(out, ensure_ascii=False, indent=None if args.json else 2))
    return 0
