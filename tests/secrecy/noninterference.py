"""Non-interference harness: two games that differ only in a secret, served by the real engine
and replay code, read on every channel a viewer can reach.

Game A and game B are created by two engine workers (`Games`, each with its own store and
side) with the same id, seed, salt and clock, so everything public is the same unless the
secret leaks; B differs from A only by `tweak` (roles swapped between two seats through the
role table, or two seats' hands swapped). Both are driven with A's seeded random answers as long
as B offers the same decision and accepts them. Then, for a viewer, the bytes each channel sends
are collected from both:

* GameService: GetView, StreamView, and GetDecision after every answer (real gRPC);
* ReplayService: GetEvents and StreamGame (real gRPC, seat token in the metadata);
* HTTP: /api/games/g/events and the SSE stream /api/games/g/stream (raw sockets, exact bytes);
* a person's seat (a seat viewer only): the read side's seat view and seat stream
  (services/readside/seats.py, as the play API serves them), its decisions asked of the engine
  over gRPC with the seat's token as the play API asks them;
* with `bots=True` (every seat a bot's): GameService.Determinize at each of a compared seat's
  decisions, with its bot token (the worlds a hard bot's look-ahead is dealt), and the bot feed:
  every decisions message the engine published for the seat (its decision and the `view` of
  events it carries, services/readside/botfeed.py).

Every channel above sends what services/readside computes; this compares its bytes as sent.

Both games are moved up to (not including) the first answer whose events, in either game, reveal
a role by the rules (a public role_assigned, a death, the end; or, to a seat compared, a role it
learns: 谋攻's 洞察): everything any channel sends a viewer up to there must be the same byte
for byte.
"""

from __future__ import annotations

import asyncio
import contextlib
from collections.abc import AsyncIterator, Callable, Iterator
from dataclasses import dataclass, field
from typing import Any

import grpc
import msgspec

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import BotDecision, NewMatch, Seat
from services.engine import service as engine_service
from services.engine.grpc_server import make_server, set_serving
from services.engine.service import Games
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore
from services.play.clients import Engine
from services.play.seat import EngineDecisions
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc, replay_pb2, replay_pb2_grpc
from services.readside.access import hmac_seat_check
from services.readside.positions import positions_of
from services.readside.reader import ReadSide
from services.readside.seats import SeatReader
from services.replay import Replay
from services.replay.grpc_service import start_grpc
from services.replay.http import HttpServer
from services.rules import api
from services.rules.api import events as ev

from .botchannel import bot_api
from .chartchannel import chart

SECRET = b"non-interference"
GAME = "g"
T0 = 1_700_000_000_000
Secret = Callable[[], contextlib.AbstractContextManager[None]]
"""While entered, games are set up with B's secret (play.role_table, play.hands_swapped)."""


@dataclass
class Side:
    """One of the two games, with the servers that serve it."""

    games: Games
    grpc_port: int = 0
    replay_port: int = 0
    http_port: int = 0
    # viewer -> (log head, GetDecision bytes) after each answer
    decisions: dict[int, list[tuple[int, bytes]]] = field(default_factory=dict)
    # seat -> (log head, Determinize bytes) at each of its decisions (bot seats only)
    worlds: dict[int, list[tuple[int, bytes]]] = field(default_factory=dict)
    closers: list[Any] = field(default_factory=list)

    def published(self) -> list[BotDecision]:
        """The decisions messages the engine published for bot seats (MemorySide keeps them)."""
        side = self.games.side
        assert isinstance(side, MemorySide)
        return side.decisions()


@contextlib.contextmanager
def _fixed_engine_randomness() -> Iterator[None]:
    """The same salt and start time for both games (they are public: header, commitment)."""
    salt, now = engine_service.new_salt, engine_service._now_ms
    engine_service.new_salt = lambda: b"\x07" * 16  # type: ignore[assignment]
    engine_service._now_ms = lambda: T0  # type: ignore[assignment]
    try:
        yield
    finally:
        engine_service.new_salt, engine_service._now_ms = salt, now  # type: ignore[assignment]


async def _side(
    ruleset: str,
    players: int,
    seed: int,
    options: dict[str, Any],
    secret: Secret | None,
    bots: bool = False,
) -> Side:
    games = Games(InMemoryEventStore(lambda: T0), MemorySide(), SECRET)
    seats = [Seat("bot:hard", True) if bots else Seat(f"p{i}") for i in range(players)]
    with secret() if secret is not None else contextlib.nullcontext():
        await games.create_game(
            NewMatch(
                match_id=GAME,
                ruleset=ruleset,
                seats=seats,
                options=dict(options),
                seed=seed,
            )
        )
    return Side(games)


