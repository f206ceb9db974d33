"""Ruleset ``honglou``: seed 000, the 红楼梦 reskin of standard identity mode (REFERENCE §3).

Standard rules (§1), the 108 standard + EX cards without 军争 (A-000-01), standard weapon ranges.
The engine keeps the standard card and role names; the seed's names are printed and parsed:
药 = 桃, 护官符 = 八卦阵, 鸳鸯剑 = 雌雄双股剑, 连弩 = 诸葛连弩, 青龙刀 = 青龙偃月刀,
画戟 = 方天画戟, 主人 = lord, 仆人 = loyalist, 主人技 = 主公技. The 20 characters of the seed
(宁国府, 薛府, 群) carry the seed's skill names, registered as aliases of the standard skills in
``services.rules.skills``. Roles for 10 players: 1 主人, 3 仆人, 4 反贼, 2 内奸; 4–9 players use
the standard table. The lord gets +1 max HP; 护主 and 救援 work only while their holder is lord.

Draft (A-000-10), as ``draft`` decisions with options ``general:NAME``: the lord is offered 贾珍,
薛姨妈 and ``draft_lord_random`` random characters and picks first, publicly; every other seat is
offered k = min(``draft_max_offer``, floor(remaining / (N − 1))) of the rest and picks in secret
(``draft_offered`` and ``general_chosen`` events seen by that seat only); then all are revealed.

Options (REFERENCE Appendix A; default first):

* ``genders`` ("novel"): A-000-02, the characters' genders from the novel; "source" takes the
  gender of the standard general each copies.
* ``huzhu_others_only`` (True): A-000-03, 护主 asks the *other* alive 宁国府 characters, in turn
  order from the lord's next seat; False appends the lord itself (the literal "所有").
* ``ganglie_short_hand_discards`` (False): A-000-04, a 刚烈 source with fewer than two hand cards
  must take the damage; True lets it discard what it has instead.
* ``zuima_optional`` (False): A-000-05, 醉骂 is compulsory (the seed has no "可以").
* ``tiandu_any_judgement`` (False): A-000-06, 天妒 takes only its holder's own judgement cards.
* ``jiuyuan_literal`` (False): A-000-07, 救援 heals +1 when another 薛府 character's 药 saves the
  dying 主人; True: other 薛府 characters who use 药 on themselves while dying recover +1.
* ``fanjian_damage_first`` (True): A-000-08, 反间 deals its damage before the target obtains
  the card (the seed's order; the card waits in the processing area, discarded if it dies).
* ``zanghua_wounded_only`` (True): A-000-09, 葬花 needs a wounded target.
* ``shixue_self`` (False): A-000-11, damage to yourself (distance 0) does not count for 噬血.
* ``luoyi_play_phase_only`` (True): D-000-04, 裸衣's +1 lasts for that turn's play phase only.
* ``draft_lord_random`` (2), ``draft_max_offer`` (3): A-000-10's numbers.
* ``lord_bonus_min_players`` (0): A-STD-01; 5 = no +1 max HP in a 4-player game.
* ``double_renegade`` (False): as in ``standard``; and the options of every ruleset
  (``core/options.py``: ``max_reshuffles`` …).
* ``maneuvering`` (False): A-000-01; True adds the 军争 cards (not seed 000).

The characters keep the seed's texts wherever they are drafted (jinyu, extended, chengtian): a
ruleset without one of these options plays a character's skill as ``data.SEED_TEXTS`` says (夏金桂's
反间 deals its damage first, 惜春's 裸衣 lasts the play phase), a standard general's as the
standard text (``General.texts``, read by ``skills.base.opt`` with the holder's seat).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import Any

from ... import skills as _skills  # noqa: F401  (registers the standard skills)
from ...core.ruleset import VANILLA, General, register_ruleset
from ...core.state import Game
from ..standard import Standard
from .data import LORD_CANDIDATES, NAMES, PRINTED, SEED_TEXTS, characters


@register_ruleset
class HongLou(Standard):
    """Seed 000: 红楼梦 characters on standard identity rules."""

    name = "honglou"
    defaults = {
        "genders": "novel",
        **SEED_TEXTS,
        "draft_lord_random": 2,
        "draft_max_offer": 3,
        "lord_bonus_min_players": 0,
        "double_renegade": False,
        "maneuvering": False,
    }
    choices = {
        "genders": ("novel", "source"),
        "draft_lord_random": range(0, 19),
        "draft_max_offer": range(1, 21),
        "lord_bonus_min_players": range(0, 11),
    }
    aliases = dict(NAMES)

    def generals(self, options: Mapping[str, Any] | None = None) -> dict[str, General]:
        """The characters with the ``genders`` option of ``options`` applied (novel by default)."""
        source = (options or {}).get("genders") == "source"
        return {"vanilla": VANILLA, **characters(source_genders=source)}  # a copy of the cache

    def display_name(self, name: str) -> str:
        return PRINTED.get(name, name)

    def roster(self, g: Game) -> dict[str, General]:
        """The draftable characters with this game's gender option applied."""
        return characters(source_genders=g.options.get("genders") == "source")

    def setup(self, g: Game) -> None:
        self.setup_drafted(g)

    def lord_candidates(self, g: Game, roster: dict[str, General]) -> list[str]:
        """贾珍 and 薛姨妈 (the seed's 主人技 holders)."""
        return list(LORD_CANDIDATES)
