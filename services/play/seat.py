"""A person's seat over HTTP: a transport over the read side's seat view and stream
(services/readside/seats.py), with the decision put in a player's words (labels.py), and
answering for it through the engine.

The seat's entries come from the replay feed of this same process, redacted for the seat like
every viewer's; its pending decision is asked of the engine with the seat token the server holds
for the person, or taken from the engine's reply to the person's own answer (SubmitAction says
what is pending after it), so the seat gets its options and nobody else does.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable
from typing import TypeVar

import msgspec

from ..errors import Refused
from ..proto_gen.arena.v1 import common_pb2
from ..readside.access import NotFound
from ..readside.catalogue import catalogue, general_skills, skill_texts
from ..readside.decisions import Asked, Shown
from ..readside.seats import SeatMessage, SeatReader
from ..replay.core import Replay
from ..rules import api
from . import identity, labels, schema
from .clients import Engine
from .ratelimit import RateLimit

StreamItem = tuple[list[tuple[int, bytes]], bytes | None]
"""What a seat's stream sends at once: entries (position, entry JSON), then its decision
message."""
_json = msgspec.json.Encoder()
T = TypeVar("T")
GAME_START_S = 10.0  # a game just matched may take a moment to be started by an engine
ENDING_WAIT_S = 3  # how long an answer to a game the engine no longer has waits to see its end


def shown_of(d: common_pb2.Decision) -> Shown:
    """A decision as the engine sent it to a seat, in the read side's terms."""
    return Shown(
        id=d.id,
        seat=d.seat,
        kind=d.kind,
        version=d.version,
        mine=bool(d.options) or bool(d.info_json),
        options=list(d.options),
        min=d.min,
        max=d.max,
        declinable=d.declinable,
        info=json.loads(d.info_json or "{}"),
        deadline_ms=d.deadline_ms,
    )


class EngineDecisions:
    """The read side's `SeatDecisions` over the engine's GetDecision (with the seat's token)."""

    def __init__(self, engine: Engine) -> None:
        self.engine = engine

    async def pending(self, game: str, token: str) -> Asked:
        """See readside.decisions.SeatDecisions."""
        r = await self.engine.decision(game, token)
        if r.over or not r.HasField("decision"):
            return Asked(int(r.version), None, bool(r.over))
        return Asked(int(r.decision.version), shown_of(r.decision))


