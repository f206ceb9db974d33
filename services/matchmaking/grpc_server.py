"""The Matchmaker gRPC service: each method decodes, calls the core, encodes.

A `Refused` maps to its status; anything unexpected is INTERNAL, so a client never sees UNKNOWN.
Every call must be signed with the deployment's secret (services/rpc_guard.py: the web server's
play API, the benches and the tests sign theirs); malformed bytes are INVALID_ARGUMENT.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
from collections.abc import AsyncIterator, Iterator
from typing import Any

import grpc
import redis.asyncio as aioredis

from ..errors import abort
from ..ports import GRPC_OPTIONS, bind_grpc
from ..proto_gen.arena.v1 import common_pb2, matchmaker_pb2, matchmaker_pb2_grpc
from ..redisinfra.reconnect import Outage
from ..rpc_guard import interceptors
from .core import TERMINAL, Matchmaker, Refused, TicketInfo
from .rating_store import RatingStore
from .tables import TABLE_ID, OpenTable, bot_levels, settings_of, settings_pb

pb = matchmaker_pb2
STATES = {
    "queued": pb.TicketUpdate.WAITING,
    "matched": pb.TicketUpdate.MATCHED,
    "cancelled": pb.TicketUpdate.CANCELLED,
    "expired": pb.TicketUpdate.EXPIRED,
}
MAX_LEADERBOARD = 500
MAX_TABLES = 200


class Notifier:
    """Wakes WatchTicket streams when the core publishes their ticket ids (one subscription per
    process). A lost message only delays an update until the next heartbeat poll."""

    def __init__(self, client: aioredis.Redis, channel: str) -> None:
        self.client = client
        self.channel = channel
        self.waiters: dict[str, set[asyncio.Event]] = {}

    async def run(self, stop: asyncio.Event) -> None:
        """Listen until `stop` is set; through a Redis outage (or any failure, said once) it
        subscribes again (what was published meanwhile is lost, and reaches the watchers with
        their next heartbeat)."""
        outage = Outage("arena matchmaker: ticket notifier")
        while not stop.is_set():
            try:
                await self._listen(stop)
            except Exception as exc:
                await outage.failed(exc, stop)
            else:
                outage.ok()

    async def _listen(self, stop: asyncio.Event) -> None:
        pubsub = self.client.pubsub()
        try:
            await pubsub.subscribe(self.channel)
            while not stop.is_set():
                msg: Any = await pubsub.get_message(ignore_subscribe_messages=True, timeout=0.5)
                if msg and msg.get("type") == "message":
                    for ticket in msg["data"].decode().split():
                        for event in self.waiters.get(ticket, ()):
                            event.set()
        finally:
            with contextlib.suppress(Exception):
                await pubsub.aclose()  # type: ignore[no-untyped-call,unused-ignore]

    @contextlib.contextmanager
    def watching(self, ticket: str) -> Iterator[asyncio.Event]:
        """An event set whenever `ticket` changes, registered for the `with` block. Register
        before reading the ticket, so a change between the read and the wait is not missed."""
        event = asyncio.Event()
        self.waiters.setdefault(ticket, set()).add(event)
        try:
            yield event
        finally:
            waiting = self.waiters.get(ticket)
            if waiting is not None:
                waiting.discard(event)
                if not waiting:
                    del self.waiters[ticket]


async def _wait(event: asyncio.Event, timeout_s: float) -> None:
    with contextlib.suppress(TimeoutError):
        await asyncio.wait_for(event.wait(), timeout_s)
    event.clear()


def ticket_pb(info: TicketInfo, players: int) -> matchmaker_pb2.Ticket:
    """A ticket as the client sees it."""
    table = TABLE_ID.match(info.mode) is not None
    return pb.Ticket(
        ticket_id=info.ticket,
        player=info.player,
        mode="" if table else info.mode,
        players=players,
        enqueued_ms=info.enqueued_ms,
        expires_ms=info.expires_ms,
        table=info.mode if table else "",
    )


def table_pb(t: OpenTable) -> matchmaker_pb2.Table:
    """An open table as the client sees it."""
    return pb.Table(
        table_id=t.table,
        settings=settings_pb(t.settings),
        creator=t.creator,
        created_ms=t.created_ms,
        waiting=t.waiting,
    )


def update_pb(info: TicketInfo, now_ms: int) -> matchmaker_pb2.TicketUpdate:
    """A ticket's state as a stream update (game, seat and token once matched)."""
    end = info.done_ms if info.state in TERMINAL and info.done_ms else now_ms
    out = pb.TicketUpdate(state=STATES[info.state], waited_ms=max(0, end - info.enqueued_ms))
    if info.state == "matched":
        out.game_id = info.game
        out.seat.CopyFrom(
            common_pb2.Seat(seat=info.seat, player=info.player, bot=False, name=info.name)
        )
        out.seat_token = info.token
    return out


async def _refuse(context: grpc.aio.ServicerContext[Any, Any], exc: BaseException) -> None:
    """A refusal's status; anything else INTERNAL, logged once (services/errors.py)."""
    await abort(context, exc)


