"""The ``heuristic`` policy: plays from its seat's view and its own redacted event stream only.

It keeps a probability over the hidden role assignments (:mod:`.roles`), reads friendship, defence
and reach from the view (:mod:`.threat`), scores its play-phase options and targets (:mod:`.play`)
and answers every other decision kind with a small rule (:mod:`.tactics`). Kinds it does not know
get a safe default: decline if it may, else the first legal minimum.

No look-ahead: the engine's ``fork`` needs the whole state, which a policy must not see, and a
view cannot be turned back into a state (hidden hands and the draw pile are unknown).
"""

from __future__ import annotations

import time
from collections import Counter
from collections.abc import Callable

from ..rules.api import Answer, Decision, View, rng
from ..rules.api import events as ev
from . import play, tactics
from .memory import Memory
from .threat import Reading

Handler = Callable[[Reading, Decision], list[str]]
HANDLERS: dict[str, Handler] = {
    "respond": tactics.respond,
    "confirm": tactics.confirm,
    "choose": tactics.choose,
    "pick_card": tactics.pick_card,
    "discard": tactics.discard,
    "cards": tactics.pick_cards,
    "draft": tactics.draft,
    "targets": play.choose_targets,
}
MAX_PLAYS = 60  # play-phase decisions per phase before the policy just ends the phase
FALLBACKS: Counter[str] = Counter()
"""Answers replaced by the safe default in this process, by reason: ``error`` (the policy raised),
``budget`` (it took longer than its budget), ``illegal`` (it picked an illegal answer). The bot
worker exports these as ``arena_bot_policy_fallbacks_total``."""


def legal(d: Decision, picks: list[str]) -> bool:
    """Whether ``picks`` is a well-formed answer to ``d`` (a subset of the options, right size)."""
    if not picks:
        return d.declinable
    return (
        len(set(picks)) == len(picks)
        and set(picks) <= set(d.options)
        and d.min <= len(picks) <= d.max
    )


def safe_default(d: Decision) -> list[str]:
    """Decline if declinable, else the first ``min`` options (``end`` in the play phase)."""
    if d.kind == "play":
        return ["end"] if "end" in d.options else d.options[:1]
    return [] if d.declinable else list(d.options[: max(d.min, 1)])


def decide(mem: Memory, view: View, d: Decision) -> list[str] | None:
    """The heuristic's answer to ``d`` from ``mem`` and ``view`` (None: a kind it does not know).
    Shared by the policy and the look-ahead's play-outs (:mod:`.rollout`)."""
    r = Reading(mem, view, d.seat)
    if d.kind == "play":
        pick = play.choose_play(r, d)
        mem.last_play = pick
        return [pick]
    handler = HANDLERS.get(d.kind)
    if handler is None:
        return None
    picks = handler(r, d)
    if not picks and d.kind in ("targets", "cards") and mem.last_play:
        mem.cancelled.add(mem.last_play)  # do not offer the same dud again
    return picks


class HeuristicPolicy:
    """Seeded, view-only heuristic. ``budget_ms`` (CPU time of the deciding thread, so a loaded
    machine does not change answers): an answer that took longer is replaced by the
    safe default (a stalled policy must not be rewarded with a considered answer it was too slow
    to give), counted in ``overruns`` and :data:`FALLBACKS`; an exception inside the policy
    likewise falls back (``errors``), unless ``strict`` (tests) re-raises it."""

    name = "heuristic"

    def __init__(
        self,
        seed: int,
        seat: int = -1,
        true_roles: list[str] | None = None,
        budget_ms: float = 50.0,
        strict: bool = False,
    ) -> None:
        self.seed, self.counter = seed, 0
        self.seat = seat
        self.mem = Memory(seat, true_roles)
        self.budget_ms = budget_ms
        self.strict = strict  # raise on a bug instead of falling back (tests)
        self.plays = 0
        self.overruns = 0
        self.errors = 0

    def observe(self, e: ev.Event) -> None:
        """Fold one event as redacted for this seat."""
        self.mem.observe(e)
        if isinstance(e, ev.PhaseStarted | ev.TurnStarted):
            self.plays = 0

    def _below(self, n: int) -> int:
        v = rng.below(self.seed, self.counter, n)
        self.counter += 1
        return v

    def act(self, d: Decision, view: View | None = None) -> Answer:
        """Answer ``d`` from ``view`` (this seat's view) and what this seat has observed."""
        t0 = time.thread_time()  # CPU time: a busy machine must not change the answer
        if self.mem.seat < 0:
            self.mem.seat = d.seat
        picks = safe_default(d)
        if view is not None and view.seats and self.mem.cards:
            try:
                picks = self._decide(d, view)
            except Exception:
                if self.strict:
                    raise
                self.errors += 1
                FALLBACKS["error"] += 1
                picks = safe_default(d)
        if not legal(d, picks):
            if self.strict:
                raise AssertionError(f"illegal picks {picks} for {d}")
            FALLBACKS["illegal"] += 1
            picks = safe_default(d)
        if (time.thread_time() - t0) * 1000 > self.budget_ms:
            self.overruns += 1
            FALLBACKS["budget"] += 1
            picks = safe_default(d)
        return Answer(decision=d.id, seat=d.seat, picks=picks)

    def _decide(self, d: Decision, view: View) -> list[str]:
        if d.kind == "play":
            self.plays += 1
            if self.plays > MAX_PLAYS:
                self.mem.last_play = "end"
                return ["end"]
        picks = decide(self.mem, view, d)
        return self._fallback(d) if picks is None else picks

    def _fallback(self, d: Decision) -> list[str]:
        """A kind this policy does not know: decline, else a seeded pick of the minimum."""
        if d.declinable:
            return []
        opts = list(d.options)
        return [opts.pop(self._below(len(opts))) for _ in range(max(d.min, 1))]
