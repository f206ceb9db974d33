"""Telling a bot account where it sits: its inbox, a Redis stream the Bot API reads for it.

Whoever seats a bot writes here (a tournament's runner, in the `arena tournament` process or the
web server; the Bot API when the matchmaker seats the bot's ticket), and the Bot API's
`GET /api/bot/events` reads it for the bot (services/play/botapi.py). Keys, by bot player id:

    {ns}:play:bot:ID:seats      stream of SeatNotice (field `m`, JSON), at most INBOX_MAX entries
    {ns}:play:bot:ID:g:GAME     the seat, set once (NX) for SEATED_TTL_S: a seat is announced once

The stream's reader is the bot, from the id it last saw (SSE Last-Event-ID): no consumer group;
a bot that lost its place lists its live seats again (`GET /api/bot/games`). An entry grants
nothing: the Bot API lets a bot into a seat only if the game's header names it there.
"""

from __future__ import annotations

from typing import Any

import msgspec
import redis.asyncio as aioredis

INBOX_MAX = 1000
SEATED_TTL_S = 7 * 24 * 3600


class SeatNotice(msgspec.Struct, frozen=True):
    """An entry of a bot's inbox: it sits at ``seat`` of ``game``."""

    game: str
    seat: int


def bot_key(namespace: str, player: str) -> str:
    """The prefix of a bot account's keys."""
    return f"{namespace}:play:bot:{player}"


def inbox_key(namespace: str, player: str) -> str:
    """The stream of a bot's seats."""
    return f"{bot_key(namespace, player)}:seats"


async def bot_name(client: aioredis.Redis, namespace: str, player: str) -> str | None:
    """The name of bot account ``player`` (None: no such account)."""
    name: Any = await client.hget(bot_key(namespace, player), "name")
    return None if name is None else name.decode() if isinstance(name, bytes) else str(name)


async def announce(
    client: aioredis.Redis, namespace: str, player: str, game: str, seat: int
) -> bool:
    """Say in ``player``'s inbox that it sits at ``seat`` of ``game`` (once: a repeat is a
    no-op); whether this call said it."""
    first = await client.set(
        f"{bot_key(namespace, player)}:g:{game}", seat, nx=True, ex=SEATED_TTL_S
    )
    if not first:
        return False
    body = msgspec.json.encode(SeatNotice(game, seat))
    await client.xadd(inbox_key(namespace, player), {"m": body}, maxlen=INBOX_MAX, approximate=True)
    return True


async def read_inbox(
    client: aioredis.Redis,
    namespace: str,
    player: str,
    after: str = "0",
    block_ms: int | None = None,
    count: int = 100,
) -> list[tuple[str, SeatNotice]]:
    """The seats announced after stream id ``after`` (waiting up to ``block_ms`` for one)."""
    key = inbox_key(namespace, player)
    reply: Any = await client.xread({key: after}, count=count, block=block_ms)
    pairs = reply.items() if isinstance(reply, dict) else (reply or [])
    out: list[tuple[str, SeatNotice]] = []
    for _, rows in pairs:
        entries = rows[0] if isinstance(reply, dict) else rows  # RESP3 map / RESP2 list
        for entry_id, fields in entries:
            try:
                notice = msgspec.json.decode(fields[b"m"], type=SeatNotice)
            except (KeyError, msgspec.MsgspecError):
                continue
            out.append((entry_id.decode() if isinstance(entry_id, bytes) else entry_id, notice))
    return out
