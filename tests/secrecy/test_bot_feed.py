"""The bot feed (readside/botfeed.py) sends each bot seat its events without a redaction pass per
seat: the logged bytes to the seats an event is shown to, one blank copy to all the others.
That shortcut holds only if redaction depends on nothing but being shown the event; checked
here against `api.redact` for every event of every ruleset's seeded games and every seat (a
bot worker is a client like any other: it may receive no more than its seat's view)."""

from __future__ import annotations

from typing import Any

import msgspec
import pytest

from services.bots.random_policy import RandomPolicy
from services.readside.botfeed import _Buffered
from services.rules import api

TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 5, {"generals": "draft"}),
    ("honglou", 10, {}),
    ("jinyu", 8, {"mougong": True}),
    ("jinyu", 6, {"mougong": True, "double_renegade": True}),
    ("extended", 8, {}),
    ("extended", 12, {"variant": "advanced"}),
    ("chengtian", 2, {}),
]


@pytest.mark.parametrize(("ruleset", "players", "options"), TABLES, ids=lambda x: str(x))
def test_each_bot_seat_gets_its_redaction(
    ruleset: str, players: int, options: dict[str, Any]
) -> None:
    guarded = 0
    for seed in range(2):
        g = api.new_game(ruleset, players, seed, dict(options))
        events = list(api.advance(g))
        policy = RandomPolicy(seed)
        while not g.over and (d := api.pending(g)) is not None:
            events += api.submit(g, policy.act(d))
        for e in events:
            fed = _Buffered(0, e, msgspec.Raw(api.encode_event(e)))
            for seat in range(players):
                want = api.encode_event(api.redact(e, seat))
                assert bytes(fed.for_seat(seat)) == want, (type(e).__name__, seat)
            guarded += getattr(e, "seen_by", None) is not None
    assert guarded > 10  # events shown to some seats only were met (draws, roles, deals)
