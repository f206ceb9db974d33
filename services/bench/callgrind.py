"""`arena bench callgrind`: instructions per decision, which do not depend on the machine's load.

    arena bench callgrind [--target rules,service] [--games 12] [--minus 2] --json

CPU time moves by a third with what else the shared cores run; the instructions the CPU runs do
not. This runs a target twice under `valgrind --tool=callgrind` (PYTHONHASHSEED=0), with
`--games` and with `--minus` games, and divides the difference of the instruction totals by the
difference of the decisions: start-up (imports, the first game's caches) drops out. Targets:

- `rules`: the rules and the random policy in one loop (`arena bench engine`'s peer);
- `service`: what `arena bench service --store memory` runs (the engine's `Games` under the
  BotSession servicer, its answers, appends, pushes, finishing and archiving), with the bench's
  bot answering, whose part is measured apart and taken off (`bot_instructions_per_decision`:
  its calls run in a thread of their own, whose instructions callgrind counts apart);
- `service-redis`: the same with `--store redis` (a throw-away redis-server outside valgrind, or
  --redis-url): the engine's Redis client too (commands, scripts' arguments, replies), which
  the CPU of `bench e2e` cannot resolve to a few percent. Less exact than `service`: how many
  appends share a script call follows Redis's reply times, so a run's count moves a little.

Each change to the engine's or the bot worker's hot path is decided by these counts (the
history: docs/benchmarks.md); CPU-time benches give the goals. `--out DIR` keeps the callgrind
files for `callgrind_annotate` (the C functions the instructions end in).
"""

from __future__ import annotations

import argparse
import asyncio
import contextlib
import json
import os
import shutil
import subprocess
import sys
import tempfile
from collections.abc import Callable
from concurrent.futures import ThreadPoolExecutor
from pathlib import Path
from typing import Any

from ..cliargs import bench_options, game_options
from ..redisinfra.server import redis_or_throwaway
from . import kit

TARGETS = ("rules", "service", "service-redis")


def _totals(path: Path) -> dict[int, int]:
    """The instruction totals of a callgrind run, by thread (1: the main thread; the files
    are PATH-01, PATH-02, ... with --separate-threads=yes)."""
    out: dict[int, int] = {}
    for f in path.parent.glob(path.name + "-*"):
        thread = int(f.name.rsplit("-", 1)[1])
        for line in f.read_text(errors="replace").splitlines():
            if line.startswith(("totals:", "summary:")):
                out[thread] = out.get(thread, 0) + int(line.split()[1])
                break
    if not out:
        raise RuntimeError(f"no instruction total in {path}-*")
    return out


def _run_target(
    target: str, args: argparse.Namespace, games: int, out: Path, url: str | None = None
) -> dict[str, Any]:
    """One run under callgrind: its instructions and what the target reports (`url`: the
    Redis of `service-redis`)."""
    report = out.with_suffix(".json")
    cmd = [
        "valgrind",
        "--tool=callgrind",
        f"--callgrind-out-file={out}",
        "--dump-instr=no",
        "--separate-threads=yes",
        sys.executable,
        "-m",
        "services.bench.callgrind",
        "--run",
        target,
        "--ruleset",
        args.ruleset,
        "--players",
        str(args.players),
        "--seed",
        str(args.seed),
        "--games",
        str(games),
        "--report",
        str(report),
        *(["--redis-url", url] if url else []),
    ]
    env = dict(os.environ, PYTHONHASHSEED="0")
    done = subprocess.run(cmd, env=env, capture_output=True, text=True, check=False)
    if done.returncode != 0:
        tail = (done.stderr or done.stdout).strip().splitlines()[-5:]
        raise RuntimeError(f"callgrind run of {target} failed: {' | '.join(tail)}")
    got: dict[str, Any] = json.loads(report.read_text())
    threads = _totals(out)
    got["instructions"] = sum(threads.values())
    if got.get("apart"):  # the part run in the second thread (the first one started)
        got["apart_instructions"] = threads.get(2, 0)
    return got


def _per_decision(big: dict[str, Any], small: dict[str, Any], key: str) -> float:
    units = int(big["decisions"]) - int(small["decisions"])
    if units <= 0:
        raise RuntimeError("the larger run took no more decisions than the smaller one")
    return round((int(big[key]) - int(small[key])) / units, 1)


