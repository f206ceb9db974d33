"""Turn flow (§1.2, §1.5): rounds, turns, the six phases and their default actions."""

from __future__ import annotations

import msgspec

from .delayed import JudgePhase
from .engine import answer, ask_discard, pop
from .events import PhaseSkipped, PhaseStarted, TurnEnded, TurnStarted
from .index import hears, seat_entry
from .keys import (
    _TABLES as _KEY_TABLES,
)
from .keys import (
    CardPick,
    RecastPick,
    SkillPick,
    card_key_table,
    cards_of,
    parse,
    read,
    recast_key,
    skill_key,
)
from .query import hand_limit, next_alive, with_hook
from .refusal import hand_refusal, skill_refusal
from .skills import SKILLS
from .state import PHASES, Decision, Frame, Game
from .triggers import fire
from .use import _MERGED, UseCard, ask_play, specs_of
from .vcard import _PROBES, physical, probes
from .zones import discard_from, draw, move

AROUND_PHASE = frozenset(("phase_start", "phase_end"))
PHASE_END = frozenset(("phase_end",))
DRAW_COUNT = frozenset(("draw_count",))


class GameFrame(Frame, tag="game"):
    """The root: turns in order, forever (the game ends by ``end_game``)."""

    seat: int = 0
    first_phase: str = "start"
    extra: list[int] = msgspec.field(default_factory=list)  # seats owed an extra turn

    def start(self, g: Game) -> None:
        self.step = "next_turn"
        g.round = max(g.round, 1)
        g.stack.append(
            TurnFrame(
                seat=self.seat,
                pi=PHASES.index(self.first_phase),
                begin=self.first_phase == "start",
            ),
        )

    def next_turn(self, g: Game) -> None:
        prev = self.seat
        while self.extra:
            # an extra turn (额外回合) comes right after the turn that earned it; it neither
            # starts a round nor moves the normal order on (§1.2), and a seat that died meanwhile
            # loses it
            extra = self.extra.pop(0)
            if g.players[extra].alive:
                g.stack.append(TurnFrame(seat=extra))
                return
        nxt = next_alive(g, prev)
        if nxt <= prev:  # the order passed seat 0's position: a new round (§1.2)
            g.round += 1
        self.seat = nxt
        g.stack.append(TurnFrame(seat=nxt))


