"""The bot worker's port to the engine: submit an answer, read the seat's redacted log.

`Engine` is what the worker's logic needs; `GrpcEngine` is the adapter over GameService (tests
also drive the logic through an in-process adapter). Failures are `EngineError(code, reason)`
with `code` a grpc.StatusCode name, so the logic never imports grpc.

Every entry a bot folds comes from GameService.StreamView with the seat's token: the engine
redacts it for that seat, so a bot can only ever see what its seat may see.
"""

from __future__ import annotations

import asyncio
import functools
import itertools
import math
import sys
import time
import zlib
from collections import OrderedDict
from collections.abc import AsyncGenerator, Awaitable, Callable, Collection, Iterable
from typing import Any, Protocol

import grpc
import msgspec

from ..contracts.streams import BotDecision
from ..contracts.tokens import BOT_KEY_HEADER, BOT_WORKER_HEADER
from ..proto_gen.arena.v1 import game_pb2, game_pb2_grpc
from ..redisinfra.batching import TickBatcher
from ..redisinfra.liveness import BEAT_S, SILENT_S

MAX_BATCH = 512  # = the engine's limit per SubmitActions call
HELD_MAX = 16_384  # decisions a session remembers as pushed and unanswered (`Link.hold`)
UNAUTHENTICATED = grpc.StatusCode.UNAUTHENTICATED.name
_CODE_NAMES = {code.value[0]: code.name for code in grpc.StatusCode}
TRANSIENT = frozenset(
    {
        "UNAVAILABLE",
        "DEADLINE_EXCEEDED",
        "ABORTED",
        "RESOURCE_EXHAUSTED",
        "INTERNAL",
        "UNKNOWN",
        "CANCELLED",
    }
)


