"""Engine benchmark and profile: random play on every seat, in-process, one core.

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
import statistics
import sys
import time
from typing import Any

from ..cliargs import bench_options, game_options
from ..rules import api
from ..rules.api import Game, UnknownOption
from .random_policy import RandomPolicy

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


def _peak_rss_mb() -> float:
    """The process's peak resident set size in MiB (ru_maxrss is KiB on Linux, bytes on macOS)."""
    peak = resource.getrusage(resource.RUSAGE_SELF).ru_maxrss
    return peak / (1024 * 1024) if sys.platform == "darwin" else peak / 1024


def fork_us(states: list[Game], repeat: int = 5) -> float:
    """The median time of ``api.fork`` over ``states`` in microseconds."""
    times = []
    for g in states:
        for _ in range(repeat):
            t0 = time.perf_counter()
            api.fork(g)
            times.append(time.perf_counter() - t0)
    return statistics.median(times) * 1e6 if times else 0.0


def bench_engine(
    ruleset: str, players: int, games: int, seed: int = 1, options: dict[str, Any] | None = None
) -> dict[str, Any]:
    """Play ``games`` random games and report throughput, fork latency and peak memory."""
    decisions = events = 0
    t0 = time.perf_counter()
    for i in range(games):
        d, e = _play(ruleset, players, seed + i, options)
        decisions += d
        events += e
    secs = time.perf_counter() - t0
    mid: list[Game] = []
    for i in range(min(games, 10)):  # fork timing on mid-game states, outside the timed loop
        _play(ruleset, players, seed + i, options, keep=mid)
    per = max(secs, 1e-9)
    return {
        "games": games,
        "decisions": decisions,
        "events": events,
        "seconds": round(secs, 3),
        "games_per_s": round(games / per, 2),
        "decisions_per_s": round(decisions / per, 1),
        "events_per_s": round(events / per, 1),
        "fork_us": round(fork_us(mid), 1),
        "peak_rss_mb": round(_peak_rss_mb(), 1),
    }


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
            print(
                json.dumps(
                    bench_engine(args.ruleset, args.players, args.games, args.seed, args.options)
                )
            )
    except UnknownOption as err:
        print(f"arena bench engine: {err}", file=sys.stderr)
        return 2
    return 0
