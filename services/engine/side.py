"""What a worker keeps in Redis beside the log: each game's secret, decision deadlines, streams.

Keys (services/contracts/streams.py names them; TAG is the game's partition's hash tag, so the
append script may write them all with the log, on one Redis or one Cluster slot):

- `{ns}:{TAG}:g:GAME:secret` — the seed, salt and time limit, written once (SET NX) before the header,
  so any worker can rebuild the game and a crashed create can be retried with the same seed.
  It never enters the log: the header only commits to the seed, the seed reveal opens it.
- `{ns}:{TAG}:deadlines` — per partition, sorted set of `GAME|DECISION` by due time (ms). A human decision is due at
  its time limit (then the server answers by default); a bot decision is due a little later,
  and is then published again (its worker may have died between the append and the publish).
- the partition's shared streams `{ns}:{TAG}:decisions` and `{ns}:{TAG}:finished` (the
  message each one carries: services/contracts/streams.py).

After an answer the engine appends it with its `Effects` (the answered decision's deadline
dropped, the next one's set, a bot's decision published) by `append_with`: on Redis one script
does all of it, so a decision message exists exactly when the entries before it are in the log,
and concurrent games share one pipeline round trip (`batching.AutoPipeline`).
"""

from __future__ import annotations

import logging
from collections.abc import Sequence
from typing import Any, Protocol

import msgspec
import redis.asyncio as aioredis

from ..contracts.streams import (
    BotDecision,
    GameFinished,
    Layout,
    encode,
    partition_key,
    partition_tag,
    stream_of,
)
from ..eventlog.appends import Command
from ..eventlog.redis_store import OutboxCommand, RedisEventStore
from ..eventlog.store import EventStore, Snapshot
from ..redisinfra.batching import AutoPipeline
from ..redisinfra.redis_client import is_cluster

log = logging.getLogger(__name__)


class Secret(msgspec.Struct, frozen=True):
    """What the log must not show before the end: the seed and salt; plus the table's clock
    (the time limit per human decision, and how many time-outs in a row put a seat on 托管:
    0 = never)."""

    seed: int
    salt: bytes
    time_limit_ms: int
    hosted_after: int = 0
    hosted_level: str = ""  # the bot level that plays a seat on 托管 ("": HOSTED_PLAYER's)


Message = BotDecision | GameFinished
"""What an engine worker publishes to the shared streams."""


class Effects(msgspec.Struct, frozen=True):
    """What an append makes due: drop the answered decision's deadline (`clear`), give the new
    one a deadline (`deadline` = (decision, due at ms)), publish `messages`; `push`: bot
    decisions for the bot sessions once the append is in (bot_sessions.py; not written to
    Redis: their deadline stands for them). (A Struct: one is made per answer, and a frozen
    dataclass costs several times as much to make.)"""

    clear: int | None = None
    deadline: tuple[int, int] | None = None
    messages: tuple[Message, ...] = ()
    push: tuple[BotDecision, ...] = ()
    # what is pending after the append, beside its last entry (readside/decisions.py `Mark`:
    # a person's seat stream then needs not ask); b"": none (a bot-only game)
    mark: bytes = b""


