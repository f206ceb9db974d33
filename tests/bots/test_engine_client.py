"""`Link`, one bot session's answers and their results matched back by tag
(services/bots/engine_client.py): a message's answers share one future, filled in as the
results come back, in any order and over any number of replies."""

from __future__ import annotations

import asyncio

from services.bots.engine_client import MAX_BATCH, Answering, EngineError, Link, Submitted
from services.contracts.streams import BotDecision
from services.proto_gen.arena.v1 import game_pb2


class Call:
    """A bot session's call: what was written, and a write that can be made to fail."""

    def __init__(self, broken: bool = False) -> None:
        self.written: list[game_pb2.BotSessionRequest] = []
        self.broken = broken

    async def write(self, msg: game_pb2.BotSessionRequest) -> None:
        if self.broken:
            raise RuntimeError("the call is closed")
        self.written.append(msg)


async def _until_written(call: Call, n: int = 1) -> None:
    for _ in range(50):  # a few loop iterations: queued, flushed, written
        if len(call.written) >= n:
            return
        await asyncio.sleep(0)
    raise AssertionError(f"{len(call.written)} messages written, expected {n}")


def _req(game: str) -> Answering:
    return (game, "t", 1, ["x"])


def _ok(tag: int, version: int) -> game_pb2.BotAnswerResult:
    response = game_pb2.SubmitActionResponse(version=version)
    return game_pb2.BotAnswerResult(tag=tag, result=game_pb2.SubmitActionResult(response=response))


async def test_one_message_per_tick_and_results_matched_by_tag_in_any_order() -> None:
    call = Call()
    link = Link(call)
    answers = [asyncio.ensure_future(link.submit(_req(g))) for g in ("a", "b", "c")]
    await _until_written(call)
    assert len(call.written) == 1  # the answers of one loop iteration: one stream message
    sent = call.written[0].answers
    assert [a.action.game_id for a in sent] == ["a", "b", "c"]
    assert sent[0].action == game_pb2.SubmitActionRequest(
        game_id="a", seat_token="t", decision_id=1, picks=["x"]
    )
    tags = [a.tag for a in sent]
    link.resolve(_ok(tags[2], 30))  # out of order, and in two replies
    await asyncio.sleep(0)
    assert not any(f.done() for f in answers)  # the message's results come back together
    link.resolve(_ok(tags[0], 10))
    link.resolve(
        game_pb2.BotAnswerResult(
            tag=tags[1], result=game_pb2.SubmitActionResult(code=9, reason="moved on")
        )
    )
    link.resolve(_ok(tags[0], 99))  # a repeat of a tag already settled changes nothing
    a, b, c = await asyncio.wait_for(asyncio.gather(*answers, return_exceptions=True), 5)
    assert a == Submitted(False, 10, False) and c == Submitted(False, 30, False)
    assert isinstance(b, EngineError) and b.code == "FAILED_PRECONDITION"
    assert not link.waiting


async def test_lists_of_answers_share_messages_of_at_most_the_engines_limit() -> None:
    """`submit_many` lists sent in one loop iteration go out together, in messages of at most
    MAX_BATCH answers (the engine's limit), and each list gets its own results, in its order."""
    call = Call()
    link = Link(call)
    sizes = [300, 1, 400]
    lists = [[(f"g{n}-{k}", "t", k, ["x"]) for k in range(n)] for n in sizes]
    sent = [asyncio.ensure_future(link.submit_many(answers)) for answers in lists]
    await _until_written(call, 2)
    assert [len(m.answers) for m in call.written] == [MAX_BATCH, sum(sizes) - MAX_BATCH]
    tags = {a.action.game_id: a.tag for m in call.written for a in m.answers}
    for answers in reversed(lists):  # (any order)
        for game, _, k, _ in answers:
            link.resolve(_ok(tags[game], k))
    got = await asyncio.wait_for(asyncio.gather(*sent), 5)
    assert got == [[Submitted(False, k, False) for k in range(n)] for n in sizes]
    assert link.answers == sum(sizes) and link.messages == 2 and not link.waiting


async def test_a_session_that_ends_fails_what_it_still_waits_for_as_unavailable() -> None:
    call = Call()
    link = Link(call)
    waiting = [asyncio.ensure_future(link.submit(_req(g))) for g in ("a", "b")]
    await _until_written(call)
    link.resolve(_ok(call.written[0].answers[0].tag, 5))
    link.fail("bot session ended")
    a, b = await asyncio.wait_for(asyncio.gather(*waiting, return_exceptions=True), 5)
    assert a == Submitted(False, 5, False)
    assert isinstance(b, EngineError) and b.code == "UNAVAILABLE" and b.transient
    assert not link.up and not link.waiting


