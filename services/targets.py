"""Several workers behind one DNS name: an address list (``HOST:PORT,HOST:PORT…``) where a
HOST that is a name stands for every address it resolves to.

A deployment names its engine workers by one name that resolves to every container or pod
(compose: the service ``engine``; Kubernetes: the headless Service ``arena-engine``). Given
that name as one gRPC target, a channel resolves it itself and its default policy
(pick_first) sends every call to one of its addresses: one engine took every person's answer
and held every bot session while the others idled. So the clients resolve names here, make
one channel per address, and send a game's calls to one of them by a hash of its id, as they do
with a plain list (services/play/clients.py ``Engine``, services/bots/engines.py).

- An entry that is an IP address (``127.0.0.1:50051``, ``[::1]:50051``) or is no
  ``HOST:PORT`` (a gRPC URI such as ``unix:/run/engine.sock``) is used as it is: plain lists,
  such as ``arena up``'s, behave as before.
- A name is resolved again every ``every_s`` (workers come and go: scaling, restarts) and
  sooner, at most every ``retry_s``, after a call to one of its addresses failed (``soon``)
  or the name did not resolve.
- A name that does not resolve keeps what it resolved to last; one that never resolved (yet:
  compose's DNS knows a service only once one of its containers runs) stands for itself, one
  target that gRPC resolves on its own, as before.
- Where a name has IPv4 and IPv6 addresses only the IPv4 ones are used: dual-stack DNS names
  each worker twice (``localhost`` is one engine, not two).
- The addresses of a name are sorted, so every process that resolves it hashes a game to the
  same worker (the web server and the bot workers keep a game hot on one engine).

People's engines (issue 44): engine workers given to the clients as a second list
(``--people-engine``) serve the games a person sits at, apart from the bot-only games, whose bot
sessions keep the others' event loops busy; `route` orders the workers for a game of either
kind, the same way in every client.
"""

from __future__ import annotations

import asyncio
import ipaddress
import logging
import re
import socket
import time
import zlib
from collections.abc import Awaitable, Callable, Collection, Sequence

RESOLVE_EVERY_S = 30.0
RETRY_S = 2.0
RESOLVE_TIMEOUT_S = 5.0

Resolver = Callable[[str, int], Awaitable[list[str]]]
"""(host, port) -> the gRPC targets (``IP:PORT``) the name stands for now; raises OSError (or
returns nothing) if it does not resolve."""

_HOST_PORT = re.compile(r"^(?:\[(?P<v6>[^\s\[\]/]+)\]|(?P<host>[^\s:/\[\]]+)):(?P<port>\d{1,5})$")
_URI = re.compile(r"^(?:unix|unix-abstract|dns|ipv4|ipv6|vsock):\S")
log = logging.getLogger(__name__)


def host_port(entry: str) -> tuple[str, int] | None:
    """(host, port) of a ``HOST:PORT`` or ``[IPV6]:PORT`` entry; None for anything else."""
    m = _HOST_PORT.match(entry)
    if m is None or not 0 < int(m["port"]) < 65536:
        return None
    return m["v6"] or m["host"], int(m["port"])


def is_name(entry: str) -> bool:
    """Whether ``entry`` is ``NAME:PORT`` with a DNS name to resolve (not an IP address)."""
    hp = host_port(entry)
    if hp is None:
        return False
    try:
        ipaddress.ip_address(hp[0])
    except ValueError:
        return True
    return False


def target(ip: str, port: int) -> str:
    """The gRPC target of one address: ``1.2.3.4:50051``, ``[fd00::2]:50051``."""
    return f"[{ip}]:{port}" if ":" in ip else f"{ip}:{port}"


async def resolve_dns(host: str, port: int) -> list[str]:
    """Every address of ``host`` (the system's resolver, as getaddrinfo answers): the IPv4 ones
    if there are any, else the IPv6 ones; sorted."""
    infos = await asyncio.get_running_loop().getaddrinfo(host, port, type=socket.SOCK_STREAM)
    v4 = {ipaddress.ip_address(i[4][0]) for i in infos if i[0] == socket.AF_INET}
    v6 = {ipaddress.ip_address(i[4][0]) for i in infos if i[0] == socket.AF_INET6}
    return [target(str(ip), port) for ip in sorted(v4 or v6)]


def ring(game: str, group: Sequence[int]) -> list[int]:
    """The workers of `group` (indices) in the order to try for `game`: from the one a hash of
    its id picks (CRC-32 mod the group's size, as every client computes it), then the next."""
    n = len(group)
    if n == 0:
        return []
    first = zlib.crc32(game.encode()) % n
    return [group[(first + k) % n] for k in range(n)]


