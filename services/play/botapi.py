"""The Bot API: a program of its own (any language) plays Arena's games over HTTP + SSE, as a
person's page does, with a bot account's token (docs/botapi.md; accounts.py).

A bot is seated by a tournament that enters it, or by the matchmaker at a table it joins; either
way the game's header names the bot's player id at that seat, and that is what lets the bot in
(`BotSeats.seat_of`: a seat whose header names anyone else is 403, whatever the bot's inbox
says). The seat itself is the read side's seat view and stream, exactly what a person's seat
gets (readside/seats.py through play/seat.py: the seat's entries redacted for the seat, its
decision with labelled options, and nothing else), and answers go to the engine with a seat
token the server mints for that seat alone: the engine checks them like a person's, applies
the table's clock (a silent bot is answered by the server's default, and after the table's
`hosted_after` time-outs in a row its built-in bot plays the seat until the bot takes it back),
and a bot is rated like a person (the matchmaker's ratings, by its player id).
"""

from __future__ import annotations

import asyncio
import contextlib
import time
from collections import OrderedDict
from collections.abc import AsyncIterator

import msgspec

from ..contracts import tokens
from ..errors import Refused
from ..matchmaking.rating_store import RatingStore
from ..matchmaking.tables import check_name
from ..proto_gen.arena.v1 import matchmaker_pb2
from ..readside.access import NotFound
from ..replay.http import Request
from . import identity, schema
from .accounts import Accounts, BotAccount
from .apiroute import ApiRoute
from .botschema import BotAccount as BotAccountBody
from .botschema import BotAccounts as BotAccountsBody
from .botschema import BotMe, BotSeat, IssuedBot, NewBotAccount, Organiser, Rating, SeatNotice
from .botschema import BotSeats as BotSeatsBody
from .http import lang_of
from .mounted import Mounted, bearer
from .seat import Seats
from .service import Play

TOKEN_TTL_MS = 6 * 3600 * 1000  # a bot seat's token: minted on the hour, reused within it
GAME_START_S = 10.0  # a game just published may take a moment to be started by an engine
# well under redis-py's socket timeout (5 s since redis-py 8): at 5 s the inbox's blocking XREAD
# raced the read timeout, and a TimeoutError read as a Redis outage (the slow 200-game Node-bot
# tournament got 503s so under load); a reader sees no difference (an empty read loops)
INBOX_BLOCK_MS = 2_000
TICKET_POLL_S = 1.0
_json = msgspec.json.Encoder()


def player_of(bot: BotAccount) -> identity.Player:
    """A bot as the seats see a player."""
    return identity.Player(bot.player, bot.name)


class BotSeats(Seats):
    """People's seats (seat.py) for bots: a seat is the bot's when the game's header names the
    bot's player id there (a person's seat, not a built-in bot's), and its token is minted here
    from the deployment's secret."""

    def __init__(self, play: Play, accounts: Accounts, secret: bytes) -> None:
        seats = play.seats
        super().__init__(seats.replay, seats.sessions, seats.engine, seats.limit)
        self.accounts = accounts
        self.secret = secret
        self._tokens: OrderedDict[tuple[str, int], tuple[str, int]] = OrderedDict()

    async def seat_of(self, p: identity.Player, game: str, seat: int) -> identity.Seat:
        """The seat if the game's header names the bot there; 403 otherwise (404: no game)."""
        deadline = time.monotonic() + GAME_START_S
        while True:
            try:
                header = await self.replay.header(game)
                break
            except NotFound:  # announced, not started yet: wait a little, like a person's seat
                if time.monotonic() > deadline or not await self.accounts.announced(p.player, game):
                    raise
                await asyncio.sleep(0.2)
        seats = header.seats
        if not (0 <= seat < len(seats)) or seats[seat].player != p.player or seats[seat].bot:
            raise Refused("PERMISSION_DENIED", f"seat {seat} of game {game} is not this bot's")
        return identity.Seat(game, seat, self._token(game, seat))

    async def keep_level(
        self, player: str, s: identity.Seat, r: dict[str, str] | None = None, wait: bool = False
    ) -> None:
        """A bot account has no default 托管 level (a person's setting): nothing to record."""

    async def _seat_counted(
        self, p: identity.Player, game: str, seat: int
    ) -> tuple[identity.Seat, bool]:
        """See Seats._seat_counted: counted (a refused answer counts too), then the seat from
        the game's header (no round trip; its refusal raised first)."""
        allowed = await self.limit.allow(f"{p.player}:{game}")
        return await self.seat_of(p, game, seat), allowed

    def _token(self, game: str, seat: int) -> str:
        """The seat's token: one per hour and seat (the engine's verifier caches it)."""
        hour = int(time.time() * 1000) // 3_600_000 * 3_600_000
        cached = self._tokens.get((game, seat))
        if cached is not None and cached[1] == hour:
            return cached[0]
        token = tokens.issue(self.secret, game, seat, TOKEN_TTL_MS, now_ms=hour)
        self._tokens[(game, seat)] = (token, hour)
        while len(self._tokens) > 4096:
            self._tokens.popitem(last=False)
        return token


