"""Ruleset ``extended``: seed 004, identity mode with 储君, 贼首, 佞臣 and 叛徒 (REFERENCE §6).

Two versions, chosen by the option ``variant``:

* ``beginner`` (初级版, the default): 8 players — 主公, 储君, 忠臣, 贼首, 3 反贼, 内奸.
* ``advanced`` (进阶版): 12 players — 主公, 储君, 丞相, 大将, 佞宦, 党人, 贼首, 穷寇, 义贼, 暴民,
  盗匪, 内奸; a 叛徒 may appear through the 内奸's 策立.

The seed's 10-player 标准版 is only referenced ("标准十人版跳转CV18629305"), not given, so it is
not implemented (U-004-01). Everything the seed leaves open follows standard identity rules (§1):
the draft (the 20 characters of ``honglou`` and the standard generals; ``generals: vanilla``
seats everyone as a 4-HP vanilla general), 4 starting cards, the deck (standard + EX + 军争).

Identity skills (``identity.py``) are game rules that general skills never touch (A-004-01); they
live in each seat's ``IdentityState`` (``base.py``). After every death the win/draw table is checked first (A-004-05),
then the death-triggered identity skills resolve in the seed's order (``frames.py``); they replace
the standard death rewards (A-004-02). Reveals are public ``role_assigned`` events; 立储 and 结党
are private ``role_learned`` events. Decisions the seed adds: ``confirm`` (``info.skill`` 策立,
``info.about`` pantu: become the 叛徒?), ``choose`` with ``extra_turn``/``lose_hp`` (策立 when all
refuse) and ``recover``/``draw`` (the ruler after 势颓), ``discard`` (背水), ``confirm`` 暴乱.

Options (REFERENCE Appendix A; default first):

* ``variant`` ("beginner") or "advanced".
* ``beginner_use_advanced_table`` (False): A-004-08, the beginner game uses its literal win
  conditions (lord and 储君 dead with only 内奸 and 忠臣 left: play on).
* ``advanced_row_priority`` ("table"): A-004-11, rows in table order (row 3, draw, before row 4);
  "lord_camp" tries row 4 first.
* ``standard_rewards`` (False): A-004-02; True also applies the standard rewards and penalties.
* ``junwei_stacks`` (False): A-004-03; True adds 君威's +1 to the standard lord +1.
* ``all_cards_include_judge`` (False): A-004-06, "弃置所有牌" is hand and equipment.
* ``generals`` ("draft") or "vanilla"; ``draft_lord_random`` (2), ``draft_max_offer`` (3).
* ``maneuvering`` (True): as in ``standard``; and the options of every ruleset
  (``core/options.py``: ``max_reshuffles`` …).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

import msgspec

from ...core.engine import emit, end_game, pop, push
from ...core.events import RoleLearned, SkillInvoked
from ...core.flow import GameFrame
from ...core.index import skills_changed
from ...core.options import NO_WINNER
from ...core.ruleset import VANILLA, General, UnknownOption, announce_start, register_ruleset
from ...core.state import Frame, Game
from ...core.views import View, secret
from ..honglou.data import characters
from ..standard import Standard
from ..standard.generals import standard_generals
from . import identity as _identity  # noqa: F401  (registers the identity skills)
from .base import IdentityState, state
from .camps import (
    ADVANCED_ROLES,
    BEGINNER_ROLES,
    CAMP_OF,
    DRAW,
    NINGCHEN_CAMP,
    advanced,
    advanced_result,
    beginner_result,
    winners_of,
)
from .frames import IdentityDeath
from .identity import RULER_AURAS

if TYPE_CHECKING:
    from ...core.redeal import Redeal

ROLE_SKILLS: dict[str, dict[str, tuple[str, ...]]] = {
    "beginner": {
        "lord": ("君威", "罪己"),
        "chujun": ("继位",),
        "zeishou": ("统义", "赏令"),
        "rebel": ("赏令",),
        "renegade": ("策立",),
    },
    "advanced": {
        "lord": ("君威", "立储", "罪己", *RULER_AURAS),
        "chujun": ("逆储", "继位"),
        "chengxiang": ("辅政",),
        "dajiang": ("护威",),
        "ninghuan": ("结党", "惑主"),
        "dangren": ("结党", "弄权"),
        "zeishou": ("统义", "聚义", "势颓", "军溃", "暴乱"),
        "qiongkou": ("背水",),
        "yizei": ("守义",),
        "baomin": ("暴乱",),
        "daofei": ("赃财",),
        "renegade": ("策立",),
        "pantu": ("纳赂", "仇叛"),
    },
}


def _variant(options: dict[str, Any]) -> str:
    v = str(options.get("variant", "beginner"))
    if v not in ROLE_SKILLS:
        raise ValueError(f"extended: variant {v!r} (beginner or advanced)")
    return v


@register_ruleset
class Extended(Standard):
    """Seed 004: the 8-player beginner and 12-player advanced identity games."""

    name = "extended"
    min_players = 8
    max_players = 12

    camps = CAMP_OF
    seat_state = IdentityState

    def tables(self) -> list[tuple[int, dict[str, Any]]]:
        """Only two tables exist: the 8-player beginner and the 12-player advanced game."""
        return [(8, {"variant": "beginner"}), (12, {"variant": "advanced"})]

    defaults = {
        "variant": "beginner",
        "beginner_use_advanced_table": False,
        "advanced_row_priority": "table",
        "standard_rewards": False,
        "junwei_stacks": False,
        "all_cards_include_judge": False,
        "generals": "draft",
        "draft_lord_random": 2,
        "draft_max_offer": 3,
        "maneuvering": True,
    }
    choices = {
        "variant": ("beginner", "advanced"),
        "advanced_row_priority": ("table", "lord_camp"),
        "generals": ("draft", "vanilla"),
        "draft_lord_random": range(0, 48),
        "draft_max_offer": range(1, 48),
    }

    def roles(self, players: int, options: dict[str, Any]) -> list[str]:
        v = _variant(options)
        roles = list(ADVANCED_ROLES if v == "advanced" else BEGINNER_ROLES)
        if players != len(roles):
            sizes = ", ".join(f"{t['variant']}: {n}" for n, t in self.tables())
            raise UnknownOption(
                f"extended with variant {v!r} seats {len(roles)} players, not {players} "
                f"(players by variant — {sizes})"
            )
        return roles

    def generals(self, options: Mapping[str, Any] | None = None) -> dict[str, General]:
        return {"vanilla": VANILLA, **self.pool()}

    def pool(self) -> dict[str, General]:
        """The draftable generals: the 20 红楼梦 characters and the standard generals."""
        return {**characters(), **standard_generals()}

    def roster(self, g: Game) -> dict[str, General]:
        return self.pool()

    def lord_bonus_for(self, options: dict[str, Any], players: int) -> int:
        """君威 (+1 max HP, +1 HP) replaces the standard lord +1 (A-004-03)."""
        return 2 if options.get("junwei_stacks") else 1

    def setup(self, g: Game) -> None:
        self.roles(len(g.players), g.options)  # reject a wrong table size before any event
        if g.options.get("generals", "draft") != "vanilla":
            self.setup_drafted(g)
            return
        announce_start(g)
        self.deal_roles(g)
        for seat in range(len(g.players)):
            self.seat_general(g, seat, VANILLA)
        self.deal(g)
        push(g, GameFrame(seat=0))

    def deal_roles(self, g: Game) -> None:
        """Deal the roles (lord to seat 0: 君威's reveal and first seat), give every seat its
        identity skills, then 立储 and 结党 as private ``role_learned`` events."""
        super().deal_roles(g)
        self.attach_identities(g)
        emit(g, SkillInvoked(seat=0, skill="君威"))
        learn(g)

    def attach_identities(self, g: Game) -> None:
        """Every seat gets its role's identity skills."""
        table = ROLE_SKILLS[_variant(g.options)]
        for p in g.players:
            state(p).identity = list(table.get(p.role, ()))
        skills_changed(g)

    def prepare_table(self, g: Game) -> None:
        """A scenario's table: identity skills, and what 立储/结党 let seats know all game long
        (emitted when the scenario starts running)."""
        self.attach_identities(g)
        push(g, Learn())

    def roles_redealt(self, g: Game, seat: int, before: dict[int, str], rd: Redeal) -> None:
        """The identity skills go with the role card, as the game has left them (军溃 turns
        every rebel-camp card's into 赏令 alike): a seat dealt a card takes those of a seat
        that held it (the least, should two cards of a role differ, so nothing shows which)."""
        held: dict[str, IdentityState] = {}
        for t, role in before.items():
            mine = state(g.players[t])
            if role not in held or _order(mine) < _order(held[role]):
                held[role] = mine
        for t in before:
            took = held[g.players[t].role]
            g.players[t].ext = IdentityState(
                identity=list(took.identity), lord_skills=took.lord_skills
            )
        skills_changed(g)

    def check_winner(self, g: Game) -> None:
        """§6.2.3 / §6.3.3 after every death (A-004-05: before any death-triggered skill)."""
        result = (advanced_result if advanced(g) else beginner_result)(g, g.options)
        if result == DRAW:
            end_game(g, [], draw=True, reason=NO_WINNER)
        elif result is not None:
            end_game(g, winners_of(g, result))

    def death_penalty(self, g: Game, dead: int, killer: int) -> None:
        """The identity skills replace the standard rewards and penalties (A-004-02)."""
        if g.options.get("standard_rewards"):
            super().death_penalty(g, dead, killer)
        push(g, IdentityDeath(dead=dead, killer=killer))


def _order(st: IdentityState) -> tuple[list[str], bool]:
    return st.identity, st.lord_skills


def learn(g: Game) -> None:
    """立储 (advanced): the lord alone learns the 储君's seat; 结党: the 佞臣 learn each other."""
    if not advanced(g):
        return
    heir = next((p.seat for p in g.players if p.role == "chujun"), -1)
    lord = next((p.seat for p in g.players if p.role == "lord"), -1)
    if heir >= 0 and lord >= 0:
        emit(g, SkillInvoked(seat=lord, skill="立储"))
        emit(g, RoleLearned(learner=lord, seat=heir, role="chujun", seen_by=[lord]))
    ning = [p.seat for p in g.players if CAMP_OF.get(p.role) == NINGCHEN_CAMP]
    for a in ning:
        for b in ning:
            if a != b:
                emit(g, RoleLearned(learner=a, seat=b, role=g.players[b].role, seen_by=[a]))


def _fold_learned(v: View, e: RoleLearned) -> None:
    if e.seat >= 0:
        v.seats[e.seat].role = e.role


# who learns is itself secret (结党 names a 佞臣 to anyone who sees who learned)
secret(
    RoleLearned,
    lambda e: msgspec.structs.replace(e, learner=-1, seat=-1, role="", seen_by=[]),
    fold=_fold_learned,
)


class Learn(Frame, tag="extended_learn"):
    """Emits :func:`learn`'s events once (a scenario table's starting knowledge)."""

    def start(self, g: Game) -> None:
        pop(g)
        learn(g)
