"""Rate limits, counted in Redis (so every server process counts together): fixed windows per key.

- answers per second per seat (`RateLimit`): a person clicks a few times a second at most; a
  script flooding a seat's answers is refused with 429 before it reaches the engine;
- creating guests, tables and tickets (`Limits`): per client address and per guest, so one
  address cannot mint thousands of guests (3,000 in 21 s before, each kept 30 days) or tables.
  A refusal is 429 with `Retry-After` (the seconds until the window ends).

Behind a reverse proxy every client has the proxy's address: serve the play API directly (as
`arena up` and the deployment do) or the per-address limits count everyone together. Loopback
addresses (this machine: `arena up`'s own tools, tests, benches, a proxy on the same host) are
not counted per address (`exempt_loopback`); the per-guest limits still hold for them.
"""

from __future__ import annotations

import ipaddress
import time
from dataclasses import dataclass

import redis.asyncio as aioredis

from ..replay.http import HttpError


class RateLimit:
    """At most `per_s` calls per key per one-second window."""

    def __init__(self, client: aioredis.Redis, prefix: str, per_s: int) -> None:
        self.client = client
        self.prefix = prefix
        self.per_s = per_s

    async def allow(self, key: str) -> bool:
        """Count one call; whether it is within the limit."""
        window = int(time.time())
        k = f"{self.prefix}:{key}:{window}"
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.incr(k)
            pipe.expire(k, 2)
            count, _ = await pipe.execute()
        return int(count) <= self.per_s


@dataclass(frozen=True)
class Window:
    """At most `calls` per `seconds` (one fixed window)."""

    calls: int
    seconds: int


DEFAULT_ANSWERS_PER_S = 20  # answers a second per seat (the web server's --answers-per-s)
GUESTS_PER_ADDRESS = Window(100, 600)  # a household or a classroom behind one address
SEATS_PER_GUEST = Window(30, 60)  # open, join or quick-play a table
SEATS_PER_ADDRESS = Window(300, 60)


class Limits:
    """The creation limits of the play API (module docstring), in Redis under `prefix`."""

    def __init__(
        self,
        client: aioredis.Redis,
        prefix: str,
        guests_per_address: Window = GUESTS_PER_ADDRESS,
        seats_per_guest: Window = SEATS_PER_GUEST,
        seats_per_address: Window = SEATS_PER_ADDRESS,
        *,
        exempt_loopback: bool = True,
    ) -> None:
        self.exempt_loopback = exempt_loopback
        self.client = client
        self.prefix = prefix
        self.guests_per_address = guests_per_address
        self.seats_per_guest = seats_per_guest
        self.seats_per_address = seats_per_address

    async def _retry_after(self, key: str, w: Window) -> int:
        """Count one call on `key`; 0 if within `w`, else the seconds until its window ends."""
        now = int(time.time())
        start = now - now % w.seconds
        k = f"{self.prefix}:{key}:{start}"
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.incr(k)
            pipe.expire(k, w.seconds + 1)
            count, _ = await pipe.execute()
        return 0 if int(count) <= w.calls else max(1, start + w.seconds - now)

    async def _check(self, checks: list[tuple[str, Window, str]]) -> None:
        for key, window, what in checks:
            wait = await self._retry_after(key, window)
            if wait:
                raise HttpError(
                    429,
                    f"too many {what}: at most {window.calls} per {window.seconds} s; "
                    f"try again in {wait} s",
                    f"Retry-After: {wait}\r\n",
                )

    def _counted(self, address: str) -> bool:
        """Whether per-address limits count `address` (see the module docstring)."""
        if not self.exempt_loopback:
            return True
        try:
            return not ipaddress.ip_address(address).is_loopback
        except ValueError:
            return True

    async def new_guest(self, address: str) -> None:
        """HttpError 429 (with Retry-After) past the guests one address may create."""
        if self._counted(address):
            await self._check([(f"g:{address}", self.guests_per_address, "new guests from here")])

    async def seat(self, address: str, player: str) -> None:
        """HttpError 429 past the tables and tickets a guest (or an address) may ask for."""
        checks = [(f"sp:{player}", self.seats_per_guest, "tables opened or joined")]
        if self._counted(address):
            checks.append((f"sa:{address}", self.seats_per_address, "tables opened or joined here"))
        await self._check(checks)