async def test_a_write_that_fails_ends_the_link_and_its_answers_are_tried_again() -> None:
    link = Link(Call(broken=True))
    [r] = await asyncio.wait_for(asyncio.gather(link.submit(_req("a")), return_exceptions=True), 5)
    assert isinstance(r, EngineError) and r.code == "UNAVAILABLE"
    assert not link.up and not link.waiting


async def test_a_persons_games_answers_go_to_the_peoples_engine() -> None:
    """With people's engines (`--people-engine`), a game whose pushed decision says a person
    sits at it is answered there (whichever engine pushed it: the one that made the game, say),
    a bot-only game on the others; a kind whose engines are all down goes to the other's."""
    import math

    import msgspec

    from services.bots.engine_client import GrpcEngine
    from services.contracts.streams import BotDecision

    targets = ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]
    engine = GrpcEngine(targets, people=["127.0.0.1:3"])
    try:
        games = [f"g{k}" for k in range(20)]
        for k, game in enumerate(games):
            pushed = BotDecision(
                game=game,
                decision=1,
                seat=0,
                player="bot:random",
                version=1,
                body=b"{}",
                people=k % 2 == 0,
            )
            assert engine._home(msgspec.msgpack.encode(pushed), 0) is not None  # e0 pushed it
        person, bots = games[0::2], games[1::2]
        assert {engine._pick(g) for g in person} == {2}
        assert {engine._pick(g) for g in bots} == {0, 1}  # spread over the others by the hash
        assert {engine._pick(g) for g in ["never-heard-of"]} <= {0, 1}  # (as bot-only)
        engine.down_until[2] = math.inf  # the people's engine hung: its games go to the others
        assert {engine._pick(g) for g in person} <= {0, 1}
        engine.down_until[2], engine.down_until[0], engine.down_until[1] = 0.0, math.inf, math.inf
        assert {engine._pick(g) for g in bots} == {2}  # and back
    finally:
        await engine.close()


async def test_a_decision_pushed_on_the_session_is_answered_there_without_its_token() -> None:
    """Only the first answer to a decision the session was pushed goes without its seat token;
    another decision of the game, or the same one again, carries it. Refused for want of it
    (the engine answered it another way, or let it go), the answer is to be tried again: with
    its token then."""
    call = Call()
    link = Link(call)
    link.hold([BotDecision(game="a", decision=1, seat=0, player="bot:random", version=3, body=b"")])
    first = asyncio.ensure_future(link.submit(_req("a")))
    other = asyncio.ensure_future(link.submit(("a", "t", 2, ["x"])))
    await _until_written(call)
    sent = call.written[0].answers
    assert [(a.action.decision_id, a.action.seat_token) for a in sent] == [(1, ""), (2, "t")]
    unauthenticated = game_pb2.SubmitActionResult(code=16, reason="no seat token")
    link.resolve(game_pb2.BotAnswerResult(tag=sent[0].tag, result=unauthenticated))
    link.resolve(game_pb2.BotAnswerResult(tag=sent[1].tag, result=unauthenticated))
    bare, tokened = await asyncio.wait_for(asyncio.gather(first, other, return_exceptions=True), 5)
    assert isinstance(bare, EngineError) and bare.transient  # (tried again)
    assert isinstance(tokened, EngineError) and tokened.code == "UNAUTHENTICATED"
    again = asyncio.ensure_future(link.submit(_req("a")))
    await _until_written(call, 2)
    assert call.written[1].answers[0].action.seat_token == "t"
    link.resolve(_ok(call.written[1].answers[0].tag, 7))
    assert await asyncio.wait_for(again, 5) == Submitted(False, 7, False)


