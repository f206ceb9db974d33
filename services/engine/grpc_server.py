"""GameService over grpc.aio: each method decodes, calls one `Games` function, encodes.

Every refusal maps to its status (services/errors.py: `grpc_unary`, `grpc_stream`), with a
one-line message and nothing logged; anything unexpected is INTERNAL (logged once as a bug), so
a client never sees UNKNOWN. What each viewer receives is the read side's business
(services/readside: the envelope, the delay, the decision as each viewer may see it, every
number a client sees or sends a position of its own or an opaque id); here it is only encoded.
"""

from __future__ import annotations

import asyncio
import logging
import time
from collections.abc import AsyncIterator, Sequence
from typing import Any

import grpc
import msgspec

from ..contracts import tokens
from ..contracts.streams import NewMatch, OptionValue, Seat
from ..errors import (
    BadRequest,
    Refused,
    checked_game_id,
    grpc_stream,
    grpc_unary,
    unavailable,
)
from ..ports import GRPC_OPTIONS, bind_grpc
from ..proto_gen.arena.v1 import common_pb2, game_pb2, game_pb2_grpc
from ..readside.decisions import Shown
from ..rpc_guard import interceptors
from . import bot_sessions
from .service import Answering, Games, Result
from .worlds import MAX_WORLDS, World

log = logging.getLogger(__name__)
MAX_MESSAGE = 1 << 20
MAX_BATCH = 512
MAX_OPTIONS_JSON = 64 * 1024
NO_TOKEN = Refused(
    "UNAUTHENTICATED", "no seat token, and this bot session holds no such decision unanswered"
)
"""A session's answer without a seat token to a decision not pushed on that session (or
answered, or let go since): it must carry the token its decisions message gave."""


def _options(text: str) -> dict[str, OptionValue]:
    """Ruleset options: a flat JSON object of scalars (every ruleset option is one), which
    also keeps a deeply nested document from reaching the decoder's recursion limit."""
    if len(text) > MAX_OPTIONS_JSON:
        raise BadRequest(f"options_json is longer than {MAX_OPTIONS_JSON} bytes")
    try:
        return msgspec.json.decode(text or "{}", type=dict[str, OptionValue])
    except msgspec.MsgspecError as exc:
        raise BadRequest(f"options_json must be a JSON object of plain values: {exc}") from None


def envelope_pb(position: int, envelope: bytes) -> common_pb2.EventEnvelope:
    """One entry as GameService sends it: the viewer's position and the one envelope's JSON
    (services/readside/entries.py); never a hash."""
    return common_pb2.EventEnvelope(seq=position, json=envelope.decode())


def decision_pb(game_id: str, d: Shown) -> common_pb2.Decision:
    """A decision as the read side shows it to one viewer (its options and info are empty for
    any viewer but the deciding seat: readside/decisions.py)."""
    return common_pb2.Decision(
        game_id=game_id,
        id=d.id,
        seat=d.seat,
        kind=d.kind,
        options=d.options,
        min=d.min,
        max=d.max,
        declinable=d.declinable,
        info_json=msgspec.json.encode(d.info).decode() if d.mine else "",
        version=d.version,
        deadline_ms=d.deadline_ms,
    )


def _asked(actions: Sequence[game_pb2.SubmitActionRequest]) -> list[Answering]:
    """The answers of a batch as `Games.answer_many` takes them."""
    return [(a.game_id, a.seat_token, a.decision_id, a.picks) for a in actions]


