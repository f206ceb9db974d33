"""Shared machinery of the general skills: aliases, per-turn limits, the active-skill frame and
card conversions (倾国, 奇袭, 国色, 急救, 龙胆 …).

A ruleset that prints a skill under another name (seed 000's 好色 for 奸雄) registers an alias: a
subclass that changes only ``name`` (and, where the seed's text differs, a class attribute such as
the option key that switches it). The logic lives once, under the standard name.
"""

from __future__ import annotations

from typing import Any, ClassVar

import msgspec

from ..core.cards import notation
from ..core.engine import answer, ask, emit, pop, push
from ..core.events import SkillInvoked
from ..core.judge import JUDGE_RULES
from ..core.keys import (
    CardPick,
    SeatPick,
    card_keys,
    card_of,
    cards_of,
    read,
    seat_keys,
    seats_of,
)
from ..core.refusal import protector
from ..core.registry import ruleset_of
from ..core.skills import SKILLS, Skill, register
from ..core.state import Decision, Frame, Game
from ..core.use import specs_of, use_card
from ..core.vcard import VCard, converted


def alias(new: str, old: str, text: str = "", **attrs: Any) -> type[Skill]:
    """Register ``new`` as another name of the skill ``old`` (same logic; ``attrs`` override class
    attributes, e.g. which ruleset option makes it optional)."""
    base = type(SKILLS[old])
    doc = f"{new} = {old}" + (f": {text}" if text else "")
    cls = type(
        f"{base.__name__}_{new}", (base,), {"name": new, "text": text, "__doc__": doc, **attrs}
    )
    register(cls)
    if old in JUDGE_RULES:
        JUDGE_RULES[new] = JUDGE_RULES[old]
    return cls


def opt(g: Game, key: str, default: Any, seat: int = -1) -> Any:
    """A ruleset option; where the ruleset lacks it, the text the general of ``seat`` is printed
    with (seed 000's characters keep their texts in every ruleset), else the standard
    behaviour's ``default``."""
    if not key:
        return default
    if key in g.options:
        return g.options[key]
    if seat >= 0:
        gen = ruleset_of(g).generals().get(g.players[seat].general)
        if gen is not None and key in gen.texts:
            return gen.texts[key]
    return default


def used(g: Game, seat: int, name: str) -> bool:
    """Whether ``seat`` has used the once-per-turn skill ``name`` this turn."""
    return bool(g.players[seat].marks.get(f"t:{name}", 0))


def mark_used(g: Game, seat: int, name: str) -> None:
    """Record a use of a once-per-turn skill (``t:`` marks expire at the end of the turn)."""
    g.players[seat].marks[f"t:{name}"] = 1


def own_cards(g: Game, seat: int, equip: bool = True) -> list[int]:
    """``seat``'s hand cards, then (if ``equip``) its equipped cards."""
    p = g.players[seat]
    return list(p.hand) + (list(p.equip.values()) if equip else [])


