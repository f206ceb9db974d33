"""Bot sessions: bot seats' decisions pushed to connected bot workers, answers taken back, on one
gRPC stream per worker (GameService.BotSession).

Through `arena:decisions` every bot decision cost an XADD in the append script, and the bot
worker an XREADGROUP and an XACK (Redis round trips, most of a bot worker's CPU and most of
Redis's reads); its answers travelled in unary SubmitActions calls, whose fixed cost is about
twice a stream message's (measured here with grpc.aio: ~430 us of CPU for a call against
~200 us for a message, both sides together). A session carries the same `BotDecision`
messages (msgpack, as on the stream) and the answers with their results, as many per stream
message as are ready in one event-loop iteration.

A session is a faster path for fresh decisions; every recovery still goes through Redis:

- a decision is pushed only after its append is in, and keeps the deadline the append set
  (`--bot-repost-ms`): unanswered by then (the engine died before pushing it, the worker lost
  it), the deadline sweep of any engine publishes it again to `arena:decisions`, where the
  consumer group's rules (ack after the answer, XAUTOCLAIM, dead letters) hold as before;
- a session that ends (its worker died, the stream broke) publishes the decisions it held
  unanswered to `arena:decisions` at once;
- reposts always go to `arena:decisions`.

Liveness: a stopped or wedged worker keeps its stream open and answers nothing, so each side
beats on the stream. The engine sends an empty message on a session that carried nothing for a
second (`BotSessions.tick`), the bot worker an empty one the other way; an engine that heard
nothing on a session for `--bot-silent-ms` ends it and hands its decisions to the stream at
once (`tick` returns it), and a bot worker that heard nothing from an engine for its
`--engine-silent-ms` routes that engine's games to the others (services/bots/engine_client.py).

Who may open one: the call's metadata carries the bot-session key (services/contracts/tokens.py
`bot_key`), which the engines keep in Redis. Bot workers hold no secret; they read the key
there, so exactly who may read `arena:decisions` (and the seat tokens in it) may open a
session. Redis restarted without its data: the engines write the key again (every few
seconds), and until then the workers read the stream.
"""

from __future__ import annotations

import asyncio
import time
import zlib
from collections.abc import Iterable

from ..contracts.streams import BotDecision
from ..contracts.streams import encode_message as _encode
from ..contracts.tokens import BOT_WORKER_HEADER
from ..proto_gen.arena.v1 import game_pb2


class Session:
    """One open BotSession: what goes out in its next stream message; `worker` names the bot
    worker (as it says in the call's metadata)."""

    def __init__(self, worker: str = "a bot worker") -> None:
        self.worker = worker
        self.decisions: list[bytes] = []
        # the next message, its results built in place (not built apart and copied in)
        self.message = game_pb2.BotSessionResponse()
        self.ready = asyncio.Event()
        self.closed = False
        self.sent = 0  # stream messages written (for the worker's exit line)
        self.heard = self.out = time.monotonic()  # last message in, last message out
        self.beat = False  # send a heartbeat (an empty message) if nothing else is queued

    def heard_now(self) -> None:
        """A message came from the worker (answers, or its heartbeat)."""
        self.heard = time.monotonic()

    def add_results(self, results: list[game_pb2.BotAnswerResult]) -> None:
        """Queue the results of a batch of the worker's answers."""
        self.message.results.extend(results)
        self.ready.set()

    def add_result(self, result: game_pb2.BotAnswerResult) -> None:
        """Queue the result of one of the worker's answers."""
        self.message.results.append(result)
        self.ready.set()

    def new_result(self, tag: int) -> game_pb2.BotAnswerResult:
        """A result for the answer tagged `tag`, queued in the next message as it is: fill it in
        at once (no await, nothing that can raise, between)."""
        self.ready.set()
        result: game_pb2.BotAnswerResult = self.message.results.add(tag=tag)
        return result

    def end(self) -> None:
        """No more answers will come (the worker closed its side, or the call ended)."""
        self.closed = True
        self.ready.set()

    async def next(self) -> game_pb2.BotSessionResponse | None:
        """The next stream message (everything queued since the last one); None once ended
        and nothing is left to send."""
        while not (self.decisions or self.message.results or self.beat):
            if self.closed:
                return None
            self.ready.clear()
            await self.ready.wait()
        if self.closed and not (self.decisions or self.message.results):
            return None
        out = self.message
        if self.decisions:
            out.decisions.extend(self.decisions)
            self.decisions = []
        self.message = game_pb2.BotSessionResponse()
        self.beat = False
        self.out = time.monotonic()
        self.sent += 1
        return out


