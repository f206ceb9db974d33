"""`connect(url)`: the asyncio Redis client every Arena service uses.

redis-py's asyncio connection packs each command in pure Python (its sync connection uses
hiredis's C packer when hiredis is installed). Packing was ~11% of an engine worker's CPU under
load, about a microsecond per argument, so with hiredis available (it is a dependency) the
connections made here pack with `hiredis.pack_command`. Everything else is stock redis-py.

A Redis Cluster behind the URL gets redis-py's cluster client (`redis.asyncio.RedisCluster`:
slot routing, MOVED/ASK redirections and failover are redis-py's, none hand-written here):
when `ARENA_REDIS_CLUSTER` is `1` (what `arena up --redis-cluster N` sets for its services),
or `0` for never, or else when the server says `cluster_enabled:1` (one INFO, once per URL).

The single-server client's pool waits for a connection (`WaitingConnectionPool`): redis-py 8's
asyncio pool raises "Too many connections" as soon as more than `max_connections` (100)
commands are in flight at once (seen in `arena bench matchmaking` under load), where waiting a
moment for a connection is what every caller wants. A command waits up to `pool_timeout`
seconds (`POOL_TIMEOUT_S`, 20) for a free connection, then fails with redis-py's
ConnectionError ("No connection available."), which callers already treat as an outage.
redis-py's own `BlockingConnectionPool` does the same but takes an asyncio.Condition and arms a
timer for every command, even with connections free: ~13 us more client CPU per command
(measured: 68 against 55 us per GET, 10 tasks, load 15); this pool pays only when it must wait.
redis-py's cluster client has no waiting pool (its per-node `max_connections`, 100, still
raises MaxConnectionsError). After an outage it closes its idle connections at the first
error, so none of them fails once more after Redis is back.
"""

from __future__ import annotations

import argparse
import asyncio
import collections
import logging
import os
from collections.abc import Iterable
from typing import Any
from urllib.parse import urlparse

import redis
import redis.asyncio as aioredis
from redis.asyncio.cluster import ClusterNode, RedisCluster
from redis.exceptions import ConnectionError, DataError, MaxConnectionsError, RedisError
from redis.typing import EncodableT

try:
    from hiredis import pack_command as _hiredis_pack
except ImportError:  # pragma: no cover - hiredis is a dependency; stock packing without it
    _hiredis_pack = None  # type: ignore[assignment]


class HiredisPackConnection(aioredis.Connection):
    """A TCP connection whose commands are packed by hiredis (same bytes, C speed)."""

    def pack_command(self, *args: EncodableT) -> list[bytes]:
        """See redis.asyncio.Connection.pack_command."""
        assert _hiredis_pack is not None
        first = args[0]
        if isinstance(first, str):  # 'CONFIG GET' and the like: words go as separate args
            args = tuple(first.encode().split()) + args[1:]
        elif isinstance(first, bytes) and b" " in first:
            args = tuple(first.split()) + args[1:]
        try:
            return [_hiredis_pack(args)]  # type: ignore[arg-type]
        except TypeError:
            pass  # a bytearray or memoryview (copied to bytes), or a bad argument
        try:
            packed: bytes = _hiredis_pack(
                tuple(  # type: ignore[arg-type]
                    bytes(a) if isinstance(a, (bytearray, memoryview)) else a for a in args
                )
            )
            return [packed]
        except TypeError as exc:  # what redis-py's encoder says of bool/None/objects
            raise DataError(f"Invalid input in command {args[:1]!r}: {exc}") from None

    def pack_commands(self, commands: Iterable[Iterable[EncodableT]]) -> list[bytes]:
        """See redis.asyncio.Connection.pack_commands."""
        return [b"".join(self.pack_command(*cmd)[0] for cmd in commands)]


