"""Role inference: a probability over every assignment of the hidden roles, reweighted by the acts
a seat has seen — QSanguosha smart-ai's intention scores made Bayesian.

Any ruleset's roles are read through *classes* (:func:`classes_of`), derived from the ruleset's
role table and its camps (``Ruleset.camps``): ``lord``; ``loyalist`` (the lord's camp: 储君, 丞相,
大将 …); ``rebel`` (the rebels' camp: 贼首, 穷寇 …); ``renegade`` (a role that plays alone, or the
renegades' camp: 叛徒); ``third`` (any other camp, e.g. seed 004's 佞臣). Standard roles are their
own class, so standard play is unchanged.

Assignments are the distinct arrangements of the class cards not yet known (own role, revealed
roles, the dead, what ``role_learned``/洞察 told) over the hidden seats: at most a few thousand
(:class:`RoleBelief`, exact). Past :data:`EXACT_LIMIT` (seed 004's 12-player table: 27,720) a
factored belief (:class:`FactoredBelief`) keeps one score per seat and class and balances the
marginals to the class counts (Sinkhorn), treating an act between two hidden seats in expectation.

A hostile act (杀, 决斗, 过河拆桥 … aimed at a seat) multiplies each assignment by how likely that
act is between the two classes it gives the pair; a friendly act (桃 on a dying seat, a heal)
likewise.
"""

from __future__ import annotations

import math
from abc import ABC, abstractmethod
from collections import Counter
from collections.abc import Iterable, Mapping

from .likelihoods import RATES, bucket

LOYAL = ("lord", "loyalist")
CLASSES = ("lord", "loyalist", "rebel", "renegade", "third")
EXACT_LIMIT = 6000

# P(act | actor class, target class), up to a constant per act kind
_HOSTILE = {
    ("rebel", "lord"): 1.0,
    ("rebel", "loyalist"): 0.9,
    ("rebel", "rebel"): 0.12,
    ("rebel", "renegade"): 0.5,
    ("lord", "rebel"): 0.9,
    ("loyalist", "rebel"): 0.9,
    ("lord", "loyalist"): 0.15,
    ("loyalist", "lord"): 0.05,
    ("loyalist", "loyalist"): 0.15,
    ("lord", "renegade"): 0.5,
    ("loyalist", "renegade"): 0.5,
    ("renegade", "lord"): 0.2,
    ("renegade", "loyalist"): 0.45,
    ("renegade", "rebel"): 0.8,
    ("renegade", "renegade"): 0.6,
    # a third camp (佞臣): for the ruler against the rebels, against the loyalists
    ("third", "lord"): 0.1,
    ("third", "loyalist"): 0.5,
    ("third", "rebel"): 0.8,
    ("third", "renegade"): 0.5,
    ("third", "third"): 0.05,
    ("lord", "third"): 0.3,
    ("loyalist", "third"): 0.4,
    ("rebel", "third"): 0.8,
    ("renegade", "third"): 0.5,
}
_FRIENDLY = {
    ("rebel", "lord"): 0.03,
    ("rebel", "loyalist"): 0.1,
    ("rebel", "rebel"): 1.0,
    ("rebel", "renegade"): 0.3,
    ("lord", "rebel"): 0.1,
    ("loyalist", "rebel"): 0.1,
    ("lord", "loyalist"): 1.0,
    ("loyalist", "lord"): 1.0,
    ("loyalist", "loyalist"): 1.0,
    ("lord", "renegade"): 0.4,
    ("loyalist", "renegade"): 0.4,
    ("renegade", "lord"): 0.8,
    ("renegade", "loyalist"): 0.3,
    ("renegade", "rebel"): 0.1,
    ("renegade", "renegade"): 0.3,
    ("third", "lord"): 0.7,
    ("third", "loyalist"): 0.2,
    ("third", "rebel"): 0.1,
    ("third", "renegade"): 0.2,
    ("third", "third"): 1.0,
    ("lord", "third"): 0.5,
    ("loyalist", "third"): 0.4,
    ("rebel", "third"): 0.1,
    ("renegade", "third"): 0.3,
}
_LOG_H = {k: math.log(v) for k, v in _HOSTILE.items()}
_LOG_F = {k: math.log(v) for k, v in _FRIENDLY.items()}
# Every act's weight in the belief. The likelihoods treat acts as independent evidence, but a
# seat's acts are not: it keeps hitting whom it took for an enemy, rightly or not. At 1 the belief
# was overconfident (standard 8, 150 all-heuristic games: a seat put at under 2% a teammate was
# one in 1.4% of hostile targetings, 17 teammates killed); at 0.5 those are 0.1% and 4 kills,
# log-loss of the role guesses lower from round 3 to 8, and head to head against the untempered
# heuristic it lost nowhere (services/bots/README.md, "Blunders").
TEMPER = 0.5
_TABLES: dict[tuple[str, bool, int], tuple[dict[tuple[str, str], float], float]] = {}
POOLED = "*"  # the rates fitted over every fit table, for a table without its own


