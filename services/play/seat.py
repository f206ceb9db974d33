"""A person's seat: its view, its stream and its decisions, and answering for it.

The seat's view is served from the replay feed of this same process (one tail per game, shared
with every spectator; every entry redacted for the seat by the same `views.redact`); the pending
decision is asked of the engine with the seat token the server holds for the person, after every
change of the log, so the seat gets its options and nobody else does.

Every number the person sees or sends is the seat's own position (eventlog/positions.py: its
entries numbered 1, 2, 3, …, as the engine numbers them for the seat too) and decision ids are
the engine's opaque ones: nothing the page receives counts what went to the other seats.
"""

from __future__ import annotations

import asyncio
import contextlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import AsyncGenerator

import msgspec

from ..errors import Refused
from ..eventlog.entry import CONTROL, EVENT, decode_entry
from ..eventlog.records import SeatControl, decode_payload
from ..proto_gen.arena.v1 import common_pb2
from ..readside.access import NotFound
from ..readside.catalogue import printed_names
from ..readside.feed import GameFeed
from ..replay.core import Replay
from ..rules import api
from ..rules.api import views
from . import identity, labels, schema
from .clients import Engine
from .ratelimit import RateLimit

log = logging.getLogger(__name__)
StreamItem = tuple[list[tuple[int, bytes]], bytes | None]
"""What a seat's stream sends at once: entries (position, entry JSON), then its decision
message."""
_json = msgspec.json.Encoder()
GAME_START_WAIT_S = 10


