"""Who is winning, drawn: each camp's chance to win, move by move, from what a viewer may know.

A chart is computed from a viewer's envelopes (entries.py), folded into a view (fold.py) and
scored after every event by a fitted model (chartmodel.py, fitted by services/bots/
valuepublic.py from self-play):

* **public** (a live game, any viewer): the features come from the *spectator's* view alone
  (what everyone sees: seats alive, HP, cards in hand counted, equipment, judgement cards, the
  roles shown so far), released as far as the viewer may see the game; roles still hidden
  enter only as the number of each camp's seats the role table leaves among the unknown ones.
  A chart of a live game therefore carries nothing a spectator could not compute, not even for
  a seat's own holder (a seat knows more, but its chart is the table's);
* **full** (a finished game, where nothing is secret any more): the god view, the true roles
  and the 桃 in every hand.

A camp is the ruleset's (`Ruleset.camps`: the lord with the loyalists, the rebels …); a role its
table does not name plays alone and is its own camp (`renegade`: the chance a renegade wins).
A game without roles (a 1v1) has a camp per seat. Where no model was fitted for a table, a
hand-set score stands in (`model: "hand-set"`): each camp's expected HP, cards and equipment,
the lord's danger, squashed by a softmax.

Key moments: each death (with the role it showed), each role shown after the deal, the largest
swings of any camp's chance, and the end.
"""

from __future__ import annotations

import math
from collections import OrderedDict
from collections.abc import Callable
from dataclasses import dataclass, field
from functools import lru_cache
from typing import Any

import msgspec

from ..eventlog.records import Header
from ..rules import api
from ..rules.api import events as ev
from .feed import GameFeed
from .fold import SeatFold

PER_CAMP = ("alive", "hp", "cards", "gear", "judge")
FULL_EXTRA = ("peaches",)
GLOBAL = ("lord_hp1", "lord_hp2", "round")
SWINGS = 3  # the largest swings marked
PEACH = "桃"
_json = msgspec.json.Encoder()


@dataclass(frozen=True)
class Table:
    """What the features of a table kind need: its camps (in order), the camp of each role, how
    many of each camp its role table deals, and which card ids are 桃."""

    key: str  # the fitted models' name for it: RULESET/PLAYERS[/mougong]
    ruleset: str
    players: int
    camps: tuple[str, ...]
    leaders: tuple[str, ...]  # a role of each camp, to name it (the lord's, the rebels' …)
    camp_of: dict[str, str]
    dealt: dict[str, int]  # camp -> seats the role table deals it
    peaches: frozenset[int]
    roleless: bool


@lru_cache(maxsize=64)
def table(ruleset: str, players: int, options_json: str) -> Table:
    """The table of a ``ruleset`` game of ``players`` with these options (JSON)."""
    options = msgspec.json.decode(options_json)
    opts = api.resolve_options(ruleset, api.table_options(ruleset, players, options))
    rs = api.RULESETS[ruleset]
    roles = [r for r in rs.roles(players, opts) if r]
    key = f"{ruleset}/{players}" + ("/mougong" if opts.get("mougong") else "")
    deck = rs.deck(opts)
    peaches = frozenset(i for i, c in enumerate(deck) if c.name == PEACH)
    if not roles:
        camps = tuple(f"seat{s}" for s in range(players))
        return Table(key, ruleset, players, camps, camps, {}, {}, peaches, True)
    camp_of = {r: rs.camps.get(r, r) for r in set(roles) | set(rs.camps)}
    order: list[str] = []
    leaders: list[str] = []
    for r in roles:  # the lord's camp first (the role table deals the lord first)
        c = camp_of[r]
        if c not in order:
            order.append(c)
            leaders.append(r)
    dealt = {c: sum(camp_of[r] == c for r in roles) for c in order}
    return Table(
        key, ruleset, players, tuple(order), tuple(leaders), camp_of, dealt, peaches, False
    )


def table_of(h: Header) -> Table:
    """The table of the game whose header is ``h``."""
    return table(h.ruleset, h.players, _json.encode(dict(h.options)).decode())


def feature_names(t: Table, full: bool) -> list[str]:
    """The model's inputs for table ``t`` (in order)."""
    per = PER_CAMP + (FULL_EXTRA if full else ())
    return ["bias", *(f"{c}_{f}" for c in t.camps for f in per), *GLOBAL]


