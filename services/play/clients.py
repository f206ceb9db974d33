"""The services the play API stands in front of, over gRPC: the matchmaker (tables, tickets) and
the engine workers (answers, decisions, 托管). Every refusal becomes a Refused with the same
reason (errors.py). Create these inside the running event loop (grpc.aio channels bind to it)."""

from __future__ import annotations

import asyncio
import json
import logging
import time
from collections.abc import AsyncIterator
from typing import Any

import grpc

from ..matchmaking.tables import TableSettings, settings_of, settings_pb
from ..proto_gen.arena.v1 import game_pb2, game_pb2_grpc, matchmaker_pb2, matchmaker_pb2_grpc
from ..rpc_guard import signed_channel
from ..targets import RESOLVE_EVERY_S, Resolver, Targets, route
from . import schema
from .errors import from_grpc

TIMEOUT_S = 5.0
TRY_S = 2.0  # with several engine workers: how long a game's worker may take before the next
COOLDOWN_S = 10.0  # a worker that timed out or was unreachable is passed over this long
PASS_OVER = (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED)
log = logging.getLogger(__name__)


def table_of(t: matchmaker_pb2.Table) -> schema.OpenTable:
    """An open table from the matchmaker."""
    return schema.OpenTable(
        table=t.table_id,
        settings=settings_of(t.settings),
        creator=t.creator,
        created_ms=t.created_ms,
        waiting=list(t.waiting),
    )


class Matchmaker:
    """The matchmaker's gRPC service; every call signed with the deployment's secret (it
    refuses any other: services/rpc_guard.py)."""

    def __init__(self, address: str, secret: bytes) -> None:
        self.channel = signed_channel(address, secret)
        self.stub = matchmaker_pb2_grpc.MatchmakerStub(self.channel)  # type: ignore[no-untyped-call]

    async def _call(self, method: str, request: Any) -> Any:
        try:
            return await getattr(self.stub, method)(request, timeout=TIMEOUT_S)
        except grpc.aio.AioRpcError as err:
            raise from_grpc(err, "the matchmaker") from None

    async def modes(self) -> schema.Modes:
        """Every table size of every ruleset, and the bot levels."""
        r = await self._call("ListModes", matchmaker_pb2.ListModesRequest())
        return schema.Modes(
            tables=[
                schema.ModeTable(
                    ruleset=m.ruleset, players=m.players, options=json.loads(m.options_json or "{}")
                )
                for m in r.modes
            ],
            bot_levels=list(r.bot_levels),
        )

    async def tables(self) -> list[schema.OpenTable]:
        """The open tables, newest first (the newest 200)."""
        r = await self._call("ListTables", matchmaker_pb2.ListTablesRequest(limit=200))
        return [table_of(t) for t in r.tables]

    async def create_table(
        self, player: str, name: str, settings: TableSettings
    ) -> matchmaker_pb2.Ticket:
        """Open a table and seat its creator; the creator's ticket."""
        r: matchmaker_pb2.CreateTableResponse = await self._call(
            "CreateTable",
            matchmaker_pb2.CreateTableRequest(
                player=player, name=name, settings=settings_pb(settings)
            ),
        )
        return r.ticket

    async def join(self, player: str, name: str, table: str) -> matchmaker_pb2.Ticket:
        """A ticket at an open table."""
        req = matchmaker_pb2.EnqueueRequest(player=player, name=name, table=table)
        ticket: matchmaker_pb2.Ticket = await self._call("Enqueue", req)
        return ticket

    async def cancel(self, player: str, ticket: str) -> bool:
        """Leave the table (cancel the ticket)."""
        req = matchmaker_pb2.CancelRequest(ticket_id=ticket, player=player)
        r = await self._call("Cancel", req)
        return bool(r.cancelled)

    async def watch(self, player: str, ticket: str) -> AsyncIterator[matchmaker_pb2.TicketUpdate]:
        """The ticket's updates until it ends (watching keeps it alive)."""
        call = self.stub.WatchTicket(
            matchmaker_pb2.WatchTicketRequest(ticket_id=ticket, player=player)
        )
        try:
            async for update in call:
                yield update
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                raise from_grpc(err, "the matchmaker") from None
        finally:
            call.cancel()

    async def close(self) -> None:
        """Close the channel."""
        await self.channel.close()


