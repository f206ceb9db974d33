"""Liveness by heartbeat: which workers are alive, which have gone silent, and for how long.

A process that is stopped (SIGSTOP), wedged in a loop or starved keeps its connections open and
its port bound: nothing fails, it just never answers. Its peers see that only by its silence.
Every engine and bot worker beats into one Redis hash, `{ns}:workers` (field `engine:NAME` or
`bots:NAME`, value an opaque counter of its beats), once a `beat_s`; every process that keeps a
`Liveness` reads the others' beats with its own and judges them by its own clock: a worker
whose beat has not changed for `silent_s` is silent (hung or dead), said in one line naming it
and how long, counted in `arena_worker_silent_seconds{worker}`, and said again once when it
beats again. No two machines' clocks are compared (the value is a counter, not a time).

A worker that stops cleanly removes its field; one that stays silent for `forget_s` (an hour)
is removed by whoever sees it, so the hash holds the live workers and the recently dead.

A worker also sees its own stall: a beat that comes `silent_s` late means this process stood
still (stopped, or starved of CPU) for that long; `stalled(seconds)` is called, and the engine
drops its cached games then (its peers have moved them on meanwhile).
"""

from __future__ import annotations

import asyncio
import contextlib
import sys
import time
from collections.abc import Awaitable, Callable, Mapping
from dataclasses import dataclass
from typing import Any

from prometheus_client import CollectorRegistry, Counter, Gauge

from .reconnect import is_outage

BEAT_S = 1.0  # how often a worker beats
SILENT_S = 5.0  # a beat this late: the worker is silent (hung or dead)
FORGET_S = 3600.0  # a worker silent this long is removed from the hash


def workers_key(namespace: str) -> str:
    """The hash of every worker's beat."""
    return f"{namespace}:workers"


@dataclass
class _Seen:
    value: bytes
    since: float  # monotonic time of the last change
    silent: bool = False


class Liveness:
    """One process's heartbeat (`me`, e.g. ``engine:engine-0``) and its view of the others'."""

    def __init__(
        self,
        client: Any,
        namespace: str,
        me: str,
        registry: CollectorRegistry | None = None,
        *,
        beat_s: float = BEAT_S,
        silent_s: float = SILENT_S,
        forget_s: float = FORGET_S,
        stalled: Callable[[float], Awaitable[None]] | None = None,
        clock: Callable[[], float] = time.monotonic,
        watch: bool = True,
    ) -> None:
        self.client, self.key, self.me = client, workers_key(namespace), me
        self.watch = watch  # judge the others' beats too (else only beat)
        self.beat_s, self.silent_s, self.forget_s = beat_s, silent_s, forget_s
        self.stalled, self.clock = stalled, clock
        self.count = 0
        self.seen: dict[str, _Seen] = {}
        r = registry or CollectorRegistry()
        self.silent_gauge = Gauge(
            "arena_worker_silent_seconds",
            "seconds since a worker's heartbeat last changed, while it is silent (hung or "
            "dead: its peers route around it); 0 while it beats",
            ["worker"],
            registry=r,
        )
        self.stalls = Counter(
            "arena_worker_stalled_seconds",
            "seconds this process stood still (stopped or starved) between two heartbeats",
            registry=r,
        )

    async def beat(self) -> list[str]:
        """Beat once and read everyone's beats; the lines that say who went silent or came
        back."""
        self.count += 1
        if not self.watch:
            await self.client.hset(self.key, self.me, str(self.count))
            return []
        async with self.client.pipeline(transaction=False) as pipe:
            pipe.hset(self.key, self.me, str(self.count))
            pipe.hgetall(self.key)
            replies: list[Any] = await pipe.execute()
        return await self.judge(replies[1], self.clock())

    async def woke(self, due: float) -> list[str]:
        """This process meant to beat at `due` (its clock) and woke now: a wake-up `silent_s`
        late means it stood still that long (stopped, or starved of CPU): `stalled` is told."""
        late = self.clock() - due
        if late <= self.silent_s:
            return []
        self.stalls.inc(late)
        if self.stalled is not None:
            await self.stalled(late)
        return [
            f"{self.me}: this process stood still for {late:.1f} s (stopped or starved of "
            "CPU); its peers carried on without it"
        ]

    async def judge(self, beats: Mapping[Any, Any], now: float) -> list[str]:
        """Compare the beats read with those seen before (see the module docstring)."""
        lines: list[str] = []
        names = set()
        forget: list[str] = []
        for raw, value in beats.items():
            name = raw.decode() if isinstance(raw, bytes) else str(raw)
            names.add(name)
            if name == self.me:
                continue
            data = value if isinstance(value, bytes) else str(value).encode()
            seen = self.seen.get(name)
            if seen is None:  # first sight: silent from now on if it never changes
                self.seen[name] = _Seen(data, now)
                continue
            if data != seen.value:
                if seen.silent:
                    lines.append(f"{name} beats again after {now - seen.since:.1f} s of silence")
                    self.silent_gauge.labels(name).set(0)
                self.seen[name] = _Seen(data, now)
                continue
            quiet = now - seen.since
            if quiet > self.forget_s:
                forget.append(name)
                continue
            if quiet > self.silent_s:
                if not seen.silent:
                    seen.silent = True
                    lines.append(
                        f"{name} silent for {quiet:.1f} s (hung or dead): its peers route "
                        "around it and take its work over"
                    )
                self.silent_gauge.labels(name).set(round(quiet, 1))
        for name in set(self.seen) - names:  # stopped cleanly (or forgotten by another)
            if self.seen.pop(name).silent:
                self.silent_gauge.labels(name).set(0)
        if forget:
            await self.client.hdel(self.key, *forget)
            for name in forget:
                self.seen.pop(name, None)
                with contextlib.suppress(KeyError):
                    self.silent_gauge.remove(name)
        return lines

    def silent(self) -> dict[str, float]:
        """The workers silent now, with how long (seconds, by this process's clock)."""
        now = self.clock()
        return {n: now - s.since for n, s in self.seen.items() if s.silent}

    async def run(self, stop: asyncio.Event, say: Callable[[str], None] | None = None) -> None:
        """Beat every `beat_s` until `stop` is set, then remove this worker's field. A round
        that fails (Redis away) is skipped: the outage is said by the loops that need Redis."""
        say = say or _say
        while not stop.is_set():
            try:
                for line in await self.beat():
                    say(line)
            except Exception as exc:  # noqa: BLE001 - a heartbeat must never end the process
                if not is_outage(exc):
                    say(f"{self.me}: heartbeat failed: {exc!r}")
            due = self.clock() + self.beat_s
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), self.beat_s)
            for line in await self.woke(due):
                say(line)
        with contextlib.suppress(Exception):
            await self.client.hdel(self.key, self.me)


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)
