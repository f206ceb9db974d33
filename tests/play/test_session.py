"""A person's session off the straight path, through the real HTTP API on a real platform: a
seat put on 托管 or resigned is played to the end by its bot (the bot worker folds the seat's
whole log, `control` entries included), and the person's stream sees the game end."""

from __future__ import annotations

import asyncio
from typing import Any

import pytest

from .fixtures import PlayPlatform
from .openapi_client import Client
from .test_api import answer_one, sit

END_WITHIN_S = 90  # a 5-seat game of heuristic bots ends in seconds; a frozen one never does


async def follow_to_the_end(client: Client, game: str, seat: int) -> dict[str, Any]:
    """Follow the seat's stream without answering until the game ends; what was seen."""
    seen: dict[str, Any] = {"controls": [], "ended": False, "decisions": 0}
    async for event, _, data in client.events("seat_stream", game=game, seat=seat):
        if event == "message":
            if data["kind"] == "control":
                seen["controls"].append(data["control"])
            if (data.get("event") or {}).get("type") == "game_ended":
                seen["ended"] = True
                return seen
        elif event == "decision" and data["decision"] is not None:
            seen["decisions"] += 1  # the person's own decision: none while the bot plays
    return seen


@pytest.mark.parametrize(
    ("how", "reason"),
    [("hosting", "asked"), ("resign", "resigned")],
)
async def test_a_seat_handed_to_its_bot_is_played_to_the_end(
    play_platform: PlayPlatform, how: str, reason: str
) -> None:
    """托管 by the button, or resigning, at the first decision of a standard 5-seat table: the
    bot worker plays the person's seat from its view (a policy that folds the view, so the
    `control` entry is in what it folds) and the game ends. Before the fix the bot worker could
    not decode the control entry and retried the seat's decision forever: the table froze."""
    client = await Client.fetch(play_platform.base)
    game, seat = await sit(client, {"ruleset": "standard", "players": 5, "bot_level": "normal"})
    await answer_one(client, game, seat)  # the person's first decision is pending
    if how == "hosting":
        done = await client.call("hosting", {"hosted": True}, game=game, seat=seat)
    else:
        done = await client.call("resign", game=game, seat=seat)
    assert done["hosted"] is True
    seen = await asyncio.wait_for(follow_to_the_end(client, game, seat), END_WITHIN_S)
    assert seen["ended"], "the stream closed before the game ended"
    assert seen["controls"] == [{"seat": seat, "hosted": True, "reason": reason}]
    view = await client.call("seat_view", game=game, seat=seat)
    assert view["over"] and view["hosted"]
