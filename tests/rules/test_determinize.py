"""api.determinize: a state the seat could be in, built from what it has seen only.

Property tests over states reached by seeded random play at any decision, of every ruleset (the
drafts, seed 003's camps and face-down generals, 谋攻's hidden lord and seed 004's identities
included): the determinized state never contradicts the deciding seat's view and keeps the
invariants of a game at rest; it reads nothing the seat may not know — a second truth that
differs from the first only in hidden things determinizes to the very same bytes; and the engine
plays on from it. The second truth is the determinizer's own resample of the first (unseen
hands, the pile, hidden roles, the seed) changed again by hand where the view shows nothing
either: two hidden seats' role cards swapped with what goes with them (identity skills, 明君,
a disguise), other generals in the face-down camp and on a face-down battlefield, other draft
offers and secret picks, another leftover return value. 200 states at random steps in the
default suite, and three of each hidden thing random steps rarely reach (a face-down general, a
draft, a disguise, 观星's cards …); 3,000 states under ``-m slow``. Frames random play seldom
or never builds (策立's offers, a 拼点, 遗计's cards) have tests of their own.
"""

from __future__ import annotations

import random
from collections.abc import Callable
from typing import Any

import pytest
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.api import Game, View
from services.rules.core.engine import answer, ask_choice, emit, pop
from services.rules.core.events import CardShown
from services.rules.core.index import skills_changed
from services.rules.core.keys import card_keys, card_of
from services.rules.core.redeal import Redeal
from services.rules.core.state import Frame
from services.rules.core.zones import move
from services.rules.determinize import NotDeciding, ViewMismatch, contradictions
from services.rules.rulesets.chengtian import CampOrder
from services.rules.rulesets.chengtian.camp import camp_of, refresh_skills
from services.rules.rulesets.draft import Draft
from services.rules.rulesets.extended.frames import CeLi, _candidates
from services.rules.rulesets.jinyu import JinYu
from services.rules.rulesets.jinyu.mougong import MINGJUN
from services.rules.skills.standard_more import GuanXingFrame
from services.rules.skills.wei import YiJiFrame
from tests.rules import invariants

TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 8, {}),
    ("standard", 5, {}),
    ("standard", 5, {"generals": "draft"}),
    ("jinyu", 8, {"mougong": True}),
    ("jinyu", 8, {"mougong": True, "mougong_draft": "lord_offer"}),
    ("extended", 8, {}),
    ("extended", 12, {}),
    ("honglou", 6, {}),
    ("chengtian", 2, {}),
    ("chengtian", 2, {"fall_deploy_face_down": True, "face_down_skills": True}),
]


