"""The bot worker's engines when `--engine` names them by DNS (compose's ``engine:50051``,
Kubernetes' headless ``arena-engine:50051``): a `GrpcEngine` over every address the names
resolve to, made again when they change.

Given one name, `GrpcEngine` had one channel, which gRPC connected to one of the name's
addresses: every answer of every game went to that engine and its bot session was the only one,
while the other engines' decisions waited for their deadline to be reposted to the stream.
Here each address is an engine of its own (a session to each, a game's answers to one of them
by a hash of its id: engine_client.py), the names are resolved again every 30 s, sooner when an
engine is down or silent (services/targets.py), and when the set changed a new `GrpcEngine` takes
over: it opens its sessions, the old one's are ended (the answers waiting on them fail as
UNAVAILABLE and are sent again, now to the new one; the decisions an engine held for an ended
session go to the stream) and its channels are closed once its calls had time to finish.
With a plain address list nothing is ever made again: the worker runs as before.
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections.abc import Awaitable, Callable

from ..targets import Targets
from .engine_client import GrpcEngine, Pushed

CHECK_S = 1.0  # how often an engine down or silent, and a due resolution, are looked for


class Engines:
    """What the bot worker answers through (engine_client.Engine): the calls are those of the
    `GrpcEngine` in use (bound, so a call costs nothing more); `run` keeps its sessions open and
    its addresses current. `make` builds a `GrpcEngine` for a list of targets."""

    def __init__(
        self,
        targets: Targets,
        make: Callable[[list[str]], GrpcEngine],
        *,
        grace_s: float = 5.0,
        say: Callable[[str], None] | None = None,
        name: str = "",
    ) -> None:
        self.targets, self.make, self.grace_s, self.name = targets, make, grace_s, name
        self.say = say or targets.say
        self.retired: list[GrpcEngine] = []  # replaced, closing or closed (their counts stay)
        self._closing: set[asyncio.Task[None]] = set()
        self.swaps = 0
        self._bind(make(targets.current()))

    def _bind(self, engine: GrpcEngine) -> None:
        self.current = engine
        self.submit = engine.submit
        self.submit_many = engine.submit_many
        self.entries = engine.entries
        self.determinize = engine.determinize
        self.people_at = engine.people_at

    @property
    def addresses(self) -> list[str]:
        """The engines answers go to now."""
        return list(self.current.targets)

    def _all(self) -> list[GrpcEngine]:
        return [*self.retired, self.current]

    def submitted(self) -> tuple[int, int]:
        """Answers sent in SubmitActions calls, and in how many calls (every engine made)."""
        batchers = [b for e in self._all() for b in e.batchers]
        return sum(b.items for b in batchers), sum(b.batches for b in batchers)

    @property
    def pushed(self) -> int:
        """Decisions received on bot sessions."""
        return sum(e.pushed for e in self._all())

    def session_counts(self) -> tuple[int, int]:
        """Answers sent on bot sessions, and in how many stream messages."""
        counts = [e.session_counts() for e in self._all()]
        return sum(a for a, _ in counts), sum(m for _, m in counts)

    def silent(self) -> dict[str, float]:
        """The engines silent now and for how many seconds (engine_client.GrpcEngine.silent)."""
        return self.current.silent()

    async def run(
        self,
        pushed: Pushed | None,
        key: Callable[[], Awaitable[str | None]],
        check_s: float = CHECK_S,
    ) -> None:
        """Until cancelled: the current engine's bot sessions (unless `pushed` is None: no
        sessions), and its addresses resolved again when due."""
        sessions = self._sessions(pushed, key)
        try:
            while True:
                await asyncio.sleep(check_s if self.targets.dynamic else 3600)
                now = time.monotonic()
                if any(d > now for d in self.current.down_until):
                    self.targets.soon()  # an engine gone: its name may name others now
                if not self.targets.due() or not await self.targets.refresh():
                    continue
                old, old_sessions = self.current, sessions
                self._bind(self.make(self.targets.current()))
                self.swaps += 1
                self.say(
                    f"arena bots {self.name}: engines now {', '.join(self.addresses)} "
                    f"(were {', '.join(old.targets)})"
                )
                sessions = self._sessions(pushed, key)
                old_sessions.cancel()
                self.retired.append(old)
                task = asyncio.create_task(self._retire(old, old_sessions))
                self._closing.add(task)
                task.add_done_callback(self._closing.discard)
        finally:
            sessions.cancel()
            with contextlib.suppress(asyncio.CancelledError):
                await sessions

    def _sessions(
        self, pushed: Pushed | None, key: Callable[[], Awaitable[str | None]]
    ) -> asyncio.Task[None]:
        if pushed is None:
            return asyncio.create_task(asyncio.sleep(0))
        return asyncio.create_task(self.current.run_sessions(pushed, key))

    async def _retire(self, engine: GrpcEngine, sessions: asyncio.Task[None]) -> None:
        with contextlib.suppress(asyncio.CancelledError):
            await sessions
        await asyncio.sleep(self.grace_s)  # its unary calls in flight finish first
        await engine.close()
        engine.home.clear()  # (only its counts are kept)

    async def close(self) -> None:
        """Close every channel (and so every session)."""
        for task in self._closing:
            task.cancel()
        await asyncio.gather(*self._closing, return_exceptions=True)
        await asyncio.gather(*(e.close() for e in self._all()))


async def engines(
    entries: list[str],
    make: Callable[[list[str]], GrpcEngine],
    *,
    name: str = "",
    targets: Targets | None = None,
    say: Callable[[str], None] | None = None,
) -> Engines:
    """`Engines` over `entries` (HOST:PORT each, a HOST that is a name standing for all its
    addresses), the names resolved once first (a name that does not resolve yet stands for
    itself meanwhile: services/targets.py)."""
    targets = targets or Targets(entries, say=say)
    if targets.dynamic:
        await targets.refresh()
    return Engines(targets, make, name=name, say=say)