class Procedure(Skill):
    """A skill run as: pick cards (its cost) → pick seats → ``apply``. Each step may be declined
    (then nothing happens); the skill is marked used only when it is applied."""

    once_per_turn: ClassVar[bool] = False

    def refusal(self, g: Game, seat: int) -> str:
        if self.once_per_turn and used(g, seat, self.name):
            return f"{self.name}: once per turn, already used this turn"
        return ""

    def refuse_choice(self, g: Game, seat: int, f: SkillFrame, t: int) -> str:
        """Why seat ``t`` may not be chosen for this skill (the rule its text states)."""
        return f"{self.name}: seat {t} may not be chosen"

    def cost(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        """Card ids to choose from and how many (lo, hi); None = no card step."""
        return None

    def choices(self, g: Game, seat: int, f: SkillFrame) -> tuple[list[int], int, int] | None:
        """Seats to choose from and how many (lo, hi); None = no seat step."""
        return None

    def apply(self, g: Game, seat: int, f: SkillFrame) -> None:
        """The effect, after the frame has popped (push frames freely)."""

    def start(self, g: Game, seat: int, ctx: int = -1, data: dict[str, Any] | None = None) -> None:
        """Push the procedure's frame."""
        push(g, SkillFrame(seat=seat, skill=self.name, ctx=ctx, data=data or {}))

    def activate(self, g: Game, seat: int) -> None:
        self.start(g, seat)


class SkillFrame(Frame, tag="skill_proc"):
    """Runs a :class:`Procedure`: card step, seat step, then the effect."""

    seat: int
    skill: str
    ctx: int = -1
    data: dict[str, Any] = msgspec.field(default_factory=dict)
    cards: list[int] = msgspec.field(default_factory=list)
    seats: list[int] = msgspec.field(default_factory=list)

    def procedure(self) -> Procedure:
        """The skill being run."""
        sk = SKILLS[self.skill]
        assert isinstance(sk, Procedure)
        return sk

    def start(self, g: Game) -> None:
        """Its cost: the cards to pick, if any (declining or having none ends the skill)."""
        self.then(self.cards_picked)
        c = self.procedure().cost(g, self.seat, self)
        if c is None:
            g.answer = None
            self.cards_picked(g)
            return
        opts, lo, hi = c
        ask(
            g,
            self.seat,
            "cards",
            card_keys(opts),
            lo,
            min(hi, len(opts)),
            info={"skill": self.skill},
        )
        if g.pending is None and not g.answer:
            pop(g)

    def cards_picked(self, g: Game) -> None:
        """The seats to pick, if any."""
        sk = self.procedure()
        if sk.cost(g, self.seat, self) is not None:
            picks = answer(g)
            if not picks:
                pop(g)
                return
            self.cards = cards_of(picks)
        self.then(self.seats_picked)
        c = sk.choices(g, self.seat, self)
        if c is None:
            g.answer = None
            self.seats_picked(g)
            return
        opts, lo, hi = c
        ask(
            g,
            self.seat,
            "targets",
            seat_keys(opts),
            lo,
            min(hi, len(opts)),
            info={"skill": self.skill, "cards": self.cards, "ordered": True},
        )
        if g.pending is None and not g.answer:
            pop(g)

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        sk = self.procedure()
        match read(pick):
            case SeatPick(t) if d.kind == "targets":
                if not g.players[t].alive:
                    return f"seat {t} is dead"
                return protector(g, t, self.seat, sk.name) or sk.refuse_choice(
                    g, self.seat, self, t
                )
            case CardPick(cid) if d.kind == "cards":
                return f"{sk.name}: {notation(g.cards[cid])} may not be given for it"
        return ""

    def seats_picked(self, g: Game) -> None:
        """The effect."""
        sk = self.procedure()
        if sk.choices(g, self.seat, self) is not None:
            picks = answer(g)
            if not picks:
                pop(g)
                return
            self.seats = seats_of(picks)
        pop(g)
        if sk.once_per_turn:
            mark_used(g, self.seat, sk.name)
        emit(g, SkillInvoked(seat=self.seat, skill=self.skill, targets=list(self.seats)))
        sk.apply(g, self.seat, self)


class Conversion(Skill):
    """Use or play one own card as another (``converts``): offered in ``respond`` decisions for
    that card and, if ``in_play``, as ``skill:NAME`` in the play phase."""

    converts: ClassVar[str] = ""
    equip_too: ClassVar[bool] = False
    in_play: ClassVar[bool] = False
    in_respond: ClassVar[bool] = True

    takes: ClassVar[str] = ""  # the cards it turns, in words ("a black hand card")
    when: ClassVar[str] = ""  # when it may be used, in words, if ``usable_now`` restricts it

    def refusal(self, g: Game, seat: int) -> str:
        if not self.usable_now(g, seat):
            return f"{self.name} works only {self.when}" if self.when else ""
        cands = self.eligible(g, seat, self.converts)
        if not cands:
            return f"{self.name} turns {self.takes}: seat {seat} has none" if self.takes else ""
        if self.in_play and g.pending is not None and g.pending.kind == "play":
            spec = specs_of(g)[self.converts]  # turned, but of no use now (no target in range …)
            vc = converted(g, self.converts, cands[:1], self.name)
            if not spec.can_use(g, seat, vc):
                return f"{self.name}: {spec.refuse_use(g, seat, vc)}"
        return ""

    def card_ok(self, g: Game, seat: int, cid: int, as_name: str) -> bool:
        """Whether card ``cid`` may be turned into ``as_name``."""
        return False

    def names(self, need: str) -> list[str]:
        """The card names this skill can produce for a demand of ``need``."""
        return [need] if need == self.converts else []

    def usable_now(self, g: Game, seat: int) -> bool:
        """Extra condition on the holder (急救: not in its own turn)."""
        return True

    def eligible(self, g: Game, seat: int, as_name: str) -> list[int]:
        """Own cards that may become ``as_name``."""
        return [c for c in own_cards(g, seat, self.equip_too) if self.card_ok(g, seat, c, as_name)]

    def provides(self, g: Game, seat: int, ask: Any) -> bool:
        names = self.names(ask.need)  # usually none: the demand is for another card
        if not names or not self.in_respond or not self.usable_now(g, seat):
            return False
        return any(self.eligible(g, seat, n) for n in names)

    def provide(self, g: Game, seat: int, ask: Any) -> None:
        push(g, ConvertPick(seat=seat, skill=self.name, as_name=self.names(ask.need)[0]))

    def can_activate(self, g: Game, seat: int) -> bool:
        if not self.in_play or not self.usable_now(g, seat):
            return False
        spec = specs_of(g)[self.converts]
        for c in self.eligible(g, seat, self.converts):
            if spec.can_use(g, seat, converted(g, self.converts, [c], self.name)):
                return True
        return False

    def activate(self, g: Game, seat: int) -> None:
        push(g, ConvertPick(seat=seat, skill=self.name, as_name=self.converts, use=True))


class ConvertPick(Frame, tag="convert_pick"):
    """Pick the card a :class:`Conversion` turns into ``as_name``; then use it (play phase) or
    hand the virtual card back to the demand (pops it, or None if declined)."""

    seat: int
    skill: str
    as_name: str
    use: bool = False

    def start(self, g: Game) -> None:
        sk = SKILLS[self.skill]
        assert isinstance(sk, Conversion)
        cands = sk.eligible(g, self.seat, self.as_name)
        if self.use:
            spec = specs_of(g)[self.as_name]
            cands = [
                c
                for c in cands
                if spec.can_use(g, self.seat, converted(g, self.as_name, [c], self.skill))
            ]
        self.then(self.picked)
        ask(g, self.seat, "cards", card_keys(cands), info={"skill": self.skill, "as": self.as_name})

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        choice = read(pick)
        if not isinstance(choice, CardPick):
            return ""
        sk = SKILLS[self.skill]
        if (
            self.use
            and isinstance(sk, Conversion)
            and choice.id in sk.eligible(g, self.seat, self.as_name)
        ):
            vc = converted(g, self.as_name, [choice.id], self.skill)  # turned, but of no use now
            return f"{self.skill}: {specs_of(g)[self.as_name].refuse_use(g, self.seat, vc)}"
        takes = getattr(sk, "takes", "")
        card = notation(g.cards[choice.id])
        rule = f" (it turns {takes})" if takes else ""
        return f"{self.skill} cannot turn {card} into {self.as_name}{rule}"

    def picked(self, g: Game) -> None:
        picks = answer(g)
        pop(g, None)
        if not picks:
            return
        vc: VCard = converted(g, self.as_name, [card_of(picks[0])], self.skill)
        if self.use:
            use_card(g, self.seat, vc)
        else:
            g.ret = vc
