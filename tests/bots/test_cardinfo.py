"""The bots read what a card is from the rules' card registry (services/rules: CardSpec.stance,
every_other; api.card_uses), not from tables of their own: the sets they derive are the ones the
policies were tuned with, and every card a policy calls hostile hurts the target it picks."""

from __future__ import annotations

from services.bots import cardinfo
from services.rules import api


def test_the_registry_gives_the_sets_the_policies_use() -> None:
    slashes = {"杀", "火杀", "雷杀"}
    assert set(cardinfo.SLASHES) == slashes
    assert (
        slashes
        | {
            "决斗",
            "过河拆桥",
            "顺手牵羊",
            "火攻",
            "乐不思蜀",
            "兵粮寸断",
        }
        == cardinfo.HOSTILE_CARDS
    )
    assert (cardinfo.HOSTILE_CARDS - slashes) | {
        "南蛮入侵",
        "万箭齐发",
        "借刀杀人",
        "闪电",
        "铁索连环",
    } == cardinfo.HARMFUL_TRICKS
    assert {"无中生有", "桃园结义", "五谷丰登"} == cardinfo.HELPFUL_TRICKS
    assert {"南蛮入侵", "万箭齐发"} == cardinfo.AOE
    assert {"乐不思蜀", "兵粮寸断"} == cardinfo.BAD_JUDGE
    assert cardinfo.SLOT_OF["defensive_horse"] == "plus"


def test_every_stance_is_one_of_four_and_a_ruleset_text_keeps_it() -> None:
    uses = api.card_uses()
    assert {u.stance for u in uses.values()} <= {"hostile", "harmful", "helpful", ""}
    assert uses["乐不思蜀"].stance == "hostile"  # chengtian prints its own 乐不思蜀: same stance
    assert api.nature_of("火杀") == "fire" and api.nature_of("杀") == "normal"
    for name in cardinfo.HOSTILE_CARDS:  # aimed at one target its user picks
        assert not uses[name].every_other, name
