"""The play API's logic as plain async methods (http.py is the transport): people sit down as
guests and open or join tables through the matchmaker (`Play`); their seats are `seat.Seats`.
"""

from __future__ import annotations

from collections.abc import AsyncIterator

from ..contracts.levels import offered
from ..errors import Refused
from ..matchmaking.tables import check_name
from ..proto_gen.arena.v1 import matchmaker_pb2
from ..readside.access import NotFound
from ..readside.catalogue import printed_names
from ..replay.core import Replay
from ..rules.api import option_table
from . import identity, schema
from .clients import Engine, Matchmaker
from .ratelimit import DEFAULT_ANSWERS_PER_S, Limits, RateLimit
from .seat import Seats

MAX_TABLES = 200  # what the matchmaker lists (the newest)
MAX_PAGE = 100
DEFAULT_TABLE = ("standard", 5)  # what a page opens by default: standard identity for five


def _preset(pid: str, zh: str, en: str, **options: object) -> schema.Preset:
    return schema.Preset(id=pid, names={"zh": zh, "en": en}, options=options)


PLAIN = _preset("default", "标准", "default")
PRESETS: dict[str, list[schema.Preset]] = {
    # per ruleset, the usual one first (tests/play checks each against the rules' options)
    "standard": [
        _preset("draft", "选将（候选武将）", "with generals (draft)", generals="draft"),
        _preset("generals", "随机武将", "random generals", generals="standard"),
        _preset("vanilla", "无武将", "vanilla (no generals)", generals="vanilla"),
    ],
    "jinyu": [
        _preset("mougong", "谋攻", "谋攻 (mougong)", mougong=True),
        _preset("basic", "基础", "basic"),
    ],
    "extended": [
        _preset("draft", "选将", "with generals (draft)"),
        _preset("vanilla", "无武将", "vanilla (no generals)", generals="vanilla"),
    ],
    "chengtian": [
        _preset("all", "全部武将", "all generals"),
        _preset("honglou", "红楼梦武将", "红楼梦 generals", generals="honglou"),
        _preset("standard", "三国武将", "三国 generals", generals="standard"),
    ],
}