class Seats:
    """People's seats: each request names a game and a seat, which must be the person's."""

    def __init__(
        self,
        replay: Replay,
        sessions: identity.Sessions,
        engine: Engine,
        limit: RateLimit,
    ) -> None:
        self.replay = replay
        self.sessions = sessions
        self.engine = engine
        self.limit = limit
        self.reader = SeatReader(replay, EngineDecisions(engine))
        self._tables: OrderedDict[str, labels.Table] = OrderedDict()

    async def seat_of(self, p: identity.Player, game: str, seat: int) -> identity.Seat:
        """The player's seat if it is `seat` of `game`; 409 for the seat they left (resigned),
        403 for any other."""
        return await self._mine(p, game, seat, await self.sessions.seat(p.player))

    async def opened(self, p: identity.Player, game: str, seat: int) -> identity.Seat:
        """`seat_of`, with the person's default 托管 level recorded for the seat (`keep_level`):
        the seat's routes but `answer` (the page opens the seat through its view and stream)."""
        s = await self.seat_of(p, game, seat)
        await self.keep_level(p.player, s, wait=True)
        return s

    async def keep_level(
        self, player: str, s: identity.Seat, r: dict[str, str] | None = None, wait: bool = False
    ) -> None:
        """Record the person's default 托管 level (their record `r`: identity.py) for their seat
        `s` in its game's log, once per seat and level: a `control` entry that sets the seat's
        level without hosting it (engine SetHosted `level_only`), so time-outs and a
        resignation play at it. The game not started yet (an engine starts it a moment after
        the match): waited for up to `GAME_START_S` with `wait` (the seat's routes: the page
        opens the seat as soon as it is matched), else left to the seat's next request, as
        when the engine is away. Over, or not a person's seat: nothing to record, ever."""
        if r is None:
            r = await self.sessions.record(player)
        level = r.get(identity.HOSTED_LEVEL, "")
        if not level or r.get(identity.LEVEL_AT) == f"{s.game}/{s.seat}/{level}":
            return
        deadline = time.monotonic() + GAME_START_S
        while True:
            try:
                await self.engine.set_hosted(s.game, s.token, False, level=level, level_only=True)
                break
            except Refused as exc:
                if exc.code == "FAILED_PRECONDITION":
                    break  # over, or not a person's seat
                if exc.code != "NOT_FOUND" or not wait or time.monotonic() > deadline:
                    return
            try:
                await self.replay.header(s.game)
                return  # its log is there: a finished game the engine has let go
            except NotFound:
                await asyncio.sleep(0.2)  # matched, not started yet
        await self.sessions.level_recorded(player, s, level)

    async def _seat_counted(
        self, p: identity.Player, game: str, seat: int
    ) -> tuple[identity.Seat, bool]:
        """`seat_of`, and the answer counted against the rate limit (whether it is within it),
        in one pipeline (the seat's refusal raised first). A subclass that finds seats another
        way (the Bot API's: in the game's header) overrides this with its own `seat_of`."""
        async with self.sessions.client.pipeline(transaction=False) as pipe:
            self.sessions.read_record(pipe, p.player)
            self.limit.count(pipe, f"{p.player}:{game}")
            replies = await pipe.execute()
        s = self.sessions.seat_in(self.sessions.fields(replies[0]))
        return await self._mine(p, game, seat, s), self.limit.allowed(replies)

    async def _mine(
        self, p: identity.Player, game: str, seat: int, s: identity.Seat | None
    ) -> identity.Seat:
        """`seat_of`, the player's seat `s` read."""
        if s is None or s.game != game or s.seat != seat:
            if await self.sessions.left(p.player) == f"{game}/{seat}":
                raise Refused(
                    "FAILED_PRECONDITION",
                    f"you left seat {seat} of game {game} (resigned): its bot plays it to the "
                    "end; watch the game as a spectator",
                )
            raise Refused("PERMISSION_DENIED", f"seat {seat} of game {game} is not yours")
        return s

    async def _engine(self, game: str, call: Awaitable[T]) -> T:
        """An engine call for a seat of `game`: a game the engine has dropped because it
        ended is 409 (not now: the game is over), as for one it still holds, not 404."""
        try:
            return await call
        except Refused as exc:
            if exc.code != "NOT_FOUND":
                raise
            try:
                feed = await self.replay.feed(game)
            except Refused:
                raise exc from None
            # the engine drops a game once it is archived: this server's feed of it may not
            # have read its last entries yet, so give it a moment to see the end
            for _ in range(ENDING_WAIT_S * 10):
                if feed.over:
                    raise Refused("FAILED_PRECONDITION", "the game is over") from None
                self.reader.reads.keep_tailing(feed)
                with contextlib.suppress(TimeoutError):
                    await asyncio.wait_for(feed.wait_beyond(feed.version), 0.1)
            raise

    async def table(self, game: str) -> labels.Table:
        """The game's names and cards, for labels (cached: they never change)."""
        t = self._tables.get(game)
        if t is None:
            h = await self.replay.header(game)
            c = catalogue(h)
            people = [s.name or s.player if not s.bot else "" for s in h.seats]
            t = labels.Table(
                c.cards,
                people,
                c.names,
                c.generals,
                general_skills(h.ruleset),
                skill_texts(),
                api.english_names(h.ruleset),
            )
            self._tables[game] = t
            while len(self._tables) > 256:
                self._tables.popitem(last=False)
        return t

    async def catalogue(self, game: str) -> schema.Catalogue:
        """What a client needs to name everything of a game (routes.ROUTES `catalogue`)."""
        h = await self.replay.header(game)
        c = catalogue(h)
        skills = general_skills(h.ruleset)
        texts = skill_texts()
        english = api.english_names(h.ruleset)
        return schema.Catalogue(
            game=game,
            ruleset=h.ruleset,
            cards=[
                schema.CardInfo(
                    id=i,
                    name=row[0],
                    printed=c.names.get(row[0], row[0]),
                    english=english.get(row[0], ""),
                    suit=row[1],
                    rank=row[2],
                    type=row[3],
                    subtype=row[4],
                )
                for i, row in enumerate(c.cards)
            ],
            names=c.names,
            english=english,
            generals={
                g: schema.GeneralInfo(faction=f, hp=hp, skills=skills.get(g, []))
                for g, (f, hp) in c.generals.items()
            },
            skills=texts,
        )

    async def _labelled(
        self, game: str, d: Shown | None, lang: str, view: api.View | None = None
    ) -> schema.Decision | None:
        if d is None:
            return None
        decision = api.Decision(
            id=d.id,
            seat=d.seat,
            kind=d.kind,
            options=list(d.options),
            min=d.min,
            max=d.max,
            declinable=d.declinable,
            info=dict(d.info),
        )
        if view is None:  # the seat's view as its stream has it now (public: generals)
            view = (await self.replay.feed(game)).seat_fold(d.seat).view
        playing = [s.general for s in view.seats]
        table = await self.table(game)
        return labels.decision(decision, table, d.version, d.deadline_ms, lang, playing)

    @staticmethod
    def _waits(d: Shown | None) -> schema.Waits | None:
        return None if d is None else schema.Waits(seat=d.seat, kind=d.kind, version=d.version)

    async def view(
        self, p: identity.Player, game: str, seat: int, lang: str = "zh"
    ) -> schema.SeatView:
        """The seat's view now (folded on the server), and its pending decision."""
        s = await self.opened(p, game, seat)
        v = await self.reader.view(game, seat, s.token)
        return schema.SeatView(
            game=game,
            seat=seat,
            version=v.version,
            over=v.over,
            hosted=v.hosted,
            view=msgspec.convert(msgspec.to_builtins(v.view), schema.TableView),
            decision=await self._labelled(game, v.mine, lang, v.view),
            waits=self._waits(v.waits),
            now_ms=int(time.time() * 1000),
        )

    async def stream(
        self, p: identity.Player, game: str, seat: int, after: int, lang: str = "zh"
    ) -> AsyncGenerator[StreamItem, None]:
        """The seat's entries after its position `after`, live, each batch followed by the
        decision message when it changed: ``{"version", "decision", "waits", "now_ms"}``
        (either may be null)."""
        s = await self.opened(p, game, seat)
        return self._encoded(game, await self.reader.stream(game, seat, s.token, after), lang)

    async def _encoded(
        self,
        game: str,
        updates: AsyncGenerator[tuple[list[tuple[int, bytes]], SeatMessage | None]],
        lang: str,
    ) -> AsyncGenerator[StreamItem, None]:
        try:
            async for batch, m in updates:
                message = None
                if m is not None:
                    message = _json.encode(
                        schema.SeatMessage(
                            version=m.version,
                            decision=await self._labelled(game, m.mine, lang),
                            waits=self._waits(m.waits),
                            now_ms=int(time.time() * 1000),
                        )
                    )
                yield batch, message
        finally:
            await updates.aclose()

    async def answer(
        self, p: identity.Player, game: str, seat: int, body: schema.Answer
    ) -> schema.Answered:
        """Answer the seat's pending decision (an answer sent twice is applied once); what the
        engine says is pending after it goes to the seat's stream without asking again."""
        # the seat is read and the answer counted in one pipeline: one round trip on one
        # connection (issue 44: each was 13 ms at the median beside 50 bot games one after the
        # other; then two concurrent tasks, ~2 more turns of the loop); the seat's refusal first
        mine, allowed = await self._seat_counted(p, game, seat)
        if not allowed:
            raise Refused("RESOURCE_EXHAUSTED", "too many answers: at most a few a second")
        r = await self._engine(
            game, self.engine.submit(game, mine.token, body.decision, list(body.picks))
        )
        if not r.duplicate:
            after = shown_of(r.next) if r.HasField("next") else None
            self.reader.answered(game, seat, body.decision, Asked(r.version, after, r.over))
        return schema.Answered(
            decision=body.decision, duplicate=r.duplicate, version=r.version, over=r.over
        )

    async def hosting(
        self, p: identity.Player, game: str, seat: int, body: schema.Hosting
    ) -> schema.Hosted:
        """托管 on (the seat's bot plays it, at the level the person chose) or off (take the
        seat back). Without a level, the seat's level as recorded: the person's default
        (`opened`), unless they chose another for it."""
        s = await self.opened(p, game, seat)
        r = await self._engine(
            game, self.engine.set_hosted(game, s.token, body.hosted, level=body.level)
        )
        return schema.Hosted(hosted=r.hosted, version=r.version)

    async def resign(self, p: identity.Player, game: str, seat: int) -> schema.Hosted:
        """Leave the seat, and with it the game: the person is free for the next table. A live
        seat is resigned first (its bot plays it to the end); a dead seat, or a seat of a game
        that is over, is simply left (nothing is asked of the engine or written to the log)."""
        s = await self.opened(p, game, seat)
        feed = await self.reader.feed(game, seat, s.token)
        fold = feed.seat_fold(seat)
        seats = fold.view.seats
        alive = seat < len(seats) and seats[seat].alive
        hosted, version = seat in fold.hosted, feed.positions.position(seat, fold.at)
        if alive and not feed.over:
            try:
                r = await self._engine(
                    game, self.engine.set_hosted(game, s.token, True, resign=True)
                )
                hosted, version = r.hosted, r.version
            except Refused as exc:
                if exc.code != "FAILED_PRECONDITION" or "over" not in exc.reason:
                    raise  # (a game that ended meanwhile is left like any finished one)
        await self.sessions.leave(p.player, game, seat)
        return schema.Hosted(hosted=hosted, version=version)
