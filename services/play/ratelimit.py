"""Rate limits, counted in Redis (so every server process counts together): fixed windows per key.

- answers per second per seat (`RateLimit`): a person clicks a few times a second at most; a
  script flooding a seat's answers is refused with 429 before it reaches the engine;
- creating guests, tables and tickets (`Limits`): per client address and per guest, so one
  address cannot mint thousands of guests (3,000 in 21 s before, each kept 30 days) or tables.
  A refusal is 429 with `Retry-After` (the seconds until the window ends).

Behind a reverse proxy every client has the proxy's address, and the per-address limits would
count everyone together. `--trusted-proxy` (`ARENA_TRUSTED_PROXIES`; off by default) names the
proxies (addresses or networks, comma-separated) whose `X-Forwarded-For` is believed
(`Proxies`): for a request from one of them, the client is the rightmost address of the header
that is not itself a trusted proxy (each proxy appends the address it was reached from, as
nginx's `$proxy_add_x_forwarded_for` does; what is left of that came from the client and
proves nothing). From any other address, or with the setting off, the header is ignored: a
client cannot pick the address it is counted under. Loopback addresses (this machine: `arena
up`'s own tools, tests, benches) are not counted per address (`exempt_loopback`); the
per-guest limits still hold for them. A proxy on this machine must be named to be believed
(`--trusted-proxy 127.0.0.1`): its clients are then counted by their own addresses.
"""

from __future__ import annotations

import argparse
import ipaddress
import os
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from ..replay.http import HttpError, Request

PROXIES_ENV = "ARENA_TRUSTED_PROXIES"
MAX_HOPS = 32  # X-Forwarded-For entries looked at, from the right
Network = ipaddress.IPv4Network | ipaddress.IPv6Network


def _ip(text: str) -> ipaddress.IPv4Address | ipaddress.IPv6Address | None:
    """An X-Forwarded-For entry's address (``1.2.3.4``, ``1.2.3.4:5678``, ``[::1]:80``,
    ``::1``), or None."""
    text = text.strip()
    if text.startswith("["):
        text = text[1:].partition("]")[0]
    elif text.count(":") == 1:
        text = text.partition(":")[0]
    try:
        ip = ipaddress.ip_address(text)
    except ValueError:
        return None
    mapped = getattr(ip, "ipv4_mapped", None)  # ::ffff:1.2.3.4 is 1.2.3.4
    return mapped if mapped is not None else ip


class Proxies:
    """The reverse proxies whose X-Forwarded-For is believed (module docstring); none: off."""

    def __init__(self, networks: Iterable[str] = ()) -> None:
        self.networks: list[Network] = []
        for item in networks:
            item = item.strip()
            if not item:
                continue
            try:
                self.networks.append(ipaddress.ip_network(item, strict=False))
            except ValueError:
                raise ValueError(
                    f"trusted proxy {item[:60]!r} is not an address or a network (e.g. "
                    "10.0.0.5 or 10.0.0.0/8)"
                ) from None

    @classmethod
    def parse(cls, text: str) -> Proxies:
        """From a comma-separated list (the option's and the variable's form)."""
        return cls(text.split(","))

    def trusts(self, address: str) -> bool:
        """Whether `address` is one of the trusted proxies."""
        ip = _ip(address)
        return ip is not None and any(ip in n for n in self.networks)

    def client(self, peer: str, forwarded: str | None) -> str:
        """The address a request from `peer` with this X-Forwarded-For counts under."""
        if not self.networks or not forwarded or not self.trusts(peer):
            return peer
        client = peer
        for hop in reversed(forwarded.split(",")[-MAX_HOPS:]):
            ip = _ip(hop)
            if ip is None:  # not written by a proxy of ours: stop at the last one believed
                return client
            client = str(ip)
            if not any(ip in n for n in self.networks):
                return client
        return client  # every hop a proxy of ours: the leftmost


def trusted_proxy_option(p: argparse.ArgumentParser) -> None:
    """``--trusted-proxy`` of the web server (module docstring)."""
    p.add_argument(
        "--trusted-proxy",
        type=_proxies,
        default=_proxies(os.environ.get(PROXIES_ENV, "")),
        metavar="ADDR[,NET...]",
        help="play API rate limits: reverse proxies (addresses or networks) whose "
        f"X-Forwarded-For names the client (${PROXIES_ENV}; default none: the header is "
        "ignored)",
    )


def _proxies(text: str) -> Proxies:
    try:
        return Proxies.parse(text)
    except ValueError as exc:
        raise argparse.ArgumentTypeError(str(exc)) from None


class RateLimit:
    """At most `per_s` calls per key per one-second window."""

    def __init__(self, client: aioredis.Redis, prefix: str, per_s: int) -> None:
        self.client = client
        self.prefix = prefix
        self.per_s = per_s

    async def allow(self, key: str) -> bool:
        """Count one call; whether it is within the limit."""
        async with self.client.pipeline(transaction=False) as pipe:
            self.count(pipe, key)
            return self.allowed(await pipe.execute())

    def count(self, pipe: Any, key: str) -> None:
        """Queue the count of one call on a pipeline of this client (no transaction needed:
        the window's key is made with its expiry before it is counted, so no key outlives its
        window even if the second command never runs); its last two replies go to `allowed`,
        so other commands may share the round trip (seat.py: the seat's read)."""
        k = f"{self.prefix}:{key}:{int(time.time())}"
        pipe.set(k, 0, ex=2, nx=True)
        pipe.incr(k)

    def allowed(self, replies: list[Any]) -> bool:
        """Whether the call `count` counted is within the limit (the pipeline's replies)."""
        return int(replies[-1]) <= self.per_s


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
        proxies: Proxies | None = None,
    ) -> None:
        self.exempt_loopback = exempt_loopback
        self.proxies = proxies or Proxies()
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

    def address(self, req: Request) -> str:
        """The client address `req` counts under (its peer's, or a trusted proxy's word)."""
        return self.proxies.client(req.peer, req.headers.get("x-forwarded-for"))

    async def new_guest(self, req: Request) -> None:
        """HttpError 429 (with Retry-After) past the guests one address may create."""
        address = self.address(req)
        if self._counted(address):
            await self._check([(f"g:{address}", self.guests_per_address, "new guests from here")])

    async def seat(self, req: Request, player: str) -> None:
        """HttpError 429 past the tables and tickets a guest (or an address) may ask for."""
        address = self.address(req)
        checks = [(f"sp:{player}", self.seats_per_guest, "tables opened or joined")]
        if self._counted(address):
            checks.append((f"sa:{address}", self.seats_per_address, "tables opened or joined here"))
        await self._check(checks)