class BotApi:
    """The Bot API's logic (the HTTP handlers are `BotHttp`)."""

    def __init__(self, play: Play, accounts: Accounts, secret: bytes, namespace: str) -> None:
        self.play = play
        self.accounts = accounts
        self.seats = BotSeats(play, accounts, secret)
        self.ratings = RatingStore(accounts.client, namespace)

    async def bot(self, token: str | None) -> identity.Player:
        """The bot a token belongs to; 401 without a valid one."""
        found = await self.accounts.bot_of(token or "")
        if found is None:
            raise Refused("UNAUTHENTICATED", "send a bot account's token: Authorization: Bearer")
        return player_of(found)

    async def organiser(self, token: str | None) -> identity.Player:
        """The organiser a token belongs to; 401 without a valid one."""
        name = await self.accounts.require_organiser(token)
        return identity.Player(f"organiser:{name}", name)

    async def issue(self, organiser: identity.Player, name: str) -> IssuedBot:
        """A new bot account, issued by ``organiser``."""
        try:
            name = check_name(name)
        except ValueError as exc:
            raise Refused("INVALID_ARGUMENT", str(exc)) from None
        bot, token = await self.accounts.create_bot(name, organiser.name)
        return IssuedBot(player=bot.player, name=bot.name, token=token)

    async def listing(self) -> BotAccountsBody:
        """The newest bot accounts."""
        return BotAccountsBody(
            [
                BotAccountBody(player=b.player, name=b.name, owner=b.owner, created_ms=b.created_ms)
                for b in await self.accounts.bots()
            ]
        )

    async def live_seats(self, p: identity.Player) -> list[BotSeat]:
        """The bot's seats in games that are not over (its inbox, newest last)."""
        out: list[BotSeat] = []
        for _, n in await self.accounts.inbox(p.player, "0", None, count=1000):
            try:
                over = (await self.play.replay.feed(n.game)).over
            except Refused:  # published, not started (or gone): say it is on
                over = False
            if not over:
                out.append(BotSeat(game=n.game, seat=n.seat))
        return out

    async def me(self, p: identity.Player) -> BotMe:
        """Who, where, and rated how."""
        ratings: dict[str, Rating] = {}
        for mode in await self.ratings.modes():
            r = await self.ratings.get(mode, p.player)
            if r is not None:
                ratings[mode] = Rating(mu=r.mu, sigma=r.sigma, ordinal=r.ordinal, games=r.games)
        waiting = None
        ticket = await self.accounts.ticket(p.player)
        if ticket is not None:
            waiting = schema.Waiting(table=ticket[1], ticket=ticket[0], players=0, enqueued_ms=0)
        return BotMe(
            player=p.player,
            name=p.name,
            seats=await self.live_seats(p),
            waiting=waiting,
            ratings=ratings,
        )

    async def events(self, p: identity.Player, after: str) -> AsyncIterator[bytes]:
        """SSE frames: `event: seated` for every seat announced in the bot's inbox after stream
        id ``after``, live; while it is open, the table the bot waits at is watched (kept alive)
        and its seat announced once the matchmaker seats it."""
        follow = asyncio.create_task(self._follow_tickets(p))
        try:
            while True:
                for entry_id, n in await self.accounts.inbox(p.player, after, INBOX_BLOCK_MS):
                    after = entry_id
                    body = _json.encode(SeatNotice(game=n.game, seat=n.seat))
                    yield b"id: %s\nevent: seated\ndata: %s\n\n" % (entry_id.encode(), body)
        finally:
            follow.cancel()
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await follow

    async def _follow_tickets(self, p: identity.Player) -> None:
        """Watch the bot's tickets while its events stream is open: a matched one puts the seat
        in its inbox (a ticket nobody watches expires, as a person's does)."""
        updates = matchmaker_pb2.TicketUpdate
        while True:
            found = await self.accounts.ticket(p.player)
            if found is None:
                await asyncio.sleep(TICKET_POLL_S)
                continue
            ticket, _ = found
            try:
                async for u in self.play.mm.watch(p.player, ticket):
                    if u.state == updates.MATCHED:
                        await self.accounts.seated(p.player, u.game_id, u.seat.seat)
                        break
                    if u.state in (updates.CANCELLED, updates.EXPIRED):
                        break
            except Refused as exc:
                if exc.code != "NOT_FOUND":
                    await asyncio.sleep(TICKET_POLL_S)
                    continue
            await self.accounts.clear_ticket(p.player, ticket)

    async def _joined(self, p: identity.Player, t: matchmaker_pb2.Ticket) -> schema.Joined:
        await self.accounts.set_ticket(p.player, t.ticket_id, t.table)
        w = schema.Waiting(
            table=t.table, ticket=t.ticket_id, players=t.players, enqueued_ms=t.enqueued_ms
        )
        return schema.Joined(table=t.table, waiting=w)

    async def _free(self, p: identity.Player) -> None:
        if await self.accounts.ticket(p.player) is not None:
            raise Refused("FAILED_PRECONDITION", "the bot already waits at a table: leave it first")

    async def join(self, p: identity.Player, table: str) -> schema.Joined:
        """Wait at an open table (a bot may play any number of games at once, but wait at one
        table at a time)."""
        await self._free(p)
        return await self._joined(p, await self.play.mm.join(p.player, p.name, table))

    async def quickplay(self, p: identity.Player, body: schema.QuickPlay) -> schema.Joined:
        """Wait at the oldest open table with these settings and a free seat; else open one."""
        await self._free(p)
        want = body.settings
        for t in reversed(await self.play.mm.tables()):
            s = t.settings
            same = (s.ruleset, s.players, s.options) == (want.ruleset, want.players, want.options)
            if same and len(t.waiting) < s.players:
                try:
                    return await self._joined(p, await self.play.mm.join(p.player, p.name, t.table))
                except Refused as exc:
                    if exc.http_status != 409:
                        raise
        return await self._joined(p, await self.play.mm.create_table(p.player, p.name, want))

    async def leave(self, p: identity.Player) -> BotMe:
        """Stop waiting at the table (a no-op if none)."""
        found = await self.accounts.ticket(p.player)
        if found is not None:
            try:
                await self.play.mm.cancel(p.player, found[0])
            except Refused as exc:
                if exc.http_status == 409:
                    raise Refused(
                        "FAILED_PRECONDITION", "the game has started: the bot has a seat"
                    ) from None
                if exc.code != "NOT_FOUND":
                    raise
            await self.accounts.clear_ticket(p.player, found[0])
        return await self.me(p)


