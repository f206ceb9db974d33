"""Riding out a Redis outage: which errors are an outage, backoff with jitter, health.

A Redis restart (a crash, a failover, an AOF reload that answers LOADING for seconds) must not
end any long-running loop: a loop that meets :data:`OUTAGE` waits with :class:`Backoff` and goes
on, saying once that Redis went away and once that it came back (:class:`Outage`), not once per
attempt. :func:`watch_health` turns the same knowledge into gRPC health: NOT_SERVING while Redis
does not answer, SERVING again after.

redis-py's asyncio client already retries a command a few times on a broken connection (its
default ``Retry``), so a pooled connection that died with the old server is replaced without
the caller seeing it; what reaches a loop here is an outage longer than those retries.
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
import random
import sys
import time
from collections.abc import Awaitable, Callable
from typing import Any

from redis.exceptions import (
    ClusterDownError,
    RedisClusterException,
    ResponseError,
    TryAgainError,
)
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import TimeoutError as RedisTimeoutError

log = logging.getLogger("arena.reconnect")

OUTAGE: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeoutError, OSError)
"""Errors that mean "Redis is away", not "the request was wrong" (BusyLoadingError, the
LOADING reply during an AOF reload, is a ConnectionError)."""


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis being unreachable, restarting or loading its data (on a
    cluster also: slots failing over, or a write no replica confirmed in time)."""
    from .batching import NotReplicated

    if isinstance(exc, (*OUTAGE, ClusterDownError, TryAgainError, NotReplicated)):
        return True
    if isinstance(exc, RedisClusterException):  # not a RedisError: slots not covered yet, …
        return True
    # a server that lost its groups (restarted without its AOF) or is a replica mid-failover
    return isinstance(exc, ResponseError) and str(exc).startswith(("LOADING", "MASTERDOWN"))


def is_nogroup(exc: BaseException) -> bool:
    """Whether ``exc`` says the consumer group is gone (Redis came back without it)."""
    return isinstance(exc, ResponseError) and "NOGROUP" in str(exc)


class Backoff:
    """Exponential backoff with jitter: base, 2x base, … up to ``cap`` seconds; each delay is
    drawn from its upper half so that workers restarting together do not retry in step."""

    def __init__(
        self, base: float = 0.1, cap: float = 5.0, rng: random.Random | None = None
    ) -> None:
        self.base, self.cap = base, cap
        self.attempt = 0
        self.rng = rng or random.Random()

    def delay(self) -> float:
        """The next delay in seconds (and count the attempt)."""
        top = min(self.cap, self.base * 2.0**self.attempt)
        self.attempt += 1
        return top / 2 + self.rng.uniform(0, top / 2)

    def reset(self) -> None:
        """After a success: the next failure starts from ``base`` again."""
        self.attempt = 0

    async def sleep(self, stop: asyncio.Event | None = None) -> None:
        """Wait the next delay (returns early once ``stop`` is set)."""
        delay = self.delay()
        if stop is None:
            await asyncio.sleep(delay)
            return
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), delay)


class Outage:
    """One loop's view of Redis: says on stderr when it went away and when it came back, once
    each, and waits with backoff in between. A single failed round that the next one undoes
    is not said: a process woken from a stop (SIGSTOP, a starved machine) finds the reads it
    had in flight timed out, though Redis never went anywhere.

    Any other error a round meets (Redis refusing writes when out of memory, a replica's
    READONLY, a bug) is said once per distinct error and backed off the same way: a
    long-running loop must outlive every failure, or its task ends while the process carries
    on, healthy in name, consuming nothing."""

    def __init__(self, who: str, backoff: Backoff | None = None) -> None:
        self.who = who
        self.backoff = backoff or Backoff()
        self.since: float | None = None
        self.said_away = False  # the outage was said (from its second failed round)
        self.said: str | None = None  # the last non-outage error said, until a round succeeds

    async def failed(self, exc: BaseException, stop: asyncio.Event | None = None) -> None:
        """A round failed with ``exc``: report it if new, then back off."""
        if not is_outage(exc):
            line = f"{self.who} failed: {exc!r}; retrying with backoff"
            if line != self.said:
                self.said = line
                log.warning("%s", line)
                _say(line)
        elif self.since is None:
            self.since = time.monotonic()  # said if the next round fails too
        elif not self.said_away:
            self.said_away = True
            _say(f"{self.who}: Redis unavailable ({type(exc).__name__}); retrying with backoff")
        await self.backoff.sleep(stop)

    def ok(self) -> None:
        """A call succeeded: report the recovery if there was an outage."""
        if self.since is not None:
            if self.said_away:
                _say(f"{self.who}: Redis back after {time.monotonic() - self.since:.1f} s")
            self.since, self.said_away = None, False
        if self.said is not None:
            _say(f"{self.who}: going again")
            self.said = None
        self.backoff.reset()


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


async def until_reachable(client: Any, who: str, stop: asyncio.Event | None = None) -> None:
    """Wait until Redis answers PING (a service starting while Redis restarts waits for it)."""
    outage = Outage(who)
    while stop is None or not stop.is_set():
        try:
            await client.ping()
        except Exception as exc:
            if not is_outage(exc):
                raise
            await outage.failed(exc, stop)
            continue
        outage.ok()
        return


async def forever(
    who: str,
    step: Callable[[], Awaitable[object]],
    stop: asyncio.Event,
    interval_s: float = 0.0,
) -> None:
    """Run ``step`` until ``stop`` is set, ``interval_s`` apart; an outage waits with backoff,
    any other error is logged (one line) and the loop goes on."""
    outage = Outage(who)
    while not stop.is_set():
        try:
            await step()
        except Exception as exc:
            if is_outage(exc):
                await outage.failed(exc, stop)
                continue
            log.warning("%s failed: %r", who, exc)
            _say(f"{who} failed: {exc!r}")
        else:
            outage.ok()
        if interval_s:
            with contextlib.suppress(TimeoutError):
                await asyncio.wait_for(stop.wait(), interval_s)


async def watch_health(
    client: Any,
    set_serving: Callable[[bool], Awaitable[None]],
    stop: asyncio.Event,
    interval_s: float = 0.5,
    timeout_s: float = 2.0,
    *,
    say: bool = True,
) -> None:
    """PING Redis every ``interval_s``; report SERVING while it answers, NOT_SERVING while it
    does not (health checks then route traffic elsewhere, and clients hear why). A refused
    connection counts at once; a slow answer only three times in a row (a busy machine is not
    an outage). Each change is said on stderr unless ``say`` is off (the caller says it)."""
    serving, slow = True, 0
    while not stop.is_set():
        try:
            up = bool(await asyncio.wait_for(client.ping(), timeout_s))
            slow = 0
        except Exception as exc:  # noqa: BLE001 - any failure to answer is "not up"
            slow = slow + 1 if isinstance(exc, TimeoutError) else 0
            up = slow < 3 if isinstance(exc, TimeoutError) else not is_outage(exc)
        if up != serving:
            serving = up
            await set_serving(up)
            if say:
                _say(f"health: {'SERVING' if up else 'NOT_SERVING (Redis unavailable)'}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval_s)
