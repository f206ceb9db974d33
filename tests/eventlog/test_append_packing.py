"""What `Appender._call` sends (no Redis: the script call captured): a plain-tuple outbox packs
exactly as the same `OutboxCommand`s, numbers as text, bytes as arguments of their own after
the records; and the engine's usual outbox (`RedisSide._outbox`: a deadline moved on) packs
exactly as the general way would pack the same effects."""

from __future__ import annotations

from typing import Any

import msgspec
import redis.asyncio as aioredis

from services.contracts.streams import Layout
from services.engine.side import Effects, RedisSide, _member
from services.eventlog.appends import Append, Appender, Command, OutboxCommand
from services.eventlog.store import Snapshot
from services.redisinfra.batching import AutoPipeline


def _appender() -> tuple[Appender, list[tuple[list[str], list[bytes]]]]:
    client = aioredis.Redis()  # (never connected: the call is captured)
    appender = Appender(client, AutoPipeline(client), Layout("t"))
    sent: list[tuple[list[str], list[bytes]]] = []

    async def capture(keys: list[str], packed: list[bytes]) -> Any:
        sent.append((keys, packed))
        return []

    appender._evalsha = capture  # type: ignore[method-assign,assignment]
    return appender, sent


async def _packed(batch: list[Append]) -> tuple[list[str], list[Any], list[bytes]]:
    appender, sent = _appender()
    await appender._call(batch)
    ((keys, packed),) = sent
    return keys, msgspec.msgpack.decode(packed[0]), packed[1:]


def _batch(outboxes: list[list[Command]]) -> list[Append]:
    snap = Snapshot(3, b"h" * 32, b"state")
    return [
        Append("g1", "t:g1:log", 0, [b"r1", b"r2"], outboxes[0], b"mark"),
        Append("g2", "t:g2:log", 4, [b"r3"], outboxes[1], b"", snap, "t:g2:snap"),
        Append("g3", "t:g3:log", 1, [b"r4"], outboxes[2]),
    ]


async def test_plain_tuples_pack_as_outbox_commands() -> None:
    named: list[list[Command]] = [
        [OutboxCommand("ZREM", "t:z", ("g1|1",)), OutboxCommand("ZADD", "t:z", (7, "g1|2"))],
        [OutboxCommand("XADD", "t:s", ("*", "f", b"\x00raw", "n", 5))],
        [],
    ]
    plain: list[list[Command]] = [[tuple(c) for c in o] for o in named]  # type: ignore[misc]
    assert all(type(c) is tuple for o in plain for c in o)
    assert await _packed(_batch(plain)) == await _packed(_batch(named))
    keys, args, blobs = await _packed(_batch(plain))
    assert keys == ["t:g1:log", "t:z", "t:g2:log", "t:s", "t:g2:snap", "t:g3:log"]
    # per append: log key index, expected, n records, m items, mark (False: in the blobs),
    # k bytes arguments, snapshot key index (0: none) [and its version]; then its outbox
    assert args == [
        3,
        *(1, 0, 2, 9, False, 0, 0, "ZREM", 2, 1, "g1|1", "ZADD", 2, 2, "7", "g1|2"),
        *(3, 4, 1, 8, "", 1, 5, 3, "XADD", 4, 5, "*", "f", False, "n", "5"),
        *(6, 1, 1, 0, "", 0, 0),
    ]
    assert blobs == [b"mark", b"r1", b"r2", b"r3", b"\x00raw", b"h" * 32, b"state", b"r4"]


async def test_the_usual_outbox_packs_as_one_zmove() -> None:
    """The usual outbox (a deadline moved on) is one ZMOVE of the members and the time the
    general way's ZREM and ZADD carry, packed as that ZMOVE would be as an OutboxCommand."""
    side = RedisSide(aioredis.Redis(), "t")
    effects = Effects(clear=11, deadline=(12, 1_700_000_000_123))
    fast = side._outbox("g1", effects)
    assert all(type(c) is tuple for c in fast)
    key = side.deadlines_key("g1")
    zmove = OutboxCommand("ZMOVE", key, (_member("g1", 11), 1_700_000_000_123, _member("g1", 12)))
    assert await _packed(_batch([fast, [], []])) == await _packed(_batch([[zmove], [], []]))
    _, args, _ = await _packed(_batch([fast, [], []]))
    assert args[1:8] == [1, 0, 2, 6, False, 0, 0]  # one command: 3 + its 3 arguments
    assert args[8:14] == ["ZMOVE", 2, 3, "g1|11", "1700000000123", "g1|12"]
    # effects the usual way does not cover go the general way (no clear; a message)
    assert side._outbox("g1", Effects(deadline=(12, 5))) == [("ZADD", key, (5, "g1|12"))]
