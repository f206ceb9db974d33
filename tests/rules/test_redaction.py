"""Redaction: no viewer's stream carries a card face or a role that viewer may not see.

The ground truth is kept apart from the engine's ``seen_by`` lists: a ``CardTracker`` folds the
unredacted (GOD) stream into the location of every card, and a card id may appear in viewer V's
bytes only if, just before or just after that event, the card lies face up (discard, processing,
equipment, judgement area) or in V's own hand — or the event is itself a public reveal (using or
playing a card, 火攻's showing, a judgement). The redacted events are encoded to JSON and the
*bytes* are searched, so a secret hiding in any field is found, not only in the typed ones.
"""

from __future__ import annotations

import re
from collections.abc import Callable

import msgspec
import pytest

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.api import events as ev
from services.rules.core.views import GOD, SPECTATOR, fold, redact
from tests.rules.invariants import CardTracker

CARDS_RE = re.compile(rb'"cards":\[(-?[0-9,\-]*)\]')
CARD_RE = re.compile(rb'"card":(-?\d+)')
OPTION_CARD_RE = re.compile(rb'"card:(\d+)"')
ROLE_PAIR_RE = re.compile(rb'"type":"role_assigned","seat":(\d+),"role":"(\w*)"')
REVEALS = (ev.CardUsed, ev.CardPlayed, ev.CardShown, ev.Judged)  # public by the rules
HIDDEN_ROLES = ("loyalist", "rebel", "renegade")
JSON = msgspec.json.Encoder()
Redactor = Callable[[ev.Event, int], ev.Event]


def card_ids(data: bytes) -> list[int]:
    """Every card id in the ``cards`` arrays and ``card`` fields of encoded JSON."""
    out = [int(m) for m in CARD_RE.findall(data)]
    for arr in CARDS_RE.findall(data):
        out += [int(x) for x in arr.split(b",") if x]
    return out


class LeakFinder:
    """Checks each viewer's redacted bytes against the ground truth, event by event."""

    def __init__(self, players: int, n_cards: int, redactor: Redactor = redact) -> None:
        self.viewers = [*range(players), SPECTATOR]
        self.tracker = CardTracker(n_cards)
        self.roles: list[str] = [""] * players
        self.revealed = [False] * players
        self.over = False
        self.redact = redactor
        self.leaks: list[str] = []
        self.checked = 0

    def allowed_roles(self, viewer: int) -> set[bytes]:
        """The hidden-role words that may appear in ``viewer``'s bytes now."""
        ok = {self.roles[s] for s in range(len(self.roles)) if self.revealed[s] or s == viewer}
        if self.over:
            ok |= set(HIDDEN_ROLES)
        return {r.encode() for r in ok}

    def feed(self, e: ev.Event) -> None:
        """Check one GOD-view event for every viewer, then fold it into the ground truth."""
        if isinstance(e, ev.RoleAssigned):
            self.roles[e.seat] = e.role
            self.revealed[e.seat] = e.role == "lord"
        if isinstance(e, ev.Died):  # the death itself is the reveal
            self.revealed[e.seat] = True
        if isinstance(e, ev.GameEnded):  # so is the end of the game, for every role
            self.over = True
        encoded = {v: JSON.encode(self.redact(e, v)) for v in self.viewers}
        ids = {v: card_ids(b) for v, b in encoded.items()}
        before = {
            c: {v: self.tracker.visible_to(c, v) for v in self.viewers}
            for c in {c for cs in ids.values() for c in cs}
        }
        self.tracker.apply(e)
        for v, data in encoded.items():
            self.checked += 1
            if not isinstance(e, REVEALS):
                for c in ids[v]:
                    if not (before[c][v] or self.tracker.visible_to(c, v)):
                        self.leaks.append(f"viewer {v} sees card {c} in {data!r}")
            self._check_roles(v, data)

    def _check_roles(self, v: int, data: bytes) -> None:
        if self.over:
            return
        ok = self.allowed_roles(v)
        for role in HIDDEN_ROLES:
            word = role.encode()
            if word not in ok and b'"' + word + b'"' in data:
                self.leaks.append(f"viewer {v} sees hidden role {role} in {data!r}")
        for seat, role in ROLE_PAIR_RE.findall(data):
            s = int(seat)
            if role and s != v and not self.revealed[s]:
                self.leaks.append(f"viewer {v} sees seat {s}'s role in {data!r}")

    def decision(self, g: api.Game) -> None:
        """The pending decision goes to its seat only: it may name only cards that seat sees."""
        d = api.pending(g)
        if d is None:
            return
        data = JSON.encode(d)
        for c in [int(x) for x in OPTION_CARD_RE.findall(data)] + card_ids(data):
            if not self.tracker.visible_to(c, d.seat):
                self.leaks.append(f"decision {d.kind} for seat {d.seat} names card {c}: {data!r}")