class EngineError(Exception):
    """A refused or failed call; `code` is a grpc.StatusCode name."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(f"{code}: {reason}")
        self.code = code
        self.reason = reason

    @property
    def transient(self) -> bool:
        """Whether trying again (perhaps on another engine worker) may succeed."""
        return self.code in TRANSIENT


class Submitted(msgspec.Struct, frozen=True, gc=False):
    """The engine's reply to an answer: `duplicate` if the decision had been answered before.
    (A Struct without the collector: one per answer, made in ~1/3 of a NamedTuple's time.)"""

    duplicate: bool
    version: int
    over: bool


class Engine(Protocol):
    """What the bot worker asks of the engine."""

    async def submit(self, game: str, token: str, decision: int, picks: list[str]) -> Submitted:
        """Answer `decision` for the token's seat."""
        ...

    def entries(
        self, game: str, token: str, after: int, upto: int = 0
    ) -> AsyncGenerator[tuple[int, str], None]:
        """(position, envelope JSON: services/readside/entries.py) of the log entries after
        position `after` that the token's seat may see, redacted for it (other seats' answers
        are withheld); with `upto` the stream ends once entries up to `upto` were sent, else it
        runs live until the caller stops."""
        ...

    async def determinize(
        self, game: str, token: str, decision: int, worlds: list[tuple[int, dict[int, str]]]
    ) -> list[bytes]:
        """States the token's seat could be in at its pending `decision`, one per world (seed,
        role guesses), as `api.snapshot` bytes (GameService.Determinize)."""
        ...

    async def submit_many(self, answers: list[Answering]) -> list[Submitted | EngineError]:
        """`submit` of each answer, together: each one's reply or its error (not raised)."""
        ...

    def people_at(self, game: str) -> None:
        """A decision of `game` says a person sits at it (`BotDecision.people`): its answers
        go where a person's game's go (the people's engines, if any), whether the decision
        came pushed on a session or from the decisions stream."""
        ...


Pushed = Callable[[int, list[tuple[bytes, BotDecision | None]]], Awaitable[None]]
"""Takes the decisions an engine pushed in one bot session message: (engine index, [(the
BotDecision's msgpack, the message decoded once here, or None if it does not decode)]). It must
not wait for answers in flight to finish: their results come on the same stream, behind what
the session has not read yet."""

Answering = tuple[str, str, int, list[str]]
"""An answer for `submit_many`: (game, seat token, decision, picks)."""


class Link:
    """One open GameService.BotSession: answers out (those of one event-loop iteration in one
    stream message, or more if over MAX_BATCH), their results matched back by tag.

    The batcher's items are lists of answers (a `submit_many`'s, one session message's worth
    of decisions): what a batch costs per item (its place in the queue, its result handed
    back) is paid once a list, not once an answer."""

    def __init__(self, call: Any) -> None:
        self.call = call
        # tag -> its batch, its place in it, and whether it went without its seat token
        self.waiting: dict[int, tuple[_Batch, int, bool]] = {}
        self.tags = itertools.count(1)
        self.batcher: TickBatcher[list[Answering], list[Submitted | EngineError]] = TickBatcher(
            self._send, 64, 8
        )
        self.up = True
        self.writing = asyncio.Lock()
        self.answers = 0  # answers sent
        self.messages = 0  # stream messages written
        self.heard = self.wrote = time.monotonic()  # last message from the engine, to it
        self.silenced = False  # ended because the engine said nothing for too long
        self.beating = False  # a heartbeat write in flight
        # game -> the decision the engine pushed on this session last, not answered here yet:
        # its answer goes without a seat token (the engine takes the one it pushed the
        # decision with; bot_sessions.py `token_for`); any other answer carries its token
        self.held: dict[str, int] = {}

    def hold(self, decisions: Iterable[BotDecision | None]) -> None:
        """Decisions the engine pushed on this session."""
        held = self.held
        if len(held) > HELD_MAX:  # (games that ended or moved, their last decision unanswered)
            held.clear()
        for m in decisions:
            if m is not None:
                held[m.game] = m.decision

    async def heartbeat(self) -> None:
        """Write an empty message (the engine ends a session silent too long); one at a time,
        and never blocking the caller's loop: a hung engine's window may be full."""
        if self.beating or not self.up:
            return
        self.beating = True
        try:
            async with self.writing:
                await self.call.write(game_pb2.BotSessionRequest())
            self.wrote = time.monotonic()
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, RuntimeError) as exc:
            self.fail(f"bot session broke: {exc!r}")
        finally:
            self.beating = False

    async def submit(self, answer: Answering) -> Submitted:
        """Send one answer; its result (an EngineError is raised)."""
        (result,) = await self.batcher.submit([answer])
        if isinstance(result, EngineError):
            raise result
        return result

    async def submit_many(self, answers: list[Answering]) -> list[Submitted | EngineError]:
        """Send `answers` (with what else is sent in this loop iteration); their results."""
        return await self.batcher.submit(answers)

    async def _send(self, lists: list[list[Answering]]) -> list[list[Submitted | EngineError]]:
        batch = _Batch(sum(map(len, lists)))
        messages: list[game_pb2.BotSessionRequest] = []
        waiting, tags, held, i = self.waiting, self.tags, self.held, 0
        for answers in lists:
            for game, token, decision, picks in answers:
                tokenless = held.get(game) == decision
                if tokenless:  # pushed here: no token (`hold`)
                    del held[game]
                    token = ""
                if not i % MAX_BATCH:  # (the engine's limit per message)
                    messages.append(game_pb2.BotSessionRequest())
                    add = messages[-1].answers.add
                tag = next(tags)
                waiting[tag] = (batch, i, tokenless)
                i += 1
                # filled in place: a SubmitActionRequest made first is copied into its
                # BotAnswer, and that into the message (three times the CPU of this)
                action = add(tag=tag).action
                action.game_id, action.seat_token, action.decision_id = game, token, decision
                action.picks.extend(picks)
        try:
            async with self.writing:  # one write at a time on a call (gRPC refuses more)
                for message in messages:
                    await self.call.write(message)
            self.wrote = time.monotonic()
        except (grpc.aio.AioRpcError, grpc.aio.UsageError, RuntimeError) as exc:
            self.fail(f"bot session broke: {exc!r}")
        self.answers += i
        self.messages += len(messages)
        results = await batch.done
        if len(lists) == 1:
            return [results]
        out, at = [], 0
        for answers in lists:
            out.append(results[at : at + len(answers)])
            at += len(answers)
        return out

    def resolve_all(self, results: Iterable[game_pb2.BotAnswerResult]) -> None:
        """`resolve` each of one stream message's results (the usual one, accepted and its
        answer sent with its token or held, read here without a call of its own)."""
        pop = self.waiting.pop
        for r in results:
            waiting = pop(r.tag, None)
            if waiting is None:
                continue
            result = r.result
            if result.code:  # a refusal: `resolve`'s way
                self.waiting[r.tag] = waiting
                self.resolve(r)
                continue
            response = result.response
            waiting[0].settle(
                waiting[1], Submitted(response.duplicate, response.version, response.over)
            )

    def resolve(self, r: game_pb2.BotAnswerResult) -> None:
        """The result of one answer sent on this session."""
        waiting = self.waiting.pop(r.tag, None)
        if waiting is not None:
            result = _result(r.result)
            if waiting[2] and isinstance(result, EngineError) and result.code == UNAUTHENTICATED:
                # sent without its token and the engine no longer holds it (answered another
                # way, let go): to be sent again, with the token (no longer `held`)
                result = EngineError("ABORTED", f"answered without its seat token: {result}")
            waiting[0].settle(waiting[1], result)

    def fail(self, reason: str) -> None:
        """The session ended: every answer still waiting gets UNAVAILABLE (tried again)."""
        self.up = False
        waiting, self.waiting = self.waiting, {}
        for batch, i, _ in waiting.values():
            batch.settle(i, EngineError("UNAVAILABLE", reason))


