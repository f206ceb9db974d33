"""What the numbers a client receives tell it, tried as an outsider (issue 17 follow-up).

Before: every channel numbered entries by the log's seq and decisions by the engine's counter,
so a seat (or a spectator, or a bot worker) counted what it was not sent: the gap between two
seqs was the number of other seats' answers in between (declined 无懈可击 prompts, say), the
gap between two decision ids the number of decisions asked of others. Now each viewer numbers
what it receives 1, 2, 3, … (its position) and decision ids are keyed hashes; the engine maps
both back. A client holding one seat's token, or none, over real gRPC to an in-process engine.
"""

from __future__ import annotations

import json
from collections.abc import AsyncIterator

import grpc
import msgspec
import pytest

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import BotDecision
from services.engine.service import Games, NewMatch
from services.eventlog import Seat
from services.eventlog.entry import ANSWER, decode_entry
from services.eventlog.records import AnswerRecord, decode_payload
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from services.readside.botfeed import SeatView
from services.rules import api

from .test_game_service import SECRET, _env

GAME = "p1"
C = grpc.StatusCode


@pytest.fixture
async def stub() -> AsyncIterator[tuple[Games, game_pb2_grpc.GameServiceStub]]:
    async for env in _env():  # an in-process engine behind real gRPC (test_game_service.py)
        yield env.games, env.stub


def _tok(seat: int) -> str:
    return tokens.issue(SECRET, GAME, seat)


async def _played(games: Games, stub: game_pb2_grpc.GameServiceStub, answers: int) -> None:
    """A 5-seat game of people's seats (bot seats 3 and 4), answered over gRPC as clients do:
    each answer names the id the seat was shown."""
    seats = [Seat(f"p{i}") for i in range(3)] + [Seat(f"bot:r{i}", True) for i in range(2)]
    await games.create_game(NewMatch(match_id=GAME, ruleset="standard", seats=seats, seed=21))
    policy = RandomPolicy(21)
    for _ in range(answers):
        hot = await games.get(GAME)
        d = api.pending(hot.game)
        assert d is not None and not hot.game.over
        shown = (
            await stub.GetDecision(
                game_pb2.GetDecisionRequest(game_id=GAME, seat_token=_tok(d.seat))
            )
        ).decision
        for picks in (policy.act(d).picks, api.default_answer(d).picks):
            try:
                await stub.SubmitAction(
                    game_pb2.SubmitActionRequest(
                        game_id=GAME, seat_token=_tok(d.seat), decision_id=shown.id, picks=picks
                    )
                )
                break
            except grpc.aio.AioRpcError as err:  # an illegal random pick: the default then
                assert err.code() == C.INVALID_ARGUMENT


async def _answers(games: Games) -> list[AnswerRecord]:
    """Every answer in the log, in order."""
    out = []
    for _, data in await games.store.read(GAME):
        e = decode_entry(data)
        if e.kind == ANSWER:
            out.append(decode_payload(e.payload, AnswerRecord))
    return out


async def _withheld(games: Games, viewer: int) -> int:
    """How many log entries are answers withheld from `viewer` (the count the gaps told)."""
    return sum(a.seat != viewer for a in await _answers(games))


async def test_each_viewer_counts_only_what_it_receives(stub: tuple) -> None:  # type: ignore[type-arg]
    games, s = stub
    await _played(games, s, 150)
    head = await games.store.head(GAME)
    for viewer, token in ((api.SPECTATOR, ""), (0, _tok(0)), (2, _tok(2))):
        assert await _withheld(games, viewer) > 5  # there was something to count
        view = await s.GetView(game_pb2.GetViewRequest(game_id=GAME, seat_token=token))
        numbers = [e.seq for e in view.events]
        assert numbers == list(range(1, len(numbers) + 1))  # no gap to count anything by
        assert view.version == len(numbers) == head - await _withheld(games, viewer)
        decision = await s.GetDecision(game_pb2.GetDecisionRequest(game_id=GAME, seat_token=token))
        assert decision.version == view.version
        # StreamView from the start and resumed from a position send the same numbers
        call = s.StreamView(
            game_pb2.StreamViewRequest(game_id=GAME, seat_token=token, upto_seq=view.version)
        )
        streamed = [e async for e in call]
        assert [(e.seq, e.json) for e in streamed] == [(e.seq, e.json) for e in view.events]
        k = len(numbers) // 2
        call = s.StreamView(
            game_pb2.StreamViewRequest(
                game_id=GAME, seat_token=token, from_seq=k, upto_seq=view.version
            )
        )
        assert [e.seq async for e in call] == numbers[k:]


