"""Read-only questions about the state: seats, order, distance, range, a seat's skills."""

from __future__ import annotations

from .cards import CardDef, color_of
from .registry import RULESETS
from .skills import HOOK_SETS, SKILLS, Skill
from .state import Game, Player

RANGE_OF_WEAPON: dict[str, int] = {}  # filled by the card modules: weapon name -> range


def alive_seats(g: Game) -> list[int]:
    """Alive seats in seat order."""
    return [p.seat for p in g.players if p.alive]


_ROUND: dict[tuple[int, int, bool], tuple[int, ...]] = {}


def order_from(g: Game, start: int, include_start: bool = True) -> list[int]:
    """Alive seats in turn order starting from ``start`` (or from its next seat)."""
    players = g.players
    n = len(players)
    if not g.dead:  # everyone alive (the usual case): the order depends on the seats alone
        key = (n, start, include_start)
        order = _ROUND.get(key)
        if order is None:
            first = 0 if include_start else 1
            order = _ROUND[key] = tuple((start + k) % n for k in range(first, n))
        return list(order)
    first = 0 if include_start else 1
    return [s for k in range(first, n) if players[s := (start + k) % n].alive]


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
    the ruleset's rules give it (``SeatExt.rule_skills``) and its equipment's."""
    ext = p.ext
    lordly = p.role == "lord" or (ext is not None and ext.has_lord_skills())
    out = [s for s in p.skills if not SKILLS[s].lord or lordly] if p.skills else []
    if ext is not None:
        out += ext.rule_skills()
    for cid in p.equip.values():
        name = g.cards[cid].name
        if name in SKILLS:
            out.append(name)
    return out


_CARD_SKILLS: dict[tuple[int, str], bool] = {}


def cards_may_have(g: Game, names: set[str]) -> bool:
    """Whether any card of the game's table is named like one of ``names`` (the skills of a
    timing point or a hook: registry sets, filled at import): if none is, no equipment can
    hold one and it need not be looked at (most points and hooks have no equipment skill)."""
    key = (id(names), g.deck)
    found = _CARD_SKILLS.get(key)
    if found is None:
        found = _CARD_SKILLS[key] = any(c.name in names for c in set(g.cards))
    return found


def with_hook(g: Game, seat: int, hook: str) -> list[Skill]:
    """The skills of ``seat`` that override ``hook`` (fast: most seats have none)."""
    names = HOOK_SETS[hook]
    if not names:
        return []
    p = g.players[seat]
    ext = p.ext
    rule = ext.rule_skills() if ext is not None else ()
    if not p.skills and not rule and not (p.equip and cards_may_have(g, names)):
        return []
    lordly = p.role == "lord" or (ext is not None and ext.has_lord_skills())
    out = [SKILLS[s] for s in p.skills if s in names and (not SKILLS[s].lord or lordly)]
    if rule:
        out += [SKILLS[s] for s in rule if s in names]
    for cid in p.equip.values():
        n = g.cards[cid].name
        if n in names:
            out.append(SKILLS[n])
    return out


def has_skill(g: Game, seat: int, name: str) -> bool:
    """Whether ``seat`` has the skill ``name`` now."""
    return name in skills_of(g, g.players[seat])


def skill_objs(g: Game, seat: int) -> list[Skill]:
    """The skill objects of ``seat``."""
    return [SKILLS[s] for s in skills_of(g, g.players[seat])]


def seat_distance(g: Game, a: int, b: int) -> int:
    """Steps between two alive seats the short way round, counting alive seats only."""
    if a == b:
        return 0
    if not g.dead:
        d = abs(a - b)
        return min(d, len(g.players) - d)
    alive = alive_seats(g)
    n = len(alive)
    i, j = alive.index(a), alive.index(b)
    d = abs(i - j)
    return min(d, n - d)


def distance(g: Game, a: int, b: int) -> int:
    """Distance(a → b): seat distance, +1 horse of b, −1 horse of a, skills; at least 1."""
    if a == b:
        return 0
    if not RULESETS[g.ruleset].measures_distance:
        return 1
    d = seat_distance(g, a, b)
    pa, pb = g.players[a], g.players[b]
    if "minus" in pa.equip:
        d -= 1
    if "plus" in pb.equip:
        d += 1
    for s in with_hook(g, a, "distance_from"):
        d += s.distance_from(g, a, b)
    for s in with_hook(g, b, "distance_to"):
        d += s.distance_to(g, b, a)
    return max(d, 1)


def attack_range(g: Game, seat: int, without: int = -1) -> int:
    """Attack range: the weapon's range (replacing 1), plus skills; ``without`` ignores a card."""
    if not RULESETS[g.ruleset].measures_distance:
        return 1
    p = g.players[seat]
    w = p.equip.get("weapon", -1)
    r = RANGE_OF_WEAPON.get(g.cards[w].name, 1) if w >= 0 and w != without else 1
    for s in with_hook(g, seat, "attack_range"):
        r += s.attack_range(g, seat)
    return max(r, 1)