class Side(Protocol):
    """The worker's Redis needs beside the EventStore."""

    namespace: str

    async def put_secret(self, game: str, secret: Secret) -> Secret:
        """Store `secret` unless one exists; return the stored one."""
        ...

    async def get_secret(self, game: str) -> Secret | None:
        """The game's secret, if stored."""
        ...

    async def drop_secret(self, game: str) -> None:
        """Forget the secret (after the game is archived)."""
        ...

    async def set_deadline(
        self, game: str, decision: int, at_ms: int, *, only_new: bool = False
    ) -> bool:
        """Make `decision` of `game` due at `at_ms`; with `only_new`, keep an existing time.

        Returns whether the member was new.
        """
        ...

    async def clear_deadline(self, game: str, decision: int) -> None:
        """Forget a deadline."""
        ...

    async def deadline(self, game: str, decision: int) -> int | None:
        """When `decision` of `game` is due (ms), if it has a deadline."""
        ...

    async def due(self, now_ms: int, limit: int = 50) -> list[tuple[str, int]]:
        """Up to `limit` (game, decision) pairs due at `now_ms`."""
        ...

    async def pending_count(self) -> int:
        """How many decisions have a deadline (= are pending)."""
        ...

    async def deadlines_of(self, game: str) -> list[tuple[str, int]]:
        """Every (game, decision) deadline of `game`."""
        ...

    async def publish(self, message: Message) -> None:
        """Append `message` to its shared stream."""
        ...

    async def claim_nonce(self, nonce: str, ttl_ms: int) -> bool:
        """Remember a create request's nonce for `ttl_ms`; False if it was seen already."""
        ...

    async def append_with(
        self, store: EventStore, game: str, expected: int, records: list[bytes], effects: Effects
    ) -> int:
        """Append `records` to the game's log and apply `effects` only if that succeeded;
        returns the new version (VersionConflict as the store raises it)."""
        ...

    async def append_many(
        self,
        store: EventStore,
        appends: Sequence[Appending],
        snapshots: Sequence[Snapshot | None] | None = None,
    ) -> list[int | BaseException]:
        """`append_with` for several games at once (game, expected version, records,
        effects): each checked and applied on its own, in one write where the store allows
        (one script call on Redis); each one's new version or the error it met.
        `snapshots` (one or None per append, if given): each stored once its append is in
        (on Redis in the append's script; `save_snapshot` rules: never beyond the log's
        head); one not stored is logged, never the append's error."""
        ...


Appending = tuple[str, int, list[bytes], Effects]
"""One game's part of `Side.append_many`: (game, expected version, records, effects)."""


async def append_each(
    side: Side,
    store: EventStore,
    appends: Sequence[Appending],
    snapshots: Sequence[Snapshot | None] | None = None,
) -> list[int | BaseException]:
    """`append_many` one game after another (a store that cannot write several at once)."""
    out: list[int | BaseException] = []
    for k, (game, expected, records, effects) in enumerate(appends):
        try:
            out.append(await side.append_with(store, game, expected, records, effects))
        except Exception as exc:  # noqa: BLE001 - this game's outcome
            out.append(exc)
            continue
        if snapshots and snapshots[k] is not None:
            await save_snapshot_after(store, game, snapshots[k])
    return out


async def save_snapshot_after(store: EventStore, game: str, snapshot: Snapshot | None) -> None:
    """Store `snapshot` of `game`, its append just in: a snapshot only saves a reload work,
    so one not stored is logged (the next one will be), never raised."""
    if snapshot is None:
        return
    try:
        await store.save_snapshot(game, snapshot)
    except Exception as exc:  # noqa: BLE001 - not the append's outcome
        log.warning("a snapshot of %s was not stored (the next one will be): %r", game, exc)


async def append_then_apply(
    side: Side, store: EventStore, game: str, expected: int, records: list[bytes], effects: Effects
) -> int:
    """`append_with` in two steps: the append, then each effect (a crash between them leaves
    the new decision without its message until its deadline reposts it)."""
    version = await store.append(game, expected, records)
    await apply_effects(side, game, effects)
    return version


async def apply_effects(side: Side, game: str, effects: Effects, *, only_new: bool = False) -> None:
    """Apply `effects` outside an append script. With `only_new` an existing deadline is kept
    and the messages are published only if the deadline was new (nobody published them)."""
    new = True
    if effects.deadline is not None:
        new = await side.set_deadline(game, *effects.deadline, only_new=only_new)
    if new or not only_new:
        for message in effects.messages:
            await side.publish(message)
    if effects.clear is not None:
        await side.clear_deadline(game, effects.clear)


# `RedisSide.due` on one Redis: every partition's due members in one script call. KEYS: the
# deadlines keys; ARGV: now (ms), the limit per key. The reply: member, score, member, ...
# (each key's earliest first; the client sorts them all). A pipeline of one ZRANGEBYSCORE per
# partition (16) cost the engine's client ~1 ms of Python a sweep round (pack 16 commands,
# parse 16 replies), every 100-250 ms, whether anything was due or not. On a Redis Cluster
# the keys lie in other slots: the pipeline, as before.
DUE_LUA = """
local out, n = {}, 0
for _, key in ipairs(KEYS) do
  local rows = redis.call('ZRANGEBYSCORE', key, '-inf', ARGV[1], 'WITHSCORES', 'LIMIT', 0, ARGV[2])
  for j = 1, #rows do
    n = n + 1
    out[n] = rows[j]
  end
end
return out
"""
# `RedisSide.pending_count` on one Redis: the sum of every partition's ZCARD.
PENDING_LUA = """
local n = 0
for _, key in ipairs(KEYS) do n = n + redis.call('ZCARD', key) end
return n
"""