class WaitingConnectionPool(aioredis.ConnectionPool):
    """redis-py's asyncio ConnectionPool, except that a command finding all `max_connections`
    in use waits (first come, first served) up to `timeout` seconds (None: for ever) for one to
    be released, instead of raising MaxConnectionsError; then ConnectionError."""

    def __init__(self, *args: Any, timeout: float | None = 20.0, **kwargs: Any) -> None:
        super().__init__(*args, **kwargs)
        self.timeout = timeout
        self._waiters: collections.deque[asyncio.Future[None]] = collections.deque()

    async def get_connection(self, *args: Any, **kwargs: Any) -> Any:
        """See ConnectionPool.get_connection; waits while every connection is in use."""
        deadline: float | None = None
        woken = False
        while True:
            if self.can_get_connection():
                try:
                    return await super().get_connection()  # type: ignore[no-untyped-call]
                except MaxConnectionsError:
                    pass  # taken while the pool's lock was awaited: wait again
            loop = asyncio.get_running_loop()
            if deadline is None and self.timeout is not None:
                deadline = loop.time() + self.timeout
            waiter: asyncio.Future[None] = loop.create_future()
            if woken:  # woken, then beaten to the connection: first in line again
                self._waiters.appendleft(waiter)
            else:
                self._waiters.append(waiter)
            woken = False
            try:
                left = None if deadline is None else max(0.0, deadline - loop.time())
                await asyncio.wait_for(waiter, left)
                woken = True
            except TimeoutError:
                raise ConnectionError("No connection available.") from None
            finally:
                if waiter in self._waiters:
                    self._waiters.remove(waiter)
                if not woken and waiter.done() and not waiter.cancelled():
                    self._wake()  # woken, then cancelled or timed out: pass the turn on

    async def release(self, connection: Any) -> None:
        """See ConnectionPool.release; hands the turn to the first waiter.

        A connection that comes back closed was closed by an error (redis-py closes it on a
        ConnectionError or TimeoutError; a command that succeeded leaves it open): Redis went
        away, so every idle connection is closed too. Otherwise each of them, dead since the
        server restarted, would fail its next command once after Redis is back (redis-py
        retries nothing by default, and a blind retry could run a script twice)."""
        await super().release(connection)
        if not connection.is_connected and self._available_connections:
            await self.disconnect(inuse_connections=False)
        if self._waiters:
            self._wake()

    def _wake(self) -> None:
        while self._waiters:
            waiter = self._waiters.popleft()
            if not waiter.done():
                waiter.set_result(None)
                return


class _TopologyChatter(logging.Filter):
    """redis-py's cluster client logs an error for every topology refresh that fails while a
    node is away (~23 lines a minute from one `arena tournament` against a dead cluster); the
    loops that meet the outage say it once, in their own words (reconnect.Outage), and when it
    ends. So these records are dropped; the client's other logging stays."""

    def filter(self, record: logging.LogRecord) -> bool:
        return not str(record.msg).startswith("Topology refresh")


_CHATTER = _TopologyChatter()
for _name in ("redis.asyncio.cluster", "redis.cluster"):
    logging.getLogger(_name).addFilter(_CHATTER)

CLUSTER_ENV = "ARENA_REDIS_CLUSTER"
MAX_CONNECTIONS = 100  # redis-py's own default for its asyncio pool
POOL_TIMEOUT_S = 20.0  # how long a command waits for a free connection (WaitingConnectionPool)
_probed: dict[str, bool] = {}


def node_urls(url: str) -> list[str]:
    """The single-node URLs of `url`. A URL may name several nodes of one cluster,
    ``redis://HOST:PORT,HOST:PORT,…/DB`` (credentials and query apply to all): the cluster
    client starts from whichever answers, so a service started while one node is dead still
    finds the cluster (redis-py's from_url takes one node)."""
    scheme, sep, rest = url.partition("://")
    netloc, slash, tail = rest.partition("/")
    if not sep or "," not in netloc:
        return [url]
    auth, at, hosts = netloc.rpartition("@")
    return [f"{scheme}://{auth}{at}{h}{slash}{tail}" for h in hosts.split(",") if h]


def cluster_behind(url: str) -> bool:
    """Whether `url` is a Redis Cluster: `ARENA_REDIS_CLUSTER` (1/0) if set, else a URL naming
    several nodes, else the server's INFO (asked once per URL; a server that cannot be reached
    counts as no cluster)."""
    flag = os.environ.get("ARENA_REDIS_CLUSTER", "").strip().lower()  # = CLUSTER_ENV
    if flag in ("1", "yes", "true"):
        return True
    if flag in ("0", "no", "false"):
        return False
    if len(node_urls(url)) > 1:
        return True
    if url not in _probed:
        try:
            with redis.Redis.from_url(url, socket_timeout=2, socket_connect_timeout=2) as probe:
                info: Any = probe.info("cluster")
            _probed[url] = bool(int(info.get("cluster_enabled", 0)))
        except (RedisError, OSError, ValueError):
            return False  # not remembered: the next connect asks again
    return _probed[url]