async def test_a_persons_game_read_from_the_stream_is_answered_on_the_peoples_engine() -> None:
    """A decision of a person's game that came from the decisions stream, not pushed (its
    engine had no session open when it made the game, or it is a repost), is answered on the
    people's engine too (`people_at`: the worker's Answerer says so for every such message);
    before, only pushed decisions were routed so, and CI saw the general engine log one answer
    of a person's table. And an answer goes on the session of the engine that pushed the
    decision only if that engine is of the game's kind: a person's game pushed by the general
    engine that made it is sent to the people's engine (without a session open to it just
    now: a unary call), not back on the general engine's session."""
    import msgspec

    from services.bots.answer import Answerer
    from services.bots.engine_client import GrpcEngine
    from services.bots.seats import Minds

    targets = ["127.0.0.1:1", "127.0.0.1:2", "127.0.0.1:3"]
    engine = GrpcEngine(targets, people=["127.0.0.1:3"])
    try:
        games = [f"g{k}" for k in range(20)]
        for game in games:
            engine.people_at(game)  # a stream message of each: a person sits there
        assert {engine._pick(g) for g in games} == {2}
        engine.people_at("g0")  # (again: no change)
        assert engine._pick("g0") == 2 and engine.home["g0"] == (None, True)

        # the worker's path: a stream message's `people` reaches the engine before the answer
        routed: list[str] = []

        class Routing(GrpcEngine):
            async def submit(
                self, game: str, token: str, decision: int, picks: list[str]
            ) -> Submitted:
                routed.append(self.targets[self._route(game)[0]])
                return Submitted(False, 2, False)

        worker_engine = Routing(targets, people=["127.0.0.1:3"])
        try:
            body = msgspec.json.encode({"id": 1, "seat": 0, "kind": "play", "options": ["a"]})
            for people in (True, False):
                msg = BotDecision(
                    game="gp" if people else "gb",
                    decision=1,
                    seat=0,
                    player="bot:random",
                    version=1,
                    body=body,
                    token="t",
                    people=people,
                )
                await Answerer(worker_engine, Minds("random")).handle(msg)
            assert routed[0] == "127.0.0.1:3" and routed[1] != "127.0.0.1:3", routed
        finally:
            await worker_engine.close()

        # pushed by engine 0 (it made the game): with no session to the people's engine just
        # now, the answer goes to the people's engine by a call, not on engine 0's session
        pushed = BotDecision(
            game="made-on-0",
            decision=1,
            seat=0,
            player="bot:random",
            version=1,
            body=b"{}",
            people=True,
        )
        engine._home(msgspec.msgpack.encode(pushed), 0)
        engine.links[0] = Link(Call())
        assert engine._route("made-on-0") == (2, False)
        engine.links[2] = Link(Call())
        assert engine._route("made-on-0") == (2, True)
        # a bot-only game pushed by engine 0 whose hashed engine 1 has no session: engine 0's
        bot_game = next(g for g in (f"b{k}" for k in range(50)) if engine._pick(g) == 1)
        pushed = msgspec.structs.replace(pushed, game=bot_game, people=False)
        engine._home(msgspec.msgpack.encode(pushed), 0)
        assert engine._route(bot_game) == (0, True)
    finally:
        await engine.close()


async def test_a_messages_results_resolve_together_as_one_by_one() -> None:
    """`resolve_all` (a reply's results, the usual one read inline) settles each answer as
    `resolve` would: accepted, refused, refused for want of the token it went without (to be
    tried again), a repeat or an unknown tag changing nothing."""
    outcomes = []
    for together in (False, True):
        call = Call()
        link = Link(call)
        link.hold(
            [BotDecision(game="b", decision=1, seat=0, player="bot:random", version=3, body=b"")]
        )
        answers = [asyncio.ensure_future(link.submit(_req(g))) for g in ("a", "b", "c", "d")]
        await _until_written(call)
        tags = [a.tag for a in call.written[0].answers]
        refused = game_pb2.SubmitActionResult(code=9, reason="moved on")
        unauthenticated = game_pb2.SubmitActionResult(code=16, reason="no seat token")
        duplicate = game_pb2.SubmitActionResponse(version=40, duplicate=True, over=True)
        reply = game_pb2.BotSessionResponse()
        reply.results.extend(
            [
                _ok(tags[0], 10),
                game_pb2.BotAnswerResult(tag=tags[1], result=unauthenticated),
                game_pb2.BotAnswerResult(tag=tags[2], result=refused),
                game_pb2.BotAnswerResult(
                    tag=tags[3], result=game_pb2.SubmitActionResult(response=duplicate)
                ),
                _ok(tags[0], 99),  # a repeat
                _ok(max(tags) + 100, 1),  # a tag never sent
            ]
        )
        if together:
            link.resolve_all(reply.results)
        else:
            for r in reply.results:
                link.resolve(r)
        got = await asyncio.wait_for(asyncio.gather(*answers, return_exceptions=True), 5)
        outcomes.append([r if isinstance(r, Submitted) else (r.code, r.transient) for r in got])
        assert not link.waiting
    assert (
        outcomes[0]
        == outcomes[1]
        == [
            Submitted(False, 10, False),
            ("ABORTED", True),  # went without its token: tried again, with it
            ("FAILED_PRECONDITION", False),
            Submitted(True, 40, True),
        ]
    )


async def test_pushed_decisions_decode_in_one_pass_or_each_alone() -> None:
    """A session message's decisions as `_home` gives each: decoded, or None for one that does
    not decode (with the others still decoded)."""
    import msgspec

    from services.bots.engine_client import GrpcEngine

    engine = GrpcEngine(["127.0.0.1:1"])
    try:
        good = [
            msgspec.msgpack.encode(
                BotDecision(game=g, decision=1, seat=0, player="bot:random", version=1, body=b"{}")
            )
            for g in ("a", "b")
        ]
        assert [m.game for _, m in engine._decoded(good, 0) if m is not None] == ["a", "b"]
        mixed = engine._decoded([good[0], b"\xc1 not msgpack", good[1]], 0)
        assert [d for d, _ in mixed] == [good[0], b"\xc1 not msgpack", good[1]]
        assert [m and m.game for _, m in mixed] == ["a", None, "b"]
    finally:
        await engine.close()