class TurnFrame(Frame, tag="turn"):
    """One turn: turn start, the six phases (unless skipped), turn end.

    Its steps run on at once when their timing point has no listener (most turns fire nothing),
    returning to the loop only when a child frame was pushed."""

    seat: int
    pi: int = 0
    skip: list[str] = msgspec.field(default_factory=list)
    aborted: bool = False
    begin: bool = True

    # The turn's steps name the step that carries on only when they wait (for a Trigger or a
    # phase's frame): most of them run on at once, and nothing runs between a push and the
    # ``then`` after it.

    def start(self, g: Game) -> None:
        g.current = self.seat
        g.turn_marks = {}
        if self.begin:
            g.out.append(TurnStarted(seat=self.seat, round=g.round))  # emit
            idx = g.skill_index  # nobody listening at a turn's start (the usual): no call
            quiet = idx is not None and idx.heard is not None and "turn_start" not in idx.heard
            if not quiet and fire(g, "turn_start", g.top, last=True):
                self.step = "before_phase"
                return
        self.before_phase(g)

    def before_phase(self, g: Game) -> None:
        """Before the next phase: a skill may skip it. Phases that are over at once (skipped,
        or nothing happens in them) follow one another within this step."""
        while not self.aborted and g.players[self.seat].alive and self.pi < len(PHASES):
            idx = g.skill_index  # nobody listening before a phase (the usual): no call
            if (idx is None or idx.heard is None or "before_phase" in idx.heard) and fire(
                g, "before_phase", g.top, data={"phase": PHASES[self.pi]}, last=True
            ):
                self.step = "phase"
                return
            if not self.begin_phase(g):
                return  # its frame runs first
        self.goto(g, self.turn_end)

    def phase(self, g: Game) -> None:
        """The next phase (the skills before it have run), unless it is skipped."""
        if self.begin_phase(g):
            self.before_phase(g)

    def begin_phase(self, g: Game) -> bool:
        """Begin the next phase: True if it is over at once (skipped, only announced, or a draw
        no skill changes), False if a frame was pushed for it (the turn goes on after it).

        A phase no skill of the seat listens at (its start or end: most phases) is run by the
        turn itself: announced here, its action's frame pushed without a PhaseFrame around it."""
        phase, seat = PHASES[self.pi], self.seat
        self.pi += 1
        if phase in self.skip:
            g.out.append(PhaseSkipped(seat=seat, phase=phase))
            return True
        p = g.players[seat]
        idx = g.skill_index  # the seat's entry (index.hears, without the call)
        entry = (idx.seats[seat] if idx is not None else None) or seat_entry(g, seat)
        if p.alive and not entry.points.isdisjoint(AROUND_PHASE):
            g.stack.append(PhaseFrame(seat=seat, phase=phase))
            self.step = "before_phase"
            return False
        g.phase = phase
        g.out.append(PhaseStarted(seat=seat, phase=phase))
        if not has_body(g, seat, phase):
            return True
        if phase == "draw" and (not p.alive or entry.points.isdisjoint(DRAW_COUNT)):
            draw(g, seat, DRAWN, reason="draw_phase")  # what DrawPhase would do
            return True
        g.stack.append(_BODY[phase](seat=seat))
        self.step = "phase_over"
        return False

    def phase_over(self, g: Game) -> None:
        """The action of a phase the turn runs itself is over. A skill gained meanwhile may
        listen at the phase's end: then the phase ends through its own frame."""
        p = g.players[self.seat]
        if not self.aborted and p.alive and hears(g, self.seat, PHASE_END):
            phase = PHASES[self.pi - 1]
            g.stack.append(PhaseFrame(seat=self.seat, phase=phase, step="phase_end"))
            self.step = "before_phase"
            return
        self.before_phase(g)

    def turn_end(self, g: Game) -> None:
        self.step = "done"
        g.phase = ""
        g.out.append(TurnEnded(seat=self.seat))  # emit
        idx = g.skill_index  # nobody listening at a turn's end (the usual): no call
        quiet = idx is not None and idx.heard is not None and "turn_end" not in idx.heard
        if not quiet and g.players[self.seat].alive and fire(g, "turn_end", g.top, last=True):
            return
        self.done(g)

    def done(self, g: Game) -> None:
        """Per-turn marks (``t:``) expire."""
        for q in g.players:
            marks = q.marks  # made anew only if some mark expires (most marks last longer)
            if marks and any(k.startswith("t:") for k in marks):
                q.marks = {k: v for k, v in marks.items() if not k.startswith("t:")}
        g.turn_marks = {}
        pop(g)


class PhaseFrame(Frame, tag="phase"):
    """One phase: phase-start triggers, the default action, phase-end triggers."""

    seat: int
    phase: str

    # like the turn's, these steps name the one that carries on only when they wait

    def start(self, g: Game) -> None:
        g.phase = self.phase
        g.out.append(PhaseStarted(seat=self.seat, phase=self.phase))
        if fire(g, "phase_start", g.top, data={"phase": self.phase}, seats=[self.seat], last=True):
            self.step = "action"
            return
        self.action(g)

    def action(self, g: Game) -> None:
        """The phase's default action (judge, draw, play, discard)."""
        if has_body(g, self.seat, self.phase):
            g.stack.append(_BODY[self.phase](seat=self.seat))
            self.step = "phase_end"
            return
        self.phase_end(g)

    def phase_end(self, g: Game) -> None:
        if fire(g, "phase_end", g.top, data={"phase": self.phase}, seats=[self.seat], last=True):
            self.step = "done"
            return
        self.done(g)

    def done(self, g: Game) -> None:
        pop(g)


DRAWN = 2
"""How many cards a draw phase draws (§1.5), unless a skill at ``draw_count`` changes it."""


class DrawPhase(Frame, tag="draw_phase"):
    """Draw ``n`` cards (skills at ``draw_count`` change ``n``)."""

    seat: int
    n: int = DRAWN

    def start(self, g: Game) -> None:
        self.step = "draw_cards"
        if not fire(g, "draw_count", g.top, seats=[self.seat], last=True):
            self.draw_cards(g)

    def draw_cards(self, g: Game) -> None:
        draw(g, self.seat, self.n, reason="draw_phase")
        pop(g)


