"""Leaks 1, 4 and 7 of issue 17, tried as an outsider: a client written against proto/ only,
holding nothing (a spectator) or one seat's token, over real gRPC to an in-process engine.

1. GameService sent every entry's chain hash and every answer to every caller, and ignored the
   spectator delay.
4. CreateGame had no caller authentication.
7. Bad input got UNKNOWN/INTERNAL (an invalid game id, deeply nested options).
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any

import grpc
import pytest

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.engine.grpc_server import make_server, set_serving
from services.engine.service import Games, NewMatch
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.entry import decode_entry
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.readside.clock import ManualClock
from services.readside.positions import positions_of
from services.rules import api

SECRET = b"secrecy-game-service"
C = grpc.StatusCode


@dataclass
class Env:
    games: Games
    stub: game_pb2_grpc.GameServiceStub
    clock: ManualClock


async def _env(delay_ms: int = 0) -> AsyncIterator[Env]:
    clock = ManualClock()
    store = InMemoryEventStore(clock.now_ms)
    games = Games(store, MemorySide(), SECRET, spectator_delay_ms=delay_ms, clock=clock)
    server, port, checker = make_server(games)
    await server.start()
    await set_serving(checker)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield Env(games, game_pb2_grpc.GameServiceStub(ch), clock)
    await server.stop(None)


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    async for e in _env():
        yield e


@pytest.fixture
async def delayed() -> AsyncIterator[Env]:
    async for e in _env(delay_ms=30_000):
        yield e


async def _start(games: Games, game: str = "g1", seed: int = 3, answers: int = 60) -> None:
    """A 5-seat game (people's seats: nobody answers but this) moved on `answers` answers."""
    await games.create_game(
        NewMatch(
            match_id=game, ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=seed
        )
    )
    policy = RandomPolicy(seed)
    for _ in range(answers):
        hot = await games.get(game)
        d = api.pending(hot.game)
        if d is None or hot.game.over:
            return
        a = policy.act(d)
        await games.submit_action(
            game,
            tokens.issue(SECRET, game, d.seat),
            (await games.get(game)).ids.opaque(d.id),
            list(a.picks),
        )


async def _code(call: object) -> grpc.StatusCode:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as err:
        return err.code()
    return C.OK


async def _stream(stub: game_pb2_grpc.GameServiceStub, game: str, token: str = "") -> list:  # type: ignore[type-arg]
    """Everything StreamView sends now (it is live: stop at the current head)."""
    view = await stub.GetView(game_pb2.GetViewRequest(game_id=game, seat_token=token))
    out = []
    call = stub.StreamView(game_pb2.StreamViewRequest(game_id=game, seat_token=token))
    if not view.events:
        call.cancel()
        return out
    last = view.events[-1].seq
    async for e in call:
        out.append(e)
        if e.seq >= last:
            break
    call.cancel()
    return out


def _kind(e: Any) -> str:
    """An envelope's kind (services/readside/entries.py)."""
    return str(json.loads(e.json)["kind"])


# ---- leak 1 ----------------------------------------------------------------------------------


async def test_no_viewer_gets_a_chain_hash(env: Env) -> None:
    """The hash of an entry a viewer sees redacted is a digest of its secret (the measured
    attack read every hidden role back from it in at most four guesses; test_digest_search.py
    runs it over every channel): GameService sends no hash to anyone."""
    await _start(env.games)
    for token in ("", tokens.issue(SECRET, "g1", 2)):
        view = await env.stub.GetView(game_pb2.GetViewRequest(game_id="g1", seat_token=token))
        streamed = await _stream(env.stub, "g1", token)
        assert view.events and streamed
        assert all(e.hash == b"" for e in [*view.events, *streamed])


async def test_answers_reach_only_the_seat_that_gave_them(env: Env) -> None:
    await _start(env.games)
    spectator = await env.stub.GetView(game_pb2.GetViewRequest(game_id="g1"))
    assert not [e for e in spectator.events if _kind(e) == "answer"]
    assert not [e for e in await _stream(env.stub, "g1") if _kind(e) == "answer"]
    seen_any = False
    for seat in range(5):
        token = tokens.issue(SECRET, "g1", seat)
        view = await env.stub.GetView(game_pb2.GetViewRequest(game_id="g1", seat_token=token))
        mine = [json.loads(e.json)["answer"] for e in view.events if _kind(e) == "answer"]
        assert all(a["seat"] == seat for a in mine)
        seen_any = seen_any or bool(mine)
    assert seen_any  # the seats do get their own answers


async def test_the_spectator_delay_holds_on_game_service(delayed: Env) -> None:
    """A spectator is held the delay behind on GetView, StreamView and GetDecision; a seat is
    not (it plays live)."""
    env = delayed
    await _start(env.games, answers=10)
    head = await env.games.store.head("g1")
    view = await env.stub.GetView(game_pb2.GetViewRequest(game_id="g1"))
    assert view.events == [] and view.version == 0 and not view.HasField("pending")
    d = await env.stub.GetDecision(game_pb2.GetDecisionRequest(game_id="g1"))
    assert not d.HasField("decision") and d.version == 0
    seat = tokens.issue(SECRET, "g1", 0)
    mine = await env.stub.GetView(game_pb2.GetViewRequest(game_id="g1", seat_token=seat))
    at = positions_of(await env.games.store.read("g1"))
    assert mine.version == len(mine.events) == at.position(0, head)  # live, in its positions
    call = env.stub.StreamView(game_pb2.StreamViewRequest(game_id="g1"))
    first = asyncio_task(call.read())
    for _ in range(20):
        await _settle()
    assert not first.done()  # held back
    env.clock.advance(30_000)
    got = await first
    assert got.seq == 1
    call.cancel()
    view = await env.stub.GetView(game_pb2.GetViewRequest(game_id="g1"))
    assert view.version == len(view.events) == at.position(api.SPECTATOR, head) > 0
    assert not view.HasField("pending")  # a delayed spectator never gets the live decision


def asyncio_task(coro: object) -> object:
    import asyncio

    return asyncio.ensure_future(coro)  # type: ignore[arg-type]


async def _settle() -> None:
    import asyncio

    await asyncio.sleep(0.01)


# ---- leak 4 ----------------------------------------------------------------------------------


async def test_create_game_needs_the_service_credential(env: Env) -> None:
    """Unsigned, forged (another key, a changed field) and replayed create requests are refused
    and change nothing; a signed one creates, and a fresh signature of it is idempotent."""
    seats = [(f"p{i}", False) for i in range(5)]
    good = tokens.create_request(*tokens.sign_create(SECRET, "t0-0", "standard", seats))
    unsigned = game_pb2.CreateGameRequest()
    unsigned.CopyFrom(good)
    unsigned.ClearField("signature")
    forged = tokens.create_request(*tokens.sign_create(b"guessed", "t0-0", "standard", seats))
    changed = game_pb2.CreateGameRequest()
    changed.CopyFrom(good)
    changed.seats[0].player = "mallory"
    stale = tokens.create_request(
        *tokens.sign_create(SECRET, "t0-0", "standard", seats, now_ms=1_000)
    )
    for bad, code in (
        (unsigned, C.UNAUTHENTICATED),
        (forged, C.UNAUTHENTICATED),
        (changed, C.UNAUTHENTICATED),
        (stale, C.UNAUTHENTICATED),
    ):
        assert await _code(env.stub.CreateGame(bad)) == code
        assert await env.games.store.head("t0-0") == 0  # nothing was created
    made = await env.stub.CreateGame(good)
    assert made.created
    head = await env.games.store.head("t0-0")
    assert await _code(env.stub.CreateGame(good)) == C.PERMISSION_DENIED  # a replay
    again = await env.stub.CreateGame(
        tokens.create_request(*tokens.sign_create(SECRET, "t0-0", "standard", seats))
    )
    assert not again.created and await env.games.store.head("t0-0") == head


# ---- leak 7 ----------------------------------------------------------------------------------


@pytest.mark.parametrize("game", ["", "x y", "a" * 101, "\x00", "../etc", "é"])
async def test_invalid_game_ids_are_invalid_arguments(env: Env, game: str) -> None:
    token = tokens.issue(SECRET, game, 0) if game else ""
    for call in (
        env.stub.GetView(game_pb2.GetViewRequest(game_id=game)),
        env.stub.GetDecision(game_pb2.GetDecisionRequest(game_id=game)),
        env.stub.StreamView(game_pb2.StreamViewRequest(game_id=game)).read(),
        env.stub.GetView(game_pb2.GetViewRequest(game_id=game, seat_token=token)),
    ):
        assert await _code(call) == C.INVALID_ARGUMENT


async def test_deeply_nested_options_are_refused_cleanly(env: Env) -> None:
    for options in ('{"a":' * 5000 + "1" + "}" * 5000, "[" * 100_000, '{"a":[1,2]}'):
        req = tokens.create_request(
            *tokens.sign_create(SECRET, "m1", "standard", [("p", False)] * 5, options)
        )
        assert await _code(env.stub.CreateGame(req)) == C.INVALID_ARGUMENT
    assert await env.games.store.head("m1") == 0


async def test_a_seat_catches_up_to_a_version_ending_in_a_withheld_answer(env: Env) -> None:
    """Withholding answers must not strand a seat that catches up to a decision's version
    whose last entries are another seat's answer (no event follows a declined response):
    StreamView with upto_seq ends there."""
    await env.games.create_game(
        NewMatch(match_id="g1", ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=3)
    )
    policy, found = RandomPolicy(3), None
    for _ in range(3000):
        hot = await env.games.get("g1")
        d = api.pending(hot.game)
        assert d is not None and not hot.game.over
        await env.games.submit_action(
            "g1",
            tokens.issue(SECRET, "g1", d.seat),
            (await env.games.get("g1")).ids.opaque(d.id),
            list(policy.act(d).picks),
        )
        last = decode_entry((await env.games.store.read("g1"))[-1][1])
        if last.kind == "answer":
            nxt = api.pending((await env.games.get("g1")).game)
            if nxt is not None and nxt.seat != d.seat:
                found = (nxt.seat, await env.games.store.head("g1"))
                break
    assert found is not None
    seat, head = found
    token = tokens.issue(SECRET, "g1", seat)
    version = (
        await env.stub.GetDecision(game_pb2.GetDecisionRequest(game_id="g1", seat_token=token))
    ).version  # the seat's position: the withheld answer at the head is not counted
    assert 0 < version < head
    call = env.stub.StreamView(
        game_pb2.StreamViewRequest(game_id="g1", seat_token=token, upto_seq=version)
    )
    got = [e async for e in call]  # ends by itself
    assert [e.seq for e in got] == list(range(1, version + 1))


async def test_submit_action_tells_the_next_decision_only_when_public(env: Env) -> None:
    """SubmitAction's `next` told the answering seat who is asked next and what, though being
    asked can give a hand away (a 无懈可击 prompt): it is sent only when that viewer may know."""
    from services.rules.api import decision_visible

    await env.games.create_game(
        NewMatch(match_id="g1", ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=3)
    )
    policy, hidden = RandomPolicy(3), 0
    for _ in range(400):
        hot = await env.games.get("g1")
        d = api.pending(hot.game)
        if d is None or hot.game.over:
            break
        r = await env.stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id="g1",
                seat_token=tokens.issue(SECRET, "g1", d.seat),
                decision_id=hot.ids.opaque(d.id),
                picks=list(policy.act(d).picks),
            )
        )
        after = await env.games.get("g1")
        nxt = api.pending(after.game)
        if nxt is None or after.game.over:
            continue
        public = decision_visible(nxt.kind, nxt.seat, after.game.current, d.seat)
        hidden += not public
        assert r.HasField("next") == public, (nxt.kind, nxt.seat, d.seat)
    assert hidden > 0  # the case was met