def route(game: str, n: int, people: Collection[int] = (), person: bool = False) -> list[int]:
    """The order to try the `n` workers in for `game`: those of its kind first (the people's
    engines, indices `people`, for a game a person sits at; the others for a bot-only game;
    every worker when its kind has none), from the one a hash of its id picks; then the other
    kind's the same way (a people's engine hung: the others serve its games, and back). With
    no people's engines: every worker, from the hash's, as before they existed."""
    theirs = [i for i in range(n) if i in people]
    others = [i for i in range(n) if i not in people]
    mine, rest = (theirs, others) if person else (others, theirs)
    if not mine:
        mine, rest = rest, []
    return ring(game, mine) + ring(game, rest)


def parse_list(text: str) -> list[str]:
    """The entries of a comma-separated address list; ValueError (one line) for an empty list
    or an entry that is neither ``HOST:PORT`` nor a gRPC URI (``unix:/path``, ``dns:///...``)."""
    entries = [e.strip() for e in text.split(",") if e.strip()]
    if not entries:
        raise ValueError("no address: want HOST:PORT[,HOST:PORT...]")
    for e in entries:
        if host_port(e) is None and not _URI.match(e):
            raise ValueError(f"{e[:80]!r} is no HOST:PORT (a port of 1-65535)")
    return entries


class Targets:
    """The gRPC targets an address list stands for now (``current``), its names resolved with
    ``resolver`` (default: the system's DNS) by ``refresh``."""

    def __init__(
        self,
        entries: list[str],
        resolver: Resolver | None = None,
        *,
        every_s: float = RESOLVE_EVERY_S,
        retry_s: float = RETRY_S,
        timeout_s: float = RESOLVE_TIMEOUT_S,
        say: Callable[[str], None] | None = None,
    ) -> None:
        self.entries = [e.strip() for e in entries if e.strip()]
        if not self.entries:
            raise ValueError("no engine address")
        self.resolver = resolver or resolve_dns
        self.every_s, self.retry_s, self.timeout_s = every_s, retry_s, timeout_s
        self.say = say or log.warning
        self.names = [e for e in self.entries if is_name(e)]
        self.known: dict[str, list[str]] = {}  # name entry -> what it resolved to last
        self.failing: set[str] = set()  # names whose last resolution failed (said once)
        self.last = 0.0  # monotonic: the last refresh
        self.next_at = 0.0  # monotonic: the next one is due then (now: never resolved)

    @property
    def dynamic(self) -> bool:
        """Whether any entry is a name (else ``current`` never changes)."""
        return bool(self.names)

    @property
    def resolved(self) -> bool:
        """Whether every name resolved at least once."""
        return all(n in self.known for n in self.names)

    def current(self) -> list[str]:
        """The targets, in the entries' order, each name replaced by its addresses (or by
        itself while it never resolved); each target once."""
        out: list[str] = []
        for e in self.entries:
            for t in self.known.get(e, [e]):
                if t not in out:
                    out.append(t)
        return out

    def of(self, entries: Collection[str]) -> list[str]:
        """The targets `entries` (some of this list's) stand for now, as `current` has them."""
        out: list[str] = []
        for e in self.entries:
            if e in entries:
                out += [t for t in self.known.get(e, [e]) if t not in out]
        return out

    def due(self) -> bool:
        """Whether a name should be resolved again now."""
        return self.dynamic and time.monotonic() >= self.next_at

    def soon(self) -> None:
        """A call to one of the targets failed: resolve again once ``retry_s`` has passed
        since the last time (the worker may be gone, and another in its place)."""
        self.next_at = min(self.next_at, self.last + self.retry_s)

    async def refresh(self) -> bool:
        """Resolve every name once; whether ``current`` changed. Never raises: a name that does
        not resolve keeps its last addresses (said once, and tried again after ``retry_s``)."""
        before = self.current()
        self.last = time.monotonic()
        results = await asyncio.gather(*(self._resolve(n) for n in self.names))
        for name, got in zip(self.names, results, strict=True):
            if isinstance(got, list):
                self.known[name] = got
                if name in self.failing:
                    self.failing.discard(name)
                    self.say(f"{name} resolves again: {', '.join(got)}")
            elif name not in self.failing:
                self.failing.add(name)
                kept = ", ".join(self.known.get(name, [])) or f"{name} itself, as gRPC resolves it"
                self.say(f"{name} does not resolve ({got}); using {kept}")
        wait = self.retry_s if self.failing else self.every_s
        self.next_at = self.last + wait
        return self.current() != before

    async def _resolve(self, name: str) -> list[str] | str:
        hp = host_port(name)
        assert hp is not None  # (a name is a HOST:PORT)
        try:
            got = await asyncio.wait_for(self.resolver(*hp), self.timeout_s)
        except TimeoutError:
            return f"no answer in {self.timeout_s:.0f} s"
        except (OSError, ValueError) as exc:  # socket.gaierror is an OSError
            return str(exc) or type(exc).__name__
        return list(dict.fromkeys(got)) if got else "no address"