def table_key(ruleset: str, players: int, options: Mapping[str, object]) -> str:
    """A table's name in the fitted tables: ruleset, players and the options that change roles."""
    return f"{ruleset}/{players}" + ("/mougong" if options.get("mougong") else "")


def loglik(
    hostile: bool, rnd: int, rebels_left: bool = True, table: str = POOLED
) -> tuple[dict[tuple[str, str], float], float]:
    """log P(act lands on a seat of class b | actor class a) for round ``rnd`` at ``table`` — the
    rates fitted for that table (:mod:`.likelihoods`), else the pooled ones, else the hand-set
    tables — and the log used for a pair the table lacks."""
    k = bucket(rnd, rebels_left)
    got = _TABLES.get((table, hostile, k))
    if got is None:
        kind = "hostile" if hostile else "friendly"
        fitted: dict[tuple[str, str], float] = {}
        for name in (table, POOLED):
            fitted = {
                (a, b): v
                for (t, kb, kk, a, b), v in RATES.items()
                if (t, kb, kk) == (name, k, kind)
            }
            if fitted:
                break
        if fitted:
            mean = sum(fitted.values()) / len(fitted)
            got = ({ab: math.log(v) for ab, v in fitted.items()}, math.log(mean))
        else:
            got = (_LOG_H if hostile else _LOG_F), -0.7
        _TABLES[(table, hostile, k)] = got
    return got


def classes_of(roles: Iterable[str], camps: Mapping[str, str]) -> dict[str, str]:
    """The class of every role in ``roles`` under a ruleset's ``camps`` (role -> camp; a role not
    named plays alone)."""
    lord_camp, rebel_camp = camps.get("lord"), camps.get("rebel")
    rene_camp = camps.get("renegade")
    out: dict[str, str] = {}
    for r in roles:
        c = camps.get(r)
        if r == "lord":
            out[r] = "lord"
        elif c is None or c == rene_camp:
            out[r] = "renegade"
        elif c == lord_camp:
            out[r] = "loyalist"
        elif c == rebel_camp:
            out[r] = "rebel"
        else:
            out[r] = "third"
    return out


def _arrangements(roles: list[str]) -> list[tuple[str, ...]]:
    """Distinct orderings of a multiset, in sorted order (generated directly: the plain
    permutations of ten cards are millions)."""
    keys = sorted(set(roles))
    left = Counter(roles)
    out: list[tuple[str, ...]] = []
    cur: list[str] = []

    def grow() -> None:
        if len(cur) == len(roles):
            out.append(tuple(cur))
            return
        for k in keys:
            if left[k]:
                left[k] -= 1
                cur.append(k)
                grow()
                cur.pop()
                left[k] += 1

    grow()
    return out


def count_arrangements(roles: list[str]) -> int:
    """How many distinct orderings a multiset has (without enumerating them)."""
    n = math.factorial(len(roles))
    for k in Counter(roles).values():
        n //= math.factorial(k)
    return n


class _Base(ABC):
    """What both beliefs share: the class map, the known roles and P(role) from P(class)."""

    def __init__(
        self, role_cards: list[str], known: dict[int, str], cls: Mapping[str, str] | None
    ) -> None:
        self.n = len(role_cards)
        self.cls: dict[str, str] = dict(cls) if cls is not None else {r: r for r in role_cards}
        self.known_role: dict[int, str] = {}
        self.known: dict[int, str] = {}  # seat -> class
        rest = [self.of(r) for r in role_cards]
        self.dealt = set(role_cards)
        self.pool = Counter(role_cards)  # role cards still hidden (for P(role | class))
        for s, r in known.items():
            self.known_role[s], self.known[s] = r, self.of(r)
            if self.known[s] in rest:
                rest.remove(self.known[s])
            if self.pool[r] > 0:
                self.pool[r] -= 1
        self.hidden = [s for s in range(self.n) if s not in known]
        self.rest = rest
        self.table = POOLED  # whose fitted likelihoods to read (:func:`table_key`)
        self.temper = TEMPER  # every act's weight (see TEMPER)

    def of(self, role: str) -> str:
        """The class of ``role``."""
        return self.cls.get(role, role)

    @abstractmethod
    def marginals(self) -> list[dict[str, float]]:
        """P(class) per seat, the subclass's estimate."""

    def prob(self, seat: int, role: str) -> float:
        """P(``seat`` has ``role``) — the class probability shared among the hidden role cards of
        that class."""
        if seat in self.known_role:
            return 1.0 if self.known_role[seat] == role else 0.0
        c = self.of(role)
        p = self.marginals()[seat].get(c, 0.0)
        same = sum(k for r, k in self.pool.items() if self.of(r) == c)
        return p * self.pool.get(role, 0) / same if same else 0.0

    def certain(self, seat: int) -> bool:
        """Whether ``seat``'s class is (almost) sure."""
        return seat in self.known or max(self.marginals()[seat].values(), default=0.0) > 0.97

    def _known_again(self, seat: int, role: str) -> bool:
        """A seat already known: only a role gained in play (叛徒) changes it."""
        if seat not in self.known:
            return False
        if role not in self.dealt and self.known_role.get(seat) != role:
            self.known_role[seat], self.known[seat] = role, self.of(role)
            self._marg = None
        return True

    def _evidence(self, actor: int, target: int) -> bool:
        """Whether an act of ``actor`` towards ``target`` can move the belief: two seats of the
        table, not the same, not both known."""
        if actor == target or not (0 <= actor < self.n and 0 <= target < self.n):
            return False
        return not (actor in self.known and target in self.known)

    _marg: list[dict[str, float]] | None

    def _learn(self, seat: int, role: str) -> None:
        self.known_role[seat], self.known[seat] = role, self.of(role)
        if self.pool[role] > 0:
            self.pool[role] -= 1