def _member(game: str, decision: int) -> str:
    return f"{game}|{decision}"


def _parse(member: bytes | str) -> tuple[str, int]:
    text = member.decode() if isinstance(member, bytes) else member
    game, _, decision = text.rpartition("|")
    return game, int(decision)


class RedisSide:
    """Side on Redis (redis-py asyncio, bytes replies)."""

    def __init__(self, client: aioredis.Redis, namespace: str = "arena") -> None:
        self.client = client
        self.namespace = namespace
        self.layout = Layout(namespace)
        self.auto = AutoPipeline(client)
        self._deadline_keys: dict[str, str] = {}  # game -> its deadlines key (every append)
        self._all_deadlines: list[str] | None = None
        self._one = not is_cluster(client)  # one Redis: a script may read every partition
        self._due = client.register_script(DUE_LUA)
        self._pending = client.register_script(PENDING_LUA)

    def _secret_key(self, game: str) -> str:
        return self.layout.game_key(game, "secret")

    def deadlines_key(self, game: str) -> str:
        """The deadlines key of the partition of `game`."""
        key = self._deadline_keys.get(game)
        if key is None:
            if len(self._deadline_keys) >= Layout.MAX_GAMES:
                self._deadline_keys.clear()
            key = self._deadline_keys[game] = self.layout.game_stream_key("deadlines", game)
        return key

    def all_deadlines(self) -> list[str]:
        """Every partition's deadlines key (of the layout's partition count: read once)."""
        keys = self._all_deadlines
        if keys is None:
            n = self.layout.count
            keys = [
                partition_key(self.namespace, partition_tag(p, n), "deadlines") for p in range(n)
            ]
            self._all_deadlines = keys
        return keys

    def stream(self, message: Message) -> str:
        """The key of the shared stream that carries `message` (in its game's partition)."""
        return self.layout.game_stream_key(stream_of(message).name, message.game)

    async def put_secret(self, game: str, secret: Secret) -> Secret:
        """See Side.put_secret."""
        key = self._secret_key(game)
        await self.client.set(key, msgspec.msgpack.encode(secret), nx=True)
        stored = await self.get_secret(game)
        assert stored is not None
        return stored

    async def get_secret(self, game: str) -> Secret | None:
        """See Side.get_secret."""
        data = await self.client.get(self._secret_key(game))
        return None if data is None else msgspec.msgpack.decode(_raw(data), type=Secret)

    async def drop_secret(self, game: str) -> None:
        """See Side.drop_secret."""
        await self.client.delete(self._secret_key(game))

    async def set_deadline(
        self, game: str, decision: int, at_ms: int, *, only_new: bool = False
    ) -> bool:
        """See Side.set_deadline."""
        member = {_member(game, decision): at_ms}
        key = self.deadlines_key(game)
        added = await self.auto.run(lambda p: p.zadd(key, member, nx=only_new))
        return bool(added)

    async def clear_deadline(self, game: str, decision: int) -> None:
        """See Side.clear_deadline."""
        member = _member(game, decision)
        key = self.deadlines_key(game)
        await self.auto.run(lambda p: p.zrem(key, member))

    async def deadline(self, game: str, decision: int) -> int | None:
        """See Side.deadline."""
        score = await self.client.zscore(self.deadlines_key(game), _member(game, decision))
        return None if score is None else int(score)

    async def due(self, now_ms: int, limit: int = 50) -> list[tuple[str, int]]:
        """See Side.due (every partition's, earliest first; on one Redis one script call
        (`DUE_LUA`), on a cluster one pipeline)."""
        if self._one:
            flat: Any = await self._due(keys=self.all_deadlines(), args=[now_ms, limit])
            if not flat:
                return []
            rows = sorted(zip(map(float, flat[1::2]), map(_raw, flat[::2]), strict=True))
            return [_parse(m) for _, m in rows[:limit]]
        async with self.client.pipeline(transaction=False) as pipe:
            for key in self.all_deadlines():
                pipe.zrangebyscore(key, "-inf", now_ms, start=0, num=limit, withscores=True)
            replies: list[Any] = await pipe.execute()
        rows = sorted((float(t), _raw(m)) for reply in replies for m, t in reply)
        return [_parse(m) for _, m in rows[:limit]]

    async def pending_count(self) -> int:
        """See Side.pending_count (on one Redis one script call)."""
        if self._one:
            return int(await self._pending(keys=self.all_deadlines()))
        async with self.client.pipeline(transaction=False) as pipe:
            for key in self.all_deadlines():
                pipe.zcard(key)
            counts: list[Any] = await pipe.execute()
        return sum(int(c) for c in counts)

    async def deadlines_of(self, game: str) -> list[tuple[str, int]]:
        """See Side.deadlines_of (ZSCAN of the game's partition's deadlines)."""
        key = self.deadlines_key(game)
        members = [m async for m, _ in self.client.zscan_iter(key, match=f"{game}|*")]
        return [_parse(m) for m in members if _parse(m)[0] == game]

    async def claim_nonce(self, nonce: str, ttl_ms: int) -> bool:
        """See Side.claim_nonce (`{ns}:nonce:NONCE`, SET NX with the expiry: every worker
        sees the same set, and it bounds itself)."""
        key = f"{self.namespace}:nonce:{nonce}"
        return bool(await self.client.set(key, b"1", nx=True, px=max(1, ttl_ms)))

    async def publish(self, message: Message) -> None:
        """See Side.publish."""
        key, body = self.stream(message), encode(message)
        await self.auto.run(lambda p: p.xadd(key, body))  # type: ignore[arg-type]

    async def append_with(
        self, store: EventStore, game: str, expected: int, records: list[bytes], effects: Effects
    ) -> int:
        """See Side.append_with: one script on Redis (the effects as the append's outbox)."""
        if not isinstance(store, RedisEventStore) or store.client is not self.client:
            return await append_then_apply(self, store, game, expected, records, effects)
        outbox = [OutboxCommand(*c) for c in self._outbox(game, effects)]  # (its type there)
        return await store.append(game, expected, records, outbox, effects.mark)

    async def append_many(
        self,
        store: EventStore,
        appends: Sequence[Appending],
        snapshots: Sequence[Snapshot | None] | None = None,
    ) -> list[int | BaseException]:
        """See Side.append_many: the appends of one batch in as few script calls as the layout
        allows (eventlog/appends.py), each with its effects as its outbox and its snapshot
        (if any) stored by the same script."""
        if not isinstance(store, RedisEventStore) or store.client is not self.client:
            return await append_each(self, store, appends, snapshots)
        return await store.append_many(
            [(g, expected, records, self._outbox(g, fx)) for g, expected, records, fx in appends],
            [fx.mark for _, _, _, fx in appends],
            snapshots,
        )

    def _outbox(self, game: str, effects: Effects) -> list[Command]:
        """The commands of an append's script that carry out `effects`."""
        deadlines = self.deadlines_key(game)
        clear, deadline, messages = effects.clear, effects.deadline, effects.messages
        if clear is not None and deadline is not None and not messages:
            # the usual (a bot's answer): the deadline moved on. One ZMOVE (the script's ZREM
            # then ZADD, appends.py): for Redis one outbox command to unpack, check and run,
            # not two (~4% of its instructions an append). A plain tuple (appends.py
            # `Command`), the members and the score as text (as `_member` and the script's
            # packing would make them): ~0.9 us less an answer than the general way below
            return [
                (
                    "ZMOVE",
                    deadlines,
                    (f"{game}|{clear}", str(deadline[1]), f"{game}|{deadline[0]}"),
                )
            ]
        outbox: list[Command] = []
        if clear is not None:
            outbox.append(OutboxCommand("ZREM", deadlines, (_member(game, clear),)))
        if deadline is not None:
            decision, at_ms = deadline
            outbox.append(OutboxCommand("ZADD", deadlines, (at_ms, _member(game, decision))))
        for message in messages:
            args: list[str | int | bytes] = ["*"]
            for k, v in encode(message).items():
                args += [k, v]
            outbox.append(OutboxCommand("XADD", self.stream(message), tuple(args)))
        return outbox


