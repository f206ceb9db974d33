"""Bot accounts and organiser tokens: the credentials of the Bot API and of tournament organisers,
in Redis (so every web server process reads the same), never kept in clear.

* A **bot account** is a player id `b-` + 16 hex digits, a name shown at the table, and a token
  (`bot_…`, 256 random bits) its program sends as `Authorization: Bearer TOKEN`. An operator
  issues one with `arena bot-account create NAME`, an organiser with `POST /api/bot-accounts`.
  The token is shown once; Redis keeps its SHA-256 (`{ns}:play:bottok:SHA` -> the id) and the
  account (`{ns}:play:bot:ID`, a hash: name, owner, created). Revoking deletes the token's key.
* An **organiser token** (`org_…`) lets its holder create tournaments and bot accounts; issued by
  `arena organiser-token create NAME` (whoever can reach the platform's Redis is an operator),
  kept as its SHA-256 (`{ns}:play:org:SHA` -> the organiser's name).
* A bot's **inbox** (services/tournaments/seating.py) says where the bot has been seated: a
  tournament that puts it at a table, or the matchmaker seating its ticket. An entry grants
  nothing: the Bot API lets a bot into a seat only if the game's header names it (botapi.py).
"""

from __future__ import annotations

import hashlib
import re
import secrets
import time
from dataclasses import dataclass
from typing import Any

import redis.asyncio as aioredis

from ..errors import Refused
from ..tournaments import seating

BOT_ID = re.compile(r"^b-[0-9a-f]{16}$")
BOT_TOKEN_PREFIX = "bot_"
ORGANISER_TOKEN_PREFIX = "org_"
MAX_TOKEN = 128
TICKET_TTL_S = 24 * 3600


@dataclass(frozen=True)
class BotAccount:
    """A bot account: its player id (what seats, ratings and tournaments name), its name, who
    issued it, when."""

    player: str
    name: str
    owner: str
    created_ms: int


def _digest(token: str) -> str:
    return hashlib.sha256(token.encode()).hexdigest()


def _s(v: Any) -> str:
    return v.decode() if isinstance(v, bytes) else str(v)


