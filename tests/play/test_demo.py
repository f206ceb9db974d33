"""`arena up --demo` as a person opens it (#16 item 5): the demo games deal generals (a draft,
every general named to a spectator) and the bots play at a pace people can follow by default
(`--think-ms` 600: a bot pauses before each answer), not as fast as the machine goes.

The pace is a lower bound on time, so a loaded machine only makes the test easier to pass."""

from __future__ import annotations

import asyncio
import json
import time
import urllib.request
from pathlib import Path
from typing import Any

import redis.asyncio as aioredis

from services.cli import parser
from services.eventlog.entry import ANSWER, decode_entry
from services.eventlog.redis_store import RedisEventStore
from tests.process_helpers import arena_up

WINDOW_S = 3.0


def _json(url: str) -> Any:
    with urllib.request.urlopen(url, timeout=5) as r:
        return json.loads(r.read())


def test_the_default_pace_is_watchable() -> None:
    assert parser().parse_args(["up"]).think_ms == 600


def test_demo_games_deal_generals_at_a_watchable_pace(tmp_path: Path) -> None:
    with arena_up(
        *("--var", str(tmp_path / "var"), "--engines", "1", "--bots", "1", "--demo", "1")
    ) as (_, run):
        base = run["viewer_url"]
        deadline, games = time.monotonic() + 60, []
        while not games:
            assert time.monotonic() < deadline, "no demo game showed up"
            games = [g for g in _json(base + "api/games")["games"] if not g["finished"]]
            time.sleep(0.3)
        game = games[0]["id"]
        info = _json(f"{base}api/games/{game}")
        assert info["header"]["options"].get("generals") == "draft", info["header"]

        # the bots' answers in the log over a few seconds: at most one per think time
        def answers() -> int:
            async def count() -> int:
                client = aioredis.Redis.from_url(run["redis_url"])
                try:
                    rows = await RedisEventStore(client, run["namespace"]).read(game)
                finally:
                    await client.aclose()
                return sum(decode_entry(d).kind == ANSWER for _, d in rows)

            return asyncio.run(count())

        before, t0 = answers(), time.monotonic()
        time.sleep(WINDOW_S)
        made, took = answers() - before, time.monotonic() - t0
        assert 0 < made <= took / 0.6 + 1, (made, took)
        # a spectator sees every seat's general by name once the draft is over
        deadline = time.monotonic() + 60
        while True:
            events = _json(f"{base}api/games/{game}/events")["entries"]
            named = {
                e["event"]["seat"]
                for e in events
                if e["kind"] == "event"
                and e["event"]["type"] == "general_chosen"
                and e["event"]["general"]
            }
            if len(named) == len(info["header"]["seats"]):
                break
            assert time.monotonic() < deadline, named
            time.sleep(0.5)
