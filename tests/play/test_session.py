"""A person's session off the straight path, through the real HTTP API on a real platform: a
seat put on 托管 or resigned is played to the end by its bot (the bot worker folds the seat's
whole log, `control` entries included), and the person's stream sees the game end."""

from __future__ import annotations

import asyncio
import contextlib
from typing import Any

import pytest

from .fixtures import PlayPlatform
from .openapi_client import ApiRefused, Client
from .test_api import answer_one, seated, sit

END_WITHIN_S = 90  # a 5-seat game of heuristic bots ends in seconds; a frozen one never does


async def follow_to_the_end(client: Client, game: str, seat: int | None) -> dict[str, Any]:
    """Follow the seat's stream (None: the spectators' stream) without answering until the
    game ends; what was seen."""
    seen: dict[str, Any] = {"controls": [], "ended": False, "decisions": 0}
    follow = (
        client.events("seat_stream", game=game, seat=seat)
        if seat is not None
        else client.events("stream", game=game)
    )
    async for event, _, data in follow:
        if event == "message":
            if data["kind"] == "control":
                seen["controls"].append(data["control"])
            if (data.get("event") or {}).get("type") == "game_ended":
                seen["ended"] = True
                return seen
        elif event == "decision" and data.get("decision") is not None:
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
    # a person who resigned has left the seat: they follow the game as a spectator
    follow = seat if how == "hosting" else None
    seen = await asyncio.wait_for(follow_to_the_end(client, game, follow), END_WITHIN_S)
    assert seen["ended"], "the stream closed before the game ended"
    assert seen["controls"] == [{"seat": seat, "hosted": True, "reason": reason}]
    if how == "hosting":
        view = await client.call("seat_view", game=game, seat=seat)
        assert view["over"] and view["hosted"]
        # after the end (the engine has dropped the game, or is about to): 409, as documented
        for _ in range(50):
            with pytest.raises(ApiRefused) as err:
                await client.call("answer", {"decision": 1, "picks": []}, game=game, seat=seat)
            assert err.value.status == 409, err.value
            if "over" in err.value.body["error"]:
                break
            await asyncio.sleep(0.2)
        assert "the game is over" in err.value.body["error"], err.value


async def test_resigning_frees_the_person_for_the_next_table(play_platform: PlayPlatform) -> None:
    """Resign leaves the seat: the person sits nowhere (the lobby does not send them back),
    quick play seats them at a new table at once (it answered 409 "resign to leave it"), the
    seat they left answers 409 naming why, and the game they left is still played to its end
    by the seat's bot."""
    client = await Client.fetch(play_platform.base)
    game, seat = await sit(client, {"ruleset": "standard", "players": 5, "bot_level": "normal"})
    await answer_one(client, game, seat)
    done = await client.call("resign", game=game, seat=seat)
    assert done["hosted"] is True
    me = await client.call("me")
    assert me["seated"] is None and me["waiting"] is None
    for op, body in (("seat_view", None), ("hosting", {"hosted": False})):
        with pytest.raises(ApiRefused) as err:
            await client.call(op, body, game=game, seat=seat)
        assert err.value.status == 409 and "resigned" in err.value.body["error"], err.value
    # (options of its own: no other test's table is joined; no bots: the table waits)
    settings = {"ruleset": "chengtian", "players": 2, "options": {"max_reshuffles": 7}}
    joined = await client.call("quickplay", {"settings": {**settings, "bot_after_ms": 0}})
    assert joined["waiting"]["table"]
    # the game left behind ends: a spectator's summary of it says so
    spectator = await Client.fetch(play_platform.base)
    for _ in range(END_WITHIN_S * 10):
        if (await spectator.call("game", game=game))["over"]:
            break
        await asyncio.sleep(0.1)
    else:
        raise AssertionError(f"game {game} did not end after its person resigned")
    await client.call("leave")


async def test_a_dead_person_may_watch_on_or_leave(play_platform: PlayPlatform) -> None:
    """A person whose seat dies while the game goes on: `me` says the seat is dead, the seat's
    stream goes on to the end (watching from their own seat), the person may open or join
    another table at once, and leaving the dead seat writes nothing to the game's log."""
    client = await Client.fetch(play_platform.base)
    for _attempt in range(6):  # a person who never dodges dies soon, unless the game ends first
        game, seat = await sit(client, {"ruleset": "standard", "players": 5}, "Doomed")
        died = await _decline_until_dead(client, game, seat)
        me = await client.call("me")
        if died and not me["seated"]["over"]:  # (the others may end the game meanwhile)
            break
        await client.call("resign", game=game, seat=seat)  # (over: just leaves the seat)
    else:
        raise AssertionError("the person never died before the end in six games")
    assert me["seated"] == {"game": game, "seat": seat, "over": False, "alive": False}, me
    view = await client.call("seat_view", game=game, seat=seat)
    assert not view["view"]["seats"][seat]["alive"] and view["decision"] is None
    version = view["version"]
    left = await client.call("resign", game=game, seat=seat)
    assert left["version"] >= version
    assert (await client.call("me"))["seated"] is None
    entries = await client.call("events", game=game)
    assert not [e for e in entries["entries"] if e["kind"] == "control"], "a dead seat resigned"
    settings = {"ruleset": "chengtian", "players": 2, "bot_after_ms": 0}
    joined = await client.call("create_table", {**settings, "options": {"max_reshuffles": 7}})
    assert joined["waiting"]["table"]
    await client.call("leave")


async def _decline_until_dead(client: Client, game: str, seat: int) -> bool:
    """Answer the seat's decisions the worst way (decline, else the first options) until it
    dies (True) or the game ends (False)."""
    async for event, _, data in client.events("seat_stream", game=game, seat=seat):
        if event == "message" and data["kind"] == "event":
            e = data["event"]
            if e["type"] == "died" and e["seat"] == seat:
                return True
            if e["type"] == "game_ended":
                return False
        elif event == "decision" and data["decision"] is not None:
            d = data["decision"]
            picks = [] if d["declinable"] else [o["key"] for o in d["options"][: d["min"]]]
            if d["kind"] == "play":
                picks = []  # end the play phase: no attacks, no healing
            with contextlib.suppress(ApiRefused):
                await client.call(
                    "answer", {"decision": d["id"], "picks": picks}, game=game, seat=seat
                )
    return False


async def test_a_table_of_people_all_on_hard_hosting_is_played_to_the_end(
    play_platform: PlayPlatform,
) -> None:
    """托管 plays at the table's level, as its bots do (issue 42: `hard` wherever `normal` is
    offered; tests/engine/test_hosting.py checks the level the engine names). Four people fill
    a `hard` table and all hand their seats to 托管: hard bots play every seat, looking ahead
    on worlds the engine deals for seats that are people's, and the game ends."""
    level = "hard"
    settings = {"ruleset": "standard", "players": 4, "bot_after_ms": 0, "bot_level": level}
    settings["options"] = {"max_reshuffles": 11}  # a table of its own
    people = [await Client.fetch(play_platform.base) for _ in range(4)]
    for i, client in enumerate(people):
        client.token = (await client.call("new_guest", {"name": f"H{i}"}))["token"]
        await client.call("quickplay", {"settings": settings})
    seats = [await seated(client) for client in people]
    assert len({g for g, _ in seats}) == 1
    for client, (game, seat) in zip(people, seats, strict=True):
        await client.call("hosting", {"hosted": True}, game=game, seat=seat)
    game, seat = seats[0]
    seen = await asyncio.wait_for(follow_to_the_end(people[0], game, seat), END_WITHIN_S)
    assert seen["ended"]
