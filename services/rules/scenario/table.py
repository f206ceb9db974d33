"""Build the exact table a scenario describes: its cards, seats, piles and starting point.

A named card need not be in the ruleset's deck (SCENARIOS.md "Cards"): `杀 S5` in `standard` is a
杀 of ♠5 made for the scenario, the same kind of card as the deck's 杀, and `fill` never adds it.
A name no card of the ruleset bears, a general it lacks, a script step naming a card the scenario
never created or a skill that does not exist, and an expectation about a card that was never
created are errors naming the field.
"""

from __future__ import annotations

from collections.abc import Iterable
from typing import Any

from .. import api
from ..core.cards import CardDef, notation
from ..core.engine import shuffle
from ..core.flow import GameFrame
from ..core.index import skills_changed
from ..core.keys import CardPick, parse
from ..core.ruleset import RULESETS, General, Ruleset
from ..core.skills import SKILLS
from ..core.state import Game, Player, register_deck
from .model import CardRef, Scenario

FILLER = {"黑": ("S", "C"), "红": ("H", "D")}
RECAST = "重铸"  # `skill 重铸 with CARD`: the recast of 铁索连环, not a skill


class TableError(ValueError):
    """The scenario names something the ruleset does not have (a card, general or option)."""


class Cards:
    """Resolves the scenario's card notation to the game's card table: the ruleset's deck, then
    the cards the scenario creates outside it."""

    def __init__(self, rs: Ruleset, deck: list[CardDef]) -> None:
        self.rs = rs
        self.deck = deck
        self.defs = list(deck)  # index >= len(deck): made for the scenario, never dealt by `fill`
        self.kinds = {c.name: c for c in reversed(deck)}  # a card of each name, for its kind
        self.taken: dict[CardRef, int] = {}  # scenario card -> index into defs
        self.used: set[int] = set()

    def engine_name(self, name: str) -> str:
        """The engine's name for a printed card name (药 → 桃)."""
        return self.rs.aliases.get(name, name)

    def index(self, ref: CardRef, path: str) -> int:
        """The table index of a scenario card (the same ref always gives the same card)."""
        if ref in self.taken:
            return self.taken[ref]
        name = self.engine_name(ref.name)
        if name in FILLER:
            idx = self.filler(ref, name, path)
        else:
            if name not in self.kinds:
                raise TableError(
                    f"{path}: {ref.name!r} is not a card of {self.rs.name} "
                    f"(its cards: {', '.join(sorted({self.rs.display_name(n) for n in self.kinds}))})"
                )
            same = [
                i
                for i, c in enumerate(self.deck)
                if c.name == name and c.suit == ref.suit and c.rank == ref.rank
            ]
            if ref.copy <= len(same):
                idx = same[ref.copy - 1]
                if idx in self.used:
                    raise TableError(f"{path}: {ref} is already placed elsewhere in the scenario")
            else:  # a card outside the deck: the same kind as the deck's cards of that name
                kind = self.kinds[name]
                self.defs.append(
                    CardDef(name, ref.suit, ref.rank, kind.type, kind.subtype, kind.pack)
                )
                idx = len(self.defs) - 1
        self.taken[ref] = idx
        self.used.add(idx)
        return idx

    def filler(self, ref: CardRef, name: str, path: str) -> int:
        """A `黑`/`红` filler: a deck card of that suit and rank with no other role."""
        if ref.suit not in FILLER[name]:
            raise TableError(f"{path}: a {name} filler must be of suit {'/'.join(FILLER[name])}")
        cands = [
            i
            for i, c in enumerate(self.deck)
            if c.suit == ref.suit and c.rank == ref.rank and i not in self.used
        ]
        cands.sort(key=lambda i: self.deck[i].type != "basic")  # prefer a plain card
        if len(cands) < ref.copy:
            raise TableError(
                f"{path}: {ref}: the {self.rs.name} deck has no spare card of that suit and rank"
            )
        return cands[ref.copy - 1] if ref.copy > 1 else cands[0]


def _placed(sc: Scenario) -> list[tuple[str, CardRef]]:
    """Every card the scenario creates, with its field path, in a fixed order (stable ids)."""
    out: list[tuple[str, CardRef]] = []
    for n, seat in enumerate(sc.seats):
        for area in ("hand", "equip", "judge"):
            out += [(f"seats[{n}].{area}[{k}]", r) for k, r in enumerate(getattr(seat, area))]
    out += [(f"deck[{k}]", r) for k, r in enumerate(sc.deck)]
    out += [(f"discard[{k}]", r) for k, r in enumerate(sc.discard)]
    return out


def _general(rs: Ruleset, gens: dict[str, General], name: str, path: str) -> General:
    gen = gens.get(name) or gens.get(rs.aliases.get(name, name))
    if gen is None:
        raise TableError(f"{path}: {name!r} is not a general of {rs.name}")
    return gen


