"""Read-only questions about the state: seats, order, distance, range, a seat's skills."""

from __future__ import annotations

from collections.abc import Sequence

from .cards import CardDef, color_of
from .index import held, hooked, index_of, seat_entry, seat_skills, skills_changed
from .registry import RULESETS
from .skills import SKILLS, Skill
from .state import Game, Player

RANGE_OF_WEAPON: dict[str, int] = {}  # filled by the card modules: weapon name -> range


_ROUND: dict[tuple[int, int, bool], tuple[int, ...]] = {}


def order_from(g: Game, start: int, include_start: bool = True) -> list[int]:
    """Alive seats in turn order starting from ``start`` (or from its next seat)."""
    return list(turn_order(g, start, include_start))


def turn_order(g: Game, start: int, include_start: bool = True) -> tuple[int, ...]:
    """:func:`order_from` as a kept tuple (to read, not to keep or change)."""
    players = g.players
    n = len(players)
    if not g.dead:  # everyone alive (the usual case): the order depends on the seats alone
        key = (n, start, include_start)
        order = _ROUND.get(key)
        if order is None:
            first = 0 if include_start else 1
            order = _ROUND[key] = tuple((start + k) % n for k in range(first, n))
        return order
    idx = g.skill_index or index_of(g)
    if idx.order_dead != g.dead:  # someone died since: the orders kept are stale
        idx.orders.clear()
        idx.order_dead = g.dead
    kept = idx.orders.get((start, include_start))
    if kept is None:
        first = 0 if include_start else 1
        kept = idx.orders[start, include_start] = tuple(
            s for k in range(first, n) if players[s := (start + k) % n].alive
        )
    return kept


def next_alive(g: Game, seat: int) -> int:
    """The next alive seat after ``seat`` (``seat`` itself if it is alone)."""
    n = len(g.players)
    for k in range(1, n + 1):
        s = (seat + k) % n
        if g.players[s].alive:
            return s
    return seat


def skills_of(g: Game, p: Player) -> list[str]:
    """The skills a seat has now: its general's (lord skills only as lord or once gained), those
    the ruleset's rules give it (``SeatExt.rule_skills``) and its equipment's (``core/index.py``
    keeps them)."""
    return list(seat_skills(g, p.seat))


with_hook = hooked
"""``with_hook(g, seat, hook)``: the skills of ``seat`` that override ``hook`` (from the index,
core/index.py: most seats have none)."""


def has_skill(g: Game, seat: int, name: str) -> bool:
    """Whether ``seat`` has the skill ``name`` now."""
    return name in skills_of(g, g.players[seat])


def skill_objs(g: Game, seat: int) -> list[Skill]:
    """The skill objects of ``seat``."""
    return [SKILLS[s] for s in seat_skills(g, seat)]


def distance(g: Game, a: int, b: int) -> int:
    """Distance(a → b): seat distance, +1 horse of b, −1 horse of a, skills; at least 1."""
    if a == b:
        return 0
    if not RULESETS[g.ruleset].measures_distance:
        return 1
    idx = g.skill_index or index_of(g)
    if idx.dead == g.dead:
        row = idx.rows[a]
        if row is not None:
            return row[b]
    return distances(g, a)[b] if kept(g) else measure(g, a, b)


def distances(g: Game, a: int) -> list[int]:
    """Distance from ``a`` to every seat (0 to itself, :data:`FAR` to a dead one).

    While no seat holds a distance skill the row is measured once and kept (``SkillIndex.rows``)
    until a horse, a skill or a death changes it; do not change the list."""
    players = g.players
    idx = g.skill_index or index_of(g)
    if idx.dead == g.dead:
        row = idx.rows[a]
        if row is not None:
            return row
    if RULESETS[g.ruleset].measures_distance:
        row = measure_row(g, a)
        keep = kept(g)
    else:  # every other seat is at distance 1 (chengtian's 1v1)
        row, keep = [0 if t == a else 1 for t in range(len(players))], True
    if keep and players[a].alive:
        if idx.dead != g.dead:
            idx.rows = [None] * len(players)
            idx.reach = [None] * len(players)
            idx.dead = g.dead
        idx.rows[a] = row
    return row


def kept(g: Game) -> bool:
    """Whether distances may be kept: no seat holds a skill that changes them but with the
    seats alone (``Skill.fixed_distance``, 马术)."""
    idx = g.skill_index or index_of(g)
    if idx.kept is None:
        hooks = held(g)
        idx.kept = ("distance_from" not in hooks and "distance_to" not in hooks) or all(
            s.fixed_distance
            for seat in range(len(g.players))
            for hook in ("distance_from", "distance_to")
            for s in with_hook(g, seat, hook)
        )
    return idx.kept


FAR = 1 << 20
"""The distance kept to a dead seat (no card reaches it)."""