def features(t: Table, v: api.View, full: bool) -> list[float]:
    """The inputs for ``v`` (the spectator's view for the public model, the god view for the
    full one): per camp, its seats alive, their HP, cards in hand (each counted up to 8),
    equipment and judgement cards, where a seat whose role is not shown counts for each camp in
    the share the role table leaves it among the unknown seats; the lord at 1 or 2 HP; the
    round."""
    per = PER_CAMP + (FULL_EXTRA if full else ())
    n = len(per)
    x = [0.0] * (1 + len(t.camps) * n + len(GLOBAL))
    x[0] = 1.0
    index = {c: 1 + i * n for i, c in enumerate(t.camps)}
    unknown_alive: list[api.SeatView] = []
    unknown_dead = 0
    left = dict(t.dealt)  # seats of each camp not shown yet (dead or alive)
    lord_hp = 0
    for s in v.seats:
        if t.roleless:
            camp: str | None = f"seat{s.seat}"
        else:
            camp = t.camp_of.get(s.role) if s.role else None
        if s.role == "lord" and s.alive:
            lord_hp = s.hp
        if camp is None or camp not in index:
            if s.alive:
                unknown_alive.append(s)
            else:
                unknown_dead += 1
            continue
        left[camp] = left.get(camp, 0) - 1
        if s.alive:
            _add(x, index[camp], s, t, full, 1.0)
    pool = len(unknown_alive) + unknown_dead
    if pool and not t.roleless:
        for c, i in index.items():
            share = max(left.get(c, 0), 0) / pool
            for s in unknown_alive:
                _add(x, i, s, t, full, share)
    tail = 1 + len(t.camps) * n
    x[tail] = float(lord_hp == 1)
    x[tail + 1] = float(lord_hp == 2)
    x[tail + 2] = min(v.round, 30) / 10
    return x


def _add(x: list[float], i: int, s: api.SeatView, t: Table, full: bool, share: float) -> None:
    x[i] += share
    x[i + 1] += share * max(s.hp, 0)
    x[i + 2] += share * min(s.hand_count, 8)
    x[i + 3] += share * len(s.equip)
    x[i + 4] += share * len(s.judge)
    if full:
        x[i + 5] += share * sum(1 for c in s.hand if c in t.peaches)


def _weights(t: Table, kind: str) -> dict[str, tuple[float, ...]] | None:
    from .chartmodel import WEIGHTS

    got = WEIGHTS.get(t.key, {}).get(kind)
    if got is None or set(got) != set(t.camps):
        return None
    return got


def chances(t: Table, v: api.View, full: bool) -> tuple[list[float], str]:
    """Each camp's chance to win (in ``t.camps`` order) and the model that said so."""
    kind = "full" if full else "public"
    w = _weights(t, kind)
    x = features(t, v, full)
    if w is not None:
        z = [sum(a * b for a, b in zip(w[c], x, strict=True)) for c in t.camps]
    else:
        kind = "hand-set"
        z = _hand_set(t, x, full)
    top = max(z)
    e = [math.exp(max(zi - top, -30.0)) for zi in z]
    total = sum(e)
    return [ei / total for ei in e], kind


def _hand_set(t: Table, x: list[float], full: bool) -> list[float]:
    """A score per camp where no model is fitted: its expected HP, cards and equipment as a
    share of the table's, the lord's danger counted for the camps against it."""
    n = len(PER_CAMP) + (len(FULL_EXTRA) if full else 0)
    strength = []
    for i in range(len(t.camps)):
        b = 1 + i * n
        strength.append(x[b + 1] + 0.5 * x[b + 2] + 0.6 * x[b + 3] + 2.0 * x[b])
    total = sum(strength) or 1.0
    z = [4.0 * s / total for s in strength]
    danger = x[1 + len(t.camps) * n] * 1.0 + x[2 + len(t.camps) * n] * 0.5
    if not t.roleless and danger:
        z = [zi + (danger if i else -danger) for i, zi in enumerate(z)]
    return z


