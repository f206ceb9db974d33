"""Which seat holds which skill: the index ``fire`` and ``with_hook`` read instead of scanning.

A seat's skills (its general's, lord skills only while lordly, the ruleset's ``rule_skills``, its
equipment's) change rarely: when a card enters or leaves an equipment area, a general is chosen
or replaced, a role or a ruleset's seat state changes. Everything that changes one of those
calls :func:`skills_changed`, which drops that seat's entry; the entry, and the seats listening
at a timing point, are rebuilt from the plain state on the next question. The index is not part
of the state: a restored or forked game starts without one (``Game.__post_init__``), so a
snapshot is unchanged by it. tests/rules/test_skill_index.py checks, after every step of random
games of every ruleset, that the index answers as a fresh scan would.
"""

from __future__ import annotations

from .skills import HOOK_SETS, SKILLS, Skill
from .state import Game, Player


class SeatSkills:
    """One seat's skills now: their names, per hook the skill objects that override it (every
    hook has its entry), and the timing points they listen at."""

    __slots__ = ("held", "hooks", "names", "points")

    def __init__(self, names: tuple[str, ...]) -> None:
        self.names = names
        self.hooks: dict[str, tuple[Skill, ...]] = _NO_HOOKS
        self.points: frozenset[str] = frozenset()
        self.held: frozenset[str] = frozenset()  # the hooks some skill of the seat overrides
        if names:
            found: dict[str, list[Skill]] = {}
            points: set[str] = set()
            for name in names:
                sk = SKILLS[name]
                points.update(sk.events)
                for hook in _hooks_of(name):
                    found.setdefault(hook, []).append(sk)
            self.points = frozenset(points)
            if found:
                self.hooks = {**_NO_HOOKS, **{h: tuple(v) for h, v in found.items()}}
                self.held = frozenset(found)


_NO_HOOKS: dict[str, tuple[Skill, ...]] = {h: () for h in HOOK_SETS}
_ENTRIES: dict[tuple[str, ...], SeatSkills] = {}


def entry_of(names: tuple[str, ...]) -> SeatSkills:
    """The entry of a seat holding ``names``: made once per set of skills held in that order and
    shared (an entry is never changed; the registry of skills is filled at import)."""
    entry = _ENTRIES.get(names)
    if entry is None:
        entry = _ENTRIES[names] = SeatSkills(names)
    return entry


_HOOKS_OF: dict[str, tuple[str, ...]] = {}


def _hooks_of(name: str) -> tuple[str, ...]:
    """The hooks the skill ``name`` overrides (kept: the registry is filled at import)."""
    found = _HOOKS_OF.get(name)
    if found is None:
        found = _HOOKS_OF[name] = tuple(h for h, names in HOOK_SETS.items() if name in names)
    return found


class SkillIndex:
    """The entries of every seat (None: to rebuild); ``heard``, the timing points at least one
    seat (alive or not: ``fire`` filters) listens at, and ``held``, the hooks at least one seat
    overrides (None: to rebuild); and ``rows``, the distances from each seat that
    ``query.distance`` keeps while no seat holds a distance skill (valid while ``dead``, the
    number of dead seats, is what it was) and ``reach``, the seats within each seat's attack
    range (``query.in_reach``, valid with the rows and while the seat's skills stay);
    ``orders``, ``query.order_from``'s turn orders once a seat has died (valid while
    ``order_dead`` is the number of dead seats)."""

    __slots__ = (
        "dead",
        "heard",
        "held",
        "kept",
        "order_dead",
        "orders",
        "points",
        "reach",
        "rows",
        "seats",
    )

    def __init__(self, players: int) -> None:
        self.seats: list[SeatSkills | None] = [None] * players
        self.heard: frozenset[str] | None = None
        self.points: dict[str, tuple[int, ...]] = {}  # point -> the seats listening there
        self.held: frozenset[str] | None = None
        self.rows: list[list[int] | None] = [None] * players
        self.reach: list[tuple[int, tuple[int, ...]] | None] = [None] * players
        self.dead = -1
        self.kept: bool | None = None  # whether rows may be kept (query.kept; None: to find)
        # alive seats in turn order by (start, include_start), while ``order_dead`` seats are dead
        self.orders: dict[tuple[int, bool], tuple[int, ...]] = {}
        self.order_dead = -1


def scan_skills(g: Game, p: Player) -> list[str]:
    """A seat's skills computed from the plain state (what the index caches): its general's
    (lord skills only as lord or once gained), its ruleset's ``rule_skills``, its equipment's."""
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