class BotSessions:
    """The sessions open on this engine worker and the decisions pushed and not yet answered
    (the newest per game: a game has one pending decision at a time)."""

    def __init__(self, forget_s: float = 10.0) -> None:
        self.open: list[Session] = []
        self.outstanding: dict[str, tuple[Session, BotDecision]] = {}
        # held decisions are let go after `forget_s` (`_age`); what was held at the last aging
        self.forget_s = forget_s
        self._aging: dict[str, tuple[Session, BotDecision]] = {}
        self._aged_at = time.monotonic()
        self.pushed = 0  # decisions pushed
        self.handed_back = 0  # of them, held by a session when it ended (to the stream)
        self.messages = 0  # stream messages sent (by sessions that ended; `sent` for the rest)
        self.ticked = time.monotonic()  # the last `tick`

    @property
    def available(self) -> bool:
        """Whether a decision made now can be pushed."""
        return bool(self.open)

    def start(self, worker: str = "a bot worker") -> Session:
        """A new session, open for pushes."""
        session = Session(worker)
        self.open.append(session)
        return session

    def tick(self, beat_s: float, silent_s: float) -> list[Session]:
        """Called every `beat_s`: a session that sent nothing for `beat_s` sends a heartbeat;
        returns the sessions whose worker has been silent for `silent_s` (hung or gone: end
        them with `close` and publish what they held)."""
        now = time.monotonic()
        late, self.ticked = now - self.ticked > silent_s, now
        silent = []
        for s in self.open:
            if late:  # this process stood still (stopped, starved), not the workers
                s.heard = now
            elif now - s.heard > silent_s:
                silent.append(s)
            elif now - s.out >= beat_s and not s.beat:
                s.beat = True
                s.ready.set()
        if now - self._aged_at >= self.forget_s:
            self._age(now)
        return silent

    def _age(self, now: float) -> None:
        """Let go of the decisions held since the last aging (`forget_s` ago) and not answered
        here since: their deadline (`--bot-repost-ms`, under `forget_s`) has passed, so the
        sweep has published again any nobody answered. A game answered on another engine (a
        people's game this engine made, whose answers go to a people's engine; a game that
        moved) is never `answered` here, and without this stayed held until its session ended,
        one more with each such game."""
        held = self.outstanding
        for game, pushed in self._aging.items():
            if held.get(game) is pushed:
                del held[game]
        self._aging = dict(held)
        self._aged_at = now

    def push(self, messages: Iterable[BotDecision]) -> list[BotDecision]:
        """Queue `messages` on the sessions (a game's on the same one while the set of sessions
        stays); returns those no session could take (publish them to the stream)."""
        sessions = self.open
        if not sessions:
            return list(messages)
        held, n, pushed = self.outstanding, len(sessions), 0
        for m in messages:  # (the stream entry's field, without its dict)
            session = sessions[zlib.crc32(m.game.encode()) % n] if n > 1 else sessions[0]
            session.decisions.append(_encode(m))
            held[m.game] = (session, m)
            pushed += 1
        self.pushed += pushed
        for session in sessions:  # (each session's queue told once, not once a message)
            if session.decisions:
                session.ready.set()
        return []

    def sent(self) -> int:
        """Stream messages sent on every session so far."""
        return self.messages + sum(s.sent for s in self.open)

    def answered(self, game: str, decision: int) -> None:
        """`decision` (an opaque id) of `game` was answered: nothing to hand over for it."""
        held = self.outstanding.get(game)
        if held is not None and held[1].decision == decision:
            del self.outstanding[game]

    def token_for(self, session: Session, game: str, decision: int) -> str | None:
        """The seat token of `game`'s decision `decision` (an opaque id) if it was pushed on
        `session` and is held there unanswered, else None. A session's answer to a decision it
        was pushed needs no token of its own (the worker leaves it out): the session is the
        bot key's, and the decision names its seat; any other answer on it must carry one."""
        held = self.outstanding.get(game)
        if held is None or held[0] is not session or held[1].decision != decision:
            return None
        return held[1].token

    def forget(self, game: str) -> None:
        """`game` is over."""
        self.outstanding.pop(game, None)

    def close(self, session: Session) -> list[BotDecision]:
        """End `session`; the decisions it held unanswered (publish them to the stream)."""
        session.end()
        session.decisions = []  # not sent: they are in `outstanding`, handed back below
        if session in self.open:
            self.open.remove(session)
            self.messages += session.sent
        left = [m for s, m in self.outstanding.values() if s is session]
        for m in left:
            del self.outstanding[m.game]
        self.handed_back += len(left)
        return left


def worker_of(metadata: Iterable[tuple[str, str | bytes]]) -> str:
    """The bot worker's name a session's metadata gives (or "a bot worker")."""
    for name, value in metadata:
        if name == BOT_WORKER_HEADER:
            text = value.decode(errors="replace") if isinstance(value, bytes) else value
            return f"bot worker {text[:100]}"
    return "a bot worker"
