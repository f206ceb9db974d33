"""The options of `arena bench e2e` and what it runs (apart from `arena up`'s module, so that
`arena up` does not import the benchmark)."""

from __future__ import annotations

import argparse

from ..cliargs import bench_options, game_options, int_list, names
from . import kit
from .e2e import bench_e2e


def bench_e2e_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench e2e` options."""
    p.description = (
        "The same seeded games in-process and through the platform (engine and bot workers "
        "as processes, real Redis, real gRPC) with 1 and 2 engine workers; JSON out. The "
        "defaults finish in about a minute; the figures of docs/benchmarks.md took "
        "--policy random,heuristic --games 200 --repeat 2 (or 3): 10 minutes or more."
    )
    game_options(p, players=5, games=100, options=False)
    p.add_argument(
        "--policy",
        type=names("random", "heuristic", "hard"),
        default="random",
        help="bot policies to measure, comma-separated",
    )
    p.add_argument(
        "--engines", type=int_list, default="1,2", help="engine worker counts to measure"
    )
    p.add_argument("--bots", type=int, default=1, help="bot workers")
    p.add_argument(
        "--repeat", type=int, default=1, help="rounds (in-process, then each engine count)"
    )
    p.add_argument(
        "--redis-cluster",
        type=int,
        default=0,
        metavar="N",
        help="run the platform on a local Redis Cluster of N masters (CPU per node reported)",
    )
    bench_options(p)


def bench_e2e_command(a: argparse.Namespace) -> int:
    """`arena bench e2e`: print the JSON report."""

    def run() -> object:
        out = [
            bench_e2e(
                a.ruleset,
                a.players,
                a.games,
                a.seed,
                pol,
                a.engines,
                a.bots,
                a.redis_url,
                a.repeat,
                a.redis_cluster,
            )
            for pol in a.policy
        ]
        return out[0] if len(out) == 1 else {"results": out}

    bad = a.games < 1 or a.repeat < 1
    return kit.report("e2e", run, "--games and --repeat must be at least 1" if bad else "")