def _decision_of(d: common_pb2.Decision) -> api.Decision:
    return api.Decision(
        id=d.id,
        seat=d.seat,
        kind=d.kind,
        options=list(d.options),
        min=d.min,
        max=d.max,
        declinable=d.declinable,
        info=json.loads(d.info_json or "{}"),
    )


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
        self._tables: OrderedDict[str, labels.Table] = OrderedDict()

    async def _feed(self, game: str, s: identity.Seat) -> GameFeed:
        """The game's feed, as the seat may see it; a game just matched may take a moment to
        be started by an engine worker, so a missing one is waited for a little."""
        for _ in range(GAME_START_WAIT_S * 10):
            try:
                feed, _ = await self.replay.grant(game, s.seat, s.token)
                return feed
            except NotFound:
                await asyncio.sleep(0.1)
        raise Refused("NOT_FOUND", f"game {game} has not started")

    async def seat_of(self, p: identity.Player, game: str, seat: int) -> identity.Seat:
        """The player's seat if it is `seat` of `game`; 403 for any other."""
        s = await self.sessions.seat(p.player)
        if s is None or s.game != game or s.seat != seat:
            raise Refused("PERMISSION_DENIED", f"seat {seat} of game {game} is not yours")
        return s

    async def table(self, game: str) -> labels.Table:
        """The game's names and cards, for labels (cached: they never change)."""
        t = self._tables.get(game)
        if t is None:
            header = await self.replay.header(game)
            cards = json.loads(await self.replay.cards(game))
            t = labels.Table(
                cards=cards,
                seat_names=[s.name or s.player for s in header.seats],
                names=printed_names(header.ruleset),
                generals=api.general_table(header.ruleset),
            )
            self._tables[game] = t
            while len(self._tables) > 256:
                self._tables.popitem(last=False)
        return t

    async def _pending(
        self, game: str, s: identity.Seat
    ) -> tuple[int, schema.Decision | None, schema.Waits | None]:
        """(the seat's position in the engine's log, the seat's decision, a public decision of
        another seat)."""
        r = await self.engine.decision(game, s.token)
        if r.over or not r.HasField("decision"):
            return int(r.version), None, None
        d = r.decision
        if d.seat != s.seat:
            return int(d.version), None, schema.Waits(seat=d.seat, kind=d.kind, version=d.version)
        out = labels.decision(_decision_of(d), await self.table(game), d.version, d.deadline_ms)
        return int(d.version), out, None

    async def view(self, p: identity.Player, game: str, seat: int) -> schema.SeatView:
        """The seat's view now (folded on the server), and its pending decision."""
        s = await self.seat_of(p, game, seat)
        feed = await self._feed(game, s)
        version, decision, waits = (0, None, None) if feed.over else await self._pending(game, s)
        v, hosted = fold(feed, seat)
        position = feed.positions.position(seat, v.seq_version)
        if version != position:  # the log moved between the two reads: no stale decision
            decision = waits = None
        return schema.SeatView(
            game=game,
            seat=seat,
            version=position,
            over=feed.over,
            hosted=seat in hosted,
            view=msgspec.to_builtins(v.view),
            decision=decision,
            waits=waits,
            now_ms=int(time.time() * 1000),
        )

    async def stream(
        self, p: identity.Player, game: str, seat: int, after: int
    ) -> AsyncGenerator[StreamItem, None]:
        """The seat's entries after its position `after`, live, each batch followed by the
        decision message when it changed: ``{"version", "decision", "waits"}`` (either may be
        null)."""
        s = await self.seat_of(p, game, seat)
        feed = await self._feed(game, s)
        return self._watch(feed, s, feed.positions.seq(seat, max(0, after)))

    async def _watch(
        self, feed: GameFeed, s: identity.Seat, after: int
    ) -> AsyncGenerator[StreamItem, None]:
        # `after` is a log seq here, sent as the seat's position; the log version last asked
        # at; the (decision id, its deadline, waits version) last sent: a repeat of the same is
        # not sent again
        asked, shown = -1, (0, 0, 0)
        at = feed.positions
        feed.watchers += 1
        try:
            while True:
                end = feed.version
                batch = [
                    (at.position(s.seat, q), e)
                    for q in range(after + 1, end + 1)
                    if (e := feed.envelope(q, s.seat)) is not None
                ]
                after = max(after, end)
                position = at.position(s.seat, after)
                message: bytes | None = None
                if feed.over:
                    if shown != (0, 0, 0):  # the game ended: nothing is pending any more
                        shown = (0, 0, 0)
                        message = b'{"version":%d,"decision":null,"waits":null}' % position
                elif asked != after:
                    try:
                        version, decision, waits = await self._pending(feed.game, s)
                    except Refused as exc:
                        if exc.code in ("UNAUTHENTICATED", "PERMISSION_DENIED"):
                            raise
                        # NOT_FOUND is every game's end (the engine drops a finished game
                        # before this feed has read its last entries): not worth a warning
                        level = logging.DEBUG if exc.code == "NOT_FOUND" else logging.WARNING
                        log.log(level, "decision of %s for seat %d: %s", feed.game, s.seat, exc)
                        if batch:  # the entries still go out
                            yield batch, None
                        # the engine is away or behind, or has dropped the game that ended
                        # (its end is then in the log, or the archive: the feed reads it):
                        # ask again at the next entry, or soon
                        feed.tail(self.replay.store, self.replay.idle_ms, lambda: None)
                        with contextlib.suppress(TimeoutError):
                            await asyncio.wait_for(feed.wait_beyond(after), 1)
                        continue
                    asked = after
                    key = (
                        decision.id if decision else 0,
                        decision.deadline_ms if decision else 0,  # 托管 on or off: a new clock
                        waits.version if waits else 0,
                    )
                    # the engine may be ahead of the feed: its entries are on their way, and
                    # it is asked again when they arrive
                    if version == position and key != shown:
                        shown = key
                        message = _json.encode(
                            {
                                "version": position,
                                "decision": decision,
                                "waits": waits,
                                "now_ms": int(time.time() * 1000),
                            }
                        )
                if batch or message is not None:
                    yield batch, message
                elif feed.closed and after >= feed.version:
                    return
                else:
                    feed.tail(self.replay.store, self.replay.idle_ms, lambda: None)
                    await feed.wait_beyond(after)
        finally:
            feed.watchers -= 1
            feed.last_used = int(time.time() * 1000)

    async def answer(
        self, p: identity.Player, game: str, seat: int, body: schema.Answer
    ) -> schema.Answered:
        """Answer the seat's pending decision (an answer sent twice is applied once)."""
        s = await self.seat_of(p, game, seat)
        if not await self.limit.allow(f"{p.player}:{game}"):
            raise Refused("RESOURCE_EXHAUSTED", "too many answers: at most a few a second")
        r = await self.engine.submit(game, s.token, body.decision, list(body.picks))
        return schema.Answered(
            decision=body.decision, duplicate=r.duplicate, version=r.version, over=r.over
        )

    async def hosting(
        self, p: identity.Player, game: str, seat: int, body: schema.Hosting
    ) -> schema.Hosted:
        """托管 on (the seat's bot plays it) or off (take the seat back)."""
        s = await self.seat_of(p, game, seat)
        r = await self.engine.set_hosted(game, s.token, body.hosted)
        return schema.Hosted(hosted=r.hosted, version=r.version)

    async def resign(self, p: identity.Player, game: str, seat: int) -> schema.Hosted:
        """Leave the game: the seat's bot plays it to the end."""
        s = await self.seat_of(p, game, seat)
        r = await self.engine.set_hosted(game, s.token, True, resign=True)
        return schema.Hosted(hosted=r.hosted, version=r.version)


class Folded(msgspec.Struct):
    """A seat's view folded from the log, and the log version it is at."""

    view: views.View
    seq_version: int


def fold(feed: GameFeed, seat: int) -> tuple[Folded, set[int]]:
    """The seat's view of everything the feed holds (the same fold as every other viewer's:
    views.apply over views.redact), and the seats on 托管."""
    v = views.new_view(seat)
    hosted: set[int] = set()
    version = feed.version
    for data in feed.records[:version]:
        e = decode_entry(data)
        if e.kind == EVENT:
            views.apply(v, api.redact(api.decode_event(e.payload), seat))
        elif e.kind == CONTROL:
            c = decode_payload(e.payload, SeatControl)
            (hosted.add if c.hosted else hosted.discard)(c.seat)
    return Folded(v, version), hosted
