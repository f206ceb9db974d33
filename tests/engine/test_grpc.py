"""GameService over real gRPC (in-process server, in-memory store): status codes, bad input."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from typing import Any

import grpc
import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.contracts import tokens
from services.engine.grpc_server import make_server, set_serving
from services.engine.service import Games, NewMatch
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc

SECRET = b"grpc-test"
Env = tuple[Games, game_pb2_grpc.GameServiceStub]


@pytest.fixture
async def env() -> AsyncIterator[Env]:
    games = Games(InMemoryEventStore(), MemorySide(), SECRET)
    server, port, checker = make_server(games)
    await server.start()
    await set_serving(checker)
    await games.create_game(
        NewMatch(match_id="g1", ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=1)
    )
    await games.create_game(
        NewMatch(match_id="g2", ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=2)
    )
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as ch:
        yield games, game_pb2_grpc.GameServiceStub(ch)
    await server.stop(None)


async def _code(call: object) -> grpc.StatusCode:
    try:
        await call  # type: ignore[misc]
    except grpc.aio.AioRpcError as err:
        return err.code()
    return grpc.StatusCode.OK


async def test_seat_isolation_status_codes(env: Env) -> None:
    games, stub = env
    d = (await stub.GetDecision(game_pb2.GetDecisionRequest(game_id="g1"))).decision
    assert d.options == []  # a spectator sees no options
    own = tokens.issue(SECRET, "g1", d.seat)
    mine = await stub.GetDecision(game_pb2.GetDecisionRequest(game_id="g1", seat_token=own))
    picks = [] if mine.decision.declinable else list(mine.decision.options[: mine.decision.min])
    head = await games.store.head("g1")

    def sub(token: str, game: str = "g1", decision: int = d.id, p: list[str] = picks) -> object:
        return stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=game, seat_token=token, decision_id=decision, picks=p
            )
        )

    C = grpc.StatusCode
    assert await _code(sub(tokens.issue(SECRET, "g1", (d.seat + 1) % 5))) == C.PERMISSION_DENIED
    assert await _code(sub(tokens.issue(SECRET, "g2", d.seat))) == C.PERMISSION_DENIED
    assert await _code(sub("")) == C.UNAUTHENTICATED  # a spectator cannot act
    assert await _code(sub(tokens.issue(b"forged", "g1", d.seat))) == C.UNAUTHENTICATED
    assert await _code(sub(tokens.issue(SECRET, "g1", d.seat, ttl_ms=-5))) == C.UNAUTHENTICATED
    assert await _code(sub(tokens.issue(SECRET, "zz", 0), game="zz")) == C.NOT_FOUND
    assert await _code(sub(own, decision=d.id + 3)) == C.FAILED_PRECONDITION
    assert await _code(sub(own, p=["card:99999"])) == C.INVALID_ARGUMENT
    assert await games.store.head("g1") == head
    ok = await sub(own)
    assert not ok.duplicate and ok.version > head  # type: ignore[attr-defined]
    dup = await sub(own)
    assert dup.duplicate and dup.version == ok.version  # type: ignore[attr-defined]
    assert await _code(sub(own, decision=d.id)) == C.OK
    view = await stub.GetView(game_pb2.GetViewRequest(game_id="g1", seat_token=own))
    assert view.version == ok.version  # type: ignore[attr-defined]
    assert json.loads(view.events[0].json)["kind"] == "header"  # type: ignore[attr-defined]
    # a spectator is not sent the answer, and its count does not include it
    watched = await stub.GetView(game_pb2.GetViewRequest(game_id="g1"))
    assert watched.version == len(watched.events) == ok.version - 1  # type: ignore[attr-defined]


async def test_no_decision_shown_before_its_events_land(
    env: Env, monkeypatch: pytest.MonkeyPatch
) -> None:
    """The engine advances its state before the answer's append lands. A seat that polls
    meanwhile must not be shown the next decision at a position before the events that led
    to it (nor one that vanishes if the append fails): it is answered once the append lands."""
    games, stub = env
    d = (await stub.GetDecision(game_pb2.GetDecisionRequest(game_id="g1"))).decision
    own = tokens.issue(SECRET, "g1", d.seat)
    mine = await stub.GetDecision(game_pb2.GetDecisionRequest(game_id="g1", seat_token=own))
    picks = [] if mine.decision.declinable else list(mine.decision.options[: mine.decision.min])
    gate, reached = asyncio.Event(), asyncio.Event()
    append = games.store.append

    async def held(*args: Any, **kwargs: Any) -> int:
        reached.set()
        await gate.wait()
        return await append(*args, **kwargs)

    monkeypatch.setattr(games.store, "append", held)
    submit = asyncio.ensure_future(
        stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id="g1", seat_token=own, decision_id=d.id, picks=picks
            )
        )
    )
    await asyncio.wait_for(reached.wait(), 10)  # the state is advanced, the append held
    polls = [
        asyncio.ensure_future(stub.GetDecision(game_pb2.GetDecisionRequest(game_id="g1"))),
        asyncio.ensure_future(stub.GetView(game_pb2.GetViewRequest(game_id="g1"))),
    ]
    done, _ = await asyncio.wait(polls, timeout=0.5)
    assert not done, "a poll was answered while the answer's append was in flight"
    gate.set()
    ok = await submit
    after, view = await polls[0], await polls[1]
    assert after.decision.id != d.id and view.pending.id == after.decision.id
    # the decision is shown at the position after the answer's events, which the view holds
    assert after.version == view.version == len(view.events) == ok.version - 1


picks_st = st.lists(
    st.one_of(
        st.text(max_size=80), st.sampled_from(["end", "yes", "card:0", "card:-1", "seat:3", "hand"])
    ),
    max_size=70,
)


@settings(max_examples=60, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    game=st.one_of(st.sampled_from(["g1", "g2", "nosuch"]), st.text(max_size=120)),
    seat=st.integers(-3, 12),
    decision=st.integers(-(2**63), 2**63 - 1),
    picks=picks_st,
    token_kind=st.sampled_from(["good", "junk", "none", "other"]),
    junk=st.binary(max_size=200),
)
async def test_bad_submit_never_unknown(
    env: Env, game: str, seat: int, decision: int, picks: list[str], token_kind: str, junk: bytes
) -> None:
    games, stub = env
    heads = {g: await games.store.head(g) for g in ("g1", "g2")}
    token = {
        "good": tokens.issue(SECRET, game, seat),
        "junk": junk.hex(),
        "none": "",
        "other": tokens.issue(SECRET, "g2" if game == "g1" else "g1", seat),
    }[token_kind]
    if token_kind == "good" and game in ("g1", "g2"):
        d = (await stub.GetDecision(game_pb2.GetDecisionRequest(game_id=game))).decision
        if d.id == decision and d.seat == seat:
            return  # that could be a legal answer; covered by the seat test
    code = await _code(
        stub.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=game, seat_token=token, decision_id=decision, picks=picks
            )
        )
    )
    assert code in (
        grpc.StatusCode.INVALID_ARGUMENT,
        grpc.StatusCode.FAILED_PRECONDITION,
        grpc.StatusCode.PERMISSION_DENIED,
        grpc.StatusCode.NOT_FOUND,
        grpc.StatusCode.UNAUTHENTICATED,
    ), code
    assert heads == {g: await games.store.head(g) for g in ("g1", "g2")}


@settings(max_examples=40, deadline=None, suppress_health_check=list(HealthCheck))
@given(
    mid=st.text(max_size=120),
    ruleset=st.sampled_from(["standard", "", "nope"]),
    n=st.integers(0, 20),
    options=st.sampled_from(["", "{}", "[]", '{"x":1}', "nul", '{"double_renegade": 3}']),
    limit=st.integers(-(2**63), 2**63 - 1),
)
async def test_bad_create_never_unknown(
    env: Env, mid: str, ruleset: str, n: int, options: str, limit: int
) -> None:
    games, stub = env
    if mid in ("g1", "g2"):
        return
    seats = [(f"p{i}", False) for i in range(n)]
    request = tokens.create_request(
        *tokens.sign_create(SECRET, mid, ruleset, seats, options, limit)
    )
    code = await _code(stub.CreateGame(request))  # signed: the fuzz reaches the checks
    assert code != grpc.StatusCode.UNKNOWN and code != grpc.StatusCode.INTERNAL, code


async def test_huge_message_refused(env: Env) -> None:
    _, stub = env
    code = await _code(
        stub.SubmitAction(game_pb2.SubmitActionRequest(game_id="g1", seat_token="x" * (2 << 20)))
    )
    assert code == grpc.StatusCode.RESOURCE_EXHAUSTED