def measure_row(g: Game, a: int) -> list[int]:
    """Distance(a → t) for every seat t, measured from the state: the steps between the two
    alive seats the short way round, +1 for t's horse (+1), −1 for a's horse (−1), the
    distance skills of both; at least 1 (0 to ``a`` itself, :data:`FAR` to a dead seat)."""
    players = g.players
    n = len(players)
    if g.dead:  # count alive seats only: a seat's place among them
        place = [0] * n
        m = 0
        for s, p in enumerate(players):
            if p.alive:
                place[s] = m
                m += 1
    else:
        place, m = list(range(n)), n
    hooks = held(g)
    skills = "distance_from" in hooks or "distance_to" in hooks
    if skills:  # a's own distance skills once; each seat's entry read without a call
        from_a = with_hook(g, a, "distance_from")
        entries = (g.skill_index or index_of(g)).seats
    here = place[a]
    base = -1 if "minus" in players[a].equip else 0
    row = [0] * n
    for t, p in enumerate(players):
        if t == a:
            continue
        if not p.alive:
            row[t] = FAR
            continue
        d = here - place[t] if here > place[t] else place[t] - here
        if d + d > m:  # the short way round
            d = m - d
        d += base
        if "plus" in p.equip:
            d += 1
        if skills:
            for k in from_a:
                d += k.distance_from(g, a, t)
            for k in (entries[t] or seat_entry(g, t)).hooks["distance_to"]:
                d += k.distance_to(g, t, a)
        row[t] = d if d > 1 else 1
    return row


def measure(g: Game, a: int, b: int) -> int:
    """Distance(a → b) measured from the state (two seats, both alive)."""
    return measure_row(g, a)[b]


def in_reach(g: Game, a: int) -> tuple[int, ...]:
    """The other alive seats, in turn order from ``a``, within ``a``'s attack range.

    Kept (``SkillIndex.reach``, with the range it was found for) with the distances: a seat
    holding no skill that changes its range has its weapon's, and a weapon moving drops the
    seat's entry and this with it (``skills_changed``); with such a skill (extended's 弄权) the
    range is asked afresh and the seats kept serve while it is the same."""
    idx = g.skill_index or index_of(g)
    # with_hook(g, a, "attack_range"), without the call
    hooked_range = bool((idx.seats[a] or seat_entry(g, a)).hooks["attack_range"])
    kept_reach = idx.reach[a] if idx.dead == g.dead else None
    reach = attack_range(g, a) if hooked_range or kept_reach is None else kept_reach[0]
    if kept_reach is not None and kept_reach[0] == reach:
        return kept_reach[1]
    row = distances(g, a)
    found = tuple(t for t in turn_order(g, a, include_start=False) if row[t] <= reach)
    if idx.dead == g.dead and idx.rows[a] is row:
        idx.reach[a] = (reach, found)
    return found


def attack_range(g: Game, seat: int, without: int = -1) -> int:
    """Attack range: the weapon's range (replacing 1), plus skills; ``without`` ignores a card."""
    if not RULESETS[g.ruleset].measures_distance:
        return 1
    p = g.players[seat]
    w = p.equip.get("weapon", -1)
    r = RANGE_OF_WEAPON.get(g.cards[w].name, 1) if w >= 0 and w != without else 1
    for s in with_hook(g, seat, "attack_range"):
        r += s.attack_range(g, seat)
    return r if r > 1 else 1


def in_range(g: Game, a: int, b: int, without: int = -1) -> bool:
    """Whether b is within a's attack range."""
    if a == b:
        return False
    if without < 0:
        return distance(g, a, b) <= attack_range(g, a)
    return distance_without(g, a, b, without) <= attack_range(g, a, without)


def distance_without(g: Game, a: int, b: int, without: int) -> int:
    """Distance a → b as if card ``without`` (a horse about to be discarded) were gone."""
    p = g.players[a]
    if without < 0 or without not in p.equip.values() or a == b:
        return distance(g, a, b)
    if not RULESETS[g.ruleset].measures_distance:
        return 1
    slot = next(k for k, v in p.equip.items() if v == without)
    skill = g.cards[without].name in SKILLS  # then the index must forget it for a while too
    del p.equip[slot]
    if skill:
        skills_changed(g, a)
    try:
        return measure_row(g, a)[b]  # measured, not kept
    finally:
        p.equip[slot] = without
        if skill:
            skills_changed(g, a)


def hand_limit(g: Game, seat: int) -> int:
    """Hand limit: current HP (at least 0) plus skill modifiers."""
    lim = max(g.players[seat].hp, 0)
    for s in with_hook(g, seat, "hand_limit"):
        lim += s.hand_limit(g, seat)
    return lim


_NAMED: dict[str, dict[str, frozenset[int]]] = {}  # card table id -> name -> card ids
_NONE_NAMED: frozenset[int] = frozenset()


