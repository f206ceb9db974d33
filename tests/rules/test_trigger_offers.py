"""A timing point fired as the last thing a step does (``fire(..., last=True)``) pushes its
Trigger only if some skill can trigger (``Trigger.offers``); when one can, the Trigger's first
step asks the same skills again. That is the engine as before only if asking twice is asking
once: a skill's ``can`` may keep books (狂骨 marks whether the damage is near) but must come to
the same state and answer when asked again. Here, in random games of every ruleset, every
such question is asked a second time and the state encoded after each must be the same bytes.
(流离's condition is not idempotent: it measures distances without one of its cards, which
moves that card to the end of the seat's equipment; its point, ``become_target``, is fired
without ``last``, and this test fails on honglou-10-220 if it is not.)
"""

from __future__ import annotations

from typing import Any

import pytest

from services.rules import api
from services.rules.core import triggers
from services.rules.core.state import Game
from tests.rules.test_event_digests import CASES, Picker


@pytest.mark.parametrize(("ruleset", "players", "options", "seed"), CASES, ids=str)
def test_asking_a_trigger_twice_is_asking_once(
    ruleset: str, players: int, options: dict[str, Any], seed: int, monkeypatch: pytest.MonkeyPatch
) -> None:
    offers = triggers.Trigger.offers
    asked = [0]

    def twice(self: triggers.Trigger, g: Game) -> bool:
        pending, g.pending = g.pending, None  # (no decision is pending while a step runs)
        found = offers(self, g)
        once = api.snapshot(g)
        assert offers(self, g) == found and api.snapshot(g) == once, self.point
        g.pending = pending
        asked[0] += 1
        return found

    monkeypatch.setattr(triggers.Trigger, "offers", twice)
    g = api.new_game(ruleset, players, seed, options)
    picker = Picker(seed * 7919 + players)
    api.advance(g)
    while (d := api.pending(g)) is not None:
        api.submit(g, picker.act(d))
    assert g.over and (asked[0] > 0 or ruleset == "standard")
