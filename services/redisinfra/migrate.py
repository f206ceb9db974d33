"""`arena migrate`: move a single-Redis layout from before partitions into the partitioned one.

Before partitions (services/contracts/streams.py) a game's keys were `NS:{GAME}:log`, `:snap`
and `:secret`, the deadlines one sorted set `NS:deadlines`, and the shared streams one stream
each, `NS:matches`, `NS:decisions`, `NS:finished`. `migrate` moves, in one pass:

- each game's keys to `game_key` (RENAME: the old layout only ever ran on one Redis);
- each deadline member `GAME|DECISION` to its game's partition's deadlines set;
- each shared-stream entry a group may still need (pending, or after the slowest group's
  last-delivered id) to the stream of its game's partition (a new entry id; every consumer
  treats a repeated message as a no-op: create is idempotent, a decision's id makes a second
  answer a no-op, ratings count a game once), then drops the old streams and set;

and records the partition count in `NS:partitions`. Ratings (`NS:{rt}:...`), tickets and tables
(`NS:{mm}:...`) and the archive folder are the same in both layouts. Run it with the platform
stopped; running it again finds nothing to move. `check_layout` (services call it at start)
refuses to run on an old layout, or with another partition count than the one recorded.

`arena migrate --to URL` (`copy_namespace`) copies a namespace from one Redis into another,
e.g. a Redis Cluster. The partitioned layout is the same on one Redis and on a cluster (every
key of a game and of its partition's streams carries the partition's hash tag; the
matchmaker's keys `{mm}`, the ratings' `{rt}`), so moving a platform past one Redis is a copy of
its keys, nothing renamed: each key of the namespace is read with DUMP and written with
RESTORE, its time to live kept. DUMP carries a stream whole (entries, consumer groups, each
group's pending entries and last-delivered id), so every message a consumer still owes is still
owed on the target, and services started on it go on where they stopped. Run it with the
platform stopped (a key written during the copy may be missed); the source must be in the
partitioned layout (`arena migrate` first), and the target must not hold the namespace yet
(nothing is overwritten). The source is left as it was.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from dataclasses import asdict, dataclass, field
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import ResponseError

from ..contracts.streams import (
    FIELD,
    SHARED,
    BadMessage,
    decode,
    game_key,
    game_stream_key,
    partitions,
)
from .reconnect import is_outage
from .redis_client import connect, is_cluster, redis_options, redis_url

KINDS = ("log", "snap", "secret")
LEGACY_SHARED = tuple(s.name for s in SHARED) + ("deadlines",)


class OldLayout(RuntimeError):
    """The Redis holds the layout from before partitions (run `arena migrate`), or another
    partition count than this process's."""


def partitions_key(namespace: str) -> str:
    """Where the partition count of a namespace is recorded."""
    return f"{namespace}:partitions"


async def check_layout(client: aioredis.Redis, namespace: str) -> int:
    """Record this process's partition count, or check it against the recorded one; OldLayout
    if the namespace still holds the layout from before partitions."""
    p = partitions()
    key = partitions_key(namespace)
    if await client.set(key, p, nx=True):
        if await _legacy_keys(client, namespace):
            await client.delete(key)
            raise OldLayout(
                f"Redis holds namespace {namespace!r} in the layout from before partitions: "
                "stop the platform and run `arena migrate` once"
            )
        return p
    recorded = int(await client.get(key) or p)
    if recorded != p:
        raise OldLayout(
            f"namespace {namespace!r} is laid out in {recorded} partitions, this process uses "
            f"{p} (set ARENA_PARTITIONS={recorded})"
        )
    return p


async def _legacy_keys(client: aioredis.Redis, namespace: str) -> list[str]:
    names = [f"{namespace}:{n}" for n in LEGACY_SHARED]
    found = []
    for name in names:  # one key each: a cluster client may not EXISTS across slots
        if await client.exists(name):
            found.append(name)
    return found


@dataclass
class Moved:
    """What one `migrate` moved."""

    games: int = 0
    keys: int = 0
    deadlines: int = 0
    messages: dict[str, int] = field(default_factory=dict)
    partitions: int = 0


async def migrate(client: aioredis.Redis, namespace: str) -> Moved:
    """Move `namespace` from the old layout into the partitioned one (see the module doc)."""
    if is_cluster(client):
        raise OldLayout("the layout from before partitions only ran on one Redis; point at it")
    out = Moved(partitions=partitions())
    games: set[str] = set()
    async for raw in client.scan_iter(match=f"{namespace}:{{*}}:*", count=1000):
        key = raw.decode() if isinstance(raw, bytes) else str(raw)
        head, _, kind = key.rpartition(":")
        if kind not in KINDS or not head.startswith(f"{namespace}:{{") or not head.endswith("}"):
            continue
        game = head[len(namespace) + 2 : -1]
        if "{" in game or "}" in game or ":" in game:
            continue  # a partition's key ({TAG}:...), the matchmaker's ({mm}) or ratings' ({rt})
        await client.rename(key, game_key(namespace, game, kind))
        games.add(game)
        out.keys += 1
    out.games = len(games)
    old = f"{namespace}:deadlines"
    rows: Any = await client.zrange(old, 0, -1, withscores=True)
    for member, score in rows:
        text = _id(member)
        game = text.rpartition("|")[0]
        await client.zadd(game_stream_key(namespace, "deadlines", game), {text: score})
        out.deadlines += 1
    await client.delete(old)
    for stream in SHARED:
        out.messages[stream.name] = await _move_stream(client, namespace, stream)
    await client.set(partitions_key(namespace), out.partitions)
    return out