class Engine:
    """GameService on the engine workers. Any worker serves any game (a game is its log), but a
    game's calls go to one worker while it answers (a hash of its id, as the bot service picks:
    that worker keeps the game hot).

    An address that is a DNS name (compose's ``engine:50051``, Kubernetes' headless
    ``arena-engine:50051``) stands for every worker it resolves to, each its own channel: given
    to gRPC as one target, every call went to one of them (services/targets.py). The names are
    resolved again every `resolve_every_s`, and sooner after a call failed; a plain list of
    addresses is used as it is.

    A hung worker (stopped, wedged) fails nothing: it just never answers (issue 46). So with
    several workers a call waits at most `try_s` for the game's worker; a worker that times out
    or is unreachable is passed over for `cooldown_s` and the call goes to the next one, which
    loads the game from its log (a game taken over after its worker hung is served there too).
    Sending an answer again is safe: the engine applies an answer once (`duplicate`). The last
    worker tried gets the whole `timeout_s`; with one worker, there is no other to try.

    `people`: the people's engines (`arena engine --role people`, the web server's
    `--people-engine`). Every game this client calls for has a person (or a Bot API client) at
    it, so its calls go to those first, by the hash among them, and to the others only when
    they are hung or gone (issue 44: a person's call no longer waits behind the bot-only games'
    sessions on the same event loop). Without any, the hash is over `addresses` as before."""

    def __init__(
        self,
        addresses: list[str],
        *,
        people: list[str] | None = None,
        timeout_s: float = TIMEOUT_S,
        try_s: float = TRY_S,
        cooldown_s: float = COOLDOWN_S,
        resolver: Resolver | None = None,
        resolve_every_s: float = RESOLVE_EVERY_S,
    ) -> None:
        self.people_entries = [a for a in people or [] if a.strip()]
        self.targets = Targets(
            [*addresses, *self.people_entries], resolver, every_s=resolve_every_s
        )
        self.people: list[int] = []  # indices into `addresses`: the people's engines now
        self.timeout_s, self.try_s, self.cooldown_s = timeout_s, try_s, cooldown_s
        self.addresses: list[str] = []  # the workers now (the hash is over these)
        self.stubs: list[Any] = []
        self.channels: dict[str, grpc.aio.Channel] = {}  # address -> its channel
        self.down_until: dict[str, float] = {}  # address -> monotonic: passed over until then
        self._refresh: asyncio.Task[None] | None = None
        self._closing: set[asyncio.Task[None]] = set()
        self._use(self.targets.current())

    def _use(self, addresses: list[str]) -> None:
        """Send calls to `addresses` from now on: a channel for each new one; a channel no
        longer used is closed once the calls on it had time to finish."""
        for a in addresses:
            if a not in self.channels:
                self.channels[a] = grpc.aio.insecure_channel(a)
        for a in [a for a in self.channels if a not in addresses]:
            task = asyncio.create_task(self.channels.pop(a).close(grace=self.timeout_s))
            self._closing.add(task)
            task.add_done_callback(self._closing.discard)
            self.down_until.pop(a, None)
        self.addresses = list(addresses)
        theirs = set(self.targets.of(self.people_entries))
        self.people = [i for i, a in enumerate(addresses) if a in theirs]
        self.stubs = [game_pb2_grpc.GameServiceStub(self.channels[a]) for a in addresses]  # type: ignore[no-untyped-call]

    async def _resolve(self) -> None:
        if await self.targets.refresh():
            log.warning("engine workers now: %s", ", ".join(self.targets.current()))
            self._use(self.targets.current())

    async def _fresh(self) -> None:
        """Resolve the names again when due, without holding up the call (the first call waits
        for the first answer, at most `try_s`: the hash wants every worker)."""
        if not self.targets.due():
            return
        if self._refresh is None or self._refresh.done():
            self._refresh = asyncio.create_task(self._resolve())
        if not self.targets.resolved:
            await asyncio.wait({self._refresh}, timeout=self.try_s)

    def order(self, game: str) -> list[int]:
        """The workers to try for `game` (indices into `addresses`): its own first (the hash
        among the people's engines, else among all: `targets.route`), then the next ones;
        those passed over lately go last."""
        now = time.monotonic()
        ring = route(game, len(self.stubs), self.people, person=True)
        return sorted(ring, key=lambda i: self.down_until.get(self.addresses[i], 0.0) > now)

    async def _call(self, game: str, method: str, request: Any) -> Any:
        await self._fresh()
        addresses, stubs, order = self.addresses, self.stubs, self.order(game)
        for k, i in enumerate(order):
            last = k == len(order) - 1
            try:
                return await getattr(stubs[i], method)(
                    request, timeout=self.timeout_s if last else self.try_s
                )
            except grpc.aio.AioRpcError as err:
                if err.code() in PASS_OVER:
                    self.targets.soon()  # a worker gone: its name may name others now
                if last or err.code() not in PASS_OVER:
                    raise from_grpc(err, "the engine") from None
                self.down_until[addresses[i]] = time.monotonic() + self.cooldown_s
                log.warning(
                    "engine %s: %s on %s of game %s; trying engine %s (this one is passed "
                    "over for %.0f s)",
                    addresses[i],
                    err.code().name,
                    method,
                    game,
                    addresses[order[k + 1]],
                    self.cooldown_s,
                )
        raise AssertionError("unreachable")  # the last worker's error was raised

    async def submit(
        self, game: str, token: str, decision: int, picks: list[str]
    ) -> game_pb2.SubmitActionResponse:
        """Answer the seat's pending decision."""
        req = game_pb2.SubmitActionRequest(
            game_id=game, seat_token=token, decision_id=decision, picks=picks
        )
        r: game_pb2.SubmitActionResponse = await self._call(game, "SubmitAction", req)
        return r

    async def decision(self, game: str, token: str) -> game_pb2.GetDecisionResponse:
        """The pending decision as the token's seat may see it."""
        req = game_pb2.GetDecisionRequest(game_id=game, seat_token=token)
        r: game_pb2.GetDecisionResponse = await self._call(game, "GetDecision", req)
        return r

    async def set_hosted(
        self,
        game: str,
        token: str,
        hosted: bool,
        resign: bool = False,
        level: str = "",
        level_only: bool = False,
    ) -> game_pb2.SetHostedResponse:
        """托管 on or off (at the bot `level` the person chose: "" for as before), or resign;
        `level_only`: the seat's level alone (the person's default, recorded for the seat)."""
        req = game_pb2.SetHostedRequest(
            game_id=game,
            seat_token=token,
            hosted=hosted,
            resign=resign,
            level=level,
            level_only=level_only,
        )
        r: game_pb2.SetHostedResponse = await self._call(game, "SetHosted", req)
        return r

    async def close(self) -> None:
        """Close every channel."""
        if self._refresh is not None:
            self._refresh.cancel()
        for ch in self.channels.values():
            await ch.close()
        await asyncio.gather(*self._closing, return_exceptions=True)
