"""Build the exact table a scenario describes: its cards, seats, piles and starting point."""

from __future__ import annotations

from typing import Any

from .. import api
from ..core.cards import CardDef
from ..core.engine import shuffle
from ..core.flow import GameFrame
from ..core.ruleset import RULESETS, Ruleset
from ..core.state import PHASES, Game, Player
from .model import CardRef, Scenario

FILLER = {"黑": ("S", "C"), "红": ("H", "D")}


class TableError(ValueError):
    """The scenario names something the ruleset does not have (a card, general or option)."""


class Cards:
    """Resolves the scenario's card notation to ids of the game's card table."""

    def __init__(self, rs: Ruleset, deck: list[CardDef]) -> None:
        self.rs = rs
        self.deck = deck
        self.taken: dict[CardRef, int] = {}  # scenario card -> index into deck
        self.used: set[int] = set()

    def engine_name(self, name: str) -> str:
        """The engine's name for a printed card name (药 → 桃)."""
        return self.rs.aliases.get(name, name)

    def index(self, ref: CardRef) -> int:
        """The deck index of a scenario card (the same ref always gives the same card)."""
        if ref in self.taken:
            return self.taken[ref]
        name = self.engine_name(ref.name)
        if name in FILLER:
            if ref.suit not in FILLER[name]:
                raise TableError(f"{ref}: a {name} filler must be of suit {'/'.join(FILLER[name])}")
            cands = [
                i
                for i, c in enumerate(self.deck)
                if c.suit == ref.suit and c.rank == ref.rank and i not in self.used
            ]
            cands.sort(key=lambda i: self.deck[i].type != "basic")  # prefer a plain card
            if len(cands) < ref.copy:
                raise TableError(
                    f"{ref}: the {self.rs.name} deck has no spare card of that suit and rank"
                )
            idx = cands[ref.copy - 1] if ref.copy > 1 else cands[0]
        else:
            same = [
                i
                for i, c in enumerate(self.deck)
                if c.name == name and c.suit == ref.suit and c.rank == ref.rank
            ]
            if len(same) < ref.copy:
                raise TableError(
                    f"{ref}: the {self.rs.name} deck has "
                    f"{len(same) or 'no'} such card{'s' if len(same) > 1 else ''}"
                )
            idx = same[ref.copy - 1]
            if idx in self.used:
                raise TableError(f"{ref}: that card is already placed elsewhere in the scenario")
        self.taken[ref] = idx
        self.used.add(idx)
        return idx


def build(sc: Scenario) -> tuple[Game, dict[CardRef, int]]:
    """The game a scenario sets up, and the map from its card notation to card ids."""
    if sc.ruleset not in RULESETS:
        raise TableError(f"unknown ruleset {sc.ruleset!r}")
    rs = RULESETS[sc.ruleset]
    try:
        options = api.resolve_options(sc.ruleset, dict(sc.options))
    except api.UnknownOption as err:
        raise TableError(str(err)) from None
    deck = rs.deck(options)
    cards = Cards(rs, deck)
    gens = rs.generals()
    # resolve every placed card first, in a fixed order, so ids are stable
    placed: list[CardRef] = []
    for seat in sc.seats:
        placed += [*seat.hand, *seat.equip, *seat.judge]
    placed += [*sc.deck, *sc.discard]
    order = [cards.index(r) for r in placed]
    extra: list[int] = []
    temporary: list[int] = []  # cards outside the deck (seed 003 白鸽) start removed from the game
    if sc.fill:
        unused = [i for i in range(len(deck)) if i not in cards.used]
        extra = [i for i in unused if deck[i].pack != "temporary"]
        temporary = [i for i in unused if deck[i].pack == "temporary"]
    table = order + extra + temporary
    ids = {idx: n for n, idx in enumerate(table)}
    g = Game(ruleset=sc.ruleset, options=options, seed=sc.seed or 0, cards=[deck[i] for i in table])
    refmap = {ref: ids[idx] for ref, idx in cards.taken.items()}
    for n, spec in enumerate(sc.seats):
        gen = gens.get(spec.general) or gens.get(rs.aliases.get(spec.general, spec.general))
        if gen is None:
            raise TableError(
                f"seats[{n}].general: {spec.general!r} is not a general of {sc.ruleset}"
            )
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
            armor=spec.armor,
            jade=spec.jade,
            rage=spec.rage,
        )
        p.hand = [refmap[r] for r in spec.hand]
        for r in spec.equip:
            c = g.cards[refmap[r]]
            if c.type != "equip":
                raise TableError(f"seats[{n}].equip: {r} is not an equipment card")
            p.equip[rs.equip_slot(c.subtype)] = refmap[r]
        p.judge = [refmap[r] for r in spec.judge]
        for k, name in enumerate(spec.camp):  # seed 003: the generals behind the battlefield
            if name not in gens and rs.aliases.get(name, name) not in gens:
                raise TableError(f"seats[{n}].camp[{k}]: {name!r} is not a general of {sc.ruleset}")
            p.camp.append(rs.aliases.get(name, name) if name not in gens else name)
        for r in spec.judge:
            name = cards.engine_name(r.name)
            if g.cards[refmap[r]].name != name:
                g.as_name[refmap[r]] = name
        g.players.append(p)
    g.dead = sum(1 for p in g.players if not p.alive)
    rest = [ids[i] for i in extra]
    if rest:
        rest = shuffle(g, rest)
    g.draw = rest + [refmap[r] for r in reversed(sc.deck)]
    g.discard = [refmap[r] for r in sc.discard]
    g.removed = [ids[i] for i in temporary]
    if sc.turn.phase not in PHASES:
        raise TableError(f"turn.phase: {sc.turn.phase!r}")
    g.current = sc.turn.seat
    g.round = 1
    g.stack.append(GameFrame(seat=sc.turn.seat, first_phase=sc.turn.phase))
    rs.prepare_table(g)  # after the root frame: a ruleset may push a frame that runs first
    return g, refmap


def describe(g: Game, d: Any) -> str:
    """A pending decision in words, for failure reports."""
    from ..core.cards import notation

    opts = []
    for o in d.options:
        if o.startswith("card:"):
            opts.append(notation(g.cards[int(o[5:])]))
        else:
            opts.append(o)
    return (
        f"seat {d.seat} {d.kind} (min {d.min}, max {d.max}, "
        f"{'declinable' if d.declinable else 'forced'}) options [{', '.join(opts)}] "
        f"info {d.info}"
    )