async def test_another_viewer_learns_who_is_asked_and_the_kind_only(env: Env) -> None:
    """A public decision (the active seat choosing targets, say) went to every other viewer
    with its min, max and declinable: a targets decision with max 2 is 铁索连环, one not
    declinable is 借刀杀人's second target, though the seat may cancel and keep the card
    unseen. Others now get who is asked, the kind, the id and the deadline; never the bounds."""
    found = 0
    for seed in range(1, 8):
        game = f"b{seed}"
        await env.games.create_game(
            NewMatch(
                match_id=game,
                ruleset="standard",
                seats=[Seat(f"p{i}") for i in range(5)],
                seed=seed,
            )
        )
        policy = RandomPolicy(seed)
        for _ in range(300):
            hot = await env.games.get(game)
            d = api.pending(hot.game)
            if d is None or hot.game.over:
                break
            other = (d.seat + 1) % 5
            for token in ("", tokens.issue(SECRET, game, other)):
                seen = await env.stub.GetDecision(
                    game_pb2.GetDecisionRequest(game_id=game, seat_token=token)
                )
                if seen.HasField("decision"):
                    x = seen.decision
                    assert (x.seat, x.kind, x.id) == (d.seat, d.kind, hot.ids.opaque(d.id))
                    assert (x.min, x.max, x.declinable, list(x.options), x.info_json) == (
                        0,
                        0,
                        False,
                        [],
                        "",
                    ), (d.kind, d.info)
            found += d.kind == "targets" and (d.max == 2 or not d.declinable)
            await env.games.submit_action(
                game,
                tokens.issue(SECRET, game, d.seat),
                hot.ids.opaque(d.id),
                list(policy.act(d).picks),
            )
        if found:
            break
    assert found  # a decision whose bounds name its card was met, and not shown to others