class RoleBelief(_Base):
    """P(assignment) over the hidden seats, from one seat's point of view (exact)."""

    def __init__(
        self, role_cards: list[str], known: dict[int, str], cls: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(role_cards, known, cls)
        self.index = {s: i for i, s in enumerate(self.hidden)}
        self.assign = _arrangements(self.rest)
        self.logw = [0.0] * len(self.assign)
        self._marg = None

    def _role(self, seat: int, a: tuple[str, ...]) -> str:
        r = self.known.get(seat)
        return r if r is not None else a[self.index[seat]]

    def _keep(self, keep: list[int]) -> None:
        self.assign = [self.assign[k] for k in keep]
        self.logw = [self.logw[k] for k in keep]
        self._marg = None

    def reveal(self, seat: int, role: str) -> None:
        """``seat``'s role became known (death, a reveal, 立储/结党, 洞察)."""
        if self._known_again(seat, role):
            return
        i = self.index.get(seat)
        if i is None:
            return
        c = self.of(role)
        keep = [k for k, a in enumerate(self.assign) if a[i] == c]
        if (
            not keep or role not in self.dealt
        ):  # not one of the dealt cards (a role gained in play): its old card stays
            self.convert(seat, role)
            return
        self._keep(keep)
        self._learn(seat, role)

    def convert(self, seat: int, role: str) -> None:
        """``seat`` now holds ``role`` (seed 004's 叛徒); its old card stays unknown."""
        self.known_role[seat], self.known[seat] = role, self.of(role)
        self._marg = None

    def restrict(self, seat: int, allowed: set[str]) -> None:
        """``seat``'s class is one of ``allowed`` (洞察's friend/enemy)."""
        i = self.index.get(seat)
        if i is None or seat in self.known:
            return
        keep = [k for k, a in enumerate(self.assign) if a[i] in allowed]
        if keep:
            self._keep(keep)

    def act(
        self,
        actor: int,
        target: int,
        hostile: bool,
        strength: float = 1.0,
        rnd: int = 0,
        rebels_left: bool = True,
    ) -> None:
        """Reweight by an act of ``actor`` towards ``target`` in round ``rnd`` (``rebels_left``:
        whether a rebel may still be alive; once none is, every class plays differently)."""
        if not self._evidence(actor, target):
            return
        table, other = loglik(hostile, rnd, rebels_left, self.table)
        w = strength * self.temper
        for k, a in enumerate(self.assign):
            self.logw[k] += w * table.get((self._role(actor, a), self._role(target, a)), other)
        self._marg = None

    def marginals(self) -> list[dict[str, float]]:
        """P(class) for every seat."""
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


class FactoredBelief(_Base):
    """One log-score per hidden seat and class; marginals balanced to the class counts."""

    ROUNDS = 25

    def __init__(
        self, role_cards: list[str], known: dict[int, str], cls: Mapping[str, str] | None = None
    ) -> None:
        super().__init__(role_cards, known, cls)
        self.need: dict[str, float] = {c: float(k) for c, k in Counter(self.rest).items()}
        self.score: dict[int, dict[str, float]] = {
            s: {c: 0.0 for c in self.need} for s in self.hidden
        }
        self._marg = None

    def _live(self) -> list[int]:
        return [s for s in self.hidden if s not in self.known]

    def reveal(self, seat: int, role: str) -> None:
        """``seat``'s role became known."""
        if self._known_again(seat, role) or seat not in self.score:
            return
        c = self.of(role)
        if self.need.get(c, 0.0) < 0.5 or role not in self.dealt:
            self.convert(seat, role)
            return
        self.need[c] -= 1.0
        self._learn(seat, role)
        self._marg = None

    def convert(self, seat: int, role: str) -> None:
        """``seat`` now holds a role it was not dealt: its old card's class stays in expectation
        out of the pool."""
        if seat in self.known or seat not in self.score:
            return
        for c, p in self.marginals()[seat].items():
            self.need[c] = max(self.need[c] - p, 0.0)
        self.known_role[seat], self.known[seat] = role, self.of(role)
        self._marg = None

    def restrict(self, seat: int, allowed: set[str]) -> None:
        """``seat``'s class is one of ``allowed``."""
        if seat in self.known or seat not in self.score:
            return
        sc = self.score[seat]
        if not any(c in allowed for c in sc):
            return
        for c in sc:
            if c not in allowed:
                sc[c] = -math.inf
        self._marg = None

    def act(
        self,
        actor: int,
        target: int,
        hostile: bool,
        strength: float = 1.0,
        rnd: int = 0,
        rebels_left: bool = True,
    ) -> None:
        """Reweight by an act; an unknown counterpart is taken in expectation."""
        if not self._evidence(actor, target):
            return
        table, missing = loglik(hostile, rnd, rebels_left, self.table)
        strength *= self.temper
        marg = self.marginals()

        def expect(c: str, other: dict[str, float], first: bool) -> float:
            tot = sum(
                p * math.exp(table.get((c, o) if first else (o, c), missing))
                for o, p in other.items()
            )
            return math.log(tot) if tot > 0 else 0.0

        if actor not in self.known:
            sa = self.score[actor]
            for c in sa:
                sa[c] += strength * expect(c, marg[target], True)
        if target not in self.known:
            st = self.score[target]
            for c in st:
                st[c] += strength * expect(c, marg[actor], False)
        self._marg = None

    def marginals(self) -> list[dict[str, float]]:
        """P(class) for every seat (Sinkhorn-balanced so each class adds up to its count)."""
        if self._marg is not None:
            return self._marg
        live = self._live()
        w: dict[int, dict[str, float]] = {}
        for s in live:
            sc = self.score[s]
            top = max(sc.values())
            w[s] = {c: (math.exp(v - top) if v > -math.inf else 0.0) for c, v in sc.items()}
        for _ in range(self.ROUNDS):
            for c, need in self.need.items():
                col = sum(w[s][c] for s in live)
                if col > 0:
                    f = need / col
                    for s in live:
                        w[s][c] *= f
            for s in live:
                tot = sum(w[s].values()) or 1.0
                for c in w[s]:
                    w[s][c] /= tot
        out: list[dict[str, float]] = [{} for _ in range(self.n)]
        for s, r in self.known.items():
            out[s] = {r: 1.0}
        for s in live:
            out[s] = {c: p for c, p in w[s].items() if p > 0}
        self._marg = out
        return out


class FixedBelief(_Base):
    """Given marginals that no act changes: a look-ahead's guess at another seat's belief (the
    searcher's reading of the public evidence, that seat's own role known)."""

    def __init__(
        self,
        role_cards: list[str],
        known: dict[int, str],
        cls: Mapping[str, str] | None,
        marg: list[dict[str, float]],
    ) -> None:
        super().__init__(role_cards, known, cls)
        self._fixed = marg

    def marginals(self) -> list[dict[str, float]]:
        """The given marginals."""
        return self._fixed

    def reveal(self, seat: int, role: str) -> None:
        """Fixed: a reveal in a play-out changes nothing."""

    def convert(self, seat: int, role: str) -> None:
        """Fixed."""

    def restrict(self, seat: int, allowed: set[str]) -> None:
        """Fixed."""

    def act(
        self,
        actor: int,
        target: int,
        hostile: bool,
        strength: float = 1.0,
        rnd: int = 0,
        rebels_left: bool = True,
    ) -> None:
        """Fixed."""


Belief = RoleBelief | FactoredBelief | FixedBelief


def make_belief(
    role_cards: list[str],
    known: dict[int, str],
    cls: Mapping[str, str] | None = None,
    table: str = POOLED,
) -> Belief:
    """The exact belief when the hidden arrangements are few enough, else the factored one;
    ``table`` (:func:`table_key`) chooses the fitted likelihoods."""
    c = dict(cls) if cls is not None else {r: r for r in role_cards}
    rest = [c.get(r, r) for r in role_cards]
    for r in known.values():
        if c.get(r, r) in rest:
            rest.remove(c.get(r, r))
    b: Belief = (
        RoleBelief(role_cards, known, c)
        if count_arrangements(rest) <= EXACT_LIMIT
        else FactoredBelief(role_cards, known, c)
    )
    b.table = table
    return b
