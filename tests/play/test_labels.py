"""Every decision every ruleset asks, in a player's words: self-played games of each ruleset and
table, every decision labelled by services/play/labels.py with a prompt and a label per option
(never the raw key), so no decision kind falls back to option strings on the page."""

from __future__ import annotations

from typing import Any

import pytest

from services.bots.selfplay import make_policy
from services.play import labels
from services.rules import api
from services.rules.api import fold_view as apply
from services.rules.api import new_view, redact

TABLES: list[tuple[str, int, dict[str, Any], int]] = [  # (ruleset, players, options, games)
    ("standard", 5, {"generals": "draft"}, 3),
    ("standard", 8, {}, 1),
    ("honglou", 10, {}, 2),
    ("jinyu", 8, {"mougong": True}, 3),
    ("jinyu", 5, {}, 1),
    ("extended", 8, {}, 2),
    ("extended", 12, {"variant": "advanced"}, 1),
    ("chengtian", 2, {}, 4),
]
# the kinds each ruleset asks in these games (a ruleset asking fewer is a change to look at)
EXPECTED = {"play", "targets", "respond", "discard", "cards", "confirm", "choose", "draft"}


def raw(text: str) -> bool:
    """A label that is a key shown as it is (ascii, one word)."""
    return text.isascii() and " " not in text.strip()


@pytest.mark.parametrize(("ruleset", "players", "options", "games"), TABLES)
def test_every_decision_is_labelled(
    ruleset: str, players: int, options: dict[str, Any], games: int
) -> None:
    table = labels.Table(
        cards=[[c.name, c.suit, c.rank] for c in api.new_game(ruleset, players, 0, options).cards],
        seat_names=[f"P{i}" for i in range(players)],
        names=api.display_names(ruleset),
        generals=api.general_table(ruleset),
    )
    kinds: set[str] = set()
    abouts: set[str] = set()
    for seed in range(games):
        g = api.new_game(ruleset, players, seed, options)
        events = list(api.advance(g))
        pols = [make_policy("heuristic", seed * 7 + s, s) for s in range(players)]
        views = [new_view(s) for s in range(players)]
        while not g.over and (d := api.pending(g)) is not None:
            for e in events:
                for s in range(players):
                    r = redact(e, s)
                    apply(views[s], r)
                    pols[s].observe(r)
            out = labels.decision(d, table, 1, 0)
            assert out.prompt and not raw(out.prompt), out
            assert [o.key for o in out.options] == list(d.options)
            bad = [(o.key, o.text) for o in out.options if raw(o.text) or o.text == o.key]
            assert not bad, f"{d.kind} ({d.info}): {bad}"
            if ruleset == "honglou":  # 红楼梦 prints 药 for 桃
                peaches = [o for o in out.options if o.card >= 0 and table.cards[o.card][0] == "桃"]
                assert all(o.text.startswith("药") for o in peaches), peaches
            kinds.add(d.kind)
            abouts.add(str(d.info.get("about", "")))
            events = api.submit(g, pols[d.seat].act(d, views[d.seat]))
    assert EXPECTED - {"draft"} <= kinds or ruleset == "chengtian", sorted(kinds)
    if ruleset == "jinyu" and options.get("mougong"):
        assert "强化" in abouts
    if ruleset == "chengtian":
        assert "camp" in abouts  # the deployment order is a draft per camp position