async def _serve(side: Side) -> None:
    server, port, checker = make_server(side.games)
    await server.start()
    await set_serving(checker)
    side.grpc_port = port
    replay = Replay(side.games.store, seat_check=hmac_seat_check(SECRET))
    rserver, rport = await start_grpc(replay, "127.0.0.1:0")
    http = HttpServer(replay)
    side.http_port = await http.start()
    side.replay_port = rport
    side.closers = [lambda: server.stop(None), lambda: rserver.stop(None), http.close, replay.close]


async def _decisions(side: Side, viewers: list[int]) -> None:
    """GetDecision for each viewer now (the pending decision as each may see it)."""
    head = await side.games.store.head(GAME)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{side.grpc_port}") as ch:
        stub = game_pb2_grpc.GameServiceStub(ch)
        for v in viewers:
            r = await stub.GetDecision(
                game_pb2.GetDecisionRequest(game_id=GAME, seat_token=_tok(v))
            )
            side.decisions.setdefault(v, []).append((head, r.SerializeToString()))


WORLDS = [  # what a hard bot asks for: seeds, and role guesses for every other seat
    game_pb2.World(seed=1),
    game_pb2.World(seed=2**64 - 1, roles={0: "lord", 1: "rebel", 2: "loyalist", 3: "renegade"}),
    game_pb2.World(seed=7, roles={1: "lord", 2: "rebel", 4: "loyalist", 0: "rebel"}),
]


async def _worlds(side: Side, viewers: list[int]) -> None:
    """Determinize for a compared seat now deciding, with its bot token (bot seats only)."""
    hot = await side.games.get(GAME)
    d = api.pending(hot.game)
    if d is None or d.seat not in viewers:
        return
    head = await side.games.store.head(GAME)
    token = tokens.issue(SECRET, GAME, d.seat, bot=True)
    worlds = [w for w in WORLDS if all(s < len(hot.game.players) for s in w.roles)]
    async with grpc.aio.insecure_channel(f"127.0.0.1:{side.grpc_port}") as ch:
        r = await game_pb2_grpc.GameServiceStub(ch).Determinize(
            game_pb2.DeterminizeRequest(
                game_id=GAME, seat_token=token, decision_id=hot.ids.opaque(d.id), worlds=worlds
            )
        )
    side.worlds.setdefault(d.seat, []).append((head, r.SerializeToString()))


def _tok(viewer: int) -> str:
    return tokens.issue(SECRET, GAME, viewer) if viewer >= 0 else ""


@dataclass
class Pair:
    """Games A and B, served, and how many answers both were given."""

    a: Side
    b: Side
    answers: int  # answers given to both

    async def close(self) -> None:
        for side in (self.a, self.b):
            for close in side.closers:
                await close()


def _reveals(e: ev.Event, viewers: list[int]) -> bool:
    """Whether the rules make this event tell a role: to everyone (a public role_assigned, a
    death, the end) or to one of `viewers` (谋攻's 洞察 result, a role learned)."""
    if isinstance(e, ev.RoleAssigned):
        return e.seen_by is None
    if isinstance(e, ev.InsightRevealed | ev.RoleLearned | ev.RebelDisguised):
        return bool(set(e.seen_by or ()) & set(viewers))
    return isinstance(e, ev.Died | ev.GameEnded)


def _script(
    ruleset: str,
    players: int,
    seed: int,
    options: dict[str, Any],
    secret: Secret,
    limit: int,
    viewers: list[int],
) -> list[list[str]]:
    """A's seeded random answers, as long as B asks the same and accepts them, stopping before
    the first answer whose events reveal a role in either game (played in-process first, so
    the engines are then moved exactly that far and both games are read while still live)."""
    ga = api.new_game(ruleset, players, seed, dict(options))
    api.advance(ga)
    with secret():
        gb = api.new_game(ruleset, players, seed, dict(options))
        api.advance(gb)
    policy, out = RandomPolicy(seed), []
    while len(out) < limit:
        da, db = api.pending(ga), api.pending(gb)
        if da is None or db is None or ga.over or gb.over:
            break
        if (da.id, da.seat, da.kind) != (db.id, db.seat, db.kind):
            break  # B asks something else: its secret shows in what it asks
        picks = list(policy.act(da).picks)
        try:
            eb = api.submit(gb, api.Answer(decision=db.id, seat=db.seat, picks=picks))
        except api.IllegalAnswer:
            break
        ea = api.submit(ga, api.Answer(decision=da.id, seat=da.seat, picks=picks))
        if any(_reveals(e, viewers) for e in [*ea, *eb]):
            break
        out.append(picks)
    return out