def ids_named(g: Game, name: str) -> frozenset[int]:
    """The ids of the game's cards printed ``name`` (kept per card table: it is static)."""
    table = _NAMED.get(g.deck)
    if table is None:
        by_name: dict[str, set[int]] = {}
        for i, c in enumerate(g.cards):
            by_name.setdefault(c.name, set()).add(i)
        table = _NAMED[g.deck] = {n: frozenset(ids) for n, ids in by_name.items()}
    return table.get(name, _NONE_NAMED)


def card(g: Game, cid: int) -> CardDef:
    """The printed card with id ``cid``."""
    return g.cards[cid]


def color(g: Game, cid: int) -> str:
    """Colour of a physical card."""
    return color_of(g.cards[cid].suit)


def prohibited(g: Game, target: int, user: int, card_name: str) -> bool:
    """Whether ``target`` cannot be chosen as a target of ``card_name`` by ``user``."""
    idx = g.skill_index  # with_hook(g, target, "prohibits"), without the call: usually none
    entry = idx.seats[target] if idx is not None else None
    for s in (entry or seat_entry(g, target)).hooks["prohibits"]:
        if s.prohibits(g, target, user, card_name):
            return True
    return False


def limit_lifted(g: Game, user: int, t: int, card_name: str) -> bool:
    """Whether ``card_name`` used by ``user`` on ``t`` has no distance limit: a skill of the user
    (奇才) or of the target (仇叛) lifts it."""
    hooks = (
        idx.held if (idx := g.skill_index) is not None and idx.held is not None else held(g)
    )  # index.held
    if "ignores_distance" not in hooks and "no_distance_limit" not in hooks:
        return False  # no seat holds such a skill
    seats = (g.skill_index or index_of(g)).seats  # each entry read without with_hook
    for s in (seats[user] or seat_entry(g, user)).hooks["ignores_distance"]:
        if s.ignores_distance(g, user, card_name):
            return True
    for s in (seats[t] or seat_entry(g, t)).hooks["no_distance_limit"]:
        if s.no_distance_limit(g, t, user, card_name):
            return True
    return False


def distance_ok(g: Game, user: int, t: int, card_name: str, limit: int = 1) -> bool:
    """Whether ``t`` is within distance ``limit`` of ``user`` for ``card_name`` (顺手牵羊,
    兵粮寸断), unless a skill lifts the limit (奇才, 仇叛)."""
    return limit_lifted(g, user, t, card_name) or distance(g, user, t) <= limit


def reached(g: Game, user: int, card_name: str, limited: bool = True) -> list[int]:
    """The other alive seats, in turn order from ``user``, that ``user``'s ``card_name`` (a 杀)
    may target: within its attack range or with the limit lifted (``limited`` False: every
    seat), and protected by no skill (空城, 谦逊 …). What :func:`reaches` and
    :func:`prohibited` say of each seat, with the seats in range kept (:func:`in_reach`)."""
    hooks = (
        idx.held if (idx := g.skill_index) is not None and idx.held is not None else held(g)
    )  # index.held
    lifts = "ignores_distance" in hooks or "no_distance_limit" in hooks
    if not limited:
        seats: Sequence[int] = turn_order(g, user, include_start=False)
    elif not lifts:
        seats = in_reach(g, user)
    else:  # some seat may lift the limit for a seat out of range
        near = in_reach(g, user)
        seats = [
            t
            for t in turn_order(g, user, include_start=False)
            if t in near or limit_lifted(g, user, t, card_name)
        ]
    if "prohibits" not in hooks:
        return list(seats)
    return [t for t in seats if not prohibited(g, t, user, card_name)]


def reaches_any(g: Game, user: int, card_name: str) -> bool:
    """Whether :func:`reached` finds any seat: the seats in range are asked first, those the
    limit is lifted for only if none of them will do."""
    hooks = (
        idx.held if (idx := g.skill_index) is not None and idx.held is not None else held(g)
    )  # index.held
    protects = "prohibits" in hooks
    near = in_reach(g, user)
    for t in near:
        if not (protects and prohibited(g, t, user, card_name)):
            return True
    if "ignores_distance" in hooks or "no_distance_limit" in hooks:
        for t in turn_order(g, user, include_start=False):
            lifted = t not in near and limit_lifted(g, user, t, card_name)
            if lifted and not (protects and prohibited(g, t, user, card_name)):
                return True
    return False


def reaches(g: Game, user: int, t: int, card_name: str) -> bool:
    """Whether ``user``'s ``card_name`` (a 杀) reaches ``t``: in attack range, or no limit."""
    return in_range(g, user, t) or limit_lifted(g, user, t, card_name)


def card_count(g: Game, seat: int, judge: bool = False) -> int:
    """Cards in hand and equipment (and judgement area if ``judge``)."""
    p = g.players[seat]
    return len(p.hand) + len(p.equip) + (len(p.judge) if judge else 0)