class BotRouter(Mounted):
    """The Bot API's routes (botroutes.py) on the play API's plumbing (mounted.py); each handler
    authenticates the bot's (or the organiser's) token before it does anything."""

    prefix = "bot"

    def __init__(self, play: Play, api: BotApi, routes: list[ApiRoute]) -> None:
        super().__init__(play, routes)
        self.api = api
        self.metrics = play.replay.metrics

    async def _bot(self, req: Request) -> identity.Player:
        return await self.api.bot(bearer(req))

    async def _organiser(self, req: Request) -> identity.Player:
        return await self.api.organiser(bearer(req))

    async def bot_me(self, req: Request, w: asyncio.StreamWriter) -> BotMe:
        """See botroutes.py."""
        return await self.api.me(await self._bot(req))

    async def bot_events(self, req: Request, w: asyncio.StreamWriter) -> None:
        """See botroutes.py."""
        p = await self._bot(req)
        after = req.headers.get("last-event-id", "") or req.query.get("after", "") or "0"
        if not _stream_id(after):
            raise Refused("INVALID_ARGUMENT", "Last-Event-ID must be an id the stream sent")
        frames = self.api.events(p, after)
        await self._sse(w, frames, frames)

    async def bot_games(self, req: Request, w: asyncio.StreamWriter) -> BotSeatsBody:
        """See botroutes.py."""
        return BotSeatsBody(await self.api.live_seats(await self._bot(req)))

    async def bot_seat_view(
        self, req: Request, w: asyncio.StreamWriter, game: str, seat: int
    ) -> schema.SeatView:
        """See botroutes.py."""
        return await self.api.seats.view(await self._bot(req), game, seat, lang_of(req))

    async def bot_seat_stream(
        self, req: Request, w: asyncio.StreamWriter, game: str, seat: int
    ) -> None:
        """See botroutes.py."""
        p = await self._bot(req)
        after = req.int_arg("from")
        last = req.headers.get("last-event-id", "")
        if last.isdigit():
            after = int(last)
        items = await self.api.seats.stream(p, game, seat, after, lang_of(req))
        sent = self.metrics.sent["sse"]

        async def frames() -> AsyncIterator[bytes]:
            async for batch, decision in items:
                out = b"".join(b"id: %d\ndata: %s\n\n" % (q, e) for q, e in batch)
                if decision is not None:
                    out += b"event: decision\ndata: %s\n\n" % decision
                sent.inc(len(batch))
                yield out

        self.metrics.open["sse"].inc()
        try:
            await self._sse(w, frames(), items)
        finally:
            self.metrics.open["sse"].dec()

    async def bot_answer(
        self,
        req: Request,
        w: asyncio.StreamWriter,
        game: str,
        seat: int,
        body: schema.Answer,
    ) -> schema.Answered:
        """See botroutes.py."""
        return await self.api.seats.answer(await self._bot(req), game, seat, body)

    async def bot_hosting(
        self,
        req: Request,
        w: asyncio.StreamWriter,
        game: str,
        seat: int,
        body: schema.Hosting,
    ) -> schema.Hosted:
        """See botroutes.py."""
        return await self.api.seats.hosting(await self._bot(req), game, seat, body)

    async def bot_join(self, req: Request, w: asyncio.StreamWriter, table: str) -> schema.Joined:
        """See botroutes.py."""
        p = await self._bot(req)
        await self.play.limits.seat(req, p.player)
        return await self.api.join(p, table)

    async def bot_quickplay(
        self, req: Request, w: asyncio.StreamWriter, body: schema.QuickPlay
    ) -> schema.Joined:
        """See botroutes.py."""
        p = await self._bot(req)
        await self.play.limits.seat(req, p.player)
        return await self.api.quickplay(p, body)

    async def bot_leave(self, req: Request, w: asyncio.StreamWriter) -> BotMe:
        """See botroutes.py."""
        return await self.api.leave(await self._bot(req))

    async def create_bot_account(
        self, req: Request, w: asyncio.StreamWriter, body: NewBotAccount
    ) -> IssuedBot:
        """See botroutes.py."""
        return await self.api.issue(await self._organiser(req), body.name)

    async def bot_accounts(self, req: Request, w: asyncio.StreamWriter) -> BotAccountsBody:
        """See botroutes.py."""
        return await self.api.listing()

    async def organiser(self, req: Request, w: asyncio.StreamWriter) -> Organiser:
        """See botroutes.py."""
        return Organiser((await self._organiser(req)).name)


def _stream_id(text: str) -> bool:
    """Whether ``text`` is a Redis stream id (``MS-N``, each part an unsigned 64-bit number) or
    ``0``: Redis refuses anything else (a 1e30 was a traceback in the stream, and no 400)."""
    ms, dash, n = text.partition("-")
    parts = [ms, n] if dash else [ms]
    return all(p.isascii() and p.isdigit() and len(p) <= 20 and int(p) < 1 << 64 for p in parts)


def mount(play: Play, namespace: str, secret: bytes) -> BotRouter:
    """The Bot API's router over the play API's `play` (the same process, Redis and engines)."""
    from .botroutes import BOT_ROUTES

    api = BotApi(play, Accounts(play.sessions.client, namespace), secret, namespace)
    return BotRouter(play, api, BOT_ROUTES)