async def _move_stream(client: aioredis.Redis, namespace: str, stream: Any) -> int:
    old = f"{namespace}:{stream.name}"
    if not await client.exists(old):
        return 0
    try:
        groups: Any = await client.xinfo_groups(old)
    except ResponseError:
        groups = []
    needed: set[str] = set()
    start = "-"
    if groups:
        lasts = sorted((_id(g["last-delivered-id"]) for g in groups), key=_key)
        start = f"({lasts[0]}" if lasts[0] != "0-0" else "-"
        for g in groups:
            pending: Any = await client.xpending_range(old, g["name"], "-", "+", 1_000_000)
            needed |= {_id(p["message_id"]) for p in pending}
    rows: Any = await client.xrange(old, start, "+")
    wanted = {_id(i): f for i, f in rows}
    for mid in needed - set(wanted):
        found: Any = await client.xrange(old, mid, mid)
        wanted.update({_id(i): f for i, f in found})
    moved = 0
    for mid in sorted(wanted, key=_key):
        fields = wanted[mid]
        try:
            message = decode(fields, stream.message)
        except BadMessage:
            continue  # not a message of this stream: the old dead letters keep it
        game = getattr(message, "match_id", None) or message.game
        key = game_stream_key(namespace, stream.name, game)
        await client.xadd(key, {FIELD: fields.get(FIELD) or fields[b"match"]})
        moved += 1
    await client.delete(old)
    return moved


def _id(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


def _key(entry_id: str) -> tuple[int, int]:
    ms, _, seq = entry_id.partition("-")
    return int(ms), int(seq or 0)


@dataclass
class Copied:
    """What one copy wrote."""

    keys: int = 0
    bytes: int = 0
    partitions: int = 0


async def _keys(client: aioredis.Redis, namespace: str) -> list[bytes]:
    """Every key of `namespace` (on a cluster client: of every master)."""
    found = [k async for k in client.scan_iter(match=f"{namespace}:*", count=1000)]
    return sorted(k if isinstance(k, bytes) else str(k).encode() for k in found)


async def copy_namespace(source: aioredis.Redis, target: aioredis.Redis, namespace: str) -> Copied:
    """Copy every key of `namespace` from `source` into `target` (see the module doc).

    OldLayout if the source is not in the partitioned layout or the target already holds
    keys of the namespace; nothing is written then."""
    if await _legacy_keys(source, namespace):
        raise OldLayout(
            f"the source holds namespace {namespace!r} in the layout from before partitions: "
            "run `arena migrate` on it first"
        )
    recorded = await source.get(partitions_key(namespace))
    if recorded is None:
        raise OldLayout(f"the source holds no namespace {namespace!r} (no {namespace}:partitions)")
    present = await _keys(target, namespace)
    if present:
        raise OldLayout(
            f"the target already holds {len(present)} keys of namespace {namespace!r} "
            f"(e.g. {present[0].decode(errors='replace')}): copy into an empty one"
        )
    out = Copied(partitions=int(recorded))
    for key in await _keys(source, namespace):
        dumped: Any = await source.dump(key)
        if dumped is None:  # expired or deleted since the scan
            continue
        ttl: Any = await source.pttl(key)
        await target.restore(key, max(0, int(ttl)), dumped)
        out.keys += 1
        out.bytes += len(dumped)
    return out


class Unreachable(RuntimeError):
    """A Redis the command names does not answer: the message names it and its flag."""


async def _reach(sides: list[tuple[aioredis.Redis, str, str]]) -> None:
    """Unreachable naming the first of ``sides`` (client, URL, flag) that does not answer."""
    for client, url, flag in sides:
        try:
            await client.ping()
        except Exception as exc:
            if not is_outage(exc):
                raise
            raise Unreachable(f"cannot reach {url} ({flag}: {type(exc).__name__})") from None


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena migrate` options."""
    p.description = (
        "Move a Redis from the layout before partitions (one matches/decisions/finished "
        "stream) into the partitioned one; with --to, copy the namespace (partitioned) into "
        "another Redis, e.g. a Redis Cluster. Run once, with the platform stopped."
    )
    redis_options(p)
    p.add_argument(
        "--to",
        type=redis_url,
        default=None,
        metavar="URL",
        help="copy the namespace from --redis-url into this Redis or cluster (DUMP/RESTORE: "
        "streams keep their groups and pending entries); default: none (relayout in place)",
    )


def main(args: argparse.Namespace) -> int:
    """`arena migrate`: move (or, with --to, copy), then print what moved as JSON."""

    async def run() -> object:
        client = connect(args.redis_url)
        sides = [(client, args.redis_url, "--redis-url")]
        try:
            if args.to is not None:
                sides.append((connect(args.to), args.to, "--to"))
            await _reach(sides)  # before anything moves: which Redis is down, by its flag
            try:
                if args.to is None:
                    return await migrate(client, args.namespace)
                return await copy_namespace(client, sides[1][0], args.namespace)
            except Exception as exc:
                if is_outage(exc):  # one went away mid-way: name it, not always the source
                    await _reach(sides)
                raise
        finally:
            for side, _, _ in sides:
                await side.aclose()

    try:
        moved = asyncio.run(run())
    except Unreachable as exc:
        print(f"arena migrate: {exc}", file=sys.stderr)
        return 1
    except (OldLayout, OSError) as exc:
        print(f"arena migrate: {exc}", file=sys.stderr)
        return 2
    print(json.dumps(asdict(moved)))  # type: ignore[call-overload]
    return 0