def in_range(g: Game, a: int, b: int, without: int = -1) -> bool:
    """Whether b is within a's attack range."""
    if a == b:
        return False
    if without < 0:
        return distance(g, a, b) <= attack_range(g, a)
    return distance_without(g, a, b, without) <= attack_range(g, a, without)


def distance_without(g: Game, a: int, b: int, without: int) -> int:
    """Distance a → b as if card ``without`` (a horse about to be discarded) were gone."""
    if without < 0 or without not in g.players[a].equip.values():
        return distance(g, a, b)
    p = g.players[a]
    slot = next(k for k, v in p.equip.items() if v == without)
    del p.equip[slot]
    try:
        return distance(g, a, b)
    finally:
        p.equip[slot] = without


def hand_limit(g: Game, seat: int) -> int:
    """Hand limit: current HP (at least 0) plus skill modifiers."""
    lim = max(g.players[seat].hp, 0)
    for s in with_hook(g, seat, "hand_limit"):
        lim += s.hand_limit(g, seat)
    return lim


def card(g: Game, cid: int) -> CardDef:
    """The printed card with id ``cid``."""
    return g.cards[cid]


def color(g: Game, cid: int) -> str:
    """Colour of a physical card."""
    return color_of(g.cards[cid].suit)


def prohibited(g: Game, target: int, user: int, card_name: str) -> bool:
    """Whether ``target`` cannot be chosen as a target of ``card_name`` by ``user``."""
    return any(s.prohibits(g, target, user, card_name) for s in with_hook(g, target, "prohibits"))


def limit_lifted(g: Game, user: int, t: int, card_name: str) -> bool:
    """Whether ``card_name`` used by ``user`` on ``t`` has no distance limit: a skill of the user
    (奇才) or of the target (仇叛) lifts it."""
    if any(s.ignores_distance(g, user, card_name) for s in with_hook(g, user, "ignores_distance")):
        return True
    return any(
        s.no_distance_limit(g, t, user, card_name) for s in with_hook(g, t, "no_distance_limit")
    )


def distance_ok(g: Game, user: int, t: int, card_name: str, limit: int = 1) -> bool:
    """Whether ``t`` is within distance ``limit`` of ``user`` for ``card_name`` (顺手牵羊,
    兵粮寸断), unless a skill lifts the limit (奇才, 仇叛)."""
    return limit_lifted(g, user, t, card_name) or distance(g, user, t) <= limit


def reaches(g: Game, user: int, t: int, card_name: str) -> bool:
    """Whether ``user``'s ``card_name`` (a 杀) reaches ``t``: in attack range, or no limit."""
    return in_range(g, user, t) or limit_lifted(g, user, t, card_name)


def card_count(g: Game, seat: int, judge: bool = False) -> int:
    """Cards in hand and equipment (and judgement area if ``judge``)."""
    p = g.players[seat]
    return len(p.hand) + len(p.equip) + (len(p.judge) if judge else 0)
