"""Answer one arena:decisions message: catch the seat's view up, ask its policy, submit.

The stream is at-least-once: the same decision can arrive twice (a repost after a slow answer, a
message claimed from a worker that died after submitting but before acking). The engine makes a
second answer to a decision a no-op (`duplicate`), so submitting again is always safe; a worker
that knows it answered a decision skips it without a call. A decision the game has moved past
(FAILED_PRECONDITION) or a game gone from the engine (NOT_FOUND) is simply dropped.

Outcomes (returned, for metrics and tests) and failures:
- `answered`, `fallback` (the policy's picks were refused, the default answer was taken),
  `duplicate` (the engine had it already), `known` (this worker had answered it), `stale`;
- `Poison`: the message can never succeed (malformed, or refused for good): dead-letter it;
- `EngineError` with a transient code, after a few quick retries: leave it pending, so it is
  delivered again (here or, if this worker dies, to whoever claims it).
"""

from __future__ import annotations

import asyncio
import contextlib
import logging
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from typing import TypeVar

import msgspec

from ..contracts.streams import BotDecision
from ..readside.botfeed import SeatView
from ..rules import api
from ..rules.api import Decision
from .engine_client import Engine, EngineError, Submitted
from .random_policy import random_picks
from .seats import VIEWLESS, Minds, SeatMind

T = TypeVar("T")
log = logging.getLogger(__name__)
GONE = frozenset({"FAILED_PRECONDITION", "NOT_FOUND"})


class Poison(Exception):
    """A message that no retry can help."""


@dataclass(frozen=True)
class Request:
    """A decisions message, decoded."""

    game: str
    decision: Decision
    version: int
    player: str
    token: str  # the engine's seat token for this seat (bot workers hold no secret)
    view: bytes | None = None  # decoded only if this worker's view of the seat connects


def parse(msg: BotDecision) -> Request:
    """The engine's message with its decision decoded; Poison if malformed or inconsistent
    (a message without a seat token too: bot workers hold no secret to make one)."""
    try:
        d = _DECISION.decode(msg.body)
    except msgspec.MsgspecError as exc:
        raise Poison(f"malformed decision message: {exc!r}") from None
    if (d.id, d.seat) != (msg.decision, msg.seat) or not msg.game:
        raise Poison("decision message fields disagree with its body")
    if not msg.token:
        raise Poison("decision message carries no seat token")
    return Request(msg.game, d, msg.version, msg.player, msg.token, msg.view)


_VIEW = msgspec.msgpack.Decoder(SeatView)
_DECISION = msgspec.json.Decoder(Decision)


class Taken(msgspec.Struct, gc=False):
    """A decision `Answerer.take` answered at once; `before`: what its seat had answered up to
    before it (given back if the answer is not accepted). (A Struct without the collector:
    one per decision, made in ~1/3 of a NamedTuple's time; it holds no cycle.)"""

    msg: BotDecision
    mind: SeatMind
    picks: list[str]
    before: int


class _Choice(msgspec.Struct, gc=False):
    """What `take` reads of a decision's body: the random policy's fields (random_policy.Choice)
    and the two it checks against the message; the rest (`info`) is skipped, not decoded."""

    id: int
    seat: int
    kind: str
    options: list[str]
    min: int = 1
    max: int = 1
    declinable: bool = True


_CHOICE = msgspec.json.Decoder(_Choice)


def fold_view(mind: SeatMind, raw: bytes, upto: int) -> bool:
    """Fold a message's `view` (services/readside/botfeed.py) into the seat's mind if it starts where
    the mind is (or before, overlapping) and reaches `upto`; False (mind unchanged) if it does
    not connect or does not decode, and the caller catches up through the engine instead."""
    try:
        view = _VIEW.decode(raw)
        if not view.after <= mind.seq <= view.upto or view.upto < upto:
            return False
        events = [(seq, api.decode_event(bytes(data))) for seq, data in view.events]
    except (msgspec.MsgspecError, ValueError, TypeError):
        return False
    for seq, e in events:
        mind.fold_event(seq, e)
    mind.seq = max(mind.seq, view.upto)
    return True


