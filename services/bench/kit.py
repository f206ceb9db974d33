"""How every `arena bench` measures: CPU time beside wall time, interleaved repeats, the load.

A rate measured minutes apart from the rate it is compared with says as much about the machine's
other load as about the code (the platform once came out faster than in-process that way). So:

- :func:`interleave` runs the variants A, B, A, B, ... ``repeats`` times, and every ratio is
  taken within one round (A_i / B_i), then reported as its median with the min and max;
- every :class:`Sample` carries the CPU seconds it cost beside its wall seconds (this process,
  plus the children it waited for), so a report gives CPU per unit, which other load moves far
  less than wall rates;
- :func:`envelope` puts the machine and the load average before and after into the report.

No benchmark asserts a time: they print JSON, and tests check only its shape and its sense.
"""

from __future__ import annotations

import json
import os
import platform
import resource
import statistics
import sys
import time
from collections.abc import Callable, Sequence
from dataclasses import dataclass
from typing import Any


@dataclass(frozen=True)
class Sample:
    """One timed run: how many units it did (decisions, events, ...), in what wall and CPU time."""

    units: int
    wall_s: float
    cpu_s: float

    @property
    def rate(self) -> float:
        """Units per wall second."""
        return self.units / max(self.wall_s, 1e-9)

    @property
    def cpu_us_per_unit(self) -> float:
        """CPU microseconds per unit."""
        return self.cpu_s * 1e6 / max(self.units, 1)


def cpu_seconds() -> float:
    """CPU seconds (user + system) of this process and of the children it has waited for."""
    me = resource.getrusage(resource.RUSAGE_SELF)
    kids = resource.getrusage(resource.RUSAGE_CHILDREN)
    return me.ru_utime + me.ru_stime + kids.ru_utime + kids.ru_stime


async def redis_cpu_seconds(client: Any) -> float:
    """A Redis server's own CPU seconds (user + system, main thread), from INFO cpu: it works
    for a Redis the bench did not start, whose /proc it cannot read."""
    info = await client.info("cpu")
    return float(info["used_cpu_user"]) + float(info["used_cpu_sys"])


def timed(run: Callable[[], int]) -> Sample:
    """Run ``run`` (it returns how many units it did) and time it in wall and CPU seconds."""
    c0, t0 = cpu_seconds(), time.perf_counter()
    units = run()
    return Sample(units, time.perf_counter() - t0, cpu_seconds() - c0)


def interleave(
    variants: Sequence[tuple[str, Callable[[], int]]], repeats: int
) -> dict[str, list[Sample]]:
    """Each variant ``repeats`` times, in rounds: A, B, A, B, ... (never all of A, then B)."""
    out: dict[str, list[Sample]] = {name: [] for name, _ in variants}
    for _ in range(repeats):
        for name, run in variants:
            out[name].append(timed(run))
    return out


def spread(xs: Sequence[float], digits: int = 3) -> dict[str, float]:
    """The median, min and max of ``xs``."""
    if not xs:
        return {"median": 0.0, "min": 0.0, "max": 0.0}
    return {
        "median": round(statistics.median(xs), digits),
        "min": round(min(xs), digits),
        "max": round(max(xs), digits),
    }


def summary(samples: Sequence[Sample], unit: str) -> dict[str, Any]:
    """A variant's repeats: units per wall second and CPU microseconds per unit, with spreads."""
    return {
        "repeats": len(samples),
        f"{unit}_per_run": samples[0].units if samples else 0,
        f"{unit}_per_s": spread([s.rate for s in samples], 1),
        f"cpu_us_per_{unit.rstrip('s')}": spread([s.cpu_us_per_unit for s in samples], 2),
        "cpu_share": spread([s.cpu_s / max(s.wall_s, 1e-9) for s in samples]),
    }


def ratio(a: Sequence[Sample], b: Sequence[Sample]) -> dict[str, dict[str, float]]:
    """A against B, round by round: ``wall`` = rate A / rate B, ``cpu`` = CPU per unit of B /
    CPU per unit of A (so > 1 means A is faster by either measure)."""
    pairs = list(zip(a, b, strict=False))
    return {
        "wall": spread([x.rate / max(y.rate, 1e-12) for x, y in pairs]),
        "cpu": spread([y.cpu_us_per_unit / max(x.cpu_us_per_unit, 1e-12) for x, y in pairs]),
    }


def report(command: str, run: Callable[[], object], refused: str = "") -> int:
    """How an `arena bench COMMAND` ends: ``refused`` (what its options got wrong) or a
    RuntimeError of ``run`` is one line on stderr and exit 2; otherwise ``run``'s report is
    printed as JSON and it exits 0."""
    try:
        if refused:
            raise RuntimeError(refused)
        out = run()
    except RuntimeError as exc:
        print(f"arena bench {command}: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(out))
    return 0


def load_avg() -> list[float]:
    """The 1, 5 and 15 minute load averages."""
    return [round(x, 2) for x in os.getloadavg()]


def _cpu_model() -> str:
    try:
        with open("/proc/cpuinfo", encoding="utf-8") as f:
            for line in f:
                if line.startswith("model name"):
                    return line.split(":", 1)[1].strip()
    except OSError:
        pass
    return platform.processor() or "unknown"


def machine() -> dict[str, Any]:
    """What the figures were measured on."""
    return {
        "cpus": os.cpu_count(),
        "cpu_model": _cpu_model(),
        "python": platform.python_version(),
        "system": platform.platform(terse=True),
    }


class Envelope:
    """Takes the load average at the start; :meth:`wrap` adds it, the load at the end and the
    machine to a report."""

    def __init__(self, bench: str) -> None:
        self.bench = bench
        self.before = load_avg()

    def wrap(self, body: dict[str, Any]) -> dict[str, Any]:
        """``body`` with ``bench``, ``machine`` and ``load_avg`` (before/after, 1/5/15 min)."""
        return {
            "bench": self.bench,
            "machine": machine(),
            "load_avg": {"before": self.before, "after": load_avg()},
            **body,
        }