async def test_decision_ids_are_opaque_and_unknown_ones_are_refused(stub: tuple) -> None:  # type: ignore[type-arg]
    games, s = stub
    await _played(games, s, 120)
    hot = await games.get(GAME)
    d = api.pending(hot.game)
    assert d is not None
    mine = (
        await s.GetDecision(game_pb2.GetDecisionRequest(game_id=GAME, seat_token=_tok(d.seat)))
    ).decision
    assert mine.id != d.id and mine.id > 2**20  # not the engine's counter (~120 here)
    # the ids a seat was shown for its own answers, in order: no order, no count between them
    own = [hot.ids.opaque(a.decision) for a in await _answers(games) if a.seat == 0]
    view = await s.GetView(game_pb2.GetViewRequest(game_id=GAME, seat_token=_tok(0)))
    shown = [
        x["answer"]["decision"]
        for e in view.events
        if (x := json.loads(e.json))["kind"] == "answer"
    ]
    assert shown == own and len(own) > 5
    assert shown != sorted(shown)  # keyed hashes: in no order
    head = await games.store.head(GAME)
    picks = list(api.default_answer(d).picks)
    for guess in (d.id, d.id + 1, mine.id + 1, 1, 2**53):  # the counter, neighbours, nonsense
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await s.SubmitAction(
                game_pb2.SubmitActionRequest(
                    game_id=GAME, seat_token=_tok(d.seat), decision_id=guess, picks=picks
                )
            )
        assert err.value.code() == C.FAILED_PRECONDITION
        assert str(guess) not in (err.value.details() or "") and str(d.id) not in (
            err.value.details() or ""
        )
    assert await games.store.head(GAME) == head  # nothing changed
    ok = await s.SubmitAction(
        game_pb2.SubmitActionRequest(
            game_id=GAME, seat_token=_tok(d.seat), decision_id=mine.id, picks=picks
        )
    )
    assert ok.answer.decision_id == mine.id and not ok.duplicate


async def test_bot_messages_number_by_the_seat_and_hide_the_counter(stub: tuple) -> None:  # type: ignore[type-arg]
    games, s = stub
    await _played(games, s, 150)
    msgs = [m for m in games.side.published if isinstance(m, BotDecision)]  # type: ignore[attr-defined]
    assert len({m.seat for m in msgs}) == 2
    hot = await games.get(GAME)
    numbers = {hot.ids.opaque(n) for n in range(1, 400)}
    for m in msgs:
        body = msgspec.json.decode(m.body, type=api.Decision)
        assert body.id == m.decision and m.decision in numbers and m.decision > 2**20
        if m.view is not None:  # the seat's positions: within its bounds, in order
            view = msgspec.msgpack.decode(m.view, type=SeatView)
            assert view.upto == m.version
            at = [p for p, _ in view.events]
            assert at == sorted(set(at)) and all(view.after < p <= view.upto for p in at)
    last = {m.seat: m for m in msgs}
    for seat, m in last.items():
        mine = await s.GetView(game_pb2.GetViewRequest(game_id=GAME, seat_token=_tok(seat)))
        assert m.version <= mine.version  # the seat's positions, never ahead of what it holds


