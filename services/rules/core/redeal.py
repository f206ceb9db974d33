"""The determinizer's draws, offered to the frames and rulesets that keep what a seat may not see.

``determinize.py`` deals the unseen hands, the pile and the hidden roles again itself. What else a
seat may not know lives where only its owner can say: a frame's secret picks and offers
(``Frame.redeal``), a ruleset's face-down generals (``Ruleset.redeal_generals``) or what goes
with a role card (``Ruleset.roles_redealt``). They deal it again from a :class:`Redeal`: random
numbers from the determinizer's seed (never the game's), the generals nobody has shown the seat,
and for a card reference, the card now lying where that one lay. Everything a draw reads is the
same in every state the seat cannot tell apart, so what is dealt depends only on what it knows.
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import TypeVar

from . import rng
from .registry import ruleset_of
from .ruleset import General
from .state import Game

T = TypeVar("T")

Fits = Callable[[General], bool]


class Redeal:
    """Draws for seat ``seat`` from ``seed`` at ``counter`` (see the module docstring).

    ``dealt``: where each card dealt again lay (``("hand", seat)`` or ``("draw", index)``), and
    ``fresh``: per seat the cards dealt into its hand that ``seat`` has not seen, in order. The
    pool of generals is filled by :meth:`offer_generals` once the ruleset has said which the seat
    has seen.
    """

    def __init__(
        self,
        seat: int,
        seed: int,
        counter: int,
        dealt: dict[int, tuple[str, int]] | None = None,
        fresh: dict[int, list[int]] | None = None,
    ) -> None:
        self.seat = seat
        self.seed = seed
        self.counter = counter
        self.dealt = dealt or {}
        self.fresh = {t: list(cards) for t, cards in (fresh or {}).items()}
        self.pool: list[str] = []
        self._cards: dict[int, int] = {}

    def below(self, n: int) -> int:
        """A number in ``range(n)``."""
        v = rng.below(self.seed, self.counter, n)
        self.counter += 1
        return v

    def u64(self) -> int:
        """A 64-bit number."""
        v = rng.random_u64(self.seed, self.counter)
        self.counter += 1
        return v

    def shuffled(self, items: Sequence[T]) -> list[T]:
        """``items`` in a random order."""
        perm, self.counter = rng.shuffle_indices(self.seed, self.counter, len(items))
        return [items[i] for i in perm]

    def offer_generals(self, pool: Sequence[str], seen: set[str]) -> None:
        """The generals to deal from: ``pool`` without those the seat has seen (sorted, so the
        order of a set never shows through)."""
        self.pool = sorted(set(pool) - seen - {"vanilla"})

    def take(self, names: Sequence[str]) -> None:
        """``names`` are known to lie where they are: never deal them elsewhere."""
        self.pool = [x for x in self.pool if x not in names]

    def general(self, g: Game, fits: Fits | None = None) -> str:
        """A general from the pool (one that ``fits`` if any does), taken out of it; ``vanilla``
        once the pool is empty (as a deal pads a short one)."""
        if not self.pool:
            return "vanilla"
        table = ruleset_of(g).generals(g.options)
        cands = [x for x in self.pool if fits is None or fits(table[x])] or self.pool
        pick = cands[self.below(len(cands))]
        self.pool.remove(pick)
        return pick

    def generals(self, g: Game, n: int) -> list[str]:
        """``n`` generals from the pool."""
        return [self.general(g) for _ in range(n)]

    def card(self, g: Game, cid: int) -> int:
        """What a frame's reference to card ``cid`` becomes: ``cid`` itself unless it was dealt
        again; else the card now at its place in the pile, or a card now dealt into the same
        hand that the seat has not seen (the same one for every reference to ``cid``, a
        different one for each other card)."""
        if cid not in self.dealt:
            return cid
        if cid not in self._cards:
            zone, at = self.dealt[cid]
            self._cards[cid] = g.draw[at] if zone == "draw" else self.fresh[at].pop(0)
        return self._cards[cid]

    def pin_on_top(self, g: Game, cards: Sequence[int]) -> None:
        """The seat knows ``cards`` (top first) lie on top of the pile: put them back there,
        each swapped with the card dealt to its place (which takes the place it had)."""
        n = len(g.draw)
        for k, cid in enumerate(cards):
            at = n - 1 - k
            if g.draw[at] == cid:
                continue
            swap = g.draw[at]
            if cid in g.draw:
                g.draw[g.draw.index(cid)] = swap
            else:
                hand = next(p.hand for p in g.players if cid in p.hand)
                hand[hand.index(cid)] = swap
                for cards_of in self.fresh.values():  # a hand card left to deal to references
                    if cid in cards_of:
                        cards_of[cards_of.index(cid)] = swap
            g.draw[at] = cid