def index_of(g: Game) -> SkillIndex:
    """The game's index (made on first use)."""
    idx: SkillIndex | None = g.skill_index
    if idx is None or len(idx.seats) != len(g.players):
        idx = g.skill_index = SkillIndex(len(g.players))
    return idx


def seat_entry(g: Game, seat: int) -> SeatSkills:
    """``seat``'s entry, rebuilt if it was dropped."""
    idx: SkillIndex | None = g.skill_index
    if idx is not None and seat < len(idx.seats):
        entry = idx.seats[seat]
        if entry is not None:
            return entry
    idx = index_of(g)
    entry = idx.seats[seat]
    if entry is None:
        entry = idx.seats[seat] = entry_of(tuple(scan_skills(g, g.players[seat])))
    return entry


def seat_skills(g: Game, seat: int) -> tuple[str, ...]:
    """The skills ``seat`` has now, in the order it holds them."""
    return seat_entry(g, seat).names


def hooked(g: Game, seat: int, hook: str) -> tuple[Skill, ...]:
    """The skills of ``seat`` that override ``hook``, in the order it holds them."""
    idx: SkillIndex | None = g.skill_index
    if idx is not None:
        entry = idx.seats[seat]
        if entry is not None:
            return entry.hooks[hook]
    return seat_entry(g, seat).hooks[hook]


def hears(g: Game, seat: int, points: frozenset[str]) -> bool:
    """Whether ``seat`` (alive or not) holds a skill listening at one of ``points``."""
    idx: SkillIndex | None = g.skill_index
    entry = idx.seats[seat] if idx is not None else None
    return not (entry or seat_entry(g, seat)).points.isdisjoint(points)


def heard(g: Game) -> frozenset[str]:
    """The timing points at which some seat (alive or not) holds a listening skill."""
    idx = g.skill_index or index_of(g)
    found = idx.heard
    if found is None:
        found = idx.heard = frozenset().union(
            *(seat_entry(g, s).points for s in range(len(g.players)))
        )
    return found


def held(g: Game) -> frozenset[str]:
    """The hooks some seat (alive or not) holds a skill overriding."""
    idx = g.skill_index or index_of(g)
    found = idx.held
    if found is None:
        found = idx.held = frozenset().union(
            *(seat_entry(g, s).held for s in range(len(g.players)))
        )
    return found


def listening(g: Game, point: str) -> tuple[int, ...]:
    """The seats (in seat order, alive or not) holding a skill that listens at ``point``."""
    idx = g.skill_index or index_of(g)
    found = idx.points.get(point)
    if found is None:
        found = idx.points[point] = (
            tuple(s for s, e in enumerate(idx.seats) if e is not None and point in e.points)
            if point in heard(g)  # which builds every seat's entry
            else ()
        )
    return found


def skills_changed(g: Game, seat: int = -1, distances: bool = True) -> None:
    """What ``seat`` holds (or, with -1, any seat) may have changed: its entry is made afresh
    from the state, and what follows from it is forgotten only if its skills did change (the
    timing points and hooks they bring; a horse changes none). ``distances`` False: the change
    cannot alter a distance (equipment that is no horse and has no distance skill), so the
    distances kept stay."""
    idx = g.skill_index
    if idx is None:
        return
    if seat < 0 or seat >= len(idx.seats):
        g.skill_index = None
        return
    old = idx.seats[seat]
    new = idx.seats[seat] = entry_of(tuple(scan_skills(g, g.players[seat])))
    idx.reach[seat] = None  # its weapon or a range skill may have come or gone
    if distances:
        idx.dead = -1  # a horse or a distance skill may have come or gone
    if old is new:  # the same skills (entries are shared per set of skills)
        return
    idx.kept = None
    if old is None:
        idx.heard = idx.held = None
        idx.points.clear()
        return
    if old.held != new.held:
        idx.held = None
    if old.points != new.points:
        idx.heard = None
        for point in old.points ^ new.points:  # the seats listening elsewhere are the same
            idx.points.pop(point, None)


DISTANCE_SLOTS = ("plus", "minus", "mount")


def moves_distances(g: Game, cid: int, slot: str) -> bool:
    """Whether equipment ``cid`` entering or leaving ``slot`` may change a distance: a horse,
    or a card whose skill changes distances."""
    name = g.cards[cid].name
    return (
        slot in DISTANCE_SLOTS
        or name in HOOK_SETS["distance_from"]
        or name in HOOK_SETS["distance_to"]
    )
