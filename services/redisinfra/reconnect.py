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
import errno
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

_FILE_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})

log = logging.getLogger("arena.reconnect")

OUTAGE: tuple[type[BaseException], ...] = (RedisConnectionError, RedisTimeoutError, OSError)
"""Errors that mean "Redis is away", not "the request was wrong" (BusyLoadingError, the
LOADING reply during an AOF reload, is a ConnectionError)."""


def is_outage(exc: BaseException) -> bool:
    """Whether ``exc`` is Redis being unreachable, restarting or loading its data (on a
    cluster also: slots failing over, or a write no replica confirmed in time), busy with a
    long script (BUSY), or refusing writes it cannot persist (MISCONF: its disk is full or
    unwritable). Not a file of this machine's that cannot be written (an archive folder): that
    is no Redis outage, and is said as what it is."""
    from .batching import NotReplicated

    # (only a disk's refusals: a file not found yet, an archive being written, is retried
    # soon as before, as an outage)
    if isinstance(exc, OSError) and exc.errno in _FILE_ERRNOS:
        return False
    if isinstance(exc, (*OUTAGE, ClusterDownError, TryAgainError, NotReplicated)):
        return True
    if isinstance(exc, RedisClusterException):  # not a RedisError: slots not covered yet, …
        return True
    # a replica mid-failover, a server busy with a script, or one that cannot persist writes
    return refuses_writes(exc) or (
        isinstance(exc, ResponseError)
        and str(exc).startswith(("LOADING", "MASTERDOWN", "BUSY "))  # (not BUSYGROUP)
    )


def refuses_writes(exc: BaseException) -> bool:
    """Whether Redis refused a write because it cannot persist it: MISCONF, its AOF or RDB
    could not be written (a full or unwritable disk); also as a script's write met it
    ("@user_script: 51: -MISCONF …")."""
    # (in a pipeline: "Command # 1 (HSET …) of pipeline caused error: MISCONF …")
    return isinstance(exc, ResponseError) and "MISCONF " in str(exc)


def outage_words(exc: BaseException) -> str:
    """What an outage is, in the words of one line: Redis away, or Redis refusing writes."""
    text = str(exc)
    if refuses_writes(exc):
        return f"Redis refuses writes: it cannot persist them ({text.split('MISCONF ', 1)[-1]})"
    if isinstance(exc, ResponseError) and text.startswith("BUSY "):
        return "Redis is busy (a long script)"
    return f"Redis unavailable ({type(exc).__name__})"


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


class Voice:
    """One line for many loops: the partitions' consumers of a process each ride an outage out
    on their own, but it is said once, when the first of them meets it, and once more when the
    last is back (16 partitions said it 16 times)."""

    def __init__(self, who: str) -> None:
        self.who = who
        self.away: set[int] = set()
        self.since: float | None = None

    def went(self, loop: Outage, words: str) -> None:
        """A loop met an outage (its second failed round)."""
        if not self.away:
            self.since = time.monotonic()
            _say(f"{self.who}: {words}; retrying with backoff")
        self.away.add(id(loop))

    def back(self, loop: Outage) -> None:
        """A loop that was away is back."""
        self.away.discard(id(loop))
        if not self.away and self.since is not None:
            _say(f"{self.who}: Redis back after {time.monotonic() - self.since:.1f} s")
            self.since = None


class Outage:
    """One loop's view of Redis: says on stderr when it went away and when it came back, once
    each, and waits with backoff in between (with a `Voice`, said once for all its loops). A single failed round that the next one undoes
    is not said: a process woken from a stop (SIGSTOP, a starved machine) finds the reads it
    had in flight timed out, though Redis never went anywhere.

    Any other error a round meets (Redis refusing writes when out of memory, a replica's
    READONLY, a bug) is said once per distinct error and backed off the same way: a
    long-running loop must outlive every failure, or its task ends while the process carries
    on, healthy in name, consuming nothing."""

    def __init__(
        self,
        who: str,
        backoff: Backoff | None = None,
        voice: Voice | None = None,
        give_up_s: float | None = None,
    ) -> None:
        self.who = who
        self.voice = voice
        self.backoff = backoff or Backoff()
        # a tool (arena tournament) stops waiting after this long: RedisGone, one line;
        # services never give up (None)
        self.give_up_s = give_up_s
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
            then = "retrying with backoff"
            if self.give_up_s is not None:
                then = f"retrying for {self.give_up_s:.0f} s"
            if self.voice is not None:
                self.voice.went(self, outage_words(exc))
            else:
                _say(f"{self.who}: {outage_words(exc)}; {then}")
        if (
            self.give_up_s is not None
            and self.since is not None
            and time.monotonic() - self.since > self.give_up_s
        ):
            raise RedisGone(
                f"{outage_words(exc)} for {time.monotonic() - self.since:.0f} s; gave up"
            ) from exc
        await self.backoff.sleep(stop)

    def ok(self) -> None:
        """A call succeeded: report the recovery if there was an outage."""
        if self.since is not None:
            if self.said_away and self.voice is not None:
                self.voice.back(self)
            elif self.said_away:
                _say(f"{self.who}: Redis back after {time.monotonic() - self.since:.1f} s")
            self.since, self.said_away = None, False
        if self.said is not None:
            _say(f"{self.who}: going again")
            self.said = None
        self.backoff.reset()


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


class RedisGone(RuntimeError):
    """Redis stayed away longer than a tool waits (`Outage.give_up_s`): one line, no traceback."""


async def until_reachable(
    client: Any, who: str, stop: asyncio.Event | None = None, give_up_s: float | None = None
) -> None:
    """Wait until Redis answers PING (a service starting while Redis restarts waits for it;
    with `give_up_s`, RedisGone after that long)."""
    outage = Outage(who, give_up_s=give_up_s)
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
    why: Callable[[str], None] | None = None,
) -> None:
    """PING Redis every ``interval_s``; report SERVING while it answers, NOT_SERVING while it
    does not (health checks then route traffic elsewhere, and clients hear why). A refused
    connection counts at once; a slow answer only three times in a row (a busy machine is not
    an outage). Each change is said on stderr unless ``say`` is off (the caller says it);
    ``why`` is told what the outage is before NOT_SERVING is reported (Redis away, refusing
    writes: `outage_words`). A Redis that cannot persist refuses even PING (MISCONF)."""
    serving, slow = True, 0
    words = "Redis unavailable"
    while not stop.is_set():
        try:
            up = bool(await asyncio.wait_for(client.ping(), timeout_s))
            slow = 0
        except Exception as exc:  # noqa: BLE001 - any failure to answer is "not up"
            slow = slow + 1 if isinstance(exc, TimeoutError) else 0
            up = slow < 3 if isinstance(exc, TimeoutError) else not is_outage(exc)
            words = outage_words(exc) if is_outage(exc) else words
        if up != serving:
            serving = up
            if not up and why is not None:
                why(words)
            await set_serving(up)
            if say:
                _say(f"health: {'SERVING' if up else f'NOT_SERVING ({words})'}")
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), interval_s)
