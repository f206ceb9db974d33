"""The pending decision on the live table, in a real browser: a game run by a real engine
(GameService over gRPC, in this process) on the test's Redis, a replay-server process started with
``--engine``. The page shows the active seat's public decision and never a hidden one, and what the
spectator's SSE carries holds no options or cards in hand."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import redis.asyncio as aioredis

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.engine.grpc_server import make_server
from services.engine.service import Games, NewMatch
from services.engine.side import MemorySide
from services.eventlog import RedisEventStore, Seat
from services.eventlog.entry import decode_entry
from services.readside.decisions import may_see
from services.readside.positions import positions_of
from services.rules import api
from tests.replay.leaks import Truth, n_cards
from tests.replay.sse import open_sse

from .conftest import ARTIFACTS, Tab, start_replay_server, stop

SECRET = b"browser-decision"
GAME = "browser-decision"
DECISION = "document.querySelector('#decision')"


async def test_live_table_shows_the_public_pending_decision_only(
    browser: Tab,
    redis_url: str,
    redis_client: aioredis.Redis,
    redis_namespace: str,
    tmp_path: Path,
) -> None:
    store = RedisEventStore(redis_client, redis_namespace)
    games = Games(store, MemorySide(), SECRET)
    server, grpc_port, _ = make_server(games)
    await server.start()
    proc, url = start_replay_server(
        redis_url, redis_namespace, tmp_path / "archive", ["--engine", f"127.0.0.1:{grpc_port}"]
    )
    try:
        await games.create_game(
            NewMatch(
                match_id=GAME, ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=31
            )
        )
        policy = RandomPolicy(3)

        async def pending() -> tuple[api.Decision, int, int]:
            hot = await games.get(GAME)
            d = api.pending(hot.game)
            assert d is not None and not hot.game.over
            current = -1
            entries = await store.read(GAME)
            for _, data in reversed(entries):
                if b"turn_started" in data:
                    e = api.decode_event(decode_entry(data).payload)
                    if type(e).__struct_config__.tag == "turn_started":
                        current = int(getattr(e, "seat"))  # noqa: B009
                        break
            # the page is told the decision at a spectator's position (answers not counted)
            seen = positions_of(entries).position(api.SPECTATOR, hot.log.version)
            return d, seen, current

        async def answer(d: api.Decision) -> None:
            a = policy.act(d)
            did = (await games.get(GAME)).ids.opaque(d.id)
            await games.submit_action(GAME, tokens.issue(SECRET, GAME, d.seat), did, list(a.picks))

        async def run_until(public: bool, skip: int = 0) -> tuple[api.Decision, int]:
            """Answer decisions (pacing them) until one whose publicity is ``public``."""
            for i in range(3000):
                d, version, current = await pending()
                if i >= skip and may_see(d.kind, d.seat, current, api.SPECTATOR) == public:
                    return d, version
                await answer(d)
                await asyncio.sleep(0.01)
            raise AssertionError("no such decision")

        sse = await open_sse(int(url.rsplit(":", 1)[1]), f"/api/games/{GAME}/stream")
        await browser.goto(f"{url}/#/live/{GAME}")
        await browser.wait_for("document.querySelectorAll('.seat').length === 5")

        d, version = await run_until(public=True, skip=30)
        await browser.wait_for(
            f"{DECISION} && {DECISION}.dataset.seat === '{d.seat}' && "
            f"{DECISION}.dataset.kind === '{d.kind}' && "
            f"{DECISION}.dataset.version === '{version}'",
        )
        asked = await browser.js(
            "[...document.querySelectorAll('.seat.asked')].map(s => s.dataset.seat)"
        )
        assert asked == [str(d.seat)]
        text = await browser.js(f"{DECISION}.textContent")
        assert text.startswith("waiting for ") and "bot" not in text, text
        await browser.screenshot(ARTIFACTS / "live-decision.png")

        hidden, version = await run_until(public=False)
        # the page follows the game to this decision, and shows none for it
        await browser.wait_for(f"{DECISION} && !{DECISION}.dataset.kind")
        await asyncio.sleep(1.0)  # the engine is asked after every batch: give it every chance
        assert await browser.js(f"{DECISION}.dataset.kind || ''") == ""
        assert await browser.js("document.querySelectorAll('.seat.asked').length") == 0

        # the rest of the game: the decision from the engine's game alone (pending() reads the
        # whole log for the turn and the position, which only run_until needs: 450 answers
        # read it 450 times)
        while not (hot := await games.get(GAME)).game.over:
            rest = api.pending(hot.game)
            assert rest is not None
            await answer(rest)
        messages = []
        while (m := await asyncio.wait_for(sse.next(), 30)) is not None:
            messages.append(m)
        await browser.wait_for("document.querySelector('#conn').textContent === 'game over'")
        records = [data for _, data in await store.read(GAME)]
        raw = bytes(sse.raw)
        for needle in (b"card:", b"skill:", b'"picks"', b"declinable", b'"info"'):
            assert needle not in raw, needle
        decisions = [json.loads(m.data) for m in messages if m.event == "decision"]
        assert any(x.get("seat") == d.seat and x.get("version") for x in decisions)
        assert all(set(x) in ({"version"}, {"version", "seat", "kind"}) for x in decisions)
        assert all(
            x.get("kind") in (None, "play", "discard", "targets", "draft") for x in decisions
        )
        truth = Truth(records, n_cards(records))
        leaks = [x for m in messages if m.id for x in truth.leaks(int(m.id), m.data, api.SPECTATOR)]
        assert not leaks, leaks[:5]
        sse.close()
    finally:
        stop(proc)
        await server.stop(None)