class _Batch:
    """The results of one stream message's answers, filled in as they come back (in any order,
    perhaps in several replies); ``done`` resolves once all are in. One future per message, not
    one per answer: under load a message carries tens of answers."""

    def __init__(self, n: int) -> None:
        self.results: list[Submitted | EngineError | None] = [None] * n
        self.left = n
        self.done: asyncio.Future[list[Submitted | EngineError]] = (
            asyncio.get_running_loop().create_future()
        )
        if not n:
            self.done.set_result([])

    def settle(self, i: int, result: Submitted | EngineError) -> None:
        if self.results[i] is not None:
            return
        self.results[i] = result
        self.left -= 1
        if not self.left and not self.done.done():
            self.done.set_result([r for r in self.results if r is not None])


def _result(r: game_pb2.SubmitActionResult) -> Submitted | EngineError:
    if r.code:
        return EngineError(_CODE_NAMES.get(r.code, "UNKNOWN"), r.reason)
    response = r.response
    return Submitted(response.duplicate, response.version, response.over)


class GrpcEngine:
    """Engine over GameService on one or more engine workers (any of them serves any game).

    A game's calls all go to one worker (chosen by a hash of the game id) while it answers:
    that worker keeps the game hot, where alternating workers would each find their cached copy
    behind the log and reload it on every answer. The answers submitted in one event-loop
    iteration for one worker travel as one SubmitActions call. A worker that fails with
    UNAVAILABLE is skipped for `cooldown_s`. Create this inside the running event loop
    (grpc.aio channels bind to the loop they are made in).

    With `run_sessions` it also keeps a BotSession open to every engine worker
    (services/engine/bot_sessions.py): decisions pushed there are handed to the worker, and a
    game's answers go on the session of the game's worker (by the hash, as above: after its
    first answer that worker has it hot and pushes its decisions; games spread evenly however
    the matches fell), else on the session of the engine that pushed it, else in a call.

    A hung engine (stopped, wedged) fails nothing: it just never answers. Each session carries
    heartbeats both ways (services/engine/bot_sessions.py); an engine that sent nothing, not
    even a heartbeat, for `silent_s` is down until it speaks again: its session is ended, the
    answers waiting on it fail as UNAVAILABLE (and are tried again on another engine), and its
    games' answers, catch-ups and look-ahead go to the others (`_pick`). One line says so when
    it goes silent and one when it is back (`say`); `silent()` gives each silent engine's
    seconds (the worker's `arena_bot_engine_silent_seconds`). A call that times out marks its
    engine down for `cooldown_s` too.

    `people`: the targets that are people's engines (`arena engine --role people`, the
    worker's `--people-engine`; issue 44). A game whose pushed decision says a person sits at
    it (`BotDecision.people`) goes to those, by the hash among them, and a bot-only game to the
    others, so the bot seats of people's games are answered where the people's calls go and
    the bot-only games stay off that engine's event loop; each kind falls over to the other's
    engines when its own are down. A decision of a person's game read from the stream says so
    too (`people_at`): the first decision of a game made while the engine had no session open
    comes that way, and went to a general engine while only pushed decisions were looked at.
    An answer goes on the session of the engine that pushed the decision only if that engine
    is of the game's kind, or the one the route picked is not either (a failover).
    """

    def __init__(
        self,
        targets: list[str],
        timeout_s: float = 5.0,
        cooldown_s: float = 2.0,
        *,
        name: str = "",
        silent_s: float = SILENT_S,
        say: Callable[[str], None] | None = None,
        people: Collection[str] = (),
    ) -> None:
        if not targets:
            raise ValueError("no engine address")
        self.targets = list(targets)
        theirs = [i for i, t in enumerate(targets) if t in people]
        others = [i for i, t in enumerate(targets) if t not in people]
        self.people = theirs
        # the engines a game is tried on, kind by kind: [bot-only game's, person's game's]
        # (targets.route's order: its own kind first, then the other; one kind if the other
        # has none)
        self.groups = (
            [g for g in (others, theirs) if g],
            [g for g in (theirs, others) if g],
        )
        self.name, self.silent_s = name, silent_s
        self.say = say or _say
        self.silent_since: list[float | None] = [None] * len(targets)  # monotonic, while silent
        self.channels = [grpc.aio.insecure_channel(t) for t in targets]
        self.stubs = [game_pb2_grpc.GameServiceStub(ch) for ch in self.channels]  # type: ignore[no-untyped-call]
        self.timeout_s, self.cooldown_s = timeout_s, cooldown_s
        self.down_until = [0.0] * len(self.stubs)
        # answers submitted in one loop iteration go to their worker as one SubmitActions call
        self.batchers: list[TickBatcher[Answering, Submitted]] = [
            TickBatcher(functools.partial(self._submit_batch, i), 32, 8)
            for i in range(len(self.stubs))
        ]
        self.links: list[Link | None] = [None] * len(self.stubs)
        # game -> (the engine that pushed it last, if one did; whether a person sits at it)
        self.home: OrderedDict[str, tuple[int | None, bool]] = OrderedDict()
        self.pushed = 0  # decisions received on sessions
        self._ended = [0, 0]  # answers and stream messages sent on sessions that ended

    def _pick(self, game: str) -> int:
        """The engine for `game`'s calls: of its kind (a person at it or not: `people`), the
        one the hash picks, else the next one up; then the other kind's (targets.route)."""
        if len(self.stubs) == 1:
            return 0
        now, h = time.monotonic(), zlib.crc32(game.encode())
        held = self.home.get(game) if self.people else None
        groups = self.groups[held is not None and held[1]]
        for group in groups:
            n = len(group)
            first = h % n
            for k in range(n):
                i = group[(first + k) % n]
                if self.down_until[i] <= now:
                    return i
        return groups[0][h % len(groups[0])]

    def _failed(self, index: int, err: grpc.aio.AioRpcError) -> EngineError:
        if err.code() in (grpc.StatusCode.UNAVAILABLE, grpc.StatusCode.DEADLINE_EXCEEDED):
            until = time.monotonic() + self.cooldown_s
            self.down_until[index] = max(self.down_until[index], until)
        return EngineError(err.code().name, err.details() or "")

    async def submit(self, game: str, token: str, decision: int, picks: list[str]) -> Submitted:
        """See Engine.submit (batched with the other answers of this loop iteration)."""
        req = (game, token, decision, picks)
        i, on_session = self._route(game)
        link = self.links[i]
        if on_session and link is not None:
            return await link.submit(req)
        return await self.batchers[i].submit(req)

    async def submit_many(self, answers: list[Answering]) -> list[Submitted | EngineError]:
        """See Engine.submit_many: the answers of one engine in one session message (or one
        SubmitActions call), as `submit` routes each; one future per engine, not per answer."""
        routes: dict[tuple[int, bool], list[int]] = {}
        if len(self.stubs) == 1 and answers:  # (one engine: every game's route is the same)
            routes[self._route(answers[0][0])] = list(range(len(answers)))
        else:
            for k, (game, _, _, _) in enumerate(answers):
                routes.setdefault(self._route(game), []).append(k)
        out: list[Submitted | EngineError] = [EngineError("UNAVAILABLE", "not sent")] * len(answers)

        async def send(route: tuple[int, bool], ks: list[int]) -> None:
            i, on_session = route
            reqs = answers if len(ks) == len(answers) else [answers[k] for k in ks]
            link = self.links[i]
            if on_session and link is not None:
                try:
                    results = await link.submit_many(reqs)
                except Exception as exc:  # noqa: BLE001 - the batch failed as a whole
                    error = (
                        exc if isinstance(exc, EngineError) else EngineError("UNKNOWN", repr(exc))
                    )
                    results = [error] * len(reqs)
                if len(ks) == len(answers):
                    out[:] = results
                    return
                for k, r in zip(ks, results, strict=True):
                    out[k] = r
                return
            for k, res in zip(ks, await self.batchers[i].submit_many(reqs), strict=True):
                if type(res) is Submitted or isinstance(res, EngineError):
                    out[k] = res
                else:  # the call failed as a whole (an error submit raises)
                    out[k] = EngineError("UNKNOWN", repr(res))

        if len(routes) == 1:  # (the usual: one engine; no task for it)
            await send(*next(iter(routes.items())))
        else:
            await asyncio.gather(*(send(route, ks) for route, ks in routes.items()))
        return out

    def _route(self, game: str) -> tuple[int, bool]:
        """Where `submit` sends an answer of `game`: (engine index, on its session or not)."""
        i = self._pick(game)
        link = self.links[i]
        if link is not None and link.up:
            return i, True
        held = self.home.get(game)
        home = held[0] if held is not None else None
        # (the engine that made a person's game pushed its first decision: not there, while
        # the people's engine picked is up, if without a session just now)
        if home is not None and self._up(home) and (home in self.people) == (i in self.people):
            link = self.links[home]
            if link is not None and link.up:
                return home, True
        return i, False

    def _up(self, index: int) -> bool:
        return self.down_until[index] <= time.monotonic()

    async def run_sessions(
        self, pushed: Pushed, key: Callable[[], Awaitable[str | None]], retry_s: float = 2.0
    ) -> None:
        """Keep a BotSession open to every engine worker until cancelled, handing what they
        push to `pushed`. `key()` reads the bot-session key (from Redis; None while there is
        none: then no session, and the decisions come through the stream)."""
        await asyncio.gather(
            self._watch(),
            *(self._session(i, pushed, key, retry_s) for i in range(len(self.stubs))),
        )

    async def _watch(self) -> None:
        """Every half beat: a heartbeat on each session that wrote nothing for a beat, and a
        session whose engine has been silent for `silent_s` ended (the engine is down)."""
        while True:
            due = time.monotonic() + BEAT_S / 2
            await asyncio.sleep(BEAT_S / 2)
            now = time.monotonic()
            woke_late = now - due > self.silent_s  # this process stood still, not the engines
            for i, link in enumerate(self.links):
                if link is None or not link.up:
                    continue
                if woke_late:
                    link.heard = now
                    continue
                if now - link.heard > self.silent_s:
                    self._silence(i, link, now)
                elif now - link.wrote >= BEAT_S and not link.beating:
                    asyncio.create_task(link.heartbeat())  # noqa: RUF006 - it ends on its own

    def _silence(self, i: int, link: Link, now: float) -> None:
        """Engine `i` said nothing on its session for `silent_s`: it is down until it speaks."""
        self.down_until[i] = math.inf
        if self.silent_since[i] is None:
            self.silent_since[i] = link.heard
            self.say(
                f"arena bots {self.name}: engine {self.targets[i]} silent for "
                f"{now - link.heard:.1f} s (hung?): its games go to the other engines"
            )
        link.silenced = True
        link.fail(f"engine {self.targets[i]} silent")
        link.call.cancel()

    def _heard(self, i: int) -> None:
        """A message from engine `i`: it is up (again)."""
        since = self.silent_since[i]
        if since is not None:
            self.silent_since[i] = None
            self.down_until[i] = 0.0
            self.say(
                f"arena bots {self.name}: engine {self.targets[i]} answers again after "
                f"{time.monotonic() - since:.1f} s"
            )

    def silent(self) -> dict[str, float]:
        """The engines silent now (hung, stopped) and for how many seconds."""
        now = time.monotonic()
        return {
            self.targets[i]: now - since
            for i, since in enumerate(self.silent_since)
            if since is not None
        }

    async def _session(
        self, i: int, pushed: Pushed, key: Callable[[], Awaitable[str | None]], retry_s: float
    ) -> None:
        while True:
            try:
                secret = await key()
            except Exception:  # noqa: BLE001 - Redis away: the stream consumer says so
                secret = None
            if secret is None:
                await asyncio.sleep(retry_s)
                continue
            metadata = ((BOT_KEY_HEADER, secret), (BOT_WORKER_HEADER, self.name))
            call = self.stubs[i].BotSession(metadata=metadata)
            link = self.links[i] = Link(call)
            try:
                async for reply in call:
                    link.heard = time.monotonic()
                    self._heard(i)
                    if reply.results:
                        link.resolve_all(reply.results)
                    if reply.decisions:
                        decoded = self._decoded(reply.decisions, i)
                        link.hold(m for _, m in decoded)
                        self.pushed += len(decoded)
                        await pushed(i, decoded)
            except grpc.aio.AioRpcError:
                pass  # ended (the engine stopped, or refused the key): try again shortly
            except asyncio.CancelledError:
                if not link.silenced:
                    raise
            finally:
                self.links[i] = None
                link.fail("bot session ended")
                self._ended[0] += link.answers
                self._ended[1] += link.messages
                call.cancel()
            await asyncio.sleep(retry_s)

    def session_counts(self) -> tuple[int, int]:
        """Answers sent on bot sessions, and in how many stream messages."""
        live = [link for link in self.links if link is not None]
        return (
            self._ended[0] + sum(link.answers for link in live),
            self._ended[1] + sum(link.messages for link in live),
        )

    def _decoded(
        self, decisions: Iterable[bytes], index: int
    ) -> list[tuple[bytes, BotDecision | None]]:
        """Each pushed decision with `_home`'s result (with one engine: decoded in one pass,
        no call each; one that does not decode sends them all the `_home` way)."""
        if len(self.stubs) == 1:
            decode = _DECISION.decode
            try:
                return [(data, decode(data)) for data in decisions]
            except msgspec.MsgspecError:
                pass
        return [(data, self._home(data, index)) for data in decisions]

    def _home(self, data: bytes, index: int) -> BotDecision | None:
        """The pushed decision decoded (None if it does not decode: the worker refuses it as
        malformed); remember which engine pushed it (its answer goes back there: with one
        engine there is nowhere else, and nothing to remember)."""
        try:
            message = _DECISION.decode(data)
        except msgspec.MsgspecError:
            return None
        if len(self.stubs) == 1:
            return message
        self._remember(message.game, index, message.people)
        return message

    def people_at(self, game: str) -> None:
        """See Engine.people_at (a pushed decision's `_home` notes it already)."""
        if not self.people or len(self.stubs) == 1:
            return  # one kind of engine: nothing to route by
        held = self.home.get(game)
        if held is None or not held[1]:
            self._remember(game, held[0] if held is not None else None, True)

    def _remember(self, game: str, index: int | None, people: bool) -> None:
        self.home[game] = (index, people)
        self.home.move_to_end(game)
        while len(self.home) > 8192:
            self.home.popitem(last=False)

    async def _submit_batch(
        self, index: int, items: list[Answering]
    ) -> list[Submitted | EngineError]:
        request = game_pb2.SubmitActionsRequest()
        add = request.actions.add
        for game, token, decision, picks in items:
            add(game_id=game, seat_token=token, decision_id=decision, picks=picks)
        try:
            reply = await self.stubs[index].SubmitActions(request, timeout=self.timeout_s)
        except grpc.aio.AioRpcError as err:
            raise self._failed(index, err) from None
        return [_result(r) for r in reply.results]

    async def entries(
        self, game: str, token: str, after: int, upto: int = 0
    ) -> AsyncGenerator[tuple[int, str], None]:
        """See Engine.entries (GameService.StreamView, cancelled when the caller stops)."""
        i = self._pick(game)
        call = self.stubs[i].StreamView(
            game_pb2.StreamViewRequest(
                game_id=game, seat_token=token, from_seq=after, upto_seq=upto
            ),
            timeout=self.timeout_s,
        )
        try:
            async for env in call:
                yield int(env.seq), str(env.json)
        except grpc.aio.AioRpcError as err:
            if err.code() != grpc.StatusCode.CANCELLED:
                raise self._failed(i, err) from None
        finally:
            call.cancel()

    async def determinize(
        self, game: str, token: str, decision: int, worlds: list[tuple[int, dict[int, str]]]
    ) -> list[bytes]:
        """See Engine.determinize (to the game's worker, which has it hot)."""
        i = self._pick(game)
        req = game_pb2.DeterminizeRequest(
            game_id=game,
            seat_token=token,
            decision_id=decision,
            worlds=[game_pb2.World(seed=seed, roles=roles) for seed, roles in worlds],
        )
        try:
            reply = await self.stubs[i].Determinize(req, timeout=self.timeout_s)
        except grpc.aio.AioRpcError as err:
            raise self._failed(i, err) from None
        return list(reply.states)

    async def close(self) -> None:
        """Close every channel (and so every session)."""
        await asyncio.gather(*(ch.close() for ch in self.channels))


def _say(line: str) -> None:
    print(line, file=sys.stderr, flush=True)


_DECISION = msgspec.msgpack.Decoder(BotDecision)  # a pushed decision, decoded once