def is_cluster(client: object) -> bool:
    """Whether `client` is a cluster client (its multi-key commands must stay in one slot)."""
    return isinstance(client, RedisCluster)


def decodes_responses(client: Any) -> bool:
    """Whether `client` was made with decode_responses=True."""
    if is_cluster(client):
        return bool(client.get_encoder().decode_responses)
    return bool(client.connection_pool.connection_kwargs.get("decode_responses"))


def connect(
    url: str,
    *,
    cluster: bool | None = None,
    pool_timeout: float | None = POOL_TIMEOUT_S,
    **kwargs: Any,
) -> aioredis.Redis:
    """An asyncio client for `url`: a cluster client if `cluster` (default: `cluster_behind`),
    else one that packs with hiredis over redis:// TCP (hiredis encodes text as strict UTF-8:
    other encodings, other schemes and machines without hiredis get redis-py's stock
    connections) from a pool where a command waits up to `pool_timeout` seconds (None: for
    ever) for one of `max_connections` connections. Close it with `aclose()`."""
    if cluster if cluster is not None else cluster_behind(url):
        # The cluster client is typed apart from Redis but offers the same commands; callers
        # that must treat it differently ask `is_cluster`.
        nodes = node_urls(url)
        if len(nodes) == 1:
            client: Any = RedisCluster.from_url(url, **kwargs)
            return client  # type: ignore[no-any-return]
        first = urlparse(nodes[0])  # the options of the URL (password, TLS …) apply to all
        for name, value in (("username", first.username), ("password", first.password)):
            if value:
                kwargs.setdefault(name, value)
        if first.scheme == "rediss":
            kwargs.setdefault("ssl", True)
        starts = [
            ClusterNode(urlparse(n).hostname or "127.0.0.1", urlparse(n).port or 6379)
            for n in nodes
        ]
        client = RedisCluster(startup_nodes=starts, **kwargs)
        return client  # type: ignore[no-any-return]
    kwargs.setdefault("max_connections", MAX_CONNECTIONS)
    stock_text = (
        kwargs.get("encoding", "utf-8").lower().replace("_", "-") in ("utf-8", "utf8")
        and kwargs.get("encoding_errors", "strict") == "strict"
    )
    if _hiredis_pack is not None and url.startswith("redis://") and stock_text:
        kwargs["connection_class"] = HiredisPackConnection
    pool = WaitingConnectionPool.from_url(url, timeout=pool_timeout, **kwargs)
    return aioredis.Redis.from_pool(pool)


LOCAL_REDIS = "redis://127.0.0.1:6379/0"
REDIS_SCHEMES = ("redis://", "rediss://", "unix://")


def redis_url(text: str) -> str:
    """An argparse type: a Redis URL (redis://HOST:PORT/DB, rediss://…, unix://PATH)."""
    if not text.startswith(REDIS_SCHEMES):
        raise argparse.ArgumentTypeError(f"want redis://HOST:PORT/DB (got {text!r})")
    return text


def redis_options(
    p: argparse.ArgumentParser, *, start: bool = False, namespace: bool = True
) -> None:
    """``--redis-url`` (and ``--namespace``) of a command that talks to Redis.

    A service defaults to $REDIS_URL, else the local Redis; with ``start`` the command starts a
    throw-away redis-server when neither $REDIS_URL nor the flag names one.
    """
    g = p.add_argument_group("Redis")
    if start:  # None: the command looks at $REDIS_URL when it runs, then starts its own
        g.add_argument(
            "--redis-url",
            type=redis_url,
            default=None,
            help="use this Redis (default: $REDIS_URL, else start a redis-server)",
        )
    else:
        g.add_argument(
            "--redis-url",
            type=redis_url,
            default=os.environ.get("REDIS_URL", LOCAL_REDIS),
            help="the Redis to use ($REDIS_URL if set)",
        )
    if namespace:
        g.add_argument("--namespace", default="arena", help="Redis key and stream prefix")