def measure(args: argparse.Namespace) -> dict[str, Any]:
    """Every target asked for: instructions per decision (the difference of two runs)."""
    if shutil.which("valgrind") is None:
        raise RuntimeError("valgrind is not installed (apt-get install valgrind)")
    env = kit.Envelope("callgrind")
    results: dict[str, Any] = {}
    keep = Path(args.out) if args.out else None
    targets = args.target.split(",")
    with contextlib.ExitStack() as stack:
        tmp = stack.enter_context(tempfile.TemporaryDirectory(prefix="arena-callgrind-"))
        url = None
        if "service-redis" in targets:  # (the server outside valgrind: not counted)
            url = stack.enter_context(redis_or_throwaway(args.redis_url))
        where = keep or Path(tmp)
        where.mkdir(parents=True, exist_ok=True)
        for target in targets:
            runs = [
                _run_target(target, args, n, where / f"callgrind.{target}.{n}", url)
                for n in (args.minus, args.games)
            ]
            small, big = runs
            row: dict[str, Any] = {
                "games": [args.minus, args.games],
                "decisions": [small["decisions"], big["decisions"]],
                "instructions": [small["instructions"], big["instructions"]],
                "instructions_per_decision": _per_decision(big, small, "instructions"),
            }
            if big.get("apart"):  # the part that ran in a thread of its own
                apart = _per_decision(big, small, "apart_instructions")
                row[f"{big['apart']}_instructions_per_decision"] = apart
                row[f"{target}_instructions_per_decision"] = round(
                    row["instructions_per_decision"] - apart, 1
                )
            results[target] = row
    if "rules" in results and "service" in results:
        results["service_vs_rules"] = round(
            results["service"]["service_instructions_per_decision"]
            / results["rules"]["instructions_per_decision"],
            2,
        )
    return env.wrap(
        {
            "ruleset": args.ruleset,
            "players": args.players,
            "seed": args.seed,
            "pythonhashseed": 0,
            **results,
        }
    )


def _run(target: str, args: argparse.Namespace) -> dict[str, Any]:
    """The target itself (in the process callgrind runs)."""
    if target == "rules":
        from .engine import random_games

        return {"decisions": random_games(args.ruleset, args.players, args.games, args.seed)}
    if target in ("service", "service-redis"):
        from .service import _service_once, collector

        pool = ThreadPoolExecutor(1)  # the bench's bot: thread 2, counted apart
        pool.submit(int).result()

        def through(answers: Callable[[Any], Any], out: Any) -> Any:
            return pool.submit(answers, out).result()

        with collector("worker"), tempfile.TemporaryDirectory(prefix="arena-callgrind-") as tmp:
            decisions, _, _ = asyncio.run(
                _service_once(
                    args.ruleset,
                    args.players,
                    args.games,
                    args.seed,
                    "redis" if target == "service-redis" else "memory",
                    args.redis_url if target == "service-redis" else None,
                    Path(tmp),
                    through,
                )
            )
        return {"decisions": decisions, "apart": "bot"}
    raise ValueError(f"unknown target {target!r}")


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bench callgrind` options."""
    p.description = (
        "Instructions per decision under valgrind's callgrind (load-independent): the rules "
        "alone, the engine's service layer, the bot worker's part; JSON out."
    )
    game_options(p, players=5, games=12, options=False)
    p.add_argument(
        "--target", default="rules,service", help="comma-separated: " + ", ".join(TARGETS)
    )
    p.add_argument("--minus", type=int, default=2, help="games of the run subtracted")
    p.add_argument(
        "--out",
        default=None,
        help="keep the callgrind files in this folder (default: none kept, a temporary folder)",
    )
    bench_options(p)


def main(args: argparse.Namespace) -> int:
    """`arena bench callgrind`: print the JSON report."""
    bad = [t for t in args.target.split(",") if t not in TARGETS]
    refused = bad or not 0 <= args.minus < args.games
    said = f"targets are {', '.join(TARGETS)}, and 0 <= --minus < --games" if refused else ""
    return kit.report("callgrind", lambda: measure(args), said)


def run_under_callgrind(argv: list[str]) -> int:
    """The program valgrind runs (this module as a script, not an `arena` command): one target's
    games with the bench's options, its report written to --report."""
    p = argparse.ArgumentParser(prog="python3 -m services.bench.callgrind")
    add_arguments(p)
    p.add_argument("--run", required=True, choices=TARGETS, help="the target to run")
    p.add_argument("--report", required=True, help="write the target's JSON report here")
    args = p.parse_args(argv)
    Path(args.report).write_text(json.dumps(_run(args.run, args)))
    return 0


if __name__ == "__main__":
    sys.exit(run_under_callgrind(sys.argv[1:]))