class Play:
    """People at tables: identities, tables, seats."""

    def __init__(
        self,
        replay: Replay,
        sessions: identity.Sessions,
        matchmaker: Matchmaker,
        engine: Engine,
        *,
        answers_per_s: int = DEFAULT_ANSWERS_PER_S,
        limits: Limits | None = None,
    ) -> None:
        self.replay = replay
        self.sessions = sessions
        self.guests = identity.Guests(sessions)
        self.mm = matchmaker
        self.engine = engine
        limit = RateLimit(sessions.client, f"{sessions.prefix}:rl", answers_per_s)
        self.limits = limits or Limits(sessions.client, f"{sessions.prefix}:lim")
        self.seats = Seats(replay, sessions, engine, limit)
        reader = self.seats.reader
        replay.metrics.watch_seat_decisions(
            lambda: {"engine": reader.asked, "answer": reader.hinted, "mark": reader.marked}
        )

    async def close(self) -> None:
        """Close the gRPC channels."""
        await self.mm.close()
        await self.engine.close()

    # ---- who ------------------------------------------------------------------------------------

    async def new_guest(self, body: schema.NewGuest) -> schema.Guest:
        """A guest identity with a name, and its session token."""
        try:
            name = check_name(body.name)
        except ValueError as exc:
            raise Refused("INVALID_ARGUMENT", str(exc)) from None
        player, token = await self.guests.create(name)
        return schema.Guest(player=player.player, name=player.name, token=token)

    async def who(self, token: str | None) -> identity.Player:
        """The player a credential belongs to; 401 without a valid one."""
        found = await self.sessions.player_of(token or "")
        if found is None:
            raise Refused(
                "UNAUTHENTICATED", "sign in first: POST /api/guests (or send your session token)"
            )
        return found

    async def me(self, p: identity.Player) -> schema.Me:
        """Who and where: a matched ticket is turned into the seat here (the page may have
        been closed when it was matched)."""
        ticket = await self.sessions.ticket(p.player)
        waiting = None
        if ticket is not None:
            async for st in self._follow(p, ticket, once=True):
                waiting = st.waiting
        seated = await self._seated(p.player)
        if seated is not None and not seated.over:
            await self._keep_level(p)  # the page opens here: its default level for the seat
        return schema.Me(player=p.player, name=p.name, waiting=waiting, seated=seated)

    # ---- the person's own settings --------------------------------------------------------------

    async def settings(self, p: identity.Player) -> schema.PersonSettings:
        """The person's own settings (their record in Redis: identity.py)."""
        r = await self.sessions.record(p.player)
        return schema.PersonSettings(hosted_level=r.get(identity.HOSTED_LEVEL, ""))

    async def set_settings(
        self, p: identity.Player, body: schema.PersonSettings
    ) -> schema.PersonSettings:
        """Set the person's own settings: `hosted_level` ("": cleared) for every seat they sit
        at from now, and for the live seat they hold now (recorded in its game's log here, or
        on that seat's next request if the engine cannot be told now)."""
        level = body.hosted_level
        if level and level not in offered():
            raise Refused(
                "INVALID_ARGUMENT",
                f'hosted_level must be one of {", ".join(offered())}, or "" for none',
            )
        await self.sessions.set_hosted_level(p.player, level)
        await self._keep_level(p)
        return await self.settings(p)

    async def _keep_level(self, p: identity.Player) -> None:
        r = await self.sessions.record(p.player)
        s = self.sessions.seat_in(r)
        if s is not None:
            await self.seats.keep_level(p.player, s, r)

    async def _seated(self, player: str) -> schema.Seated | None:
        s = await self.sessions.seat(player)
        if s is None:
            return None
        try:
            feed = await self.replay.feed(s.game)
        except NotFound:  # matched, and the engine is about to start it
            return schema.Seated(game=s.game, seat=s.seat)
        seats = feed.seat_fold(s.seat).view.seats  # public: a seat's life is no secret
        alive = not (s.seat < len(seats) and not seats[s.seat].alive)
        return schema.Seated(game=s.game, seat=s.seat, over=feed.over, alive=alive)

    # ---- tables ---------------------------------------------------------------------------------

    async def modes(self) -> schema.Modes:
        """What a table may be, each ruleset's printed names, the options its tables set and
        its presets, and the table a page opens by default."""
        out = await self.mm.modes()
        rulesets = sorted({t.ruleset for t in out.tables})
        out.names = {r: printed_names(r) for r in rulesets}
        out.options = {
            r: {k: schema.ModeOption(default=d, allowed=a) for k, (d, a) in option_table(r).items()}
            for r in rulesets
        }
        out.presets = {r: PRESETS.get(r, [PLAIN]) for r in rulesets}
        out.default = next(
            (t for t in out.tables if (t.ruleset, t.players) == DEFAULT_TABLE),
            out.tables[0] if out.tables else None,
        )
        return out

    async def tables(self, offset: int = 0, limit: int = 50) -> schema.Tables:
        """A page of the open tables, newest first: joinable ones (a free seat) before full
        ones, so a new person's table is never hidden behind old, kept-alive ones."""
        if not 0 <= offset <= MAX_TABLES or not 1 <= limit <= MAX_PAGE:
            raise Refused(
                "INVALID_ARGUMENT", f"0 <= offset <= {MAX_TABLES}, 1 <= limit <= {MAX_PAGE}"
            )
        tables = await self.mm.tables()  # newest first
        tables.sort(key=lambda t: len(t.waiting) >= t.settings.players)  # stable: joinable first
        return schema.Tables(tables=tables[offset : offset + limit])

    async def _free(self, p: identity.Player) -> None:
        """Refuse while the player is alive at a live game's seat or waits at a table (a
        player whose seat died, or whose game is over, is free: the new table takes the place
        of that seat)."""
        seated = await self._seated(p.player)
        if seated is not None and not seated.over and seated.alive:
            raise Refused(
                "FAILED_PRECONDITION",
                f"you are playing game {seated.game}: resign to leave it "
                f"(POST /api/games/{seated.game}/seats/{seated.seat}/resign)",
            )
        if await self.sessions.ticket(p.player) is not None:
            raise Refused(
                "FAILED_PRECONDITION", "you are already waiting at a table: leave it first"
            )

    async def _joined(self, p: identity.Player, t: matchmaker_pb2.Ticket) -> schema.Joined:
        await self.sessions.set_ticket(p.player, t.ticket_id, t.table)
        w = schema.Waiting(
            table=t.table, ticket=t.ticket_id, players=t.players, enqueued_ms=t.enqueued_ms
        )
        return schema.Joined(table=t.table, waiting=w)

    async def create_table(
        self, p: identity.Player, settings: schema.TableSettings
    ) -> schema.Joined:
        """Open a table with these settings and sit at it."""
        await self._free(p)
        return await self._joined(p, await self.mm.create_table(p.player, p.name, settings))

    async def join(self, p: identity.Player, table: str) -> schema.Joined:
        """Sit at an open table."""
        await self._free(p)
        return await self._joined(p, await self.mm.join(p.player, p.name, table))

    async def quickplay(self, p: identity.Player, body: schema.QuickPlay) -> schema.Joined:
        """Sit at the oldest open table with the same ruleset, size and options and a free
        seat; else open one with these settings."""
        await self._free(p)
        want = body.settings
        for t in reversed(await self.mm.tables()):  # the oldest first: it waited longest
            s = t.settings
            same = (s.ruleset, s.players, s.options) == (want.ruleset, want.players, want.options)
            if same and len(t.waiting) < s.players:
                try:
                    return await self._joined(p, await self.mm.join(p.player, p.name, t.table))
                except Refused as exc:
                    if exc.http_status != 409:  # started meanwhile: try the next one
                        raise
        return await self._joined(p, await self.mm.create_table(p.player, p.name, want))

    async def leave(self, p: identity.Player) -> None:
        """Leave the table the player waits at (a no-op if none)."""
        ticket = await self.sessions.ticket(p.player)
        if ticket is None:
            return
        try:
            await self.mm.cancel(p.player, ticket.ticket)
        except Refused as exc:
            if exc.http_status == 409:  # matched meanwhile: the player has a seat now
                await self.me(p)
                raise Refused(
                    "FAILED_PRECONDITION", "the game has started: you have a seat"
                ) from None
            if exc.code != "NOT_FOUND":
                raise
        await self.sessions.clear_ticket(p.player, ticket.ticket)

    async def status(self, p: identity.Player) -> AsyncIterator[schema.Status]:
        """Where the player is, then every change until seated or idle (watching the ticket
        keeps it alive: a ticket nobody watches expires)."""
        ticket = await self.sessions.ticket(p.player)
        if ticket is not None:
            async for st in self._follow(p, ticket, once=False):
                yield st
            return
        seated = await self._seated(p.player)
        yield schema.Status(state="seated" if seated else "idle", seated=seated)

    async def _follow(
        self, p: identity.Player, ticket: identity.Ticket, *, once: bool
    ) -> AsyncIterator[schema.Status]:
        """The ticket's updates as statuses; a match seats the player."""
        U = matchmaker_pb2.TicketUpdate
        try:
            async for u in self.mm.watch(p.player, ticket.ticket):
                if u.state == U.MATCHED:
                    seat = identity.Seat(u.game_id, u.seat.seat, u.seat_token)
                    await self.sessions.seat_from(p.player, ticket.ticket, seat)
                    seated = schema.Seated(game=u.game_id, seat=u.seat.seat)
                    yield schema.Status(state="seated", seated=seated)
                    return
                if u.state in (U.CANCELLED, U.EXPIRED):
                    break
                w = schema.Waiting(
                    table=ticket.table, ticket=ticket.ticket, players=0, enqueued_ms=0
                )
                yield schema.Status(state="waiting", waiting=w, waited_ms=u.waited_ms)
                if once:
                    return
        except Refused as exc:
            if exc.code != "NOT_FOUND":
                raise
        await self.sessions.clear_ticket(p.player, ticket.ticket)
        yield schema.Status(state="idle")
