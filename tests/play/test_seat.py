"""The seat's stream without the network: the replay feed of an in-memory log, the engine's
decisions asked through a stand-in that can be away. Entries keep flowing while the engine is
away, a decision is sent once (again only when it changes), and the end says nothing is
pending."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import redis.asyncio as aioredis

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.engine.grpc_server import GameServicer
from services.engine.service import Games, NewMatch, Refused
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.catalog import archive_game
from services.play import identity, schema
from services.play.ratelimit import RateLimit
from services.play.seat import Seats
from services.proto_gen.arena.v1 import game_pb2
from services.replay.core import Replay
from services.rules import api

SECRET = b"seat-test"


class Engine:
    """GetDecision over an in-process Games; `away` calls fail as an unreachable engine."""

    def __init__(self, games: Games, away: int = 0) -> None:
        self.games, self.away, self.calls = games, away, 0

    async def decision(self, game: str, token: str) -> game_pb2.GetDecisionResponse:
        self.calls += 1
        if self.away > 0:
            self.away -= 1
            raise Refused("UNAVAILABLE", "the engine unavailable: connection refused")
        servicer = GameServicer(self.games)  # GetDecision itself, without the network
        req = game_pb2.GetDecisionRequest(game_id=game, seat_token=token)
        out: game_pb2.GetDecisionResponse = await GameServicer.GetDecision.__wrapped__(  # type: ignore[attr-defined]
            servicer, req, None
        )
        return out

    async def submit(
        self, game: str, token: str, decision: int, picks: list[str]
    ) -> game_pb2.SubmitActionResponse:
        servicer = GameServicer(self.games)  # SubmitAction itself, without the network
        req = game_pb2.SubmitActionRequest(
            game_id=game, seat_token=token, decision_id=decision, picks=picks
        )
        out: game_pb2.SubmitActionResponse = await GameServicer.SubmitAction.__wrapped__(  # type: ignore[attr-defined]
            servicer, req, None
        )
        return out


async def _seated(
    redis_client: aioredis.Redis, namespace: str, game: str, seed: int, name: str
) -> tuple[InMemoryEventStore, Games, identity.Sessions, identity.Player, str]:
    """A two-seat chengtian game in memory, and a guest `name` seated at its seat 0: the store,
    the engine's games, the sessions, the player and the seat's token."""
    store = InMemoryEventStore()
    games = Games(store, MemorySide(), SECRET)
    seats = [Seat(f"p{i}", False, f"P{i}") for i in range(2)]
    await games.create_game(NewMatch(match_id=game, ruleset="chengtian", seats=seats, seed=seed))
    sessions = identity.Sessions(redis_client, namespace)
    player, _ = await identity.Guests(sessions).create(name)
    token = tokens.issue(SECRET, game, 0)
    await sessions.set_ticket(player.player, f"t-{game}", "table")
    assert await sessions.seat_from(player.player, f"t-{game}", identity.Seat(game, 0, token))
    return store, games, sessions, player, token


async def test_the_stream_rides_out_an_absent_engine_and_sends_each_decision_once(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    store, games, sessions, player, token = await _seated(
        redis_client, redis_namespace, "g1", 3, "Ann"
    )
    engine = Engine(games, away=2)
    replay = Replay(store, seat_check=lambda g, s, t: t == token)
    service = Seats(replay, sessions, engine, RateLimit(redis_client, redis_namespace, 100))  # type: ignore[arg-type]

    async def other_seat() -> None:  # seat 1 answers as soon as it is asked
        while not (hot := await games.get("g1")).game.over:
            d = api.pending(hot.game)
            if d is not None and d.seat == 1:
                await answer(d)
            await asyncio.sleep(0.001)

    policy = RandomPolicy(5)

    async def answer(d: api.Decision) -> None:
        tok = tokens.issue(SECRET, "g1", d.seat)
        try:
            await games.submit_action(
                "g1", tok, (await games.get("g1")).ids.opaque(d.id), list(policy.act(d).picks)
            )
        except Refused:  # an illegal random combination: the default instead
            await games.submit_action(
                "g1",
                tok,
                (await games.get("g1")).ids.opaque(d.id),
                list(api.default_answer(d).picks),
            )

    rival = asyncio.create_task(other_seat())
    stream = await service.stream(player, "g1", 0, 0)
    entries, decisions = 0, []
    numbers: list[int] = []  # the seat's positions: 1, 2, 3, … (no gap counts others' answers)
    first: tuple[int, bytes | None] | None = None
    async for batch, message in stream:
        entries += len(batch)
        numbers += [n for n, _ in batch]
        assert all(json.loads(e)["seq"] == n for n, e in batch)
        first = first or (len(batch), message)
        if message is None:
            continue
        m = json.loads(message)
        assert m["version"] == len(numbers)  # the decision belongs to the last entry it holds
        decisions.append(m)
        d = m["decision"]
        if d is None:
            if (await games.get("g1")).game.over:
                break
            continue
        hot = await games.get("g1")
        pending = api.pending(hot.game)
        assert pending is not None and hot.ids.opaque(pending.id) == d["id"]
        seen = hot.positions.position(0, hot.log.version)  # the seat's position
        assert d["seat"] == 0 and d["options"] and m["version"] == seen
        await answer(pending)
    await rival
    await stream.aclose()
    assert first is not None and first[0] > 0 and first[1] is None  # entries, engine away
    assert entries > 10 and engine.calls > 2  # asked again after the engine came back
    assert numbers == list(range(1, entries + 1))
    mine = [m["decision"]["id"] for m in decisions if m["decision"]]
    assert mine and len(mine) == len(set(mine))  # each decision sent once
    assert decisions[-1]["decision"] is None and decisions[-1]["waits"] is None  # nothing left
    await replay.close()


async def test_the_stream_ends_when_the_game_ended_and_was_archived_unread(
    redis_client: aioredis.Redis, redis_namespace: str, tmp_path: Path
) -> None:
    """The race a browser game hit: the replay server held the game's feed (a page asked for
    the seat's view), the game ran to its end, and its engine archived it, dropped the live
    log and forgot the game ("no game") before the feed had read the last entries. The seat's
    stream must still reach the end (from the archive) and close, not ask the engine again
    every second forever while the page waits for a decision that never comes."""
    store, games, sessions, player, token = await _seated(
        redis_client, redis_namespace, "g2", 4, "Bo"
    )
    replay = Replay(store, tmp_path, seat_check=lambda g, s, t: t == token)
    feed, _ = await replay.grant("g2", 0, token)  # loaded now, while the game is young
    await feed.stop()  # the tail between two reads: it has not read what follows
    held = feed.version
    policy = RandomPolicy(7)
    while not (hot := await games.get("g2")).game.over:  # both seats play it out
        d = api.pending(hot.game)
        assert d is not None
        tok = tokens.issue(SECRET, "g2", d.seat)
        picks = list(policy.act(d).picks)
        try:
            await games.submit_action("g2", tok, hot.ids.opaque(d.id), picks)
        except Refused:
            picks = list(api.default_answer(d).picks)
            await games.submit_action("g2", tok, hot.ids.opaque(d.id), picks)
    head = await store.head("g2")
    await archive_game(store, "g2", tmp_path)  # the engine's archiving drops the live log
    assert await store.head("g2") == 0
    assert feed.version == held < head and not feed.over  # the feed never read the rest

    class Gone:
        """The engine after it dropped the finished game."""

        calls = 0

        async def decision(self, game: str, token: str) -> game_pb2.GetDecisionResponse:
            self.calls += 1
            raise Refused("NOT_FOUND", f"no game {game!r}")

    gone = Gone()
    service = Seats(replay, sessions, gone, RateLimit(redis_client, redis_namespace, 100))  # type: ignore[arg-type]
    stream = await service.stream(player, "g2", 0, 0)

    async def read_all() -> list[tuple[list[tuple[int, bytes]], bytes | None]]:
        return [item async for item in stream]

    items = await asyncio.wait_for(read_all(), 15)  # the stream closes by itself
    entries = [json.loads(e) for batch, _ in items for _, e in batch]
    assert feed.version == head and feed.closed  # every entry, the seed reveal last
    assert entries and entries[-1]["seq"] == feed.positions.position(0, head)
    assert any(e.get("event", {}).get("type") == "game_ended" for e in entries)
    assert gone.calls >= 1  # the engine was asked and had forgotten the game
    await replay.close()


async def test_the_decision_after_the_persons_answer_comes_with_the_answer(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """SubmitAction already says what is pending after an answer: the seat's stream shows that
    instead of asking the engine again (it asks only when the log moved otherwise: the other
    seat's answers), and what it shows is what the engine holds."""
    store, games, sessions, player, _ = await _seated(redis_client, redis_namespace, "g3", 9, "Cy")
    engine = Engine(games)
    replay = Replay(store, seat_check=lambda g, s, t: True, secret=SECRET)
    service = Seats(replay, sessions, engine, RateLimit(redis_client, redis_namespace, 10_000))  # type: ignore[arg-type]
    policy = RandomPolicy(11)

    async def other_seat() -> None:
        while not (hot := await games.get("g3")).game.over:
            d = api.pending(hot.game)
            if d is not None and d.seat == 1:
                tok = tokens.issue(SECRET, "g3", 1)
                picks = list(api.default_answer(d).picks)
                await games.submit_action("g3", tok, hot.ids.opaque(d.id), picks)
            await asyncio.sleep(0.001)

    rival = asyncio.create_task(other_seat())
    stream = await service.stream(player, "g3", 0, 0)
    answered, free = 0, 0  # answers given; decisions shown after one without an engine call
    calls_at_answer = -1
    async for _, message in stream:
        if message is None:
            continue
        d = json.loads(message)["decision"]
        if d is None:
            if (await games.get("g3")).game.over:
                break
            continue
        hot = await games.get("g3")
        pending = api.pending(hot.game)
        assert pending is not None and hot.ids.opaque(pending.id) == d["id"] and d["options"]
        assert d["deadline_ms"] > 0  # SubmitAction's decision carries its deadline too
        free += engine.calls == calls_at_answer
        picks = list(policy.act(pending).picks)
        calls_at_answer = engine.calls
        try:
            await service.answer(player, "g3", 0, schema.Answer(decision=d["id"], picks=picks))
        except Refused:
            picks = list(api.default_answer(pending).picks)
            await service.answer(player, "g3", 0, schema.Answer(decision=d["id"], picks=picks))
        answered += 1
        if answered >= 60:
            break
    rival.cancel()
    await stream.aclose()
    assert answered >= 20 and free >= answered // 3, (answered, free, engine.calls)
    assert service.reader.asked == engine.calls
    await replay.close()


async def test_the_other_seats_moves_are_told_by_the_engines_marks(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """On Redis the engine writes what is pending beside each append of a people's game (its
    mark): after the other seat's moves the stream shows what is pending from the mark and asks
    the engine only for the seat's own decisions (their options), not after every move of the
    other seat (issue 44); what it shows is what the engine holds."""
    from services.engine.side import RedisSide
    from services.eventlog import RedisEventStore

    ns = redis_namespace
    store = RedisEventStore(redis_client, ns)
    games = Games(store, RedisSide(redis_client, ns), SECRET)
    seats = [Seat("p0", False, "P0"), Seat("bot:random", True)]
    await games.create_game(NewMatch(match_id="g4", ruleset="chengtian", seats=seats, seed=4))
    sessions = identity.Sessions(redis_client, ns)
    player, _ = await identity.Guests(sessions).create("Di")
    await sessions.set_ticket(player.player, "t-g4", "table")
    token = tokens.issue(SECRET, "g4", 0)
    assert await sessions.seat_from(player.player, "t-g4", identity.Seat("g4", 0, token))
    engine = Engine(games)
    replay = Replay(store, seat_check=lambda g, s, t: True, secret=SECRET)
    service = Seats(replay, sessions, engine, RateLimit(redis_client, ns, 10_000))  # type: ignore[arg-type]
    moves = 0

    async def other_seat() -> None:
        nonlocal moves
        while not (hot := await games.get("g4")).game.over:
            d = api.pending(hot.game)
            if d is not None and d.seat == 1:
                tok = tokens.issue(SECRET, "g4", 1, bot=True)
                picks = list(api.default_answer(d).picks)
                await games.submit_action("g4", tok, hot.ids.opaque(d.id), picks)
                moves += 1
            await asyncio.sleep(0.001)

    rival = asyncio.create_task(other_seat())
    stream = await service.stream(player, "g4", 0, 0)
    answered = 0
    async for _, message in stream:
        if message is None:
            continue
        d = json.loads(message)["decision"]
        if d is None:
            if (await games.get("g4")).game.over:
                break
            continue
        hot = await games.get("g4")
        pending = api.pending(hot.game)
        assert pending is not None and hot.ids.opaque(pending.id) == d["id"] and d["options"]
        picks = list(api.default_answer(pending).picks)
        await service.answer(player, "g4", 0, schema.Answer(decision=d["id"], picks=picks))
        answered += 1
        if answered >= 30:
            break
    rival.cancel()
    await stream.aclose()
    reader = service.reader
    assert answered >= 10 and moves >= 10, (answered, moves)
    assert reader.marked > 0 and reader.asked == engine.calls
    # the engine is asked about the seat's own decisions (at most once each, and again when a
    # batch of entries ends inside an append), not after each of the other seat's moves
    assert engine.calls <= answered + moves // 2, (engine.calls, answered, moves, reader.marked)
    await replay.close()


async def test_a_known_session_is_held_for_a_while_an_unknown_one_is_asked_each_time(
    redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    """Who sends a request: a session found in Redis is taken from memory for `known_s`
    (a person's answer asked Redis twice for it, one round trip after the other), looked up
    again after that; a token Redis does not know is never held."""
    sessions = identity.Sessions(redis_client, redis_namespace, known_s=3600)
    player, token = await identity.Guests(sessions).create("Ann")
    assert await sessions.player_of(token) == player
    await redis_client.delete(sessions._session(token))  # gone from Redis: still held here
    assert await sessions.player_of(token) == player
    sessions._known[token] = (player, 0.0)  # its time is up: asked again, and gone
    assert await sessions.player_of(token) is None
    assert token not in sessions._known

    stranger = "x" * 43
    assert await sessions.player_of(stranger) is None
    assert stranger not in sessions._known
    # a session opened for the player later is found (nothing unknown was held)
    later = await sessions.open(player.player)
    assert await sessions.player_of(later) == player
    never = identity.Sessions(redis_client, redis_namespace, known_s=0)
    assert await never.player_of(later) == player and not never._known
