"""Role inference: a probability over every assignment of the hidden roles, reweighted by the acts
a seat has seen — QSanguosha smart-ai's intention scores made Bayesian.

Assignments are the distinct arrangements of the role cards not yet known (own role, the lord,
the dead) over the hidden seats: at most a few thousand at ten players. A hostile act (杀, 决斗,
过河拆桥 … aimed at a seat) multiplies each assignment by how likely that act is between the two
roles it gives the pair; a friendly act (桃 on a dying seat, a heal) likewise.
"""

from __future__ import annotations

import math
from itertools import permutations

LOYAL = ("lord", "loyalist")

# P(act | actor role, target role), up to a constant per act kind
_HOSTILE = {
    ("rebel", "lord"): 1.0, ("rebel", "loyalist"): 0.9, ("rebel", "rebel"): 0.12,
    ("rebel", "renegade"): 0.5, ("lord", "rebel"): 0.9, ("loyalist", "rebel"): 0.9,
    ("lord", "loyalist"): 0.15, ("loyalist", "lord"): 0.05, ("loyalist", "loyalist"): 0.15,
    ("lord", "renegade"): 0.5, ("loyalist", "renegade"): 0.5, ("renegade", "lord"): 0.2,
    ("renegade", "loyalist"): 0.45, ("renegade", "rebel"): 0.8, ("renegade", "renegade"): 0.6,
}
_FRIENDLY = {
    ("rebel", "lord"): 0.03, ("rebel", "loyalist"): 0.1, ("rebel", "rebel"): 1.0,
    ("rebel", "renegade"): 0.3, ("lord", "rebel"): 0.1, ("loyalist", "rebel"): 0.1,
    ("lord", "loyalist"): 1.0, ("loyalist", "lord"): 1.0, ("loyalist", "loyalist"): 1.0,
    ("lord", "renegade"): 0.4, ("loyalist", "renegade"): 0.4, ("renegade", "lord"): 0.8,
    ("renegade", "loyalist"): 0.3, ("renegade", "rebel"): 0.1, ("renegade", "renegade"): 0.3,
}
_LOG_H = {k: math.log(v) for k, v in _HOSTILE.items()}
_LOG_F = {k: math.log(v) for k, v in _FRIENDLY.items()}


def _arrangements(roles: list[str]) -> list[tuple[str, ...]]:
    """Distinct orderings of a multiset (sorted, so the enumeration is deterministic)."""
    return sorted(set(permutations(sorted(roles))))


class RoleBelief:
    """P(assignment) over the hidden seats, from one seat's point of view."""

    def __init__(self, role_cards: list[str], known: dict[int, str]) -> None:
        self.n = len(role_cards)
        self.known = dict(known)
        rest = list(role_cards)
        for r in known.values():
            rest.remove(r)
        self.hidden = [s for s in range(self.n) if s not in known]
        self.index = {s: i for i, s in enumerate(self.hidden)}
        self.assign = _arrangements(rest)
        self.logw = [0.0] * len(self.assign)
        self._marg: list[dict[str, float]] | None = None

    def _role(self, seat: int, a: tuple[str, ...]) -> str:
        r = self.known.get(seat)
        return r if r is not None else a[self.index[seat]]

    def reveal(self, seat: int, role: str) -> None:
        """``seat``'s role became known (death, game end)."""
        i = self.index.get(seat)
        if i is None or seat in self.known:
            return
        keep = [k for k, a in enumerate(self.assign) if a[i] == role]
        if not keep:  # inconsistent (cannot happen with a correct role table): start over
            return
        self.assign = [self.assign[k] for k in keep]
        self.logw = [self.logw[k] for k in keep]
        self.known[seat] = role
        self._marg = None

    def act(self, actor: int, target: int, hostile: bool, strength: float = 1.0) -> None:
        """Reweight by an act of ``actor`` towards ``target``."""
        if actor == target or actor < 0 or target < 0:
            return
        if actor in self.known and target in self.known:
            return
        table = _LOG_H if hostile else _LOG_F
        for k, a in enumerate(self.assign):
            self.logw[k] += strength * table[(self._role(actor, a), self._role(target, a))]
        self._marg = None

    def marginals(self) -> list[dict[str, float]]:
        """P(role) for every seat."""
        if self._marg is not None:
            return self._marg
        top = max(self.logw) if self.logw else 0.0
        w = [math.exp(x - top) for x in self.logw]
        total = sum(w) or 1.0
        out: list[dict[str, float]] = [{} for _ in range(self.n)]
        for s, r in self.known.items():
            out[s] = {r: 1.0}
        for s, i in self.index.items():
            if s in self.known:
                continue
            d: dict[str, float] = {}
            for wk, a in zip(w, self.assign, strict=True):
                d[a[i]] = d.get(a[i], 0.0) + wk / total
            out[s] = d
        self._marg = out
        return out

    def prob(self, seat: int, role: str) -> float:
        """P(``seat`` has ``role``)."""
        return self.marginals()[seat].get(role, 0.0)