def play_and_check(players: int, seed: int, redactor: Redactor = redact) -> LeakFinder:
    """Play one random game through a LeakFinder."""
    g = api.new_game("standard", players, seed)
    finder = LeakFinder(players, len(g.cards), redactor)
    pol = [RandomPolicy(seed + 100 * i) for i in range(players)]
    events = api.advance(g)
    while True:
        for e in events:
            finder.feed(e)
        finder.tracker.matches(g)
        finder.decision(g)
        assert not finder.leaks, finder.leaks[:5]
        if g.over:
            return finder
        d = api.pending(g)
        assert d is not None
        events = api.submit(g, pol[d.seat].act(d))


# every table size; 7-9 only under -m slow: 4-6 and 10 go from one rebel to four, from one
# loyalist to three, one renegade to two, the shortest table to the longest
@pytest.mark.parametrize(
    "players",
    [p if p in (4, 5, 6, 10) else pytest.param(p, marks=pytest.mark.slow) for p in range(4, 11)],
)
def test_no_viewer_sees_a_hidden_card_or_role(players: int) -> None:
    """Random games: every event, every seat and the spectator, searched as bytes."""
    checked = 0
    for seed in range(5):
        checked += play_and_check(players, 500 + 37 * players + seed).checked
    assert checked > 10_000


def test_the_leak_finder_bites() -> None:
    """With redaction switched off the same search finds hand cards and roles."""
    with pytest.raises(AssertionError, match="sees"):
        play_and_check(6, 1, redactor=lambda e, v: e)
    f = LeakFinder(5, 160, redactor=lambda e, v: e)
    f.feed(ev.RoleAssigned(seat=3, role="rebel", seen_by=[3]))
    assert any("role" in x for x in f.leaks)


def _played(players: int, seed: int) -> tuple[api.Game, list[ev.Event]]:
    g = api.new_game("standard", players, seed)
    pol = [RandomPolicy(seed + i) for i in range(players)]
    stream = api.advance(g)
    while not g.over:
        d = api.pending(g)
        assert d is not None
        stream += api.submit(g, pol[d.seat].act(d))
    return g, stream


def test_views_show_no_other_hand_unless_revealed() -> None:
    """Folded views: another seat's hand faces appear only after a move into it the viewer saw
    (public, or one it took part in, such as a card 顺手牵羊 took from it)."""
    for players, seed in [(5, 3), (7, 99), (9, 5)]:
        g, stream = _played(players, seed)
        public_into_hand = {
            c
            for e in stream
            if isinstance(e, ev.CardsMoved) and e.dst == "hand" and e.seen_by is None
            for c in e.cards
        }
        for v in [*range(players), SPECTATOR]:
            view = fold(stream, v)
            for s in view.seats:
                assert s.hand_count == len(g.players[s.seat].hand)
                if s.seat == v:
                    assert sorted(s.hand) == sorted(g.players[v].hand)
                else:
                    seen_into = {
                        c
                        for e in stream
                        if isinstance(e, ev.CardsMoved)
                        and e.dst == "hand"
                        and e.seen_by
                        and v in e.seen_by
                        for c in e.cards
                    }
                    assert set(s.hand) <= public_into_hand | seen_into, (v, s.seat, s.hand)
        spec = fold(stream, SPECTATOR)
        assert [s.role for s in spec.seats] == [p.role for p in g.players]  # the game ended


HIDDEN_TAKE_REPRO = [
    ev.GameStarted(ruleset="standard", players=3, options={}, rules_version="1"),
    ev.CardsMoved(
        cards=[39], count=1, src="processing", dst="hand", dst_seat=1, reason="五谷丰登"
    ),  # public: everyone knows seat 1 holds card 39
    ev.CardsMoved(
        cards=[39],
        count=1,
        src="hand",
        dst="hand",
        src_seat=1,
        dst_seat=2,
        reason="take",
        seen_by=[2, 1],
    ),  # 顺手牵羊 by seat 2: seat 0 sees a count
]


def test_view_forgets_a_known_face_that_left_by_a_hidden_move() -> None:
    """Seat 0 saw card 39 go public into seat 1's hand; after seat 2 takes one card blindly,
    seat 0 can no longer claim seat 1 holds card 39 (it may not know, and in fact it does not)."""
    view = fold(HIDDEN_TAKE_REPRO, 0)
    assert view.seats[1].hand_count == 0
    assert 39 not in view.seats[1].hand


def test_views_never_claim_a_card_a_seat_does_not_hold() -> None:
    """Over whole random games, a view's known faces are really in that hand."""
    for players, seed in [(9, 5), (7, 99), (5, 3)]:
        g, stream = _played(players, seed)
        for v in [*range(players), SPECTATOR]:
            for s in fold(stream, v).seats:
                assert set(s.hand) <= set(g.players[s.seat].hand), (players, seed, v, s.seat)


# --- the table: for each guarded event type, what each viewer sees ---------------------------

