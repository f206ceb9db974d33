"""The use pipeline (§1.8.1) and the 无懈可击 window (§1.13), shared by every card.

A card's behaviour is a ``CardSpec`` registered under its name: who it may target, whether it can
be used now, and ``effect`` — what happens to one target (usually by pushing an effect frame).
"""

from __future__ import annotations

from collections.abc import Callable, Sequence
from typing import Any, ClassVar

import msgspec

from .engine import answer, ask, pop
from .events import CardUsed, Ineffective, Nullified
from .index import held, index_of, seat_entry
from .keys import SeatPick, read, seat_key, seat_keys, seat_of, seats_of
from .query import ids_named, order_from, prohibited, turn_order, with_hook
from .refusal import target_refusal
from .respond import AskCard
from .state import Decision, Frame, Game
from .triggers import fire, listens
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
    # What the card does to its targets, for players' programs (the bots) to read, never the
    # rules: "hostile" (hurts the one target its user picks: 杀, 决斗, 乐不思蜀 …), "harmful"
    # (hurts, but not aimed at a picked enemy: 南蛮入侵, 借刀杀人, 铁索连环, 闪电 …), "helpful"
    # (good for its targets: 无中生有, 桃园结义, 五谷丰登), "" (neither)
    stance: ClassVar[str] = ""
    every_other: ClassVar[bool] = False  # its targets are every other seat (南蛮入侵, 万箭齐发)

    def fixed_targets(self, g: Game, user: int, vc: VCard) -> list[int] | None:
        """Targets that are not chosen (self, all others …), or None if the user chooses."""
        return None

    def target_ok(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> bool:
        """Whether ``t`` may be chosen as a target (before the common checks)."""
        return t != user

    def legal_targets(self, g: Game, user: int, vc: VCard, data: dict[str, Any]) -> list[int]:
        """Alive seats that may be chosen, not prohibited by skills (谦逊, 空城 …)."""
        protects = "prohibits" in (
            idx.held if (idx := g.skill_index) is not None and idx.held is not None else held(g)
        )  # index.held
        return [
            t
            for t in turn_order(g, user)
            if self.target_ok(g, user, vc, t, data)
            and not (protects and prohibited(g, t, user, vc.name))
        ]

    def target_range(self, g: Game, user: int, vc: VCard) -> tuple[int, int]:
        """How many targets may be chosen (min, max)."""
        return self.min_targets, self.max_targets

    def can_use(self, g: Game, user: int, vc: VCard) -> bool:
        """Whether ``user`` may use ``vc`` actively now (play phase)."""
        fixed = self.fixed_targets(g, user, vc)
        if fixed is not None:
            return bool(fixed)
        protects = "prohibits" in (
            idx.held if (idx := g.skill_index) is not None and idx.held is not None else held(g)
        )  # index.held
        data: dict[str, Any] = {}
        for t in turn_order(g, user):  # the first legal target is enough
            if self.target_ok(g, user, vc, t, data) and not (
                protects and prohibited(g, t, user, vc.name)
            ):
                return True
        return False

    def refuse_target(self, g: Game, user: int, vc: VCard, t: int, data: dict[str, Any]) -> str:
        """Why ``t`` may not be a target (called when it may not), naming the rule."""
        return target_refusal(g, user, t, vc.name) or f"seat {t} is not a legal target of {vc.name}"

    def refuse_use(self, g: Game, user: int, vc: VCard) -> str:
        """Why ``user`` may not use ``vc`` now (called when it may not), naming the rule."""
        fixed = self.fixed_targets(g, user, vc)
        if fixed is not None:
            return f"{vc.name} has no target now"
        why = [
            self.refuse_target(g, user, vc, t, {})
            for t in order_from(g, user)
            if not self.target_ok(g, user, vc, t, {}) or prohibited(g, t, user, vc.name)
        ]
        return f"no legal target for {vc.name} ({'; '.join(why)})"

    def refuse_second(self, g: Game, use: UseCard, t: int) -> str:
        """Why ``t`` may not be the second, dependent target (借刀杀人's victim)."""
        return f"seat {t} may not be chosen"

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
# ruleset -> card name -> spec used instead of CARD_SPECS' (a ruleset printing other card texts)
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


class CardUse(msgspec.Struct, frozen=True):
    """What a player's program may know of a card name from the registry (`card_uses`)."""

    name: str
    kind: str  # basic, trick, delayed, equip
    stance: str  # hostile, harmful, helpful, "" (CardSpec.stance)
    every_other: bool


def card_uses() -> dict[str, CardUse]:
    """Every registered card name's `CardUse` (its standard spec: a ruleset's own text of a card
    keeps its stance), for the bots; the rules themselves read the specs."""
    specs = {n: s for own in RULESET_SPECS.values() for n, s in own.items()}
    specs.update(CARD_SPECS)  # a name of every ruleset: its standard spec
    return {n: CardUse(n, s.kind, s.stance, s.every_other) for n, s in specs.items()}


def specs_of(g: Game) -> dict[str, CardSpec]:
    """The card specs of ``g``'s ruleset: CARD_SPECS with the ruleset's own overriding."""
    merged = _MERGED.get(g.ruleset)
    if merged is None:
        merged = _MERGED[g.ruleset] = {**CARD_SPECS, **RULESET_SPECS.get(g.ruleset, {})}
    return merged


class UseCard(Frame, tag="use_card"):
    """One use of a card (§1.8.1): targets, declaration, the windows "when becoming a target" and
    "after targeting", then the effect on each target in order (无懈可击 first for a trick)."""

    user: int
    vc: VCard
    targets: list[int] | None = None
    tflags: list[int] = msgspec.field(default_factory=list)
    i: int = 0
    extra: int = 0  # extra damage (酒)
    counted: bool = True  # counts toward the 杀 limit
    nullifiable: bool = True
    data: dict[str, Any] = msgspec.field(default_factory=dict)

    def spec(self, g: Game) -> CardSpec:
        """The card's spec (looked up afresh: 朱雀羽扇 may turn a 杀 into a 火杀)."""
        return (_MERGED.get(g.ruleset) or specs_of(g))[self.vc.name]

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        if not pick and d.kind == "targets":
            return f"{self.vc.name} takes at most {d.max} target{'s' if d.max > 1 else ''} here"
        choice = read(pick)
        if not isinstance(choice, SeatPick) or d.kind != "targets":
            return ""
        t, spec = choice.seat, self.spec(g)
        if self.step == "second_target_chosen":
            return spec.refuse_second(g, self, t)
        if seat_key(t) in d.options:  # offered, though spelt otherwise ("seat:03")
            return ""
        return spec.refuse_target(g, self.user, self.vc, t, self.data)

    def start(self, g: Game) -> None:
        spec = self.spec(g)
        if self.targets is None:
            fixed = spec.fixed_targets(g, self.user, self.vc)
            if fixed is None:
                self.step = "targets_chosen"
                choose_targets(g, self, spec)
                return
            self.targets = fixed
        self.declare(g, spec)

    def targets_chosen(self, g: Game) -> None:
        spec = self.spec(g)
        picks = answer(g)
        if not picks:
            pop(g, False)  # cancelled: the card stays where it was
            return
        self.targets = seats_of(picks)
        self.targets.sort(key=lambda t: (t - self.user) % len(g.players))
        second = spec.second_targets(g, self)
        if second is None:
            self.declare(g, spec)
            return
        self.step = "second_target_chosen"
        ask(
            g,
            self.user,
            "targets",
            seat_keys(second),
            declinable=False,
            info={"card": self.vc.name, "cards": self.vc.cards, "second": True},
        )

    def second_target_chosen(self, g: Game) -> None:
        self.data["victim"] = seat_of(answer(g)[0])
        self.declare(g, self.spec(g))

    def declare(self, g: Game, spec: CardSpec) -> None:
        """Announce the use, move the cards to the processing area, count limits. Moving the
        cards may fire ``hand_emptied``/``equip_lost`` (连营, 枭姬): those run before the on-use
        timing point, which is the next step."""
        self.tflags = [0] * len(self.targets or [])
        for cid in self.vc.cards:
            zone = zone_of(g, self.user, cid)
            if zone:
                move(g, [cid], zone, "processing", self.user, reason="use")
        g.out.append(  # emit
            CardUsed(
                user=self.user,
                name=self.vc.name,
                suit=self.vc.suit,
                rank=self.vc.rank,
                cards=self.vc.cards,
                targets=list(self.targets or []),
                skill=self.vc.skill,
            )
        )
        spec.on_declare(g, self)
        self.carry_on(g, self.declared)

    def declared(self, g: Game) -> None:
        """ "When used" (集智, 朱雀羽扇, 克己's bookkeeping, 谋攻 强化)."""
        self.step = "becoming_targets"
        idx = g.skill_index  # nobody listening at a use (the usual): no call
        quiet = idx is not None and idx.heard is not None and "card_using" not in idx.heard
        if quiet or not fire(g, "card_using", g.top, last=True):
            self.becoming_targets(g)

    def becoming_targets(self, g: Game) -> None:
        """ "When becoming a target" (流离), one target at a time (on at once past a target no
        skill listens for)."""
        targets = self.targets or []
        while self.i < len(targets) and listens(g, "become_target", targets):
            self.i += 1
            t = targets[self.i - 1]
            # not ``last``: 流离's condition measures distances without one of its cards, which
            # moves that card to the end of the seat's equipment (an order decisions show)
            if fire(g, "become_target", g.top, data={"i": self.i - 1}, seats=[t]):
                return
        self.i = 0
        self.goto(g, self.after_targeting)

    def after_targeting(self, g: Game) -> None:
        """ "After targeting" (铁骑, 雌雄双股剑, 无双, 青釭剑, 烈弓), user and target side."""
        targets = self.targets or []
        while self.i < len(targets) and listens(g, "targeted"):
            self.i += 1
            t = targets[self.i - 1]
            if listens(g, "targeted", [self.user, t]) and fire(
                g,
                "targeted",
                g.top,
                data={"i": self.i - 1},
                seats=[s for s in order_from(g, g.current) if s in (self.user, t)],
                last=True,
            ):
                return
        self.i = 0
        self.spec(g).before_effects(g, self)
        self.carry_on(g, self.each_target)

    def each_target(self, g: Game) -> None:
        """The effect on the next target still alive: ineffective, or (a trick) 无懈可击 first."""
        spec = (_MERGED.get(g.ruleset) or specs_of(g))[self.vc.name]  # self.spec(g)
        targets = self.targets or []
        idx = g.skill_index  # whether any seat has a skill making a card ineffective (index.held)
        hooks = idx.held if idx is not None and idx.held is not None else held(g)
        while self.i < len(targets):
            t = targets[self.i]
            if not g.players[t].alive:
                self.i += 1
                continue
            why = ineffective(g, self, self.i) if "card_ineffective" in hooks else ""
            if why:
                g.out.append(Ineffective(target=t, name=self.vc.name, reason=why))
                self.i += 1
                continue
            if spec.kind == "trick" and self.nullifiable:
                if may_nullify(g):
                    self.step = "nullify_answered"
                    g.stack.append(NullifyWindow(name=self.vc.name, target=t))
                    return
                g.ret = False  # what a window nobody can answer hands back: not nullified
            self.i += 1
            spec.effect(g, g.top, t)
            self.carry_on(g, self.each_target)
            return
        spec.after_effects(g, self)
        self.carry_on(g, self.finish)

    def nullify_answered(self, g: Game) -> None:
        t = (self.targets or [])[self.i]
        self.i += 1
        if g.ret:
            g.out.append(Nullified(target=t, name=self.vc.name))
        elif g.players[t].alive:
            self.spec(g).effect(g, g.top, t)
        self.carry_on(g, self.each_target)

    def finish(self, g: Game) -> None:
        (_MERGED.get(g.ruleset) or specs_of(g))[self.vc.name].finish(g, self)  # self.spec(g)
        pop(g, True)


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
    g.stack.append(
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
    ask(g, f.user, "targets", seat_keys(legal), lo, min(hi, len(legal)), info=info)


def ineffective(g: Game, use: UseCard, i: int) -> str:
    """Why the card of ``use`` has no effect on its ``i``-th target: the name of a skill of the
    target that makes it so (仁王盾, 藤甲), unless that skill is armour the use ignores on this
    target (青釭剑's IGNORE_ARMOR); "" if the card takes effect."""
    t = (use.targets or [])[i]
    for s in with_hook(g, t, "card_ineffective"):
        if s.armor and use.tflags[i] & IGNORE_ARMOR:
            continue
        if s.card_ineffective(g, t, use.vc):
            return s.name
    return ""


class NullifyWindow(Frame, tag="nullify"):
    """Poll seats (from the current-turn seat) for 无懈可击; pops True if the effect is cancelled.
    Each 无懈可击 opens a fresh window for the next one."""

    name: str
    target: int
    count: int = 0
    order: list[int] = msgspec.field(default_factory=list)
    i: int = 0

    def start(self, g: Game) -> None:
        if not self.order:
            self.order = order_from(g, g.current)
        self.i = next_nullifier(g, self.order, self.i)
        if self.i < len(self.order):
            self.step = "asked"
            s = self.order[self.i]
            g.stack.append(AskCard(user=s, need="无懈可击", reason=self.name, target=self.target))
            return
        pop(g, self.count % 2 == 1)

    def asked(self, g: Game) -> None:
        if g.ret is not None:
            self.count += 1
            self.i = 0  # a fresh window for the new 无懈可击
        else:
            self.i += 1
        self.goto(g, self.start)


def next_nullifier(g: Game, order: Sequence[int], i: int) -> int:
    """The index in ``order``, from ``i`` on, of the next alive seat that can answer with a
    无懈可击, from its hand or through a providing skill (``len(order)`` if none can)."""
    players = g.players
    nullifications = ids_named(g, "无懈可击")
    if "provides" not in held(g):  # no providing skill anywhere: only a hand answers
        while i < len(order):
            p = players[order[i]]
            if p.alive and not nullifications.isdisjoint(p.hand):
                return i
            i += 1
        return i
    # one demand to ask the providers with (they read what it needs)
    probe = AskCard(user=-1, need="无懈可击")
    entries = index_of(g).seats  # each seat's providers (index.hooked, without a call a seat)
    while i < len(order):
        s = order[i]
        p = players[s]
        if p.alive:
            if not nullifications.isdisjoint(p.hand):
                return i
            providers = (entries[s] or seat_entry(g, s)).hooks["provides"]
            if providers:
                probe.user = s
                for k in providers:
                    if k.provides(g, s, probe):
                        return i
        i += 1
    return i


def may_nullify(g: Game) -> bool:
    """Whether a 无懈可击 window would ask anyone: when no seat can answer, the trick takes
    effect without one (a window asking nobody changes nothing and emits nothing)."""
    order = turn_order(g, g.current)
    return next_nullifier(g, order, 0) < len(order)


def ask_play(g: Game, seat: int, options: list[str]) -> None:
    """The active seat's free choice in its play phase (declining ends the phase)."""
    ask(g, seat, "play", options + ["end"], info={})