async def make_pair(
    ruleset: str,
    players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    secret: Secret,
    viewers: list[int],
    limit: int = 300,
    bots: bool = False,
) -> Pair:
    """Games A and B (B set up under `secret`), moved alike up to (not including) the first
    answer that reveals a role; their GetDecision recorded for `viewers` after every answer
    (and, with `bots`, Determinize at each decision of a seat in `viewers`)."""
    opts = dict(options or {})
    script = _script(ruleset, players, seed, opts, secret, limit, viewers)
    with _fixed_engine_randomness():
        a = await _side(ruleset, players, seed, opts, None, bots)
        b = await _side(ruleset, players, seed, opts, secret, bots)
        await _serve(a)
        await _serve(b)
        for picks in script:
            await _decisions(a, viewers)
            await _decisions(b, viewers)
            if bots:
                await _worlds(a, viewers)
                await _worlds(b, viewers)
            for side in (a, b):
                d = api.pending((await side.games.get(GAME)).game)
                assert d is not None
                token = tokens.issue(SECRET, GAME, d.seat)
                await side.games.submit_action(
                    GAME, token, (await side.games.get(GAME)).ids.opaque(d.id), picks
                )
        await _decisions(a, viewers)
        await _decisions(b, viewers)
    return Pair(a, b, len(script))


# ---- the channels ----------------------------------------------------------------------------


async def game_service(side: Side, viewer: int, last: int) -> list[bytes]:
    """GetView's and StreamView's envelopes (serialized), and GetView's flags."""
    out: list[bytes] = []
    async with grpc.aio.insecure_channel(f"127.0.0.1:{side.grpc_port}") as ch:
        stub = game_pb2_grpc.GameServiceStub(ch)
        view = await stub.GetView(game_pb2.GetViewRequest(game_id=GAME, seat_token=_tok(viewer)))
        out += [e.SerializeToString() for e in view.events]
        out.append(b"version=%d over=%d" % (view.version, view.over))
        call = stub.StreamView(
            game_pb2.StreamViewRequest(game_id=GAME, seat_token=_tok(viewer), upto_seq=last)
        )
        out += [e.SerializeToString() async for e in call]
    return out


async def replay_service(side: Side, viewer: int, last: int) -> list[bytes]:
    """GetEvents' and StreamGame's envelopes (serialized)."""
    meta = [("authorization", f"Bearer {_tok(viewer)}")] if viewer >= 0 else []
    out: list[bytes] = []
    async with grpc.aio.insecure_channel(f"127.0.0.1:{side.replay_port}") as ch:
        stub = replay_pb2_grpc.ReplayServiceStub(ch)
        got = await stub.GetEvents(
            replay_pb2.GetEventsRequest(game_id=GAME, viewer=viewer), metadata=meta
        )
        out += [e.SerializeToString() for e in got.events]
        call = stub.StreamGame(
            replay_pb2.StreamGameRequest(game_id=GAME, viewer=viewer), metadata=meta
        )
        async for e in _until(call, await _end(side, viewer, last)):
            out.append(e.SerializeToString())
    return out


# A live stream is read up to the viewer's own position of entry `last` (its messages carry
# positions, not seqs), where it stops: the entries after it are withheld from the viewer.
# QUIET_S is only the fallback for a stream that never gets there; it was once the way every
# stream ended, at 0.3 s, and under load a stream's first message came later than that, so one
# side read nothing and the test saw the two games told apart (1748 items against 874).
QUIET_S = 5.0
AFTER_END_S = 0.3  # an SSE stream's messages written with the one at the end: already sent


async def _end(side: Side, viewer: int, last: int) -> int:
    """`viewer`'s position of entry `last`: the position its streams end at."""
    return positions_of(await side.games.store.read(GAME)).position(viewer, last)


async def _until(call: Any, end: int) -> AsyncIterator[Any]:
    """A live stream's messages up to the one at position `end` (or until it goes quiet)."""
    try:
        while True:
            try:
                e = await asyncio.wait_for(call.read(), QUIET_S)
            except TimeoutError:
                return
            if e is grpc.aio.EOF:
                return
            yield e
            if e.seq >= end:
                return
    finally:
        call.cancel()


async def http(side: Side, viewer: int, last: int) -> list[bytes]:
    """/events' body and the SSE stream's bytes (up to entry `last`)."""
    q = "viewer=" + ("spectator" if viewer < 0 else str(viewer))
    auth = f"Authorization: Bearer {_tok(viewer)}\r\n" if viewer >= 0 else ""
    out = [await _get(side.http_port, f"/api/games/{GAME}/events?{q}", auth)]
    end = await _end(side, viewer, last)
    out.append(await _sse(side.http_port, f"/api/games/{GAME}/stream?{q}", end, auth))
    return out


async def _get(port: int, path: str, auth: str) -> bytes:
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    return data.partition(b"\r\n\r\n")[2]