class MemorySide:
    """Side in memory, for tests without Redis; `published` records every message."""

    def __init__(self, namespace: str = "arena") -> None:
        self.namespace = namespace
        self.secrets: dict[str, Secret] = {}
        self.deadlines: dict[str, int] = {}
        self.published: list[Message] = []
        self.nonces: set[str] = set()  # never expire: a test side lives briefly

    async def put_secret(self, game: str, secret: Secret) -> Secret:
        """See Side.put_secret."""
        return self.secrets.setdefault(game, secret)

    async def get_secret(self, game: str) -> Secret | None:
        """See Side.get_secret."""
        return self.secrets.get(game)

    async def drop_secret(self, game: str) -> None:
        """See Side.drop_secret."""
        self.secrets.pop(game, None)

    async def set_deadline(
        self, game: str, decision: int, at_ms: int, *, only_new: bool = False
    ) -> bool:
        """See Side.set_deadline."""
        m = _member(game, decision)
        new = m not in self.deadlines
        if new or not only_new:
            self.deadlines[m] = at_ms
        return new

    async def clear_deadline(self, game: str, decision: int) -> None:
        """See Side.clear_deadline."""
        self.deadlines.pop(_member(game, decision), None)

    async def deadline(self, game: str, decision: int) -> int | None:
        """See Side.deadline."""
        return self.deadlines.get(_member(game, decision))

    async def due(self, now_ms: int, limit: int = 50) -> list[tuple[str, int]]:
        """See Side.due."""
        rows = sorted((t, m) for m, t in self.deadlines.items() if t <= now_ms)
        return [_parse(m) for _, m in rows[:limit]]

    async def pending_count(self) -> int:
        """See Side.pending_count."""
        return len(self.deadlines)

    async def deadlines_of(self, game: str) -> list[tuple[str, int]]:
        """See Side.deadlines_of."""
        return [p for p in map(_parse, self.deadlines) if p[0] == game]

    async def claim_nonce(self, nonce: str, ttl_ms: int) -> bool:
        """See Side.claim_nonce."""
        if nonce in self.nonces:
            return False
        self.nonces.add(nonce)
        return True

    async def publish(self, message: Message) -> None:
        """See Side.publish."""
        self.published.append(message)

    def decisions(self) -> list[BotDecision]:
        """The decisions messages published so far, in order."""
        return [m for m in self.published if isinstance(m, BotDecision)]

    async def append_with(
        self, store: EventStore, game: str, expected: int, records: list[bytes], effects: Effects
    ) -> int:
        """See Side.append_with (two steps: nothing to make atomic in memory)."""
        return await append_then_apply(self, store, game, expected, records, effects)

    async def append_many(
        self,
        store: EventStore,
        appends: Sequence[Appending],
        snapshots: Sequence[Snapshot | None] | None = None,
    ) -> list[int | BaseException]:
        """See Side.append_many (one after another; the effects as `apply_effects` would
        apply them, without a coroutine each; a snapshot saved after its append)."""
        out: list[int | BaseException] = []
        for k, (game, expected, records, effects) in enumerate(appends):
            try:
                out.append(await store.append(game, expected, records))
            except Exception as exc:  # noqa: BLE001 - this game's outcome
                out.append(exc)
                continue
            if snapshots and snapshots[k] is not None:
                await save_snapshot_after(store, game, snapshots[k])
            if effects.deadline is not None:
                decision, at_ms = effects.deadline
                self.deadlines[_member(game, decision)] = at_ms
            self.published += effects.messages
            if effects.clear is not None:
                self.deadlines.pop(_member(game, effects.clear), None)
        return out


def _raw(value: object) -> bytes:
    """A Redis reply as bytes (the client is created without decode_responses)."""
    if isinstance(value, bytes):
        return value
    if isinstance(value, str):
        return value.encode()
    raise TypeError(f"unexpected Redis reply {value!r}")
