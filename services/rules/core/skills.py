"""Skill hooks: a skill is a small named object registered once; seats hold only its name.

Kinds of hook (one skill may use several):

* trigger: listens at named timing points (``events``); ``can`` says whether it applies, ``run``
  does it (it may push frames). ``optional`` skills are offered as a ``confirm`` decision first;
  locked skills (锁定技) just run. Each skill triggers at most once per trigger point.
* active: offered in the play phase as ``skill:NAME`` when ``can_activate``; ``activate`` pushes
  the procedure.
* provider: offered in a ``respond`` decision when ``provides(need)`` (八卦阵, 倾国, 护驾 …);
  ``provide`` pushes a frame that leaves a virtual card (or None) in ``game.ret``.
* modifiers: distance, attack range, 杀 limit, hand limit, target prohibition.

Equipment effects are skills named after the card (SCENARIOS.md: "equipment effects such as 八卦阵
or 寒冰剑 are skills by the card's name"): a seat has them while the card is equipped.
"""

from __future__ import annotations

from typing import Any, ClassVar

from .state import Game
from .vcard import VCard


class Skill:
    """Base class of all skills; override only the hooks the skill uses."""

    name: ClassVar[str] = ""
    events: ClassVar[tuple[str, ...]] = ()
    optional: ClassVar[bool] = True
    lord: ClassVar[bool] = False  # 主公技: only while its holder is the lord
    armor: ClassVar[bool] = False  # an armour's effect: set aside by IGNORE_ARMOR (青釭剑)
    asks_itself: ClassVar[bool] = False  # optional, but ``run`` asks its own declinable decision
    # its distance_from/distance_to follow from the seats alone (马术: always −1), so distances
    # measured with it may be kept until a seat's skills, a horse or a death change them
    fixed_distance: ClassVar[bool] = False
    text: ClassVar[str] = ""

    # --- trigger hooks ---------------------------------------------------------------------
    def is_optional(self, g: Game, seat: int, trig: Any) -> bool:
        """Whether the owner is asked first at ``trig`` (default: the class's ``optional``); a
        ruleset option can make a skill optional, or a skill locked at one point only."""
        return self.optional

    def can(self, g: Game, seat: int, trig: Any) -> bool:
        """Whether this skill of ``seat`` applies at the trigger ``trig`` (a Trigger frame)."""
        return True

    def run(self, g: Game, seat: int, trig: Any) -> None:
        """Do the skill's effect (may push frames)."""

    # --- active skills -----------------------------------------------------------------------
    def can_activate(self, g: Game, seat: int) -> bool:
        """Whether ``skill:NAME`` is offered in ``seat``'s play phase."""
        return False

    def activate(self, g: Game, seat: int) -> None:
        """Start the active skill's procedure."""

    def refusal(self, g: Game, seat: int) -> str:
        """Why ``seat`` cannot use this skill now, naming the rule (once per turn …), or ""."""
        return ""

    # --- providers (respond with a virtual card) ---------------------------------------------
    def provides(self, g: Game, seat: int, ask: Any) -> bool:
        """Whether the skill can supply the card an AskCard frame demands (``ask.need``)."""
        return False

    def provide(self, g: Game, seat: int, ask: Any) -> None:
        """Push the frame that supplies the card; it pops with a VCard or None."""

    # --- modifiers ---------------------------------------------------------------------------
    def distance_from(self, g: Game, seat: int, other: int) -> int:
        """Added to ``seat``'s distance to ``other``."""
        return 0

    def distance_to(self, g: Game, seat: int, other: int) -> int:
        """Added to ``other``'s distance to ``seat``."""
        return 0

    def attack_range(self, g: Game, seat: int) -> int:
        """Added to ``seat``'s attack range."""
        return 0

    def slash_limit(self, g: Game, seat: int) -> int:
        """Added to how many 杀 ``seat`` may use in a play phase (a large number = unlimited)."""
        return 0

    def use_card_ok(self, g: Game, seat: int, card_name: str) -> bool:
        """False forbids ``seat`` to use ``card_name`` at all."""
        return True

    def target_count(self, g: Game, seat: int, vc: VCard) -> int:
        """Extra targets ``seat`` may choose for the card ``vc`` (方天画戟)."""
        return 0

    def card_ineffective(self, g: Game, seat: int, vc: VCard) -> bool:
        """Whether the card ``vc`` used with ``seat`` among its targets has no effect on it
        (仁王盾, 藤甲); the ``Ineffective`` event names this skill."""
        return False

    def hand_limit(self, g: Game, seat: int) -> int:
        """Added to ``seat``'s hand limit."""
        return 0

    def ignores_distance(self, g: Game, seat: int, card_name: str) -> bool:
        """Whether ``seat`` uses ``card_name`` with no distance limit (奇才: tricks)."""
        return False

    def no_distance_limit(self, g: Game, seat: int, user: int, card_name: str) -> bool:
        """Whether ``card_name`` used by ``user`` on ``seat`` has no distance limit (仇叛); the
        distance itself is unchanged (a "within distance 1" skill still measures it)."""
        return False

    def prohibits(self, g: Game, seat: int, user: int, card_name: str) -> bool:
        """Whether ``seat`` cannot be chosen as a target of ``card_name`` used by ``user``."""
        return False


SKILLS: dict[str, Skill] = {}
LISTENERS: dict[str, set[str]] = {}
# hook name -> names of the skills that override it (queries skip every other skill)
HOOKS = (
    "distance_from",
    "distance_to",
    "attack_range",
    "slash_limit",
    "hand_limit",
    "prohibits",
    "provides",
    "can_activate",
    "use_card_ok",
    "target_count",
    "ignores_distance",
    "no_distance_limit",
    "card_ineffective",
)
HOOK_SETS: dict[str, set[str]] = {h: set() for h in HOOKS}


def register(cls: type[Skill]) -> type[Skill]:
    """Class decorator: instantiate and register a skill under its name."""
    inst = cls()
    SKILLS[cls.name] = inst
    for ev in cls.events:
        LISTENERS.setdefault(ev, set()).add(cls.name)
    for hook in HOOKS:
        if getattr(cls, hook) is not getattr(Skill, hook):
            HOOK_SETS[hook].add(cls.name)
    return cls