DRAWN = ev.CardsMoved(
    cards=[5, 9], count=2, src="draw", dst="hand", dst_seat=2, reason="draw", seen_by=[2]
)
TAKEN = ev.CardsMoved(
    cards=[7],
    count=1,
    src="hand",
    dst="hand",
    src_seat=1,
    dst_seat=3,
    reason="take",
    seen_by=[3, 1],
)
DISCARDED = ev.CardsMoved(cards=[4], count=1, src="hand", dst="discard", src_seat=1)
REBEL = ev.RoleAssigned(seat=2, role="rebel", seen_by=[2])
LORD = ev.RoleAssigned(seat=0, role="lord")
SECRET_GENERAL = ev.GeneralChosen(
    seat=1, general="关羽", gender="male", faction="shu", max_hp=4, hp=4, seen_by=[1]
)
DRAFT = ev.DraftOffered(seat=4, generals=["刘备", "曹操", "孙权"], seen_by=[4])
LEARNED = ev.RoleLearned(learner=4, seat=6, role="dangren", seen_by=[4])  # seed 004 结党
INSIGHT = ev.InsightRevealed(seat=2, target=4, result="enemy", seen_by=[2])  # seed 002 洞察
DISGUISE = ev.RebelDisguised(seat=3, rebel=4, seen_by=[3])  # seed 002 谋攻

# (event, viewer, what the viewer receives): "same" = the event unchanged
TABLE: list[tuple[ev.Event, int, object]] = [
    (DRAWN, 2, "same"),
    (DRAWN, GOD, "same"),
    (DRAWN, 1, msgspec.structs.replace(DRAWN, cards=[])),
    (DRAWN, SPECTATOR, msgspec.structs.replace(DRAWN, cards=[])),
    (TAKEN, 1, "same"),
    (TAKEN, 3, "same"),
    (TAKEN, GOD, "same"),
    (TAKEN, 0, msgspec.structs.replace(TAKEN, cards=[])),
    (TAKEN, SPECTATOR, msgspec.structs.replace(TAKEN, cards=[])),
    (DISCARDED, 0, "same"),
    (DISCARDED, SPECTATOR, "same"),
    (REBEL, 2, "same"),
    (REBEL, GOD, "same"),
    (REBEL, 0, msgspec.structs.replace(REBEL, role="")),
    (REBEL, SPECTATOR, msgspec.structs.replace(REBEL, role="")),
    (LORD, 3, "same"),
    (LORD, SPECTATOR, "same"),
    (SECRET_GENERAL, 1, "same"),
    (
        SECRET_GENERAL,
        0,
        msgspec.structs.replace(SECRET_GENERAL, general="", gender="", faction="", max_hp=0, hp=0),
    ),
    (DRAFT, 4, "same"),
    (DRAFT, SPECTATOR, msgspec.structs.replace(DRAFT, generals=[])),
    (DRAFT, 0, msgspec.structs.replace(DRAFT, generals=[])),
    (LEARNED, 4, "same"),
    (LEARNED, GOD, "same"),
    (LEARNED, 6, ev.RoleLearned(learner=-1, seat=-1, role="", seen_by=[])),
    (LEARNED, SPECTATOR, ev.RoleLearned(learner=-1, seat=-1, role="", seen_by=[])),
    (INSIGHT, 2, "same"),
    (INSIGHT, GOD, "same"),
    (INSIGHT, 4, msgspec.structs.replace(INSIGHT, result="")),
    (INSIGHT, SPECTATOR, msgspec.structs.replace(INSIGHT, result="")),
    (DISGUISE, 3, "same"),
    (DISGUISE, GOD, "same"),
    (DISGUISE, 4, ev.RebelDisguised(seat=-1, rebel=-1, seen_by=[])),
    (DISGUISE, SPECTATOR, ev.RebelDisguised(seat=-1, rebel=-1, seen_by=[])),
]


@pytest.mark.parametrize(
    ("event", "viewer", "expected"), TABLE, ids=[f"{type(e).__name__}-{v}" for e, v, _ in TABLE]
)
def test_redaction_table(event: ev.Event, viewer: int, expected: object) -> None:
    """Row by row: the redacted event, and that its bytes keep the count but not the faces."""
    got = redact(event, viewer)
    assert got == (event if expected == "same" else expected)
    if expected != "same":
        assert api.decode_event(api.encode_event(got)) == got


def test_every_guarded_event_type_has_a_table_row() -> None:
    """A new event type with a ``seen_by`` guard must be added to the table above."""
    guarded = {name for name, cls in ev.event_types().items() if "seen_by" in cls.__struct_fields__}
    covered = {e.__struct_config__.tag for e, _, _ in TABLE}
    assert guarded <= covered, f"no redaction table rows for {guarded - covered}"


def test_public_events_pass_unchanged() -> None:
    """Unguarded events (reveals, deaths, the end) are the same for every viewer."""
    public = [
        ev.CardUsed(user=1, name="杀", suit="S", rank=7, cards=[3], targets=[2]),
        ev.CardShown(seat=2, card=11),
        ev.Judged(seat=1, card=8, reason="闪电", result=True),
        ev.Died(seat=3, killer=1, role="rebel"),
        DISCARDED,
        ev.GameEnded(
            winners=["rebel"],
            winner_seats=[1, 3],
            draw=False,
            roles=["lord", "rebel", "loyalist", "rebel"],
        ),
    ]
    for e in public:
        for v in (0, 1, 2, 3, SPECTATOR, GOD):
            assert redact(e, v) is e
