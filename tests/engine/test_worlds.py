"""GameService.Determinize (services/engine/worlds.py) over real gRPC to an in-process engine:
the worlds a hard bot's look-ahead plays on are states its seat could be in, asked for only with
a bot's token at that seat's pending decision; bad requests are refused and change nothing.
(That a world tells nothing the seat may not know: tests/secrecy/test_noninterference.py.)"""

from __future__ import annotations

from collections.abc import AsyncIterator
from dataclasses import dataclass

import grpc
import pytest

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import NewMatch, Seat
from services.engine.grpc_server import make_server, set_serving
from services.engine.service import Games
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore
from services.eventlog.entry import EVENT, decode_entry
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.rules import api
from services.rules.determinize import contradictions

SECRET = b"engine-worlds"
C = grpc.StatusCode
GAME = "w1"


@dataclass
class Env:
    games: Games
    stub: game_pb2_grpc.GameServiceStub


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    games = Games(InMemoryEventStore(), MemorySide(), SECRET)
    server, port, checker = make_server(games)
    await server.start()
    await set_serving(checker)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield Env(games, game_pb2_grpc.GameServiceStub(ch))
    await server.stop(None)


async def _play(games: Games, answers: int, people: bool = False) -> None:
    """A 5-seat standard game (bots' seats, or people's) moved on `answers` random answers."""
    seat = Seat("p", False) if people else Seat("bot:hard", True)
    await games.create_game(NewMatch(match_id=GAME, ruleset="standard", seats=[seat] * 5, seed=11))
    policy = RandomPolicy(11)
    for _ in range(answers):
        hot = await games.get(GAME)
        d = api.pending(hot.game)
        if d is None or hot.game.over:
            return
        token = tokens.issue(SECRET, GAME, d.seat, bot=not people)
        await games.submit_action(GAME, token, hot.ids.opaque(d.id), list(policy.act(d).picks))


async def _asked(games: Games) -> tuple[api.Decision, int, str]:
    """The pending decision, its opaque id and a bot token for its seat."""
    hot = await games.get(GAME)
    d = api.pending(hot.game)
    assert d is not None
    return d, hot.ids.opaque(d.id), tokens.issue(SECRET, GAME, d.seat, bot=True)


async def _view(games: Games, seat: int) -> api.View:
    """The seat's view, folded from the log here (not by the engine's code)."""
    events = [
        api.decode_event(e.payload)
        for _, data in await games.store.read(GAME)
        if (e := decode_entry(data)).kind == EVENT
    ]
    return api.fold(events, seat)


def _request(decision: int, token: str, *worlds: game_pb2.World) -> game_pb2.DeterminizeRequest:
    return game_pb2.DeterminizeRequest(
        game_id=GAME, seat_token=token, decision_id=decision, worlds=list(worlds)
    )


async def test_worlds_are_states_the_seat_could_be_in(env: Env) -> None:
    await _play(env.games, 90)
    d, opaque, token = await _asked(env.games)
    truth = (await env.games.get(GAME)).game
    view = await _view(env.games, d.seat)
    asked = [game_pb2.World(seed=s) for s in (1, 2, 3)]
    asked.append(game_pb2.World(seed=2**64 - 1, roles={t: "rebel" for t in range(5)}))
    reply = await env.stub.Determinize(_request(opaque, token, *asked))
    assert len(reply.states) == 4
    worlds = [api.restore(s) for s in reply.states]
    others = [t for t in range(5) if t != d.seat]
    assert len({tuple(tuple(w.players[t].hand) for t in others) for w in worlds}) == 4  # dealt
    for w in worlds:
        assert contradictions(w, view) == []
        assert w.pending is not None and w.pending.id == opaque  # as the seat knows it
        assert (w.pending.seat, w.pending.options) == (d.seat, d.options)
        assert w.players[d.seat].hand == truth.players[d.seat].hand
        api.submit(w, RandomPolicy(5).act(w.pending))  # a live state: the rules play on
    # the same request, the same states: a bot's search is repeatable
    again = await env.stub.Determinize(_request(opaque, token, *asked))
    assert list(again.states) == list(reply.states)


async def test_only_a_bot_at_its_pending_decision(env: Env) -> None:
    await _play(env.games, 40)
    d, opaque, token = await _asked(env.games)
    world = game_pb2.World(seed=1)
    person = tokens.issue(SECRET, GAME, d.seat)
    other = tokens.issue(SECRET, GAME, (d.seat + 1) % 5, bot=True)
    elsewhere = tokens.issue(SECRET, "w2", d.seat, bot=True)
    head = await env.games.store.head(GAME)
    cases = [
        (_request(opaque, person, world), C.PERMISSION_DENIED),  # a person's token
        (_request(opaque, other, world), C.FAILED_PRECONDITION),  # another seat's
        (_request(opaque + 1, token, world), C.FAILED_PRECONDITION),  # not the pending one
        (_request(opaque, "", world), C.UNAUTHENTICATED),
        (_request(opaque, token[:-2] + "xx", world), C.UNAUTHENTICATED),
        (_request(opaque, elsewhere, world), C.PERMISSION_DENIED),
        (_request(opaque, token), C.INVALID_ARGUMENT),  # no world
        (_request(opaque, token, *[world] * 17), C.INVALID_ARGUMENT),  # too many
        (_request(opaque, token, game_pb2.World(roles={9: "rebel"})), C.INVALID_ARGUMENT),
        (_request(opaque, token, game_pb2.World(roles={1: "r" * 99})), C.INVALID_ARGUMENT),
    ]
    for req, code in cases:
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await env.stub.Determinize(req)
        assert err.value.code() == code, (req, err.value.details())
        assert err.value.details()  # a reason, in one line
    bad_id = _request(opaque, token, world)
    bad_id.game_id = "no such game!"
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await env.stub.Determinize(bad_id)
    assert err.value.code() == C.INVALID_ARGUMENT
    assert await env.games.store.head(GAME) == head  # nothing was written
    ok = await env.stub.Determinize(_request(opaque, token, world))
    assert len(ok.states) == 1


async def test_a_persons_seat_gets_no_worlds(env: Env) -> None:
    """Even with a bot's token: worlds are for bots' look-ahead, not a person's."""
    await _play(env.games, 20, people=True)
    _, opaque, token = await _asked(env.games)
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await env.stub.Determinize(_request(opaque, token, game_pb2.World(seed=1)))
    assert err.value.code() == C.PERMISSION_DENIED
