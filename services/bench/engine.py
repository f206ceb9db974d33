"""Engine benchmark and profile: random play on every seat, in-process, one core, beside a peer.

The peer is RLCard's pure-Python Uno with random agents, run in the same process, interleaved
round by round with our games (see services/bench/kit.py); the ratios are per round.

``bench_engine`` is what ``arena bench engine`` prints; ``profile_engine`` runs the same games
under cProfile and returns the top functions as text (profile before optimising). It lives
beside the policies it plays with: the rules package imports no service.
"""

from __future__ import annotations

import argparse
import cProfile
import io
import json
import pstats
import resource
import sys
import time
from collections.abc import Callable
from typing import Any

from ..bots.random_policy import RandomPolicy
from ..cliargs import bench_options, game_options
from ..rules import api
from ..rules.api import Game, UnknownOption
from . import kit

FORK_SAMPLES_PER_GAME = 3


def _play(
    ruleset: str,
    players: int,
    seed: int,
    options: dict[str, Any] | None,
    keep: list[Game] | None = None,
) -> tuple[int, int]:
    """Play one game with the random policy on every seat; returns (decisions, events).

    With ``keep``, forks of a few mid-game states are appended to it (for timing ``fork``).
    """
    g = api.new_game(ruleset, players, seed, options)
    policies = [RandomPolicy(seed * 1000 + i) for i in range(players)]
    events = len(api.advance(g))
    decisions = 0
    marks = {40, 120, 240} if keep is not None else set()
    submit = api.submit
    while not g.over:
        d = g.pending
        if d is None:
            raise RuntimeError(f"game {seed}: the engine stopped without a decision or an end")
        if decisions in marks and keep is not None:
            keep.append(api.fork(g))
        events += len(submit(g, policies[d.seat].act(d)))
        decisions += 1
    return decisions, events


def random_games(
    ruleset: str, players: int, games: int, seed: int, options: dict[str, Any] | None = None
) -> int:
    """Games ``seed`` .. ``seed + games - 1`` with the random policy on every seat, the rules
    and the policy in one loop (the in-process peer of the service and platform benches too);
    the decisions taken."""
    return sum(_play(ruleset, players, seed + i, options)[0] for i in range(games))


