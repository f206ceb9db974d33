"""A session soak: scripted people playing through the HTTP API (the OpenAPI client) with the
behaviour of real ones - answering, staying silent until the clock runs out and 托管 takes the
seat, asking for 托管 and taking the seat back, reconnecting mid game, resigning and sitting at
a new table, dying and leaving or watching on - beside bot games (tables whose person hands the
seat to its bot at the first decision and only watches), while the bot worker is killed and
restarted by the platform's supervisor mid-way. Then every game must end, leave the lobby's
live games, be archived and verify, with its signature checked against the platform's key.

`soak(...)` runs it and returns what happened; tests/play/test_soak.py runs a short one in the
default suite and a hundred sessions under -m slow.
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import random
import signal
import time
from collections import Counter
from dataclasses import dataclass, field
from typing import Any

from services.platform.up import Platform

from .openapi_client import ApiRefused, Client
from .test_api import answer, pick, sit

TABLES: list[dict[str, Any]] = [  # quick tables: a soak is about sessions, not long games
    {"ruleset": "chengtian", "players": 2},
    {"ruleset": "standard", "players": 4},
    {"ruleset": "standard", "players": 5, "options": {"generals": "draft"}},
    {"ruleset": "honglou", "players": 4},
    {"ruleset": "jinyu", "players": 4},
]
CLOCK = {"time_limit_ms": 2000, "hosted_after": 1, "bot_level": "normal"}
BEHAVIOURS = ("answer", "timeout", "hosting", "take_back", "reconnect", "resign", "new_table")


@dataclass
class Seen:
    """What one soak did and found."""

    games: list[str] = field(default_factory=list)  # every game a session or bot table played
    did: Counter[str] = field(default_factory=Counter)  # behaviours, and deaths
    refused: Counter[int] = field(default_factory=Counter)  # statuses of refused requests
    errors: list[str] = field(default_factory=list)  # what went wrong in a session


@dataclass(frozen=True)
class Plan:
    """How one scripted person behaves: the chance of each behaviour at each decision (the
    rest: answer), and behaviours it must show once (`must`)."""

    silent: float = 0.05
    host: float = 0.04
    reconnect: float = 0.05
    resign: float = 0.01
    must: tuple[str, ...] = ()
    bot_game: bool = False  # hands the seat to its bot at once and only watches


async def person(base: str, seen: Seen, rng: random.Random, plan: Plan, name: str) -> None:
    """One scripted person: sits down, plays a table to its end (or leaves it), maybe a second
    one after resigning."""
    client = await Client.fetch(base)
    table = {**rng.choice(TABLES), **CLOCK}
    game, seat = await sit(client, table, name)
    seen.games.append(game)
    again = await play(client, game, seat, rng, plan, seen)
    if again:  # resigned: free for the next table at once
        me = await client.call("me")
        assert me["seated"] is None and me["waiting"] is None, me
        joined = await client.call(
            "quickplay", {"settings": {**rng.choice(TABLES), **CLOCK, "bot_after_ms": 1}}
        )
        assert joined["waiting"]["table"]
        seen.did["new_table"] += 1
        async for event, _, data in client.events("status"):
            if event == "status" and data["state"] == "seated":
                game, seat = data["seated"]["game"], data["seated"]["seat"]
                break
        seen.games.append(game)
        await play(client, game, seat, rng, Plan(), seen)


async def play(
    client: Client, game: str, seat: int, rng: random.Random, plan: Plan, seen: Seen
) -> bool:
    """Follow the seat's stream to the end of its game, behaving as `plan` says; True if the
    person resigned and wants another table."""
    last = 0  # the seat's position held: a reconnect resumes after it
    must = list(plan.must)
    hosted_at = -1  # the position 托管 was asked at, to take the seat back a little later
    dead = False
    while True:
        reconnect = False
        async for event, eid, data in client.events(
            "seat_stream", game=game, seat=seat, **{"from": last}
        ):
            if event == "message":
                position = int(eid)
                assert position == last + 1, f"{game}: position {position} after {last}"
                last = position
                e = data.get("event") or {}
                if e.get("type") == "died" and e.get("seat") == seat:
                    dead = True
                    seen.did["died"] += 1
                    if rng.random() < 0.5:  # leave the dead seat for the lobby, or watch on
                        await client.call("resign", game=game, seat=seat)
                        seen.did["left_dead"] += 1
                        return False
                if hosted_at >= 0 and last >= hosted_at + 6 and data["kind"] != "seed_reveal":
                    hosted_at = -1
                    with contextlib.suppress(ApiRefused):  # (the game may be over by now)
                        await client.call("hosting", {"hosted": False}, game=game, seat=seat)
                        seen.did["take_back"] += 1
            elif event == "decision" and data["decision"] is not None and not dead:
                d = data["decision"]
                if plan.bot_game:
                    if not await hosted(client, game, seat, seen):
                        continue  # the game ended meanwhile: its stream ends next
                    seen.did["bot_game"] += 1
                    plan = Plan(silent=0, host=0, reconnect=0, resign=0)
                    continue
                roll, step = rng.random(), _next(must)
                if step == "timeout" or (not step and roll < plan.silent):
                    seen.did["timeout"] += 1  # say nothing: the clock runs out, 托管 takes over
                    hosted_at = last
                    continue
                if step == "hosting" or (not step and roll < plan.silent + plan.host):
                    if not await hosted(client, game, seat, seen):
                        continue
                    seen.did["hosting"] += 1
                    hosted_at = last
                    continue
                if step == "resign" or (not step and roll < plan.silent + plan.host + plan.resign):
                    await client.call("resign", game=game, seat=seat)
                    seen.did["resign"] += 1
                    return True
                if step == "reconnect" or (not step and roll > 1 - plan.reconnect):
                    seen.did["reconnect"] += 1
                    reconnect = True
                    break  # drop the connection; the decision is still pending on return
                if await answered(client, game, seat, d, pick(d, rng), seen):
                    seen.did["answer"] += 1
            elif event == "refused":
                seen.errors.append(f"{game}: stream refused: {data}")
                return False
        if not reconnect:
            return False


async def hosted(client: Client, game: str, seat: int, seen: Seen) -> bool:
    """Ask for 托管 at a decision the stream showed; False if the game ended meanwhile (409
    'the game is over': at bot speed a game can end between the message and the request)."""
    try:
        await client.call("hosting", {"hosted": True}, game=game, seat=seat)
        return True
    except ApiRefused as exc:
        seen.refused[exc.status] += 1
        if exc.status != 409 or "over" not in str(exc):
            raise
        return False


async def answered(
    client: Client, game: str, seat: int, d: dict[str, Any], picks: list[str], seen: Seen
) -> bool:
    """Answer as a polite client (test_api.answer) that also takes no for an answer: a 409 says
    the decision is gone (the clock answered it, or the game ended meanwhile)."""
    try:
        await answer(client, game, seat, d, picks)
        return True
    except ApiRefused as exc:
        seen.refused[exc.status] += 1
        if exc.status != 409:
            raise
        return False


def _next(must: list[str]) -> str:
    return must.pop(0) if must else ""


async def restart_bot_worker(platform: Platform) -> None:
    """Kill the bot worker (SIGKILL: no goodbye) and let the supervisor start it again, as
    `arena up` does, from this (the main) thread: a child started from another thread would
    get its parent-death signal when that thread ends."""
    child = next(c for c in platform.sup.children if c.name.startswith("bots-"))
    os.killpg(child.pid, signal.SIGKILL)
    deadline = time.monotonic() + 60
    while time.monotonic() < deadline:
        platform.keep_alive()
        fresh = next(c for c in platform.sup.children if c.name == child.name)
        if fresh is not child and fresh.alive() and fresh.info:
            return
        await asyncio.sleep(0.2)
    raise AssertionError("the bot worker was not restarted")


async def bots_play(base: str, seen: Seen, within_s: float) -> None:
    """A table whose only person resigns at once, on the default clock (60 s a decision): its
    bots must play it to the end well within a minute, which a dead bot worker cannot (the
    engine would answer each of their decisions by default only after its time)."""
    client = await Client.fetch(base)
    game, seat = await sit(client, {"ruleset": "standard", "players": 4}, "probe")
    seen.games.append(game)
    await client.call("resign", game=game, seat=seat)
    deadline = time.monotonic() + within_s
    while not (await client.call("game", game=game))["over"]:
        assert time.monotonic() < deadline, f"{game}: the bots did not play it in {within_s} s"
        await asyncio.sleep(0.5)
    seen.did["bots_played_after_restart"] += 1


async def soak(
    base: str,
    platform: Platform,
    sessions: int,
    *,
    seed: int,
    at_once: int,
    restart_after_s: float,
    end_within_s: float,
) -> Seen:
    """Run `sessions` scripted people (at most `at_once` at a time; one in five a bot game), kill
    and restart the bot worker after `restart_after_s`, then wait for every game to end,
    leave the live games, be archived and verify; a table of bots alone, after the restart,
    must be played at bot speed (by the restarted worker, while the sessions go on). The first
    sessions each show one behaviour for sure (a timeout, 托管 and taking back, a reconnect, a
    resignation and a new table)."""
    seen = Seen()
    rng = random.Random(seed)
    scripted = [("timeout",), ("hosting",), ("reconnect", "reconnect"), ("resign",)]
    gate = asyncio.Semaphore(at_once)

    async def one(i: int) -> None:
        async with gate:
            plan = Plan(must=scripted[i] if i < len(scripted) else (), bot_game=i % 5 == 4)
            try:
                await person(base, seen, random.Random(rng.getrandbits(32) + i), plan, f"P{i}")
            except Exception as exc:  # noqa: BLE001 - one session's failure is reported, not fatal
                seen.errors.append(f"session {i}: {type(exc).__name__}: {exc}")

    async def restart() -> None:
        await asyncio.sleep(restart_after_s)
        await restart_bot_worker(platform)
        seen.did["bot_worker_restarted"] += 1
        # the restarted worker plays (a game ends without it), beside the sessions still on
        await bots_play(base, seen, 60)

    restarting = asyncio.create_task(restart())
    await asyncio.gather(*(one(i) for i in range(sessions)))
    await restarting
    await check_games(base, seen, end_within_s)
    return seen


async def check_games(base: str, seen: Seen, within_s: float) -> None:
    """Every game ended, left the lobby's live games, and verifies (signature included)."""
    spectator = await Client.fetch(base)
    deadline = time.monotonic() + within_s
    left = set(seen.games)
    while left and time.monotonic() < deadline:
        for game in sorted(left):
            info = await spectator.call("game", game=game)
            if info["over"]:
                left.discard(game)
        if left:
            await asyncio.sleep(0.5)
    assert not left, f"stuck games: {sorted(left)}"
    pending = set(seen.games)
    while pending and time.monotonic() < deadline:
        listed = await spectator.call("games", limit=1000)
        by_id = {g["id"]: g for g in listed["games"]}
        live = {g for g in pending if g in by_id and not by_id[g]["finished"]}
        assert not live or time.monotonic() < deadline, f"ended games still live: {live}"
        pending = {g for g in pending if not (g in by_id and by_id[g]["archived"])}
        if pending:
            await asyncio.sleep(0.5)
    assert not pending, f"games never archived: {sorted(pending)}"
    for game in seen.games:
        report = await spectator.call("verify", game=game)
        assert report["ok"] and report["signature"] == "valid", (game, report)
    live = (await spectator.call("games", status="live", limit=1000))["games"]
    assert not {g["id"] for g in live} & set(seen.games), "ended games left in Live games"
