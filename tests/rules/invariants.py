"""State invariants of a game at rest (after ``advance``/``submit``), shared by the rules tests.

``check(game)`` raises ``AssertionError`` with a readable message when one fails. It reads only
the plain state (``game.players``, the piles, the frame stack and the pending decision), never
the events, so it is an independent witness of what the event tests fold.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import Callable
from typing import Any

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.core import events as ev
from services.rules.core.state import SLOTS, Game
from services.rules.rulesets.chengtian.camp import camp_of

# which card subtype may sit in which equipment slot
SLOT_SUBTYPES = {
    "weapon": {"weapon"},
    "armor": {"armor"},
    "plus": {"defensive_horse", "plus"},
    "minus": {"offensive_horse", "minus"},
    "mount": {"defensive_horse", "offensive_horse", "mount"},
}  # seed 003
RULESETS_WITHOUT_ROLES = ("chengtian",)
SEAT_OPTION_PREFIXES = ("card:", "skill:", "seat:", "general:", "suit:")


def zones(g: Game) -> list[tuple[str, list[int]]]:
    """Every zone of the table with the card ids it holds."""
    out: list[tuple[str, list[int]]] = [
        ("draw", g.draw),
        ("discard", g.discard),
        ("processing", g.processing),
        ("removed", g.removed),
    ]
    for p in g.players:
        out += [
            (f"hand[{p.seat}]", p.hand),
            (f"equip[{p.seat}]", list(p.equip.values())),
            (f"judge[{p.seat}]", p.judge),
        ]
    return out


def _frames_for(g: Game, kind: str, seat: int) -> bool:
    """Whether a frame of tag ``kind`` about ``seat`` is on the stack."""
    for fr in g.stack:
        if fr.__struct_config__.tag == kind and (
            getattr(fr, "seat", None) == seat or getattr(fr, "target", None) == seat
        ):
            return True
    return False


def check_cards(g: Game) -> None:
    """Every card id of ``g.cards`` lies in exactly one zone."""
    # checked after every answer of every random game: first the quick way (as many ids in the
    # zones as cards, and they are the cards' ids: so each lies in exactly one zone), and only
    # when that fails the slow way, which says which cards are where
    held = [*g.draw, *g.discard, *g.processing, *g.removed]
    for p in g.players:
        held += [*p.hand, *p.equip.values(), *p.judge]
    if len(held) == len(g.cards) and set(held) == _ids(len(g.cards)):
        return
    where: dict[int, list[str]] = {}
    for name, ids in zones(g):
        for cid in ids:
            where.setdefault(cid, []).append(name)
    n = len(g.cards)
    missing = [c for c in range(n) if c not in where]
    twice = {c: z for c, z in where.items() if len(z) > 1}
    bogus = [c for c in where if not 0 <= c < n]
    assert not missing, f"cards in no zone: {missing}"
    assert not twice, f"cards in several zones: {twice}"
    assert not bogus, f"unknown card ids: {bogus}"


_IDS: dict[int, frozenset[int]] = {}


def _ids(n: int) -> frozenset[int]:
    """The card ids of a game of `n` cards: 0..n-1."""
    if n not in _IDS:
        _IDS[n] = frozenset(range(n))
    return _IDS[n]


def check_players(g: Game) -> None:
    """HP bounds, equipment slots, judge areas and the dead holding nothing."""
    roles = Counter(p.role for p in g.players)
    if g.ruleset in RULESETS_WITHOUT_ROLES:
        assert set(roles) == {""}, f"roles in a ruleset without roles: {roles}"
        check_camps(g)
    else:
        hidden_lord = bool(g.options.get("mougong") and g.options.get("mougong_hidden_lord"))
        assert roles["lord"] == 1, f"roles: {roles}"
        assert hidden_lord or g.players[0].role == "lord", f"seat 0 is {g.players[0].role}"
    for p in g.players:
        who = f"seat {p.seat}"
        assert p.max_hp >= 0, f"{who}: max_hp {p.max_hp} < 0"
        assert p.hp <= p.max_hp, f"{who}: hp {p.hp} > max_hp {p.max_hp}"
        assert len(set(p.hand)) == len(p.hand), f"{who}: duplicate hand cards {p.hand}"
        for slot, cid in p.equip.items():
            assert slot in SLOTS, f"{who}: unknown equipment slot {slot!r}"
            sub = g.cards[cid].subtype
            assert g.cards[cid].type == "equip", f"{who}: {g.cards[cid]} in slot {slot}"
            assert sub in SLOT_SUBTYPES[slot] or sub == slot, f"{who}: {sub} in slot {slot}"
        for cid in p.judge:
            is_delayed = g.cards[cid].subtype == "delayed_trick"
            assert is_delayed or cid in g.as_name, f"{who}: {g.cards[cid]} in judge area"
        if p.alive and p.hp <= 0 and not g.over:
            assert _frames_for(g, "dying", p.seat) or _frames_for(g, "damage", p.seat), (
                f"{who}: alive at hp {p.hp} outside a dying/damage procedure"
            )
        if not p.alive:
            assert p.role_revealed, f"{who}: dead with an unrevealed role"
            if not _frames_for(g, "death", p.seat):
                held = p.hand + list(p.equip.values()) + p.judge
                assert not held, f"{who}: dead but still holds {held}"
    judged = {c for p in g.players for c in p.judge}
    stray = [c for c in g.as_name if c not in judged]
    assert not stray, f"as_name names cards outside judge areas: {stray}"


def check_camps(g: Game) -> None:
    """Seed 003: no general is in two places (battlefields and camps); a seat that lost has an
    empty camp (it lost because no general was left to deploy)."""
    seen: Counter[str] = Counter()
    for p in g.players:
        if p.alive:
            seen[p.general] += 1
        camp = camp_of(p)
        seen.update(camp)
        lasts = g.options.get("victory") == "no_general_left"
        if lasts and not p.alive and not _frames_for(g, "death", p.seat):
            assert not camp, f"seat {p.seat}: lost with generals in its camp {camp}"
    twice = {n: k for n, k in seen.items() if k > 1 and n != "vanilla"}
    assert not twice, f"generals in several places: {twice}"


def check_decision(g: Game) -> None:
    """At rest the game is either over (nothing pending) or waits on one sane decision."""
    d = g.pending
    if g.over:
        assert d is None, "a decision is pending after the game ended"
        assert g.draw_game or g.winners, "the game ended with no winners and no draw"
        return
    assert d is not None, "the engine stopped without a decision or an end"
    assert d.id == g.next_decision - 1, f"decision id {d.id}, next {g.next_decision}"
    assert 0 <= d.seat < len(g.players), f"decision for seat {d.seat}"
    assert g.players[d.seat].alive, f"decision {d.id} ({d.kind}) asked of dead seat {d.seat}"
    assert d.options, f"decision {d.id} ({d.kind}) with no options"
    assert len(set(d.options)) == len(d.options), f"duplicate options {d.options}"
    assert 0 <= d.min <= d.max, f"decision {d.id}: min {d.min} max {d.max}"
    assert d.min <= len(d.options), f"decision {d.id}: min {d.min} > {len(d.options)} options"
    for opt in d.options:
        if opt.startswith("card:"):
            assert 0 <= int(opt[5:]) < len(g.cards), f"option {opt} names no card"
        if opt.startswith("seat:"):
            assert 0 <= int(opt[5:]) < len(g.players), f"option {opt} names no seat"


def check(g: Game) -> None:
    """All invariants of a game at rest."""
    check_cards(g)
    check_players(g)
    check_decision(g)


SEAT_ZONES = ("hand", "equip", "judge")
Where = tuple[str, int]  # (zone, seat); seat is -1 for the shared piles


class CardTracker:
    """Where every card is, folded from the GOD-view event stream alone.

    ``apply`` checks each ``cards_moved`` against the tracked source (a move from where the card
    is not is an event-log bug); ``matches`` compares the fold with the real state, which proves
    the events describe every card movement the engine made.
    """

    def __init__(self, n_cards: int, removed: list[int] | None = None) -> None:
        self.loc: dict[int, Where] = {c: ("draw", -1) for c in range(n_cards)}
        for c in removed or ():  # cards out of the game from the start (seed 003 白鸽)
            self.loc[c] = ("removed", -1)

    @staticmethod
    def where(zone: str, seat: int) -> Where:
        """The normalised key of a zone (seat only for a seat's own areas)."""
        return (zone, seat if zone in SEAT_ZONES else -1)

    def apply(self, e: object) -> None:
        """Fold one unredacted event."""
        kind = type(e).__name__
        if kind == "CardsMoved":
            src = self.where(e.src, e.src_seat)  # type: ignore[attr-defined]
            dst = self.where(e.dst, e.dst_seat)  # type: ignore[attr-defined]
            cards: list[int] = e.cards  # type: ignore[attr-defined]
            assert len(cards) == e.count, f"{e}: count != len(cards)"  # type: ignore[attr-defined]
            for c in cards:
                assert self.loc[c] == src, f"{e}: card {c} is in {self.loc[c]}, not {src}"
                self.loc[c] = dst
        elif kind == "DeckReshuffled":
            pile = [c for c, w in self.loc.items() if w == ("discard", -1)]
            assert len(pile) == e.count, f"{e}: discard pile holds {len(pile)}"  # type: ignore[attr-defined]
            for c in pile:
                self.loc[c] = ("draw", -1)

    def state_locations(self, g: Game) -> dict[int, Where]:
        """The real location of every card in ``g``."""
        out: dict[int, Where] = {}
        for zone in ("draw", "discard", "processing", "removed"):
            for c in getattr(g, zone):
                out[c] = (zone, -1)
        for p in g.players:
            for c in p.hand:
                out[c] = ("hand", p.seat)
            for c in p.equip.values():
                out[c] = ("equip", p.seat)
            for c in p.judge:
                out[c] = ("judge", p.seat)
        return out

    def matches(self, g: Game) -> None:
        """Assert the event fold agrees with the state about every card."""
        real = self.state_locations(g)
        if real == self.loc:  # (the quick way; the same verdict: every card where it was told)
            return
        diff = {c: (w, real.get(c)) for c, w in self.loc.items() if real.get(c) != w}
        assert not diff, f"events disagree with the state (card: (events, state)): {diff}"

    def visible_to(self, c: int, viewer: int) -> bool:
        """Whether ``viewer`` may see card ``c``'s face where it lies now."""
        zone, seat = self.loc[c]
        if zone in ("discard", "processing", "equip", "judge"):
            return True
        return zone == "hand" and seat == viewer and viewer >= 0


class HpTracker:
    """Max HP per seat from the events; every HP in an event stays at or below it."""

    def __init__(self, players: int) -> None:
        self.max_hp = [0] * players

    def apply(self, e: ev.Event) -> None:
        if isinstance(e, ev.GeneralChosen | ev.MaxHpChanged):
            self.max_hp[e.seat] = e.max_hp
            assert e.hp <= e.max_hp, e
        elif isinstance(e, ev.Damaged):
            assert e.hp <= self.max_hp[e.target], e
        elif isinstance(e, ev.HpLost | ev.Recovered):
            assert e.hp <= self.max_hp[e.seat], e


def play_random(
    ruleset: str,
    players: int,
    seed: int,
    options: dict[str, Any] | None = None,
    *,
    hp: bool = True,
    max_decisions: int = 20_000,
    on_events: Callable[[list[ev.Event]], None] | None = None,
) -> tuple[Game, list[ev.Event]]:
    """One seeded game with the random policy on every seat, checked after every answer: the
    card tracker must match the state, ``check`` must pass, and (``hp``) no event may show HP
    above max HP. Returns the game and its events."""
    g = api.new_game(ruleset, players, seed, options)
    bots = [RandomPolicy(seed * 1000 + i) for i in range(players)]
    cards = CardTracker(len(g.cards), list(g.removed))  # seed 003 starts cards out of the game
    hps = HpTracker(players) if hp else None
    log: list[ev.Event] = []

    def fold(events: list[ev.Event]) -> None:
        log.extend(events)
        for e in events:
            cards.apply(e)
            if hps is not None:
                hps.apply(e)
        if on_events is not None:
            on_events(events)
        cards.matches(g)
        check(g)

    fold(api.advance(g))
    n = 0
    while not g.over:
        d = api.pending(g)
        assert d is not None
        fold(api.submit(g, bots[d.seat].act(d)))
        n += 1
        assert n < max_decisions, f"{ruleset} {players}p seed {seed}: no end in sight"
    return g, log