class Answerer:
    """Handles decisions messages for one worker (see the module docstring)."""

    def __init__(
        self,
        engine: Engine,
        minds: Minds,
        *,
        retries: int = 3,
        backoff_s: float = 0.05,
        think_ms: int = 0,
    ) -> None:
        self.engine, self.minds = engine, minds
        self.retries, self.backoff_s = retries, backoff_s
        self.think_ms = think_ms  # a pause before each answer: a pace people can follow
        self.worlds: dict[str, int] = {}  # look-ahead's Determinize calls: dealt, refused
        self.unreadable = 0  # log entries a seat's fold could not read (SeatMind.fold)

    async def handle(self, msg: BotDecision) -> str:
        """Answer one message; returns the outcome (see the module docstring)."""
        req = parse(msg)
        if msg.people:  # (from the stream too: routed to the people's engines, not as bots')
            self.engine.people_at(msg.game)
        d = req.decision
        mind = self.minds.get(req.game, d.seat, req.player)
        async with mind.lock:
            # decision ids are opaque (not ordered); the seat's position is: its own answer is
            # in its view, so each later decision of the seat comes at a higher version
            if req.version <= mind.answered and not msg.repost:
                return "known"
            if req.version > mind.answered:
                try:
                    return await self._answer(mind, req)
                except Exception:
                    self.minds.drop(req.game, d.seat)  # rebuild from the log next delivery
                    raise
            # still pending long after this worker answered it: the answer was lost (a Redis
            # failover can roll a log back past acknowledged entries), and what the mind folded
            # since may be too: start the seat over from the log (a fresh mind answered none)
            if self.minds.minds.get((req.game, d.seat)) is mind:
                self.minds.drop(req.game, d.seat)
        return await self.handle(msg)

    def take(self, msgs: list[BotDecision]) -> tuple[list[Taken], list[str], list[BotDecision]]:
        """The decisions of `msgs` a seat answers without its view (random), answered now:
        (their answers, to send with `submit_taken`; the outcomes of those known already; the
        rest, for `handle` one at a time: another policy, a malformed message, a seat busy with
        another of its messages, a repost of one answered, a pause before each answer). No
        task and no future per decision (a bot worker answering random seats spent most of its
        CPU on those), and of each body only what the random policy reads is decoded. A seat's answer counts as given once taken (its next decision, which the
        engine pushes as soon as the answer is logged, may come before the result does, and is
        taken too); one not accepted is given back and goes to `handle`."""
        taken: list[Taken] = []
        outcomes: list[str] = []
        rest: list[BotDecision] = []
        if self.think_ms > 0:
            return taken, outcomes, list(msgs)
        get, decode = self.minds.get, _CHOICE.decode
        minds = self.minds.minds  # (a seat seen before: looked up here, `get`'s LRU kept)
        seen, move = minds.get, minds.move_to_end
        for msg in msgs:
            try:  # (only what the random policy reads: `handle` decodes the rest if it must)
                d = decode(msg.body)
            except msgspec.MsgspecError:
                rest.append(msg)  # (dead-lettered there, with its reason)
                continue
            if d.id != msg.decision or d.seat != msg.seat or not msg.game or not msg.token:
                rest.append(msg)  # (likewise: `parse` says which)
                continue
            key = (msg.game, msg.seat)
            mind = seen(key)
            if mind is None:
                mind = get(msg.game, msg.seat, msg.player)
            else:
                move(key)
            version = msg.version
            if (
                mind.policy_name not in VIEWLESS  # (`needs_view`, without the call)
                or mind.lock.locked()
                or (version <= mind.answered and msg.repost)
            ):
                rest.append(msg)
            elif version <= mind.answered:
                outcomes.append("known")
            else:
                taken.append(Taken(msg, mind, random_picks(mind.seed ^ d.id, d), mind.answered))
                mind.answered = version
        return taken, outcomes, rest

    async def submit_taken(self, taken: list[Taken]) -> tuple[list[str], list[BotDecision]]:
        """Send the answers of `take` in one `submit_many`: (the outcomes of those accepted,
        answered or duplicate; the messages of the others, for `handle`, which tells a stale
        decision, falls back to the default answer or retries as for any message)."""
        try:
            results: list[Submitted | EngineError] = await self.engine.submit_many(
                [(t.msg.game, t.msg.token, t.msg.decision, t.picks) for t in taken]
            )
        except BaseException:
            for t in taken:
                self._give_back(t)
            raise
        outcomes: list[str] = []
        again: list[BotDecision] = []
        for t, r in zip(taken, results, strict=True):
            if isinstance(r, EngineError):
                self._give_back(t)
                again.append(t.msg)
                continue
            if r.over:
                self.minds.drop_game(t.mind.game)
            outcomes.append("duplicate" if r.duplicate else "answered")
        return outcomes, again

    @staticmethod
    def _give_back(t: Taken) -> None:
        """`t`'s answer was not accepted: its seat has not answered it (unless a later answer
        of the seat was taken meanwhile)."""
        if t.mind.answered == t.msg.version:
            t.mind.answered = t.before

    async def _answer(self, mind: SeatMind, req: Request) -> str:
        token = req.token
        if mind.needs_view and mind.seq < req.version and req.view is not None:
            fold_view(mind, req.view, req.version)
        if mind.needs_view and mind.seq < req.version:
            try:
                await self._retry(lambda: self._catch_up(mind, token, req.version))
            except EngineError as exc:
                if exc.code in GONE:
                    return "stale"
                if not exc.transient:
                    raise Poison(f"refused: {exc}") from None
                raise
        if mind.over:
            self.minds.drop_game(mind.game)
            return "stale"
        d = req.decision
        worlds = mind.plan(d)
        if worlds:  # look-ahead (hard): the engine deals the worlds, the seat's view holds none
            await self._deal(mind, token, d, worlds)
        picks = list(mind.act(d).picks)
        if self.think_ms > 0:
            await asyncio.sleep(self.think_ms / 1000)
        outcome = "answered"
        for attempt in range(self.retries):
            try:
                r = await self.engine.submit(mind.game, token, d.id, picks)
            except EngineError as exc:
                if exc.code in GONE:
                    return "stale"
                default = list(api.default_answer(d).picks)
                if exc.code == "INVALID_ARGUMENT" and outcome == "answered" and picks != default:
                    picks, outcome = default, "fallback"  # a policy bug must not stall a game
                    continue
                if not exc.transient:
                    raise Poison(f"refused: {exc}") from None
                if attempt == self.retries - 1:
                    raise
                await asyncio.sleep(self.backoff_s * 2**attempt)
                continue
            mind.answered = max(mind.answered, req.version)
            if r.over:
                self.minds.drop_game(mind.game)
            return "duplicate" if r.duplicate else outcome
        raise EngineError("ABORTED", "no answer accepted")  # only after repeated fallbacks

    async def _deal(
        self, mind: SeatMind, token: str, d: Decision, worlds: list[tuple[int, dict[int, str]]]
    ) -> None:
        """Hand the policy the worlds it asked for, dealt by the engine (GameService.Determinize);
        if the engine refuses or is away, none: the policy answers as the heuristic would."""
        try:
            states = await self.engine.determinize(mind.game, token, d.id, worlds)
            mind.provide([api.restore(s) for s in states])
        except (EngineError, ValueError) as exc:  # ValueError: a state this build cannot read
            self.worlds["refused"] = self.worlds.get("refused", 0) + 1
            log.info("no worlds for %s seat %d: %s", mind.game, d.seat, exc)
            return
        self.worlds["dealt"] = self.worlds.get("dealt", 0) + 1

    async def _catch_up(self, mind: SeatMind, token: str, upto: int) -> None:
        """Fold the seat's redacted entries after `mind.seq` up to `upto` (or the game's end).
        The engine withholds other seats' answers, so the last entries before `upto` may never
        arrive: the stream is asked to end at `upto`, and its end means the seat has them all."""
        rows = self.engine.entries(mind.game, token, mind.seq, upto)
        before = mind.unreadable
        try:
            async with contextlib.aclosing(rows):
                async for position, envelope in rows:
                    mind.fold(position, envelope)
                    if position >= upto or mind.over:
                        return
            mind.seq = max(mind.seq, upto)
        finally:
            self.unreadable += mind.unreadable - before

    async def _retry(self, call: Callable[[], Awaitable[T]]) -> T:
        """`call` again after transient engine errors (a reconnect, another worker)."""
        for attempt in range(self.retries):
            try:
                return await call()
            except EngineError as exc:
                if not exc.transient or attempt == self.retries - 1:
                    raise
                await asyncio.sleep(self.backoff_s * 2**attempt)
        raise AssertionError("unreachable")