@dataclass
class ChartFold:
    """A chart folded incrementally from one viewer's envelopes, each numbered by its log seq
    (a viewer's own positions are put on at the end: `json`)."""

    t: Table
    full: bool
    viewer: int
    fold: SeatFold = field(init=False)
    points: list[list[float]] = field(default_factory=list)  # [seq, p per camp]
    alive: list[int] = field(default_factory=list)  # seats alive at each point
    moments: list[dict[str, Any]] = field(default_factory=list)
    model: str = "hand-set"
    dealt: bool = False  # a turn has started: roles shown from now on are moments
    over: bool = False

    def __post_init__(self) -> None:
        self.fold = SeatFold(self.viewer, "chart")

    @property
    def at(self) -> int:
        """The last log seq folded."""
        return self.fold.at

    def add(self, position: int, envelope: bytes) -> None:
        """Fold the envelope of log seq ``position`` (a repeat or an older one is stepped
        over)."""
        e = self.fold.envelope(position, envelope)
        if e is None:
            return
        if isinstance(e, ev.TurnStarted):
            self.dealt = True
        elif isinstance(e, ev.Died):
            self.moments.append({"seq": position, "kind": "death", "seat": e.seat, "role": e.role})
        elif isinstance(e, ev.RoleAssigned) and e.role and self.dealt:
            self.moments.append({"seq": position, "kind": "reveal", "seat": e.seat, "role": e.role})
        elif isinstance(e, ev.GameEnded):
            self.over = True
            self.moments.append(
                {"seq": position, "kind": "end", "winners": list(e.winner_seats), "draw": e.draw}
            )
        if not self.dealt and not self.over:
            return  # the deal: nothing to tell yet
        if self.over:
            won = set(e.winner_seats) if isinstance(e, ev.GameEnded) else set()
            p = self._final(won)
        else:
            p, self.model = chances(self.t, self.fold.view, self.full)
        point = [float(position), *(round(pi, 3) for pi in p)]
        alive = sum(1 for seat in self.fold.view.seats if seat.alive)
        if not self.points or point[1:] != self.points[-1][1:] or alive != self.alive[-1]:
            self.points.append(point)
            self.alive.append(alive)

    def state_at(self, upto: int) -> tuple[int, list[float]] | None:
        """(seats alive, each camp's chance) as of log seq ``upto`` (None: not dealt yet)."""
        found = None
        for point, alive in zip(self.points, self.alive, strict=True):
            if point[0] > upto:
                break
            found = (alive, point[1:])
        return found

    def _final(self, won: set[int]) -> list[float]:
        """1 for the camps of the winning seats (shared), 0 for the others; none for a draw."""
        roles = [s.role for s in self.fold.view.seats]
        camps = [
            f"seat{s}" if self.t.roleless else self.t.camp_of.get(r, r) for s, r in enumerate(roles)
        ]
        winning = {camps[s] for s in won if s < len(camps)}
        k = len(winning)
        return (
            [1.0 / k if c in winning else 0.0 for c in self.t.camps]
            if k
            else [0.0] * len(self.t.camps)
        )

    def swings(self, points: list[list[float]], over: bool) -> list[dict[str, Any]]:
        """The largest moves of any camp's chance from one of ``points`` to the next."""
        moves = []
        for a, b in zip(points, points[1:], strict=False):
            if b is points[-1] and over:
                continue  # the end is its own moment
            deltas = [y - x for x, y in zip(a[1:], b[1:], strict=True)]
            i = max(range(len(deltas)), key=lambda k: abs(deltas[k]))
            moves.append((abs(deltas[i]), int(b[0]), self.t.camps[i], round(deltas[i], 3)))
        moves.sort(key=lambda m: (-m[0], m[1]))
        return [
            {"seq": seq, "kind": "swing", "camp": camp, "delta": d}
            for size, seq, camp, d in moves[:SWINGS]
            if size >= 0.05
        ]

    def json(self, game: str, upto: int, position: Callable[[int], int]) -> bytes:
        """The chart as far as log seq ``upto`` (what the viewer may have), numbered in the
        viewer's own positions (``position``: log seq -> the viewer's position)."""
        points = [p for p in self.points if p[0] <= upto]
        over = (
            self.over
            and bool(points)
            and any(m["kind"] == "end" and m["seq"] <= upto for m in self.moments)
        )
        moments = [m for m in self.moments if m["seq"] <= upto] + self.swings(points, over)
        moments.sort(key=lambda m: (m["seq"], m["kind"]))
        body = {
            "game": game,
            "model": self.model,
            "camps": [
                {"key": c, "role": r} for c, r in zip(self.t.camps, self.t.leaders, strict=True)
            ],
            "points": [[position(int(p[0])), *p[1:]] for p in points],
            "moments": [m | {"seq": position(m["seq"])} for m in moments],
            "upto": position(min(upto, self.at)),
            "over": over,
        }
        return _json.encode(body)


class Charts:
    """Chart folds kept per (game, kind), extended as a game's feed grows (LRU)."""

    def __init__(self, capacity: int = 256) -> None:
        self.capacity = capacity
        self._folds: OrderedDict[tuple[str, bool], ChartFold] = OrderedDict()

    def get(self, game: str, header: Header, full: bool) -> ChartFold:
        """The fold of ``game`` (public or full), made on first use."""
        key = (game, full)
        fold = self._folds.get(key)
        if fold is None:
            fold = ChartFold(table_of(header), full, api.GOD if full else api.SPECTATOR)
            self._folds[key] = fold
        self._folds.move_to_end(key)
        while len(self._folds) > self.capacity:
            self._folds.popitem(last=False)
        return fold


def folded(charts: Charts, feed: GameFeed, header: Header) -> ChartFold:
    """The chart fold of ``feed``'s game, brought up to what the feed holds: the public model
    over the spectator's entries while the game is live, the full one over the god view's once
    it is over."""
    full = feed.over
    fold = charts.get(feed.game, header, full)
    kind = api.GOD if full else api.SPECTATOR
    for seq in range(fold.at + 1, feed.version + 1):
        envelope = feed.envelope(seq, kind)
        if envelope is not None:
            fold.add(seq, envelope)
    return fold


def render(
    charts: Charts, feed: GameFeed, header: Header, viewer: int, delay_ms: int, now_ms: int
) -> bytes:
    """The chart of ``feed``'s game for ``viewer`` held ``delay_ms`` behind (its grant): as far
    as the viewer may have the game, numbered in its positions."""
    fold = folded(charts, feed, header)
    end = feed.version if fold.full else feed.released(delay_ms, now_ms)
    return fold.json(feed.game, end, lambda s: feed.positions.position(viewer, s))
