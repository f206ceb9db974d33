"""The card catalogue (services/readside/catalogue.py) is every table's own card table, built
from the ruleset's deck without dealing a game."""

from __future__ import annotations

import msgspec

from services.readside import catalogue
from services.rules import api


def test_the_catalogue_is_the_dealt_games_card_table_for_every_table() -> None:
    tables = 0
    for ruleset in api.rulesets():
        for players, options in api.RULESETS[ruleset].tables():
            g = api.new_game(ruleset, players, 0, options)
            want = [[c.name, c.suit, c.rank, c.type, c.subtype] for c in g.cards]
            assert msgspec.json.decode(catalogue.cards_json(ruleset, players, options)) == want
            tables += 1
    assert tables > 10


def test_printed_names_and_generals() -> None:
    assert catalogue.printed_names("honglou")["桃"] != "桃"  # 红楼梦 prints its own names
    assert catalogue.printed_names("extended")["chengxiang"] == "丞相"
    assert all(hp > 0 for _, hp in catalogue.generals("standard").values())