def _played(table: int, seed: int, steps: int) -> tuple[Game, list[api.Event]]:
    """Random play for ``steps`` decisions (fewer if the game ends first: then to its last
    decision); the game and its events."""
    ruleset, players, options = TABLES[table]
    g = api.new_game(ruleset, players, seed, options)
    events = list(api.advance(g))
    pol = RandomPolicy(seed)
    for _ in range(steps):
        if g.over:
            break
        d = g.pending
        assert d is not None
        events += api.submit(g, pol.act(d))
    if g.over:  # the game ended first: replay to its last decision instead
        return _played(table, seed, max(0, steps // 2))
    return g, events


def _state(table: int, seed: int, steps: int) -> tuple[Game, View]:
    """:func:`_played`'s game and the view of the seat then deciding."""
    g, events = _played(table, seed, steps)
    assert g.pending is not None
    return g, api.fold(events, g.pending.seat)


def _belief(g: Game, weights: list[float]) -> dict[int, dict[str, float]]:
    roles = sorted({p.role for p in g.players})
    return {
        t: {r: weights[(t * 7 + i) % len(weights)] for i, r in enumerate(roles)}
        for t in range(len(g.players))
    }


# --- another truth the seat cannot tell from the first ------------------------------------------
def _other(g: Game, view: View, alt: int) -> Game:
    """A truth ``view``'s seat cannot tell from ``g`` (see the module docstring)."""
    seat = view.viewer
    other = api.determinize(g, seat, None, alt, view=view)
    rnd = random.Random(alt)
    _swap_role_cards(other, view, rnd)
    _other_generals(other, seat, rnd)
    if type(other.ret) is int:  # a finished frame's value (a card taken blindly, a damage)
        other.ret = rnd.randrange(len(other.cards))
    other.seed, other.rng = alt, g.rng + alt % 7  # another seed too: the future is hidden
    # more decisions before this one: prompts to other seats it never saw (declined 无懈可击
    # windows, secret picks) count in the engine's numbering, which no client is shown
    extra = 1 + alt % 40
    assert other.pending is not None
    other.pending.id += extra
    other.next_decision += extra
    return other


def _swap_role_cards(g: Game, view: View, rnd: random.Random) -> None:
    """Two seats whose roles ``view`` does not show swap role cards, and what goes with a role:
    seed 004's identity skills, 谋攻's disguise and its hidden lord's 明君 (and the lord's offer
    in a draft that deals the hidden lord apart)."""
    hidden = [t for t, s in enumerate(view.seats) if t != view.viewer and not s.role]
    if len(hidden) < 2 or any(isinstance(fr, CeLi) for fr in g.stack):
        return  # (策立's candidates are chosen by role: tests/rules of its own frame below)
    u, v = rnd.sample(hidden, 2)
    for fr in g.stack:
        if isinstance(fr, Draft) and fr.lord in (u, v):
            if bool(fr.picks[u]) != bool(fr.picks[v]):
                return
            fr.offers[u], fr.offers[v] = fr.offers[v], fr.offers[u]
            fr.picks[u], fr.picks[v] = fr.picks[v], fr.picks[u]
            fr.lord = u + v - fr.lord
    a, b = g.players[u], g.players[v]
    a.role, b.role = b.role, a.role
    if g.ruleset == "extended":
        a.ext, b.ext = b.ext, a.ext
    if g.ruleset == "jinyu":
        da, db = a.marks.pop("disguised", 0), b.marks.pop("disguised", 0)
        if db:
            a.marks["disguised"] = db
        if da:
            b.marks["disguised"] = da
        for t in (u, v):
            _jinyu_rule_skills(g, t)
    skills_changed(g)


def _jinyu_rule_skills(g: Game, seat: int) -> None:
    """A seated 谋攻 seat's skills as its (swapped) role gives them: 明君 and no lord skills
    for a hidden lord, the general's lord skills back for anyone else."""
    rs = api.RULESETS[g.ruleset]
    assert isinstance(rs, JinYu)
    p = g.players[seat]
    if not p.skills or not rs.hidden_lord(g):
        return  # not seated yet (the draft), or no hidden lord
    gen = rs.generals()[p.general]
    lords = [s for s in gen.skills if api.SKILLS[s].lord]
    p.skills = [s for s in p.skills if s != MINGJUN] + [s for s in lords if s not in p.skills]
    rs.attach_rule_skills(g, seat)


def _other_generals(g: Game, seat: int, rnd: random.Random) -> None:
    """Generals ``seat`` has not seen are swapped for others nobody holds: seed 003's other
    camp, its face-down battlefield general and the generals it is still to order; the draft
    offers of the other seats (the lord candidates a lord's offer always has kept, and a public
    pick) and their secret picks."""
    rs: Any = api.RULESETS[g.ruleset]
    held = {p.general for p in g.players}
    frames = [fr for fr in g.stack if isinstance(fr, Draft | CampOrder)]
    for fr in frames:
        held.update(x for offer in fr.offers for x in offer)
    if g.ruleset == "chengtian":
        held.update(x for p in g.players for x in camp_of(p))
        pool = rs.pool(g)
    elif frames:
        pool = list(rs.roster(g))
    else:
        return
    free = sorted(set(pool) - held)
    rnd.shuffle(free)
    if g.ruleset == "chengtian":
        _other_camp(g, 1 - seat, free)
    for fr in frames:
        if isinstance(fr, CampOrder):
            fr.offers[1 - seat] = [free.pop() if free else x for x in fr.offers[1 - seat]]
        elif isinstance(fr, Draft):
            _other_offers(g, fr, seat, free, rnd)


def _other_camp(g: Game, opp: int, free: list[str]) -> None:
    p = g.players[opp]
    camp = camp_of(p)
    for i, old in enumerate(camp):
        if free:
            camp[i] = free.pop()
            if f"hp:{old}" in p.marks:
                p.marks[f"hp:{camp[i]}"] = p.marks.pop(f"hp:{old}")
    if p.marks.get("face_down") and free:
        gen = api.RULESETS[g.ruleset].generals()[free.pop()]
        p.general, p.gender, p.faction = gen.name, gen.gender, gen.faction
        refresh_skills(g, opp)


def _other_offers(g: Game, fr: Draft, seat: int, free: list[str], rnd: random.Random) -> None:
    rs: Any = api.RULESETS[g.ruleset]
    public = rs.public_lord(g)
    cands = set(rs.lord_candidates(g, rs.roster(g))) if fr.lord >= 0 else set()
    for t, offer in enumerate(fr.offers):
        if t == seat or not offer:
            continue
        keep = set(cands) if t == fr.lord else set()
        if public and t == fr.lord:
            keep.add(fr.picks[t])
        fr.offers[t] = [x if x in keep or not free else free.pop() for x in offer]
        if fr.picks[t] and not (public and t == fr.lord):
            fr.picks[t] = rnd.choice(fr.offers[t])


# --- the properties -------------------------------------------------------------------------
STATES = {
    "table": st.integers(0, len(TABLES) - 1),
    "seed": st.integers(0, 10**6),
    # evenly over a game's first 250 decisions; the first dozen (drafts) twice as often
    "steps": st.sampled_from([*range(13), *range(251)]),
    "det": st.integers(0, 2**62),
    "alt": st.integers(0, 2**62),
    "weights": st.lists(st.floats(0.0, 1.0), min_size=1, max_size=6),
}


def _check(table: int, seed: int, steps: int, det: int, alt: int, weights: list[float]) -> None:
    g, view = _state(table, seed, steps)
    seat = view.viewer
    belief = _belief(g, weights)
    out = api.determinize(g, seat, belief, det, view=view)
    assert contradictions(out, view) == []
    assert contradictions(g, view) == []  # the check itself: the truth agrees with the view
    invariants.check(out)
    for fr in out.stack:  # 观星's cards, seen by their seat, stay on top of the pile
        if isinstance(fr, GuanXingFrame) and fr.seat == seat:
            assert out.draw[len(out.draw) - len(fr.cards) :] == fr.cards[::-1]
    # another truth the seat cannot tell from this one, determinized alike, gives the same bytes
    other = _other(g, view, alt)
    assert contradictions(other, view) == []
    again = api.determinize(other, seat, belief, det, view=view)
    assert api.snapshot(again) == api.snapshot(out)
    # the engine plays on from it (a few random decisions)
    pol = RandomPolicy(det)
    for _ in range(20):
        if out.over:
            break
        d = out.pending
        assert d is not None
        api.submit(out, pol.act(d))
        invariants.check(out)


@settings(max_examples=200, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**STATES)
def test_determinize_keeps_the_view_and_reads_nothing_hidden(
    table: int, seed: int, steps: int, det: int, alt: int, weights: list[float]
) -> None:
    _check(table, seed, steps, det, alt, weights)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=[HealthCheck.too_slow])
@given(**STATES)
def test_determinize_many_states(
    table: int, seed: int, steps: int, det: int, alt: int, weights: list[float]
) -> None:
    _check(table, seed, steps, det, alt, weights)


Found = Callable[[Game, int], bool]  # (game, the seat deciding): a state worth checking


def _other_face_down(g: Game, seat: int) -> bool:
    return bool(g.players[1 - seat].marks.get("face_down"))


def _drafting(g: Game, seat: int) -> bool:
    return any(
        isinstance(fr, Draft) and any(o for t, o in enumerate(fr.offers) if t != seat)
        for fr in g.stack
    )


def _ordering_second(g: Game, seat: int) -> bool:
    return seat == 1 and any(isinstance(fr, CampOrder) for fr in g.stack)


def _disguised(g: Game, seat: int) -> bool:
    return any(p.marks.get("disguised") and not p.marks.get("disguise_used") for p in g.players)


def _guanxing(g: Game, seat: int) -> bool:
    return isinstance(g.stack[-1], GuanXingFrame)


def _leftover(g: Game, seat: int) -> bool:
    return type(g.ret) is int


WHERE: list[tuple[str, int, Found]] = [  # (what is hidden, table, where to look)
    ("a face-down general", 8, _other_face_down),
    ("a face-down general with its skills", 9, _other_face_down),
    ("a camp still being ordered", 8, _ordering_second),
    ("draft offers and picks", 2, _drafting),
    ("draft offers and a secret lord", 4, _drafting),
    ("draft offers at 12 seats", 6, _drafting),
    ("a disguise", 3, _disguised),
    ("the cards 观星 looks at", 3, _guanxing),
    ("a leftover value", 1, _leftover),
]


def _where(table: int, found: Found, seeds: range, cap: int = 400) -> list[tuple[int, int]]:
    """(seed, steps) of the first decision of each game of ``seeds`` (random play) at which
    ``found`` holds, if one comes within ``cap`` decisions."""
    out = []
    ruleset, players, options = TABLES[table]
    for seed in seeds:
        g = api.new_game(ruleset, players, seed, options)
        api.advance(g)
        pol = RandomPolicy(seed)
        for steps in range(cap):
            d = g.pending
            if d is None:
                break
            if found(g, d.seat):
                out.append((seed, steps))
                break
            api.submit(g, pol.act(d))
    return out


@pytest.mark.parametrize(("what", "table", "found"), WHERE, ids=[w[0] for w in WHERE])
def test_determinize_where_things_are_hidden(what: str, table: int, found: Found) -> None:
    """The properties at states random play reaches rarely at a random step: a few of each."""
    states = _where(table, found, range(12))[:3]
    assert states, f"no state with {what} found"
    for seed, steps in states:
        _check(table, seed, steps, seed + 1, seed * 7 + 3, [0.5, 0.1])


@pytest.mark.parametrize("table", range(len(TABLES)))
def test_a_determinized_state_plays_to_the_end(table: int) -> None:
    """From a determinized state the engine plays the game out, every rest a legal state."""
    for seed, steps in ((5, 4), (6, 90)):
        g, view = _state(table, seed, steps)
        out = api.determinize(g, view.viewer, None, seed, view=view)
        pol = RandomPolicy(seed)
        for _ in range(5000):
            if out.over:
                break
            d = out.pending
            assert d is not None
            api.submit(out, pol.act(d))
            invariants.check(out)
        assert out.over


def test_hidden_things_are_resampled() -> None:
    """Over seeds, unseen hands and hidden roles do change; what the seat saw never does."""
    g, view = _state(0, 11, 60)
    seat = view.viewer
    hands, roles = set(), set()
    for det in range(8):
        out = api.determinize(g, seat, None, det, view=view)
        assert out.players[seat].hand == g.players[seat].hand
        hands.add(tuple(tuple(p.hand) for t, p in enumerate(out.players) if t != seat))
        roles.add(tuple(p.role for p in out.players))
        assert out.seed != g.seed
    assert len(hands) > 1 and len(roles) > 1


def test_a_view_of_another_game_is_refused() -> None:
    g, view = _state(0, 3, 40)
    h, _ = _state(0, 4, 40)
    with pytest.raises(ViewMismatch):
        api.determinize(h, view.viewer, None, 1, view=view)


def test_a_decision_of_another_seat_is_refused() -> None:
    """The pending decision and the frames that asked it are the deciding seat's."""
    g = api.new_game("standard", 5, 3)
    events = list(api.advance(g))
    assert g.pending is not None
    other = (g.pending.seat + 1) % len(g.players)
    with pytest.raises(NotDeciding):
        api.determinize(g, other, None, 1, view=api.fold(events, other))


def _unseen(g: Game, view: View, t: int) -> list[int]:
    return [c for c in g.players[t].hand if c not in view.seats[t].hand]


def test_celi_offers_follow_the_roles_dealt() -> None:
    """策立 offers 叛徒 to candidates chosen by role (never the 贼首): a determinized state's are
    those of its own roles, the seat being offered keeps its turn, and a truth with two hidden
    role cards swapped (its candidates with them) determinizes to the same bytes."""
    g, view = _state(6, 0, 261)  # seed 004 advanced: a 叛徒 offer pending
    fr = g.stack[-1]
    seat = view.viewer
    assert isinstance(fr, CeLi) and fr.order[fr.i - 1] == seat
    other = api.fork(g)
    hidden = [t for t, s in enumerate(view.seats) if t != seat and not s.role]
    u, v = hidden[0], hidden[-1]
    a, b = other.players[u], other.players[v]
    a.role, b.role, a.ext, b.ext = b.role, a.role, b.ext, a.ext
    ofr = other.stack[-1]
    assert isinstance(ofr, CeLi)
    ofr.order = _candidates(other, ofr.seat)
    ofr.i = ofr.order.index(seat) + 1
    for det in range(6):
        out = api.determinize(g, seat, None, det, view=view)
        ofr = out.stack[-1]
        assert isinstance(ofr, CeLi)
        assert ofr.order == _candidates(out, ofr.seat) and ofr.order[ofr.i - 1] == seat
        again = api.determinize(other, seat, None, det, view=view)
        assert api.snapshot(again) == api.snapshot(out)
        invariants.check(out)


class Pindian(Frame, tag="test_pindian"):
    """拼点, as this test needs it (no general of any ruleset starts one): both seats pick a hand card (the initiator first, unseen by the other), then both are
    shown; pops True iff the initiator's rank is strictly higher."""

    initiator: int
    target: int
    reason: str = ""
    mine: int = -1
    theirs: int = -1

    def start(self, g: Game) -> None:
        self.then(self.initiator_picked)
        self.pick(g, self.initiator)

    def pick(self, g: Game, seat: int) -> None:
        """``seat`` picks its card, unseen by the other."""
        hand = g.players[seat].hand
        ask_choice(g, seat, card_keys(hand), about="拼点", reason=self.reason)

    def redeal(self, g: Game, rd: Redeal) -> None:
        """The initiator's card, picked unseen: for anyone else, a card dealt into its hand
        again."""
        if rd.seat != self.initiator and self.mine >= 0:
            self.mine = rd.card(g, self.mine)

    def initiator_picked(self, g: Game) -> None:
        self.mine = card_of(answer(g)[0])
        self.then(self.target_picked)
        self.pick(g, self.target)

    def target_picked(self, g: Game) -> None:
        """Both cards are shown and discarded; the higher rank (strictly) wins for the initiator."""
        self.theirs = card_of(answer(g)[0])
        emit(g, CardShown(seat=self.initiator, card=self.mine))
        emit(g, CardShown(seat=self.target, card=self.theirs))
        move(g, [self.mine], "hand", "discard", self.initiator, reason="拼点")
        move(g, [self.theirs], "hand", "discard", self.target, reason="拼点")
        pop(g, g.cards[self.mine].rank > g.cards[self.theirs].rank)


def _pindian(face: int) -> tuple[Game, View]:
    """Seed 003 with a 拼点 pushed in the play phase: the initiator has picked its card (its
    ``face``-th hand card), the target is asked for its own."""
    g, events = _played(8, 3, 20)
    me = g.current
    g.pending = None
    g.stack.append(Pindian(initiator=me, target=1 - me))
    events += api.advance(g)
    d = g.pending
    assert d is not None and d.seat == me
    events += api.submit(g, api.Answer(decision=d.id, seat=me, picks=[d.options[face]]))
    assert g.pending is not None and g.pending.seat == 1 - me
    return g, api.fold(events, 1 - me)


def test_a_card_picked_unseen_is_dealt_again() -> None:
    """The card a 拼点's initiator picked is hidden from the target: in the determinized state
    it is a card of the initiator's hand as dealt there, whichever card the truth has."""
    outs = set()
    for face in (0, 1):
        g, view = _pindian(face)
        fr = g.stack[-1]
        assert isinstance(fr, Pindian) and fr.mine in _unseen(g, view, fr.initiator)
        out = api.determinize(g, view.viewer, None, 7, view=view)
        ofr = out.stack[-1]
        assert isinstance(ofr, Pindian)
        assert ofr.mine in _unseen(out, view, ofr.initiator)
        outs.add(api.snapshot(out))
        pol = RandomPolicy(1)
        while not out.over and out.stack and isinstance(out.stack[-1], Pindian):
            d = out.pending
            assert d is not None
            api.submit(out, pol.act(d))
        invariants.check(out)
    assert len(outs) == 1


def test_cards_drawn_unseen_in_a_frame_are_dealt_again() -> None:
    """A frame holding cards another seat drew unseen (遗计's, here put below the top of the
    stack by hand) holds, once determinized, cards of that hand as dealt there, one each."""
    g, view = _state(0, 11, 60)
    seat = view.viewer
    t = (seat + 1) % len(g.players)
    while len(_unseen(g, view, t)) < 2:
        t = (t + 1) % len(g.players)
    drawn = _unseen(g, view, t)[:2]
    g.stack.insert(len(g.stack) - 1, YiJiFrame(seat=t, left=0, skill="遗计", drawn=drawn))
    for det in range(4):
        out = api.determinize(g, seat, None, det, view=view)
        fr = out.stack[-2]
        assert isinstance(fr, YiJiFrame) and len(set(fr.drawn)) == 2
        assert set(fr.drawn) <= set(_unseen(out, view, t))