def _peak_rss_mb() -> float:
    """The process's peak resident set size in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def fork_us(states: list[Game], repeat: int = 5) -> dict[str, float]:
    """``api.fork`` over ``states``, in microseconds: the median, min and max of every call."""
    times = []
    for g in states:
        for _ in range(repeat):
            t0 = time.perf_counter()
            api.fork(g)
            times.append((time.perf_counter() - t0) * 1e6)
    return kit.spread(times, 1)


def mid_game_states(
    ruleset: str, players: int, seed: int, games: int, options: dict[str, Any] | None = None
) -> list[Game]:
    """Forks of states at the 40th, 120th and 240th decision of ``games`` random games."""
    mid: list[Game] = []
    for i in range(games):
        _play(ruleset, players, seed + i, options, keep=mid)
    return mid


PEER = "RLCard Uno, random agents (env.reset/env.step/agent.step), one process"
PEER_MISSING = "RLCard is not installed: pip install rlcard (or pip install -e '.[bench]')"
ALL_RULESETS = [
    ("standard", 8),
    ("standard", 5),
    ("honglou", 8),
    ("jinyu", 8),
    ("extended", 8),
    ("extended", 12),
    ("chengtian", 2),
]
"""What ``--all-rulesets`` measures: every ruleset at a usual table size."""


def rlcard_uno() -> Callable[[int, int], int] | None:
    """The peer: plays RLCard Uno games with random agents until at least ``decisions`` steps;
    returns the steps taken. None if RLCard is not installed."""
    try:
        import numpy as np
        import rlcard
        from rlcard.agents import RandomAgent
    except ImportError:
        return None

    def play(decisions: int, seed: int) -> int:
        np.random.seed(seed)  # RandomAgent draws from numpy's global generator
        env = rlcard.make("uno", config={"seed": seed})
        agents = [RandomAgent(num_actions=env.num_actions) for _ in range(env.num_players)]
        steps = 0
        while steps < decisions:
            state, seat = env.reset()
            while not env.is_over():
                state, seat = env.step(agents[seat].step(state))
                steps += 1
        return steps

    return play


def bench_one(
    ruleset: str,
    players: int,
    games: int,
    seed: int = 1,
    options: dict[str, Any] | None = None,
    repeat: int = 3,
    peer: Callable[[int, int], int] | None = None,
) -> dict[str, Any]:
    """``games`` random games of one ruleset, against the peer's games of as many decisions,
    interleaved ``repeat`` times (arena, peer, arena, peer, ...)."""
    target = [0]

    def arena() -> int:
        decisions = random_games(ruleset, players, games, seed, options)
        target[0] = target[0] or decisions
        return decisions

    variants: list[tuple[str, Callable[[], int]]] = [("arena", arena)]
    if peer is not None:
        variants.append(("peer", lambda: peer(target[0], seed)))
    runs = kit.interleave(variants, repeat)
    out: dict[str, Any] = {
        "ruleset": ruleset,
        "players": players,
        "games": games,
        "arena": kit.summary(runs["arena"], "decisions"),
    }
    if peer is not None:
        out["peer"] = kit.summary(runs["peer"], "decisions")
        out["ratio_vs_peer"] = kit.ratio(runs["arena"], runs["peer"])
    return out


def bench_engine(
    ruleset: str,
    players: int,
    games: int,
    seed: int = 1,
    options: dict[str, Any] | None = None,
    repeat: int = 3,
    all_rulesets: bool = False,
    with_peer: bool = True,
) -> dict[str, Any]:
    """Random games' decisions/s beside the peer's (interleaved), fork time, snapshot size."""
    env = kit.Envelope("engine")
    peer = rlcard_uno() if with_peer else None
    tables = ALL_RULESETS if all_rulesets else [(ruleset, players)]
    runs = [
        bench_one(r, n, games, seed, None if all_rulesets else options, repeat, peer)
        for r, n in tables
    ]
    mid = mid_game_states(tables[0][0], tables[0][1], seed, min(games, 10), options)
    sizes = [len(api.snapshot(g)) for g in mid]
    return env.wrap(
        {
            "peer": PEER if peer else ("not measured" if not with_peer else PEER_MISSING),
            "runs": runs,
            "fork": {"ruleset": tables[0][0], "players": tables[0][1], "states": len(mid)}
            | {"us": fork_us(mid), "snapshot_bytes": kit.spread(sizes, 0)},
            "peak_rss_mb": round(_peak_rss_mb(), 1),
        }
    )


def profile_engine(
    ruleset: str,
    players: int,
    games: int,
    seed: int = 1,
    top: int = 30,
    options: dict[str, Any] | None = None,
) -> str:
    """Run the games under cProfile; the top functions by cumulative and by own time."""
    prof = cProfile.Profile()
    prof.enable()
    for i in range(games):
        _play(ruleset, players, seed + i, options)
    prof.disable()
    out = io.StringIO()
    stats = pstats.Stats(prof, stream=out)
    stats.strip_dirs()
    out.write(f"== {games} games, {players} players, by cumulative time ==\n")
    stats.sort_stats(pstats.SortKey.CUMULATIVE).print_stats(top)
    out.write("== by own time (tottime) ==\n")
    stats.sort_stats(pstats.SortKey.TIME).print_stats(top)
    return out.getvalue()


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench engine` options."""
    bench_options(p, redis=False)
    game_options(p, players=8, games=200)
    p.add_argument("--repeat", type=int, default=3, help="interleaved rounds (arena, peer, ...)")
    p.add_argument(
        "--all-rulesets",
        action="store_true",
        help="measure every ruleset at a usual size ("
        + ", ".join(f"{r} {n}" for r, n in ALL_RULESETS)
        + ") instead of --ruleset/--players",
    )
    p.add_argument("--no-peer", action="store_true", help="do not run the peer (RLCard Uno)")
    p.add_argument(
        "--profile",
        type=int,
        default=0,
        metavar="N",
        help="instead: run N games under cProfile and print the top functions (text)",
    )


def main(args: argparse.Namespace) -> int:
    """`arena bench engine`: print the JSON report (or the profile)."""
    try:
        if args.profile:
            print(
                profile_engine(
                    args.ruleset, args.players, args.profile, args.seed, 30, args.options
                )
            )
        else:
            if args.repeat < 1 or args.games < 1:
                print(
                    "arena bench engine: --games and --repeat must be at least 1", file=sys.stderr
                )
                return 2
            if not args.no_peer and rlcard_uno() is None:
                print(f"arena bench engine: no peer measured: {PEER_MISSING}", file=sys.stderr)
            report = bench_engine(
                args.ruleset,
                args.players,
                args.games,
                args.seed,
                args.options,
                args.repeat,
                args.all_rulesets,
                not args.no_peer,
            )
            print(json.dumps(report))
    except UnknownOption as err:
        print(f"arena bench engine: {err}", file=sys.stderr)
        return 2
    return 0