async def _sse(port: int, path: str, end: int, auth: str) -> bytes:
    """The SSE body up to the message at position `end`, and what follows it at once (a
    seat's decision message comes in the batch that reaches it), or until it goes quiet."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    head = f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{auth}\r\n"
    writer.write(head.encode())
    await writer.drain()
    await reader.readuntil(b"\r\n\r\n")
    body = bytearray()
    quiet = QUIET_S
    try:
        while True:
            try:
                msg = await asyncio.wait_for(reader.readuntil(b"\n\n"), quiet)
            except (TimeoutError, asyncio.IncompleteReadError):
                break
            body += msg
            if msg.startswith(b"event: end"):
                break
            if msg.startswith(b"id: ") and int(msg[4 : msg.index(b"\n")]) >= end:
                quiet = AFTER_END_S
    finally:
        writer.close()
    return bytes(body)


async def seat(side: Side, viewer: int, last: int) -> list[bytes]:
    """The read side's seat view and seat stream for a seat (nothing for a spectator), with
    the engine asked for the seat's decision over gRPC, as the play API asks it."""
    if viewer < 0:
        return []
    reads = ReadSide(side.games.store, seat_check=hmac_seat_check(SECRET), secret=SECRET)
    engine = Engine([f"127.0.0.1:{side.grpc_port}"])
    reader = SeatReader(reads, EngineDecisions(engine))
    out: list[bytes] = []
    try:
        v = await reader.view(GAME, viewer, _tok(viewer))
        out.append(msgspec.json.encode(v))
        # up to the seat's position of entry `last`: its decision message, if any, comes with
        # the batch that reaches it (the stream asks the engine before it sends a batch)
        end = positions_of(await side.games.store.read(GAME)).position(viewer, last)
        updates = await reader.stream(GAME, viewer, _tok(viewer), 0)
        try:
            at = 0
            while at < end:
                batch, m = await asyncio.wait_for(anext(updates), 10)
                out += [e for _, e in batch]
                out.append(msgspec.json.encode(m))
                at = max([at, *(p for p, _ in batch)])
        finally:
            await updates.aclose()
    finally:
        await reads.close()
        await engine.close()
    return out


def bot_feed(side: Side, viewer: int) -> list[bytes]:
    """The decisions messages the engine published for seat `viewer` (the bot feed): each one's
    decision, version, body and `view`, everything but its (time-stamped) seat token."""
    return [
        msgspec.msgpack.encode([m.decision, m.seat, m.player, m.version, m.body, m.view])
        for m in side.published()
        if m.seat == viewer
    ]


CHANNELS = {
    "GameService": game_service,
    "ReplayService": replay_service,
    "SSE": http,
    "seat": seat,
    "BotAPI": bot_api,  # a bot account's seat over HTTP (services/play/botapi.py)
    "chart": chart,  # who is winning, and TV's featured game (services/readside/chart.py)
}


async def differences(pair: Pair, viewer: int) -> list[str]:
    """Where the two games look different to `viewer`, channel by channel."""
    out: list[str] = []
    last = await pair.a.games.store.head(GAME)
    if last != await pair.b.games.store.head(GAME):
        out.append("the two logs differ in length (a withheld answer or event more)")
    for name, read in CHANNELS.items():
        # the two sides side by side: a stream whose last entries are withheld from the viewer
        # is read until it goes quiet (QUIET_S), and the two wait out their quiet together
        got_a, got_b = await asyncio.gather(read(pair.a, viewer, last), read(pair.b, viewer, last))
        if got_a != got_b:
            i = next((k for k, (x, y) in enumerate(zip(got_a, got_b, strict=False)) if x != y), -1)
            where = (got_a[i][:300], got_b[i][:300]) if i >= 0 else (len(got_a), len(got_b))
            out.append(f"{name}: viewer {viewer} tells the games apart at item {i}: {where}")
    if pair.a.decisions.get(viewer) != pair.b.decisions.get(viewer):
        da, db = pair.a.decisions.get(viewer, []), pair.b.decisions.get(viewer, [])
        i = next((k for k, (x, y) in enumerate(zip(da, db, strict=False)) if x != y), -1)
        out.append(f"GetDecision: viewer {viewer} tells the games apart after answer {i}")
    fed_a, fed_b = bot_feed(pair.a, viewer), bot_feed(pair.b, viewer)
    if fed_a != fed_b:
        i = next((k for k, (x, y) in enumerate(zip(fed_a, fed_b, strict=False)) if x != y), -1)
        out.append(f"bot feed: seat {viewer} tells the games apart at its message {i}")
    if pair.a.worlds.get(viewer) != pair.b.worlds.get(viewer):
        wa, wb = pair.a.worlds.get(viewer, []), pair.b.worlds.get(viewer, [])
        i = next((k for k, (x, y) in enumerate(zip(wa, wb, strict=False)) if x != y), -1)
        out.append(f"Determinize: seat {viewer} tells the games apart at its decision {i}")
    return out