class GameServicer(game_pb2_grpc.GameServiceServicer):
    """The transport shim over `Games`."""

    def __init__(self, games: Games) -> None:
        self.games = games

    @grpc_unary
    async def CreateGame(
        self, request: game_pb2.CreateGameRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.CreateGameResponse:
        """See game.proto: only a request signed with the create key (contracts/tokens.py)."""
        await self.games.authorize_create(tokens.create_fields(request), request.signature)
        match = NewMatch(
            match_id=checked_game_id(request.match_id),
            ruleset=request.ruleset,
            seats=[Seat(s.player, s.bot, s.name) for s in request.seats],
            options=dict(_options(request.options_json)),
            time_limit_ms=request.time_limit_ms,
            hosted_after=request.hosted_after,
        )
        created, version = await self.games.create_game(match)
        return game_pb2.CreateGameResponse(
            game_id=request.match_id, created=created, version=version
        )

    async def _submit(
        self, request: game_pb2.SubmitActionRequest, *, with_next: bool
    ) -> game_pb2.SubmitActionResponse:
        """One answer through `Games.submit_action`, counted and timed; raises on refusal."""
        m, start = self.games.metrics, time.perf_counter()
        try:
            r = await self.games.submit_action(
                request.game_id, request.seat_token, request.decision_id, list(request.picks)
            )
        except Exception as exc:
            m.count("actions", getattr(exc, "code", "INTERNAL").lower())
            raise
        m.count("actions", "duplicate" if r.duplicate else "ok")
        m.latency.observe(time.perf_counter() - start)
        out = game_pb2.SubmitActionResponse(
            duplicate=r.duplicate,
            version=r.position,
            over=r.over,
            answer=common_pb2.Answer(
                decision_id=r.decision_id,
                seat=r.answer.seat,
                picks=r.answer.picks,
                auto=r.answer.auto,
            ),
        )
        if with_next and (after := await self.games.next_for(request.game_id, r)) is not None:
            out.next.CopyFrom(decision_pb(request.game_id, after))
        return out

    @grpc_unary
    async def SubmitAction(
        self, request: game_pb2.SubmitActionRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.SubmitActionResponse:
        """See game.proto."""
        return await self._submit(request, with_next=True)

    @grpc_unary
    async def SubmitActions(
        self, request: game_pb2.SubmitActionsRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.SubmitActionsResponse:
        """See game.proto: the answers run concurrently (one game's answers in order, by its
        lock), so their Redis writes share round trips; each one is refused on its own."""
        if len(request.actions) > MAX_BATCH:
            raise BadRequest(f"at most {MAX_BATCH} actions per call")
        return game_pb2.SubmitActionsResponse(results=await self._submit_all(request.actions))

    async def _submit_all(
        self, actions: Sequence[game_pb2.SubmitActionRequest]
    ) -> list[game_pb2.SubmitActionResult]:
        """Each answer as SubmitAction would take it (`Games.answer_many`: the usual ones
        decided together, their appends in one write; the others one at a time, one game's in
        order by its lock); one result each."""
        start = time.perf_counter()
        out = [game_pb2.SubmitActionResult() for _ in actions]

        def done(i: int, r: Result | BaseException) -> None:
            self._fill(out[i], r, start)

        await self.games.answer_many(_asked(actions), done)
        return out

    def _fill(
        self,
        out: game_pb2.SubmitActionResult,
        r: Result | BaseException,
        start: float,
        echo: bool = True,
    ) -> None:
        """One answer's result in a batch, counted and timed, filled into `out` in place (not
        copied in from parts: one is made per bot answer): its response, or its refusal's code
        and reason (a cancellation is raised: not ours to swallow). Without `echo` the
        response leaves out the answer as logged (a bot session's: the worker sent it)."""
        m = self.games.metrics
        if isinstance(r, Result):
            m.count("actions", "duplicate" if r.duplicate else "ok")
            m.latency.observe(time.perf_counter() - start)
            response = out.response
            response.duplicate, response.version, response.over = r.duplicate, r.position, r.over
            if echo:
                answer, given = response.answer, r.answer
                answer.decision_id, answer.seat = r.decision_id, given.seat
                answer.auto = given.auto
                answer.picks.extend(given.picks)
            out.code = 0
            response.SetInParent()
            return
        m.count("actions", getattr(r, "code", "INTERNAL").lower())
        if isinstance(r, Exception) and not isinstance(r, Refused):
            r = unavailable(r) or r  # the store away: UNAVAILABLE, to be tried again
        if isinstance(r, Refused):
            out.code, out.reason = grpc.StatusCode[r.code].value[0], r.message
        elif isinstance(r, Exception):
            log.error("unexpected error in a batch of answers", exc_info=r)
            out.code, out.reason = grpc.StatusCode.INTERNAL.value[0], "internal error"
        else:
            raise r

    async def BotSession(
        self,
        requests: AsyncIterator[game_pb2.BotSessionRequest],
        context: grpc.aio.ServicerContext,
    ) -> AsyncIterator[game_pb2.BotSessionResponse]:
        """See game.proto and bot_sessions.py: decisions pushed, answers taken, one stream."""
        if not tokens.bot_key_ok(self.games.bot_key, context.invocation_metadata() or ()):
            await context.abort(grpc.StatusCode.UNAUTHENTICATED, "not a bot worker's session")
        sessions = self.games.sessions
        session = sessions.start(bot_sessions.worker_of(context.invocation_metadata() or ()))
        reader = asyncio.create_task(self._session_answers(requests, session))
        try:
            while (out := await session.next()) is not None:
                yield out
        finally:
            reader.cancel()
            await self.games.hand_back(session)

    async def _session_answers(
        self, requests: AsyncIterator[game_pb2.BotSessionRequest], session: bot_sessions.Session
    ) -> None:
        """Answer each message's answers (a batch, as SubmitActions does) and queue each
        result as it is in; a message with too many gets INVALID_ARGUMENT for each."""
        batches: set[asyncio.Task[None]] = set()

        sessions = self.games.sessions
        metrics = self.games.metrics
        observe, count = metrics.latency.observe, metrics.count
        BotAnswerResult = game_pb2.BotAnswerResult  # noqa: N806 - the message class
        new_result = session.new_result

        async def answer(batch: Sequence[game_pb2.BotAnswer]) -> None:
            # each result is queued as soon as it is in, not once the whole batch is: the
            # answer's append pushed the game's next decision a moment ago, so both go in the
            # same stream message (queued after the batch, the results went in one of their own)
            start = time.perf_counter()
            asked: list[Answering] = []
            tags: list[int] = []
            for a in batch:
                act = a.action
                game, token, decision = act.game_id, act.seat_token, act.decision_id
                if not token:  # a decision pushed on this session: the token it went with
                    token = sessions.token_for(session, game, decision) or ""
                    if not token:
                        self._refuse(session, a.tag, NO_TOKEN, start)
                        continue
                asked.append((game, token, decision, act.picks))
                tags.append(a.tag)

            tally = [0, 0]  # answers taken, of them duplicates (counted once a batch)

            def done(i: int, r: Result | BaseException) -> None:
                if type(r) is Result:  # the usual outcome: `_fill`'s, without the echo,
                    # built in the session's next message (setting a field of the nested
                    # response makes it present)
                    response = new_result(tags[i]).result.response
                    response.version = r.position
                    if r.duplicate:
                        response.duplicate = True
                        tally[1] += 1
                    if r.over:
                        response.over = True
                    tally[0] += 1
                    observe(time.perf_counter() - start)
                else:
                    result = BotAnswerResult(tag=tags[i])
                    self._fill(result.result, r, start, echo=False)
                    session.add_result(result)

            if asked:
                try:
                    await self.games.answer_many(asked, done)
                finally:
                    if tally[0]:
                        taken, duplicates = tally
                        if duplicates:
                            count("actions", "duplicate", duplicates)
                        if taken > duplicates:
                            count("actions", "ok", taken - duplicates)

        try:
            async for request in requests:
                session.heard_now()
                if not request.answers:  # the worker's heartbeat
                    continue
                if len(request.answers) > MAX_BATCH:
                    code, reason = grpc.StatusCode.INVALID_ARGUMENT.value[0], "too many answers"
                    refused = game_pb2.SubmitActionResult(code=code, reason=reason)
                    self.games.metrics.count("actions", "invalid_argument", len(request.answers))
                    session.add_results(
                        [
                            game_pb2.BotAnswerResult(tag=a.tag, result=refused)
                            for a in request.answers
                        ]
                    )
                    continue
                task = asyncio.create_task(answer(request.answers))
                batches.add(task)
                task.add_done_callback(batches.discard)
            if batches:  # the worker closed its side: finish what it sent, then end
                await asyncio.gather(*batches)
        except asyncio.CancelledError:
            for task in batches:
                task.cancel()
            raise
        except Exception:  # noqa: BLE001 - the call broke: the session ends, nothing is lost
            pass
        finally:
            session.end()

    def _refuse(
        self, session: bot_sessions.Session, tag: int, refused: Refused, start: float
    ) -> None:
        """Queue a session answer's refusal, made before it reached `Games`."""
        result = game_pb2.BotAnswerResult(tag=tag)
        self._fill(result.result, refused, start, echo=False)
        session.add_result(result)

    @grpc_unary
    async def Determinize(
        self, request: game_pb2.DeterminizeRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.DeterminizeResponse:
        """See game.proto and worlds.py: states for a bot's look-ahead, from what its seat knows."""
        game_id = checked_game_id(request.game_id)
        asked = [World(w.seed, dict(w.roles)) for w in request.worlds[: MAX_WORLDS + 1]]
        states = await self.games.determinize(
            game_id, request.seat_token, request.decision_id, asked
        )
        return game_pb2.DeterminizeResponse(states=states)

    @grpc_unary
    async def GetView(
        self, request: game_pb2.GetViewRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.GetViewResponse:
        """See game.proto."""
        game_id = checked_game_id(request.game_id)
        viewer = await self.games.viewer_of(game_id, request.seat_token)
        seen, pending = await self.games.view(game_id, viewer)
        out = game_pb2.GetViewResponse(
            viewer=viewer,
            over=seen.over,
            version=seen.version,
            events=[envelope_pb(p, e) for p, e in seen.entries],
        )
        if pending is not None:
            out.pending.CopyFrom(decision_pb(game_id, pending))
        return out

    @grpc_stream
    async def StreamView(
        self, request: game_pb2.StreamViewRequest, context: grpc.aio.ServicerContext
    ) -> AsyncIterator[common_pb2.EventEnvelope]:
        """See game.proto: the viewer's entries after position from_seq, then live ones until
        the seed reveal (or position upto_seq)."""
        game_id = checked_game_id(request.game_id)
        viewer = await self.games.viewer_of(game_id, request.seat_token)
        async for p, e in self.games.view_entries(
            game_id, viewer, request.from_seq, request.upto_seq
        ):
            yield envelope_pb(p, e)

    @grpc_unary
    async def GetDecision(
        self, request: game_pb2.GetDecisionRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.GetDecisionResponse:
        """See game.proto."""
        game_id = checked_game_id(request.game_id)
        viewer = await self.games.viewer_of(game_id, request.seat_token)
        version, over, pending = await self.games.decision(game_id, viewer)
        out = game_pb2.GetDecisionResponse(over=over, version=version)
        if pending is not None:
            out.decision.CopyFrom(decision_pb(game_id, pending))
        return out

    @grpc_unary
    async def SetHosted(
        self, request: game_pb2.SetHostedRequest, context: grpc.aio.ServicerContext
    ) -> game_pb2.SetHostedResponse:
        """See game.proto."""
        game_id = checked_game_id(request.game_id)
        version, hosted = await self.games.set_hosted(
            game_id,
            request.seat_token,
            request.hosted,
            request.resign,
            request.level,
            request.level_only,
        )
        seat = await self.games.viewer_of(game_id, request.seat_token)
        hot = await self.games.get(game_id)
        return game_pb2.SetHostedResponse(
            version=self.games.position(hot, seat, version), hosted=hosted
        )


def make_server(
    games: Games, host: str = "127.0.0.1", port: int = 0
) -> tuple[grpc.aio.Server, int, Any]:
    """A grpc.aio server with GameService and health checking (create it inside the running
    event loop); returns (server, bound port, health servicer)."""
    from grpc_health.v1 import health, health_pb2_grpc

    server = grpc.aio.server(
        options=[*GRPC_OPTIONS, ("grpc.max_receive_message_length", MAX_MESSAGE)],
        interceptors=interceptors(),  # malformed bytes: INVALID_ARGUMENT (rpc_guard.py)
    )
    game_pb2_grpc.add_GameServiceServicer_to_server(  # type: ignore[no-untyped-call]
        GameServicer(games), server
    )
    checker = health.aio.HealthServicer()
    health_pb2_grpc.add_HealthServicer_to_server(checker, server)
    return server, bind_grpc(server, host, port, "--port"), checker


async def set_serving(checker: Any, serving: bool = True) -> None:
    """Report the worker (and GameService) as serving or not to health checks."""
    from grpc_health.v1 import health_pb2

    status = (
        health_pb2.HealthCheckResponse.SERVING
        if serving
        else health_pb2.HealthCheckResponse.NOT_SERVING
    )
    for name in ("", "arena.v1.GameService"):
        await checker.set(name, status)