def build(sc: Scenario) -> tuple[Game, dict[CardRef, int]]:
    """The game a scenario sets up, and the map from its card notation to card ids."""
    if sc.ruleset not in RULESETS:
        raise TableError(f"ruleset: unknown ruleset {sc.ruleset!r} (known: {api.rulesets()})")
    rs = RULESETS[sc.ruleset]
    try:
        options = api.resolve_options(sc.ruleset, dict(sc.options))
    except api.UnknownOption as err:
        raise TableError(f"options: {err}") from None
    deck = rs.deck(options)
    cards = Cards(rs, deck)
    gens = rs.generals(options)  # an option that changes a general applies to the seats too
    order = [cards.index(ref, path) for path, ref in _placed(sc)]
    extra: list[int] = []
    temporary: list[int] = []  # cards outside the deck (seed 003 白鸽) start removed from the game
    if sc.fill:
        unused = [i for i in range(len(deck)) if i not in cards.used]
        extra = [i for i in unused if deck[i].pack != "temporary"]
        temporary = [i for i in unused if deck[i].pack == "temporary"]
    table = order + extra + temporary
    ids = {idx: n for n, idx in enumerate(table)}
    g = Game(
        ruleset=sc.ruleset,
        options=options,
        seed=sc.seed or 0,
        deck=register_deck([cards.defs[i] for i in table]),
    )
    refmap = {ref: ids[idx] for ref, idx in cards.taken.items()}
    check_references(sc, rs, set(cards.kinds), refmap)
    for n in range(len(sc.seats)):
        g.players.append(_player(sc, rs, options, gens, n, refmap, g))
    g.dead = sum(1 for p in g.players if not p.alive)
    rest = [ids[i] for i in extra]
    if rest:
        rest = shuffle(g, rest)
    g.draw = rest + [refmap[r] for r in reversed(sc.deck)]
    g.discard = [refmap[r] for r in sc.discard]
    g.removed = [ids[i] for i in temporary]
    g.current = sc.turn.seat
    g.round = 1
    g.stack.append(GameFrame(seat=sc.turn.seat, first_phase=sc.turn.phase))
    rs.prepare_table(g)  # after the root frame: a ruleset may push a frame that runs first
    skills_changed(g)  # the seats were written directly: build the skill index afresh
    return g, refmap


def _player(
    sc: Scenario,
    rs: Ruleset,
    options: dict[str, Any],
    gens: dict[str, General],
    n: int,
    refmap: dict[CardRef, int],
    g: Game,
) -> Player:
    spec = sc.seats[n]
    gen = _general(rs, gens, spec.general, f"seats[{n}].general")
    role = spec.role or ""
    bonus = rs.lord_bonus_for(options, len(sc.seats)) if role == "lord" else 0
    max_hp = spec.max_hp if spec.max_hp is not None else gen.hp + bonus
    p = Player(
        seat=n,
        general=gen.name,
        gender=spec.gender or gen.gender,
        faction=gen.faction,
        role=role,
        role_revealed=role == "lord",
        hp=spec.hp if spec.hp is not None else max_hp,
        max_hp=max_hp,
        alive=spec.alive,
        skills=list(gen.skills),
        ext=rs.new_seat_state(),
    )
    p.hand = [refmap[r] for r in spec.hand]
    for k, r in enumerate(spec.equip):
        c = g.cards[refmap[r]]
        if c.type != "equip":
            raise TableError(f"seats[{n}].equip[{k}]: {r} is not an equipment card")
        p.equip[rs.equip_slot(c.subtype)] = refmap[r]
    p.judge = [refmap[r] for r in spec.judge]
    for r in spec.judge:
        name = rs.aliases.get(r.name, r.name)
        if g.cards[refmap[r]].name != name:
            g.as_name[refmap[r]] = name
    # generals behind the battlefield, top first
    camp = [
        _general(rs, gens, name, f"seats[{n}].camp[{k}]").name for k, name in enumerate(spec.camp)
    ]
    own = {"armor": spec.armor, "jade": spec.jade, "rage": spec.rage, "camp": camp}
    set_seat_state(p, n, sc.ruleset, own)
    return p


def check_references(
    sc: Scenario, rs: Ruleset, card_names: set[str], refmap: dict[CardRef, int]
) -> None:
    """Every card a step or an expectation names was created by the scenario; every skill and
    `as NAME` a step names exists (a misspelt name is an error, never an expected refusal)."""

    def created(refs: Iterable[CardRef], path: str) -> None:
        for r in refs:
            if r not in refmap:
                raise TableError(f"{path}: {r} is not a card the scenario created")

    for i, st in enumerate(sc.script):
        it, path = st.parsed, f"script[{i}]"
        created(it.cards, path)
        if it.skill is not None:
            name = rs.aliases.get(it.skill, it.skill)
            if name not in SKILLS and name != RECAST:
                raise TableError(f"{path}: {it.skill!r} is not a skill")
        if it.as_name is not None and rs.aliases.get(it.as_name, it.as_name) not in card_names:
            raise TableError(f"{path}: {it.as_name!r} is not a card of {rs.name}")
    ex = sc.expect
    if ex is None:
        return
    for n, se in ex.seats.items():
        for area in ("hand", "equip", "judge"):
            created(getattr(se, area) or (), f"expect.seats.{n}.{area}")
    created(ex.discard_has, "expect.discard_has")
    created(ex.discard_lacks, "expect.discard_lacks")
    for k, pat in enumerate(ex.events):
        for key, value in pat.fields.items():
            values = value if isinstance(value, tuple) else (value,)
            created((v for v in values if isinstance(v, CardRef)), f"expect.events[{k}].{key}")


def set_seat_state(p: Player, n: int, ruleset: str, fields: dict[str, Any]) -> None:
    """Seat fields a ruleset keeps in its own seat state (护甲 …, 军营), set by name; a value
    the ruleset does not keep is a TableError."""
    for name, value in fields.items():
        if not value:
            continue
        if p.ext is None or name not in p.ext.__struct_fields__:
            raise TableError(f"seats[{n}].{name}: {ruleset} keeps no {name}")
        setattr(p.ext, name, value)


def describe(g: Game, d: Any) -> str:
    """A pending decision in words, for failure reports."""
    opts = []
    for o in d.options:
        pick = parse(o)
        if isinstance(pick, CardPick):
            opts.append(notation(g.cards[pick.id]))
        else:
            opts.append(o)
    return (
        f"seat {d.seat} {d.kind} (min {d.min}, max {d.max}, "
        f"{'declinable' if d.declinable else 'forced'}) options [{', '.join(opts)}] "
        f"info {d.info}"
    )