class PlayPhase(Frame, tag="play_phase"):
    """The active seat uses cards and skills one at a time until it ends the phase."""

    seat: int

    def start(self, g: Game) -> None:
        self.step = "chosen"
        ask_play(g, self.seat, play_options(g, self.seat))

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        match read(pick):
            case SkillPick(name):
                return skill_refusal(g, self.seat, name)
            case CardPick(cid) | RecastPick(cid) if cid not in g.players[self.seat].hand:
                return f"seat {self.seat} does not hold that card"
            case RecastPick(cid):
                return f"{g.cards[cid].name} cannot be recast (重铸)"
            case CardPick(cid):
                spec = specs_of(g).get(g.cards[cid].name)
                if spec is None:
                    return f"{g.cards[cid].name} cannot be used"
                return spec.refuse_use(g, self.seat, physical(g, cid))
        return ""

    def chosen(self, g: Game) -> None:
        self.step = "start"
        picks = answer(g)
        if not picks or picks[0] == "end":
            pop(g)
            return
        match parse(picks[0]):
            case CardPick(cid):
                g.stack.append(UseCard(user=self.seat, vc=physical(g, cid)))  # push
            case RecastPick(cid):  # 重铸 (铁索连环): into the discard pile, then draw one
                self.step = "recast_discarded"
                move(g, [cid], "hand", "discard", self.seat, reason="recast")
            case SkillPick(name):
                SKILLS[name].activate(g, self.seat)

    def recast_discarded(self, g: Game) -> None:
        """The recast card is in the discard pile, and whatever losing it fired has run (连营
        for a last hand card): draw one. Not a use."""
        self.step = "start"
        draw(g, self.seat, 1, reason="recast")


class DiscardPhase(Frame, tag="discard_phase"):
    """Discard down to the hand limit."""

    seat: int

    def start(self, g: Game) -> None:
        p = g.players[self.seat]
        n = len(p.hand) - hand_limit(g, self.seat)
        if n <= 0:
            pop(g)
            return
        self.step = "discarded"
        ask_discard(g, self.seat, p.hand, n, reason="discard_phase")

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        return hand_refusal(g, self.seat, pick)

    def discarded(self, g: Game) -> None:
        discard_from(g, self.seat, cards_of(answer(g)), reason="discard_phase")
        pop(g)


_BODY: dict[str, type[JudgePhase | DrawPhase | PlayPhase | DiscardPhase]] = {
    "judge": JudgePhase,
    "draw": DrawPhase,
    "play": PlayPhase,
    "discard": DiscardPhase,
}


def has_body(g: Game, seat: int, phase: str) -> bool:
    """Whether ``phase`` has a default action to run now: a judge phase only with cards in the
    judgement area, a discard phase only with more hand cards than the hand limit (otherwise
    its frame would find nothing to do)."""
    if phase == "judge":
        return bool(g.players[seat].judge)
    if phase == "discard":
        return len(g.players[seat].hand) > hand_limit(g, seat)
    return phase in _BODY


def skip_phase(g: Game, seat: int, phase: str) -> None:
    """Make ``seat`` skip ``phase`` in its current turn."""
    for fr in reversed(g.stack):
        if isinstance(fr, TurnFrame) and fr.seat == seat:
            if phase not in fr.skip:
                fr.skip.append(phase)
            return


def end_turn_now(g: Game) -> None:
    """The current seat died (or its general left the game): its turn ends at once. Every
    procedure above its turn frame is dropped, cards left in the processing area go to the
    discard pile, and the turn frame goes on to the turn's end."""
    while g.stack and not isinstance(g.stack[-1], TurnFrame):
        g.stack.pop()
    g.pending = None
    g.answer = None
    if g.processing:
        move(g, list(g.processing), "processing", "discard", reason="turn_aborted")
    if g.stack:
        g.stack[-1].aborted = True


def play_options(g: Game, seat: int) -> list[str]:
    """The cards ``seat`` may use and the skills it may activate now."""
    out = []
    cards = g.cards
    # the tables made once (vcard.probes, keys.card_key_table, use.specs_of), read without a call
    asked = _PROBES.get(g.deck) or probes(g)
    keys = _KEY_TABLES.get(len(cards)) or card_key_table(len(cards))
    specs = _MERGED.get(g.ruleset) or specs_of(g)
    # by name, whether the card may be used and recast: same-named cards are alike
    known: dict[str, tuple[bool, bool]] = {}
    for cid in g.players[seat].hand:
        name = cards[cid].name
        found = known.get(name)
        if found is None:
            spec = specs.get(name)
            found = known[name] = (
                (spec.can_use(g, seat, asked[cid]), spec.recastable)
                if spec is not None
                else (False, False)
            )
        if found[0]:
            out.append(keys[cid])
        if found[1]:
            out.append(recast_key(cid))
    for s in with_hook(g, seat, "can_activate"):
        if s.can_activate(g, seat):
            out.append(skill_key(s.name))
    return out
