"""The play phase's options (``flow.play_options``) are what asking every card afresh gives.

``play_options`` asks once per card name and with the kept probe cards (``vcard.probes``); here,
at every play decision of random games of every ruleset, each hand card is asked on its own
with a fresh ``physical`` card, and the probes must come out of it unchanged."""

from __future__ import annotations

from typing import Any

import pytest

from services.rules import api
from services.rules.core.keys import card_key, recast_key, skill_key
from services.rules.core.query import with_hook
from services.rules.core.state import Game
from services.rules.core.use import specs_of
from services.rules.core.vcard import physical, probes
from tests.rules.test_event_digests import CASES, Picker


def reference_options(g: Game, seat: int) -> list[str]:
    """The play options as the rules state them: every hand card asked on its own."""
    out = []
    for cid in g.players[seat].hand:
        spec = specs_of(g).get(g.cards[cid].name)
        if spec is not None and spec.can_use(g, seat, physical(g, cid)):
            out.append(card_key(cid))
        if spec is not None and spec.recastable:
            out.append(recast_key(cid))
    out += [
        skill_key(s.name) for s in with_hook(g, seat, "can_activate") if s.can_activate(g, seat)
    ]
    return out + ["end"]


@pytest.mark.parametrize(("ruleset", "players", "options", "seed"), CASES[1::3], ids=str)
def test_play_options_are_every_card_asked(
    ruleset: str, players: int, options: dict[str, Any], seed: int
) -> None:
    g = api.new_game(ruleset, players, seed, options)
    picker = Picker(seed * 7919 + players)
    api.advance(g)
    asked = 0
    while (d := api.pending(g)) is not None:
        if d.kind == "play":
            assert d.options == reference_options(g, d.seat), f"decision {d.id}"
            asked += 1
        api.submit(g, picker.act(d))
    assert asked > 0
    assert list(probes(g)) == [physical(g, c) for c in range(len(g.cards))]
