"""The use pipeline (§1.8.1) and the 无懈可击 window (§1.13), shared by every card.

A card's behaviour is a ``CardSpec`` registered under its name: who it may target, whether it can
be used now, and ``effect`` — what happens to one target (usually by pushing an effect frame).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, ClassVar

import msgspec

from .engine import answer, ask, emit, handler, pop, push
from .events import CardUsed, Ineffective, Nullified
from .query import order_from, prohibited, with_hook
from .respond import AskCard
from .state import Frame, Game
from .triggers import fire
from .vcard import VCard
from .zones import move, zone_of

# per-target flags set in the "after targeting" window
NO_DODGE = 1  # 铁骑/烈弓: cannot be dodged
TWO_DODGE = 2  # 无双: needs two 闪
IGNORE_ARMOR = 4  # 青釭剑


class CardSpec:
    """How one card name is used. Subclasses override the hooks they need."""

    name: ClassVar[str] = ""
    kind: ClassVar[str] = "basic"  # basic, trick, delayed, equip
    min_targets: ClassVar[int] = 1
    max_targets: ClassVar[int] = 1
    text: ClassVar[str] = ""
    recastable: ClassVar[bool] = False  # 重铸: may be put into the discard pile to draw one

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        """Targets that are not chosen (self, all others …), or None if the user chooses."""
        return None

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> bool:
        """Whether ``t`` may be chosen as a target (before the common checks)."""
        return t != user

    def legal_targets(self, g: Game, user: int, vc: VCard, data: dict[str, Any]) -> list[int]:
        """Alive seats that may be chosen, not prohibited by skills (谦逊, 空城 …)."""
        return [
            t
            for t in order_from(g, user)
            if self.target_ok(g, user, vc, t, data) and not prohibited(g, t, user, vc.name)
        ]

    def target_range(self, g: Game, user: int, vc: VCard) -> tuple[int, int]:
        """How many targets may be chosen (min, max)."""
        return self.min_targets, self.max_targets

    def can_use(self, g: Game, user: int, vc: VCard) -> bool:
        """Whether ``user`` may use ``vc`` actively now (play phase)."""
        fixed = self.fixed_targets(g, user, vc)
        if fixed is not None:
            return bool(fixed)
        return any(
            self.target_ok(g, user, vc, t, {}) and not prohibited(g, t, user, vc.name)
            for t in order_from(g, user)
        )

    def ineffective(self, g: Game, use: UseCard, t: int) -> str:
        """A reason the card has no effect on ``t`` (仁王盾, 藤甲 …), or ""."""
        return ""

    def before_effects(self, g: Game, use: UseCard) -> None:
        """Runs once after targeting, before the per-target effects (五谷丰登 reveals)."""

    def effect(self, g: Game, use_idx: int, t: int) -> None:
        """The effect on one target; may push frames."""

    def second_targets(self, g: Game, use: UseCard) -> list[int] | None:
        """Options for a second, dependent target (借刀杀人's victim), or None."""
        return None

    def on_declare(self, g: Game, use: UseCard) -> None:
        """Runs when the use is announced (counts limits, consumes 酒)."""

    def after_effects(self, g: Game, use: UseCard) -> None:
        """Runs once after all targets (五谷丰登 discards the rest)."""

    def finish(self, g: Game, use: UseCard) -> None:
        """Where the used cards go: the discard pile (equipment and delayed tricks override)."""
        left = [c for c in use.vc.cards if c in g.processing]
        if left:
            move(g, left, "processing", "discard", reason="use")


CARD_SPECS: dict[str, CardSpec] = {}
# ruleset -> card name -> spec used instead of CARD_SPECS' (seed 003 changes 乐不思蜀 and 火攻)
RULESET_SPECS: dict[str, dict[str, CardSpec]] = {}
_MERGED: dict[str, dict[str, CardSpec]] = {}


def register_card(cls: type[CardSpec]) -> type[CardSpec]:
    """Class decorator registering a card spec under its name."""
    CARD_SPECS[cls.name] = cls()
    _MERGED.clear()
    return cls


def register_card_for(ruleset: str) -> Callable[[type[CardSpec]], type[CardSpec]]:
    """Class decorator: the spec of its card name in games of ``ruleset`` only."""

    def wrap(cls: type[CardSpec]) -> type[CardSpec]:
        RULESET_SPECS.setdefault(ruleset, {})[cls.name] = cls()
        _MERGED.clear()
        return cls

    return wrap


def specs_of(g: Game) -> dict[str, CardSpec]:
    """The card specs of ``g``'s ruleset: CARD_SPECS with the ruleset's own overriding."""
    merged = _MERGED.get(g.ruleset)
    if merged is None:
        merged = _MERGED[g.ruleset] = {**CARD_SPECS, **RULESET_SPECS.get(g.ruleset, {})}
    return merged


class UseCard(Frame, tag="use_card"):
    """One use of a card: declare, on-use, targeting windows, per-target effects, finish."""

    user: int
    vc: VCard
    targets: list[int] | None = None
    tflags: list[int] = msgspec.field(default_factory=list)
    i: int = 0
    extra: int = 0  # extra damage (酒)
    counted: bool = True  # counts toward the 杀 limit
    nullifiable: bool = True
    data: dict[str, Any] = msgspec.field(default_factory=dict)


def use_card(
    g: Game,
    user: int,
    vc: VCard,
    targets: list[int] | None = None,
    counted: bool = True,
    nullifiable: bool = True,
    data: dict[str, Any] | None = None,
) -> None:
    """Push a use of ``vc`` by ``user`` (targets chosen in the pipeline if None)."""
    push(
        g,
        UseCard(
            user=user,
            vc=vc,
            targets=targets,
            counted=counted,
            nullifiable=nullifiable,
            data=data or {},
        ),
    )


def choose_targets(g: Game, f: UseCard, spec: CardSpec) -> None:
    """Ask the user for targets (default: one decision picking min..max seats)."""
    legal = spec.legal_targets(g, f.user, f.vc, f.data)
    lo, hi = spec.target_range(g, f.user, f.vc)
    info: dict[str, Any] = {"card": f.vc.name, "cards": f.vc.cards, "skill": f.vc.skill}
    if type(spec).second_targets is not CardSpec.second_targets:
        info["two_step"] = True
    ask(g, f.user, "targets", [f"seat:{t}" for t in legal], lo, min(hi, len(legal)), info=info)


@handler(UseCard)
def _use_card(g: Game, f: UseCard) -> None:
    spec = specs_of(g)[f.vc.name]
    me = len(g.stack) - 1
    if f.pc == 0:
        f.pc = 1
        if f.targets is None:
            fixed = spec.fixed_targets(g, f.user, f.vc)
            if fixed is None:
                f.pc = 10
                choose_targets(g, f, spec)
                return
            f.targets = fixed
        _declare(g, f, spec)
        return
    if f.pc == 10:  # targets answered
        picks = answer(g)
        if not picks:
            pop(g, False)  # cancelled: the card stays where it was
            return
        f.targets = [int(p[5:]) for p in picks]
        f.targets.sort(key=lambda t: (t - f.user) % len(g.players))
        second = spec.second_targets(g, f)
        if second is not None:
            f.pc = 11
            ask(
                g,
                f.user,
                "targets",
                [f"seat:{t}" for t in second],
                declinable=False,
                info={"card": f.vc.name, "cards": f.vc.cards, "second": True},
            )
            return
        f.pc = 1
        _declare(g, f, spec)
        return
    if f.pc == 11:  # the dependent second target
        f.data["victim"] = int(answer(g)[0][5:])
        f.pc = 1
        _declare(g, f, spec)
        return
    targets = f.targets or []
    if f.pc == 2:  # "when becoming a target" (流离), one target at a time
        if f.i < len(targets):
            f.i += 1
            fire(g, "become_target", me, data={"i": f.i - 1}, seats=[targets[f.i - 1]])
            return
        f.i = 0
        f.pc = 3
    if f.pc == 3:  # "after targeting" (铁骑, 雌雄双股剑, 无双, 青釭剑, 烈弓)
        if f.i < len(targets):
            f.i += 1
            t = targets[f.i - 1]
            fire(
                g,
                "targeted",
                me,
                data={"i": f.i - 1},
                seats=[s for s in order_from(g, g.current) if s in (f.user, t)],
            )
            return
        f.i = 0
        f.pc = 4
        spec.before_effects(g, f)
        return
    if f.pc == 4:  # per target, in order
        while f.i < len(targets):
            t = targets[f.i]
            if not g.players[t].alive:
                f.i += 1
                continue
            why = spec.ineffective(g, f, t)
            if why:
                emit(g, Ineffective(target=t, name=f.vc.name, reason=why))
                f.i += 1
                continue
            if spec.kind == "trick" and f.nullifiable:
                f.pc = 5
                push(g, NullifyWindow(name=f.vc.name, target=t))
                return
            f.i += 1
            spec.effect(g, me, t)
            return
        f.pc = 6
        spec.after_effects(g, f)
        return
    if f.pc == 5:
        f.pc = 4
        t = targets[f.i]
        f.i += 1
        if g.ret:
            emit(g, Nullified(target=t, name=f.vc.name))
        elif g.players[t].alive:
            spec.effect(g, me, t)
        return
    spec.finish(g, f)
    pop(g, True)


def _declare(g: Game, f: UseCard, spec: CardSpec) -> None:
    """Announce the use, move the cards to the processing area, count limits, fire on-use."""
    f.pc = 2
    f.tflags = [0] * len(f.targets or [])
    for cid in f.vc.cards:
        zone = zone_of(g, f.user, cid)
        if zone:
            move(g, [cid], zone, "processing", f.user, reason="use")
    emit(
        g,
        CardUsed(
            user=f.user,
            name=f.vc.name,
            suit=f.vc.suit,
            rank=f.vc.rank,
            cards=f.vc.cards,
            targets=list(f.targets or []),
            skill=f.vc.skill,
        ),
    )
    spec.on_declare(g, f)
    fire(g, "card_using", len(g.stack) - 1)


class NullifyWindow(Frame, tag="nullify"):
    """Poll seats (from the current-turn seat) for 无懈可击; pops True if the effect is cancelled."""

    name: str
    target: int
    count: int = 0
    order: list[int] = msgspec.field(default_factory=list)
    i: int = 0


def can_nullify(g: Game, seat: int) -> bool:
    """Whether ``seat`` holds 无懈可击 or a skill providing one."""
    p = g.players[seat]
    cards = g.cards
    if any(cards[c].name == "无懈可击" for c in p.hand):
        return True
    providers = with_hook(g, seat, "provides")
    if not providers:
        return False
    probe = AskCard(user=seat, need="无懈可击")
    return any(s.provides(g, seat, probe) for s in providers)


@handler(NullifyWindow)
def _nullify(g: Game, f: NullifyWindow) -> None:
    if f.pc == 1:
        f.pc = 0
        if g.ret is not None:
            f.count += 1
            f.i = 0  # a fresh window for the new 无懈可击
        else:
            f.i += 1
    if not f.order:
        f.order = order_from(g, g.current)
    while f.i < len(f.order):
        s = f.order[f.i]
        if g.players[s].alive and can_nullify(g, s):
            f.pc = 1
            push(g, AskCard(user=s, need="无懈可击", reason=f.name, target=f.target))
            return
        f.i += 1
    pop(g, f.count % 2 == 1)


def ask_play(g: Game, seat: int, options: list[str]) -> None:
    """The active seat's free choice in its play phase (declining ends the phase)."""
    ask(g, seat, "play", options + ["end"], info={})