class MatchmakerServicer(matchmaker_pb2_grpc.MatchmakerServicer):
    """The transport shim over `Matchmaker`."""

    def __init__(
        self, mm: Matchmaker, notifier: Notifier, ratings: RatingStore, heartbeat_s: float = 1.0
    ) -> None:
        self.mm = mm
        self.notifier = notifier
        self.ratings = ratings
        self.heartbeat_s = heartbeat_s

    async def Enqueue(self, request: Any, context: Any) -> matchmaker_pb2.Ticket:
        """See matchmaker.proto."""
        try:
            info = await self.mm.enqueue(
                request.player, request.mode, request.players, request.name, request.table
            )
            players = await self.mm.players_of(info.mode)
        except Exception as exc:  # noqa: BLE001 - mapped to a status, never UNKNOWN
            await _refuse(context, exc)
            raise
        return ticket_pb(info, players)

    async def CreateTable(self, request: Any, context: Any) -> matchmaker_pb2.CreateTableResponse:
        """See matchmaker.proto."""
        try:
            try:
                settings = settings_of(request.settings)
            except ValueError as exc:
                raise Refused("INVALID_ARGUMENT", str(exc)) from None
            info = await self.mm.create_table(request.player, request.name, settings)
            listed = await self.mm.tables.one(info.mode)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        out = pb.CreateTableResponse(ticket=ticket_pb(info, request.settings.players))
        if listed is not None:  # (else already started: a one-seat table, or bots at once)
            out.table.CopyFrom(table_pb(listed))
        else:
            out.table.table_id = info.mode
        return out

    async def ListTables(self, request: Any, context: Any) -> matchmaker_pb2.ListTablesResponse:
        """See matchmaker.proto (limit 1-200, default 100; newest first)."""
        try:
            if not 0 <= request.limit <= MAX_TABLES:
                raise Refused("INVALID_ARGUMENT", f"0 <= limit <= {MAX_TABLES}")
            tables = await self.mm.tables.listing(request.limit or 100, newest=True)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        return pb.ListTablesResponse(tables=[table_pb(t) for t in tables])

    async def WatchTicket(
        self, request: Any, context: Any
    ) -> AsyncIterator[matchmaker_pb2.TicketUpdate]:
        """See matchmaker.proto: an update on every change and every heartbeat while queued;
        the stream ends with the final state. Watching keeps the ticket alive."""
        try:
            info: TicketInfo | None = await self.mm.owned(request.ticket_id, request.player)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        with self.notifier.watching(request.ticket_id) as changed:
            while info is not None:
                info = await self.mm.refresh(info.ticket) or info
                yield update_pb(info, self.mm.clock.now_ms())
                if info.state in TERMINAL:
                    return
                await _wait(changed, self.heartbeat_s)

    async def Cancel(self, request: Any, context: Any) -> matchmaker_pb2.CancelResponse:
        """See matchmaker.proto."""
        try:
            done = await self.mm.cancel(request.ticket_id, request.player)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        return pb.CancelResponse(cancelled=done)

    async def QueueStatus(self, request: Any, context: Any) -> matchmaker_pb2.QueueStatusResponse:
        """See matchmaker.proto."""
        try:
            waiting, oldest = await self.mm.status(request.mode, request.players)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        return pb.QueueStatusResponse(waiting=waiting, oldest_wait_ms=oldest)

    async def Leaderboard(self, request: Any, context: Any) -> matchmaker_pb2.LeaderboardResponse:
        """See matchmaker.proto (limit 1-500, default 50)."""
        try:
            mode = self.mm.mode(request.mode)
            if request.offset < 0 or request.limit < 0 or request.limit > MAX_LEADERBOARD:
                raise Refused("INVALID_ARGUMENT", f"offset >= 0, 0 <= limit <= {MAX_LEADERBOARD}")
            rows = await self.ratings.leaderboard(mode.id, request.offset, request.limit or 50)
        except Exception as exc:  # noqa: BLE001
            await _refuse(context, exc)
            raise
        return pb.LeaderboardResponse(
            ratings=[
                pb.Rating(player=p, mu=r.mu, sigma=r.sigma, ordinal=r.ordinal, games=r.games)
                for p, r in rows
            ]
        )

    async def ListModes(self, request: Any, context: Any) -> matchmaker_pb2.ListModesResponse:
        """See matchmaker.proto."""
        return pb.ListModesResponse(
            modes=[
                pb.Mode(
                    id=m.id,
                    ruleset=m.ruleset,
                    players=m.players,
                    options_json=json.dumps(m.options),
                    bot_after_ms=m.policy.bot_after_ms,
                    min_humans=m.policy.min_humans,
                )
                for m in self.mm.modes.values()
            ],
            bot_levels=bot_levels(),
        )


def make_server(
    servicer: MatchmakerServicer, host: str = "127.0.0.1", port: int = 0
) -> tuple[grpc.aio.Server, int, Any]:
    """A grpc.aio server with the Matchmaker and health checking (create it inside the running
    loop); returns (server, bound port, health servicer)."""
    from grpc_health.v1 import health, health_pb2_grpc

    server = grpc.aio.server(  # only callers holding the deployment's secret
        options=GRPC_OPTIONS, interceptors=interceptors(servicer.mm.secret, ["arena.v1.Matchmaker"])
    )
    matchmaker_pb2_grpc.add_MatchmakerServicer_to_server(servicer, server)  # type: ignore[no-untyped-call]
    checker = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    bound = bind_grpc(server, host, port, "--port")
    return server, bound, checker


async def set_serving(checker: Any, serving: bool = True) -> None:
    """Report the process (and the Matchmaker service) to health checks."""
    from grpc_health.v1 import health_pb2

    status = (
        health_pb2.HealthCheckResponse.SERVING
        if serving
        else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in ("", "arena.v1.Matchmaker"):
        await checker.set(name, status)
