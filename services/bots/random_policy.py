"""The seeded ``random`` policy: uniform among the legal answers of the pending decision."""

from __future__ import annotations

import hashlib
import struct
from typing import Protocol

from ..rules.api import Answer, Decision, rng

# rng.block4 without the call: SHA-256 of (seed, block), four 64-bit numbers
_SHA256 = hashlib.sha256
_PACK = struct.Struct(">QQ").pack
_UNPACK4 = struct.Struct(">QQQQ").unpack
_MASK = (1 << 64) - 1


def random_picks(seed: int, d: Choice) -> list[str]:
    """``RandomPolicy(seed).act(d).picks``, for a policy seeded for one decision (a bot
    worker's random seat: any worker answers alike), without the policy or the Answer: in the
    usual case (one pick, as most decisions are) at most one digest of the numbers, each
    decision's first four; else through the policy."""
    opts = d.options
    n = len(opts)
    hi = min(d.max, n)
    if hi != 1 or min(max(d.min, 1), hi) != 1:  # (lo != 1) not one pick: the policy's way
        return list(RandomPolicy(seed).act(d).picks)  # type: ignore[arg-type]
    # numbers in the policy's order: [decline?] (n + 1), the count (one: used up), the pick (n)
    if d.declinable and d.kind != "play":
        nums = _UNPACK4(_SHA256(_PACK(seed & _MASK, 0)).digest())
        if nums[0] % (n + 1) == 0:
            return []
        return [opts[nums[2] % n]]  # (n = 1: 0 either way)
    if n == 1:  # no number is needed: the policy draws none
        return [opts[0]]
    return [opts[_UNPACK4(_SHA256(_PACK(seed & _MASK, 0)).digest())[1] % n]]


class Choice(Protocol):
    """What the random policy reads of a decision (a ``Decision``, or a message's light copy)."""

    kind: str
    options: list[str]
    min: int
    max: int
    declinable: bool


class RandomPolicy:
    """Picks uniformly: decline (when allowed) counts as one more option; then a uniform number
    of picks between min and max, each uniform among the remaining options."""

    name = "random"

    def __init__(self, seed: int) -> None:
        self.seed = seed
        self.counter = 0
        self._block = -1  # the digest (four numbers) cached in ``_cache``
        self._cache: tuple[int, ...] = (0, 0, 0, 0)
        self._seed64 = seed & _MASK

    def _below(self, n: int) -> int:
        """The same numbers as ``rng.below(seed, counter, n)``, one digest per four (none for
        ``n`` = 1: every number is 0 then, and the position is used up all the same)."""
        c = self.counter
        self.counter = c + 1
        if n == 1:
            return 0
        block = c >> 2
        if block != self._block:  # rng.block4(seed, block), inline
            self._block = block
            self._cache = _UNPACK4(_SHA256(_PACK(self._seed64, block)).digest())
        return self._cache[c & 3] % n

    def observe(self, e: object) -> None:
        """Random play needs no memory."""

    def act(self, d: Decision, view: object = None) -> Answer:
        """Answer decision ``d`` (the view is not needed to play at random)."""
        opts = d.options
        n = len(opts)
        if d.declinable and d.kind != "play" and self._below(n + 1) == 0:
            return Answer(decision=d.id, seat=d.seat, picks=[])
        hi = min(d.max, n)
        lo = min(max(d.min, 1), hi)
        if (
            hi == lo
        ):  # one possible count (the usual: pick one): its number is 0, used up all the same
            self.counter += 1
            k = lo
        else:
            k = lo + self._below(hi - lo + 1)
        if k == 1:  # the usual case: one pick, the options need no copy
            return Answer(decision=d.id, seat=d.seat, picks=[opts[self._below(n)]])
        opts = list(opts)
        picks = []
        for _ in range(k):
            picks.append(opts.pop(self._below(len(opts))))
        return Answer(decision=d.id, seat=d.seat, picks=picks)


class EasyPolicy:
    """The ``easy`` level: the heuristic, but a third of its answers (seeded) are random."""

    name = "easy"

    def __init__(self, seed: int, seat: int = -1, strict: bool = False) -> None:
        from .heuristic import HeuristicPolicy

        self.heuristic = HeuristicPolicy(seed, seat, strict=strict)
        self.random = RandomPolicy(seed ^ 0x5EED)
        self.seed, self.counter = seed, 0

    def observe(self, e: object) -> None:
        """The heuristic keeps its memory either way."""
        self.heuristic.observe(e)  # type: ignore[arg-type]

    def act(self, d: Decision, view: object = None) -> Answer:
        """A random answer one time in three, else the heuristic's."""
        self.counter += 1
        if rng.below(self.seed, self.counter, 3) == 0:
            return self.random.act(d)
        return self.heuristic.act(d, view)  # type: ignore[arg-type]
