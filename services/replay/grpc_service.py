"""gRPC ReplayService (proto/arena/v1/replay.proto): a thin shim over the replay core.

A seat's token travels in the ``authorization: Bearer TOKEN`` metadata. ``EventEnvelope.hash`` is
sent only to viewers who may see everything (the god view, or any viewer once the game is
over): an entry's chain hash covers its unredacted payload, and a hidden draw is a few card ids,
so its hash would give the cards away to anyone who tries the few thousand possibilities.
"""

from __future__ import annotations

import importlib
from collections.abc import AsyncIterator
from typing import Any

import grpc  # type: ignore[import-untyped,unused-ignore]

from ..errors import BadRequest, checked_game_id, grpc_stream, grpc_unary
from ..eventlog.entry import decode_entry
from ..ports import GRPC_OPTIONS, bind_grpc
from ..proto_gen.arena.v1 import common_pb2, replay_pb2
from ..readside.feed import GameFeed
from ..rpc_guard import interceptors
from ..rules.api import keys
from .core import Replay
from .games import GameFilter, GameSummary

MAX_PAGE = 1000


def summary_pb(g: GameSummary) -> replay_pb2.GameSummary:
    """A lobby summary as its proto message."""
    return replay_pb2.GameSummary(
        game_id=g.id,
        ruleset=g.ruleset,
        start_ms=g.start,
        end_ms=g.end,
        winners=g.winners,
        rules_version=g.rules_version,
        finished=g.finished,
        seats=[
            common_pb2.Seat(seat=i, player=p, bot=b)
            for i, (p, b) in enumerate(zip(g.players, g.bots, strict=False))
        ],
    )


def envelope_pb(
    feed: GameFeed, viewer: int, position: int, data: bytes, with_hash: bool
) -> common_pb2.EventEnvelope:
    """One entry (the envelope of services/readside/entries.py), the viewer's `position`-th,
    as an EventEnvelope: the same JSON as every channel sends, and its chain hash only where
    `with_hash` (a viewer who may see the entry whole)."""
    return common_pb2.EventEnvelope(
        seq=position,
        hash=_hash(feed, viewer, position) if with_hash else b"",
        json=data.decode(),
    )


def _hash(feed: GameFeed, viewer: int, position: int) -> bytes:
    """The chain hash of the viewer's `position`-th entry."""
    return decode_entry(feed.records[feed.positions.seq(viewer, position) - 1]).hash


def _token(context: Any) -> str | None:
    for key, value in context.invocation_metadata() or ():
        if key == "authorization" and str(value).lower().startswith("bearer "):
            return str(value)[7:].strip()
    return None


def _page_token(text: str) -> int:
    """ListGames' page token: the offset of the page, as this server wrote it."""
    if not text:
        return 0
    if not keys.is_number(text) or len(text) > 12:
        raise BadRequest("page_token is not one this server gave")
    return int(text)


class ReplayServicer:
    """ReplayService methods; each decodes, calls one Replay method, encodes. Refusals become
    their status (services/errors.py), never UNKNOWN."""

    def __init__(self, replay: Replay) -> None:
        self.replay = replay

    @grpc_unary
    async def ListGames(self, request: Any, context: Any) -> replay_pb2.ListGamesResponse:
        """Live and archived games; page_token is the offset of the next page."""
        offset = _page_token(request.page_token)
        if request.limit < 0:
            raise BadRequest("limit must not be negative")
        limit = min(request.limit or 100, MAX_PAGE)
        games = await self.replay.list_games(
            GameFilter(ruleset=request.ruleset, player=request.player, limit=0)
        )
        page = games[offset : offset + limit]
        more = offset + limit < len(games)
        self.replay.metrics.listed_games("grpc", len(page))
        return replay_pb2.ListGamesResponse(
            games=[summary_pb(g) for g in page], next_page_token=str(offset + limit) if more else ""
        )

    @grpc_unary
    async def GetGame(self, request: Any, context: Any) -> replay_pb2.GameSummary:
        """One game's summary."""
        return summary_pb(await self.replay.summary(request.game_id))

    @grpc_unary
    async def GetEvents(self, request: Any, context: Any) -> replay_pb2.GetEventsResponse:
        """The viewer's entries at positions from_seq < position <= upto_seq, redacted."""
        page = await self.replay.get_events(
            request.game_id,
            request.viewer,
            _token(context),
            request.from_seq,
            request.upto_seq or None,
        )
        feed = await self.replay.feed(request.game_id)
        full = page.grant.viewer == -2 or page.over
        return replay_pb2.GetEventsResponse(
            events=[
                envelope_pb(feed, page.grant.viewer, p, e, full)
                for p, e in zip(page.positions, page.entries, strict=True)
            ]
        )

    @grpc_stream
    async def StreamGame(self, request: Any, context: Any) -> AsyncIterator[Any]:
        """Live tail, redacted, held ``delay_ms`` (at least the table's delay) behind."""
        batches = await self.replay.stream(
            request.game_id, request.viewer, _token(context), request.from_seq, request.delay_ms
        )
        feed = await self.replay.feed(request.game_id)
        full = request.viewer == -2
        spectators, sent = self.replay.metrics.open["grpc"], self.replay.metrics.sent["grpc"]
        spectators.inc()
        try:
            async for batch in batches:
                for position, data in batch:
                    sent.inc()
                    yield envelope_pb(feed, request.viewer, position, data, full or feed.over)
        finally:
            spectators.dec()

    @grpc_unary
    async def Verify(self, request: Any, context: Any) -> replay_pb2.VerifyResponse:
        """Chain, seed commitment, re-run and reveal of a game."""
        r = await self.replay.verify(checked_game_id(request.game_id))
        d = r.divergence
        return replay_pb2.VerifyResponse(
            ok=r.ok,
            entries=r.entries,
            divergence_seq=d.entry if d else 0,
            divergence_kind=d.kind if d else "",
            reason=d.reason if d else "",
        )


async def start_grpc(replay: Replay, address: str) -> tuple[Any, int]:
    """Start a grpc.aio server with the ReplayService; returns (server, bound port)."""
    stubs = importlib.import_module("services.proto_gen.arena.v1.replay_pb2_grpc")
    server = grpc.aio.server(options=GRPC_OPTIONS, interceptors=interceptors())  # rpc_guard.py
    stubs.add_ReplayServiceServicer_to_server(ReplayServicer(replay), server)
    host, _, port_text = address.rpartition(":")
    port = bind_grpc(server, host, int(port_text), "--port")
    await server.start()
    return server, int(port)
