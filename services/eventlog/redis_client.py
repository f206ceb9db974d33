"""`connect(url)`: the asyncio Redis client every Arena service uses.

redis-py's asyncio connection packs each command in pure Python (its sync connection uses
hiredis's C packer when hiredis is installed). Packing was ~11% of an engine worker's CPU under
load, about a microsecond per argument, so with hiredis available (it is a dependency) the
connections made here pack with `hiredis.pack_command`. Everything else is stock redis-py.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

import redis.asyncio as aioredis
from redis.exceptions import DataError
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


def connect(url: str, **kwargs: Any) -> aioredis.Redis:
    """An asyncio client for `url` (redis:// over TCP packs with hiredis, which encodes text as
    strict UTF-8: other encodings, other schemes and machines without hiredis get redis-py's
    stock connections). Close it with `aclose()`."""
    stock_text = (
        kwargs.get("encoding", "utf-8").lower().replace("_", "-") in ("utf-8", "utf8")
        and kwargs.get("encoding_errors", "strict") == "strict"
    )
    if _hiredis_pack is None or not url.startswith("redis://") or not stock_text:
        return aioredis.Redis.from_url(url, **kwargs)
    pool = aioredis.ConnectionPool.from_url(url, connection_class=HiredisPackConnection, **kwargs)
    return aioredis.Redis.from_pool(pool)
