"""The CLI entry points: export a game from Redis, verify it by id and by file, archive it."""

from __future__ import annotations

import asyncio
import json
from pathlib import Path

import pytest
import redis.asyncio as aioredis

from services.cli import main as arena
from services.eventlog import RedisEventStore
from services.eventlog.signing import keep_in
from services.rules import api
from services.verify import record_game


async def test_export_verify_archive_round_trip(
    redis_url: str,
    redis_client: aioredis.Redis,
    redis_namespace: str,
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
) -> None:
    store = RedisEventStore(redis_client, redis_namespace)
    await record_game(store, "cli1", api, "standard", 5, seed=21)  # type: ignore[arg-type]
    common = ["--redis-url", redis_url, "--namespace", redis_namespace]
    out = tmp_path / "cli1.arena"
    run = asyncio.to_thread  # the CLI functions run their own event loop
    var = tmp_path / "var"
    keep_in(var)  # the platform key `arena up` keeps: export signs with it, verify checks it
    assert await run(arena, ["export", "cli1", "-o", str(out), *common, "--var", str(var)]) == 0
    assert await run(arena, ["verify", str(out), "--var", str(var)]) == 0
    assert await run(arena, ["verify", "cli1", "--json", *common]) == 0
    capsys.readouterr()
    data = bytearray(out.read_bytes())
    data[len(data) // 2] ^= 0x10
    out.write_bytes(bytes(data))
    assert await run(arena, ["verify", str(out), "--json", "--var", str(var)]) == 1
    report = json.loads(capsys.readouterr().out)
    assert report["ok"] is False and report["divergence"]["entry"] >= 1
    capsys.readouterr()
    assert await run(arena, ["verify", "nosuchgame", *common]) == 2  # not a failed log: none
    assert "no such game in Redis: nosuchgame" in capsys.readouterr().err
    folder = tmp_path / "archive"
    assert await run(arena, ["archive", "cli1", "--dir", str(folder), *common]) == 0
    assert await store.head("cli1") == 0
    assert await run(arena, ["catalog", "rebuild", "--dir", str(folder)]) == 0
    assert "1 games catalogued" in capsys.readouterr().out