async def test_the_web_stream_numbers_by_the_viewer_too(stub: tuple) -> None:  # type: ignore[type-arg]
    """The replay server's SSE (and its fan-out's catch-up, and a resume by Last-Event-ID):
    a spectator's and a seat's `id:`s are 1, 2, 3, … with the entry's own `seq` the same."""
    from services.replay import Replay
    from services.replay.http import HttpServer
    from tests.replay.sse import open_sse

    games, s = stub
    await _played(games, s, 150)
    replay = Replay(games.store, seat_check=lambda g, seat, t: t == f"seat-{seat}")
    http = HttpServer(replay)
    port = await http.start()
    try:
        for viewer, query in ((api.SPECTATOR, ""), (0, "?viewer=0")):
            n = (await replay.get_events(GAME, viewer, f"seat-{viewer}")).upto
            assert n == await games.store.head(GAME) - await _withheld(games, viewer)
            token = f"seat-{viewer}" if viewer >= 0 else ""
            for last in (None, str(n // 2)):
                sse = await open_sse(port, f"/api/games/{GAME}/stream{query}", last, token)
                ids = []
                while len(ids) < n - int(last or 0):
                    m = await sse.next()
                    assert m is not None
                    if m.event == "message":
                        assert json.loads(m.data)["seq"] == int(m.id)
                        ids.append(int(m.id))
                sse.close()
                assert ids == list(range(int(last or 0) + 1, n + 1))
    finally:
        await http.close()
        await replay.close()


async def test_a_seat_s_own_answers_name_the_ids_it_was_shown_on_the_web_too(stub: tuple) -> None:  # type: ignore[type-arg]
    """The replay server (HTTP, SSE, ReplayService, and the play API's seat stream, which
    reads the same feed) sent a seat its own answers with the engine's decision numbers: the
    gaps between them (3, 8, 36, …) counted the decisions asked of other seats. Now they carry
    the opaque ids GameService shows (the server holds the same secret), or none without it."""
    from services.replay import Replay

    games, s = stub
    await _played(games, s, 150)
    hot = await games.get(GAME)
    numbers = [a.decision for a in await _answers(games) if a.seat == 0]
    assert len(numbers) > 5 and numbers != list(range(numbers[0], numbers[0] + len(numbers)))
    engine = await s.GetView(game_pb2.GetViewRequest(game_id=GAME, seat_token=_tok(0)))
    shown = [
        x["answer"]["decision"]
        for e in engine.events
        if (x := json.loads(e.json))["kind"] == "answer"
    ]
    assert shown == [hot.ids.opaque(n) for n in numbers]
    check = lambda g, seat, t: t == f"seat-{seat}"  # noqa: E731
    for secret, want in ((SECRET, shown), (None, None)):
        replay = Replay(games.store, seat_check=check, secret=secret)
        try:
            page = await replay.get_events(GAME, 0, "seat-0")
            mine = [x["answer"] for e in page.entries if (x := json.loads(e))["kind"] == "answer"]
            assert [a["seat"] for a in mine] == [0] * len(numbers)
            assert [a.get("decision") for a in mine] == (want or [None] * len(numbers))
        finally:
            await replay.close()


async def test_answering_another_seat_s_public_decision_names_no_number(stub: tuple) -> None:  # type: ignore[type-arg]
    """Any viewer may see a public decision's opaque id (the active seat's play phase); sent
    back with another seat's token, the refusal said "decision 57 is for another seat": the
    engine's counter, read as often as one likes, counts the decisions asked of others."""
    games, s = stub
    await _played(games, s, 60)
    for _ in range(200):
        hot = await games.get(GAME)
        d = api.pending(hot.game)
        assert d is not None and not hot.game.over
        public = await s.GetDecision(game_pb2.GetDecisionRequest(game_id=GAME))
        if public.HasField("decision"):
            break
        await games.submit_action(
            GAME, _tok(d.seat), hot.ids.opaque(d.id), list(api.default_answer(d).picks)
        )
    else:
        raise AssertionError("no public decision came")
    head = await games.store.head(GAME)
    other = (d.seat + 1) % 5
    with pytest.raises(grpc.aio.AioRpcError) as err:
        await s.SubmitAction(
            game_pb2.SubmitActionRequest(
                game_id=GAME,
                seat_token=_tok(other),
                decision_id=public.decision.id,
                picks=list(api.default_answer(d).picks),
            )
        )
    assert err.value.code() == C.PERMISSION_DENIED
    assert str(d.id) not in (err.value.details() or ""), err.value.details()
    assert await games.store.head(GAME) == head