class Accounts:
    """Bot accounts, organiser tokens and bots' inboxes in Redis (module docstring)."""

    def __init__(self, client: aioredis.Redis, namespace: str = "arena") -> None:
        self.client = client
        self.namespace = namespace
        self.prefix = f"{namespace}:play"

    def _bot(self, player: str) -> str:
        return f"{self.prefix}:bot:{player}"

    def _bot_token(self, token: str) -> str:
        return f"{self.prefix}:bottok:{_digest(token)}"

    def _organiser(self, token: str) -> str:
        return f"{self.prefix}:org:{_digest(token)}"

    # ---- bot accounts ---------------------------------------------------------------------------

    async def create_bot(self, name: str, owner: str) -> tuple[BotAccount, str]:
        """A new bot account called ``name`` (already checked), issued by ``owner``, and its
        token (shown once)."""
        player = f"b-{secrets.token_hex(8)}"
        token = BOT_TOKEN_PREFIX + secrets.token_urlsafe(32)
        now = int(time.time() * 1000)
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.hset(
                self._bot(player),
                mapping={"name": name, "owner": owner, "created": now, "tokh": _digest(token)},
            )
            pipe.set(self._bot_token(token), player)
            pipe.zadd(f"{self.prefix}:bots", {player: now})
            await pipe.execute()
        return BotAccount(player, name, owner, now), token

    async def bot(self, player: str) -> BotAccount | None:
        """The account of ``player`` (None: no such bot)."""
        if not BOT_ID.match(player):
            return None
        raw: Any = await self.client.hgetall(self._bot(player))
        if not raw:
            return None
        f = {_s(k): _s(v) for k, v in raw.items()}
        return BotAccount(player, f["name"], f.get("owner", ""), int(f.get("created", 0)))

    async def bot_of(self, token: str) -> BotAccount | None:
        """The bot a token belongs to (None: unknown, revoked or malformed)."""
        if not token.startswith(BOT_TOKEN_PREFIX) or len(token) > MAX_TOKEN:
            return None
        found: Any = await self.client.get(self._bot_token(token))
        return None if found is None else await self.bot(_s(found))

    async def bots(self, limit: int = 200) -> list[BotAccount]:
        """The newest bot accounts."""
        rows: Any = await self.client.zrevrange(f"{self.prefix}:bots", 0, max(0, limit - 1))
        out = [await self.bot(_s(r)) for r in rows]
        return [b for b in out if b is not None]

    async def revoke_bot(self, player: str) -> bool:
        """Revoke a bot's token (its account, games and rating stay); whether it had one."""
        raw: Any = await self.client.hget(self._bot(player), "tokh")
        if raw is None:
            return False
        async with self.client.pipeline(transaction=True) as pipe:
            pipe.delete(f"{self.prefix}:bottok:{_s(raw)}")
            pipe.hdel(self._bot(player), "tokh")
            await pipe.execute()
        return True

    # ---- organisers -----------------------------------------------------------------------------

    async def create_organiser(self, name: str) -> str:
        """A new organiser token for ``name`` (shown once)."""
        token = ORGANISER_TOKEN_PREFIX + secrets.token_urlsafe(32)
        await self.client.set(self._organiser(token), name)
        return token

    async def organiser_of(self, token: str) -> str | None:
        """The organiser a token belongs to (None: unknown, revoked or malformed)."""
        if not token.startswith(ORGANISER_TOKEN_PREFIX) or len(token) > MAX_TOKEN:
            return None
        found: Any = await self.client.get(self._organiser(token))
        return None if found is None else _s(found)

    async def require_organiser(self, token: str | None) -> str:
        """The organiser a token belongs to; Refused UNAUTHENTICATED (401) without a valid one."""
        found = await self.organiser_of(token or "")
        if found is None:
            raise Refused(
                "UNAUTHENTICATED",
                "send an organiser token (`arena organiser-token create NAME`): "
                "Authorization: Bearer",
            )
        return found

    async def revoke_organiser(self, token: str) -> bool:
        """Revoke an organiser token; whether it existed."""
        return bool(await self.client.delete(self._organiser(token)))

    # ---- a bot's seats (its inbox: services/tournaments/seating.py) -----------------------------

    async def seated(self, player: str, game: str, seat: int) -> bool:
        """Announce in ``player``'s inbox that it sits at ``seat`` of ``game`` (once)."""
        return await seating.announce(self.client, self.namespace, player, game, seat)

    async def announced(self, player: str, game: str) -> bool:
        """Whether the bot was told it sits in ``game`` (which may not have started yet)."""
        return bool(await self.client.exists(f"{seating.bot_key(self.namespace, player)}:g:{game}"))

    async def inbox(
        self, player: str, after: str = "0", block_ms: int | None = None, count: int = 100
    ) -> list[tuple[str, seating.SeatNotice]]:
        """The bot's seats announced after stream id ``after`` (waiting up to ``block_ms``)."""
        return await seating.read_inbox(self.client, self.namespace, player, after, block_ms, count)

    # ---- a bot's ticket (a table it waits at) ---------------------------------------------------

    async def set_ticket(self, player: str, ticket: str, table: str) -> None:
        """The bot now waits with ``ticket`` at ``table``."""
        key = f"{self._bot(player)}:ticket"
        await self.client.hset(key, mapping={"ticket": ticket, "table": table})
        await self.client.expire(key, TICKET_TTL_S)

    async def ticket(self, player: str) -> tuple[str, str] | None:
        """(ticket, table) the bot waits with, if any."""
        raw: Any = await self.client.hgetall(f"{self._bot(player)}:ticket")
        if not raw:
            return None
        f = {_s(k): _s(v) for k, v in raw.items()}
        return f["ticket"], f.get("table", "")

    async def clear_ticket(self, player: str, ticket: str) -> None:
        """The bot's ``ticket`` ended (matched, cancelled or expired)."""
        key = f"{self._bot(player)}:ticket"
        current: Any = await self.client.hget(key, "ticket")
        if current is not None and _s(current) == ticket:
            await self.client.delete(key)
