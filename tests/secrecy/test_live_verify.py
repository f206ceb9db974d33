"""Verify of a live game tells only what its spectators were sent (issue 40 item 3, tried as an
outsider over HTTP): `GET /api/games/LIVE/verify` returned the raw log length, ahead of the
delayed spectator (217 against 56), and "entries minus public entries" counted the hidden
prompts. Now a live game is verified as far as a spectator has it and reported in a spectator's
positions; a failure says where and of what kind, not the hidden entries it compared."""

from __future__ import annotations

import json

import msgspec

from services.eventlog import InMemoryEventStore
from services.eventlog.entry import Entry, decode_entry, encode_entry
from services.readside.positions import positions_of
from services.replay import ManualClock, Replay, TablePolicy
from services.replay.http import HttpServer
from services.rules.api import SPECTATOR
from tests.replay.live import LiveGame, settle


async def _verify(port: int, game: str) -> dict[str, object]:
    import asyncio

    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    writer.write(f"GET /api/games/{game}/verify HTTP/1.1\r\nHost: x\r\n\r\n".encode())
    await writer.drain()
    body = (await reader.read()).partition(b"\r\n\r\n")[2]
    writer.close()
    out: dict[str, object] = json.loads(body)
    return out


async def test_a_live_games_verify_counts_what_a_spectator_was_sent() -> None:
    clock = ManualClock(1_000_000)
    store = InMemoryEventStore(clock.now_ms)
    live = LiveGame(store, "v1", players=5, seed=3)
    live.step(60)
    await settle(400)
    replay = Replay(store, clock=clock, policy=lambda h: TablePolicy(60_000))
    http = HttpServer(replay)
    port = await http.start()
    try:
        head = await store.head("v1")
        at = positions_of(await store.read("v1"))
        assert at.position(SPECTATOR, head) < head - 10  # answers the spectator never gets
        held = await _verify(port, "v1")
        assert held["entries"] == 0, held  # everything is within the delay: nothing to verify
        clock.advance(60_001)
        sent = await replay.spectator_version("v1")
        report = await _verify(port, "v1")
        assert report["entries"] == sent == at.position(SPECTATOR, head)
        assert report["chain_ok"] is True and report["replay_ok"] is False  # live: no reveal yet
        assert report["divergence"] == {
            "entry": sent,
            "kind": "event",
            "reason": "no seed reveal at the end of the log",
            "expected": None,
            "actual": None,
        }
        assert report["notes"] == ["the game has not finished: the seed is not revealed yet"]
        # a live log that does not re-run: where, and of what kind; nothing it compared
        log = store._logs["v1"]  # noqa: SLF001 - an entry of the live log corrupted in place
        seq = next(
            i
            for i, data in enumerate(log, 1)
            if i > 5
            and decode_entry(data).kind == "event"
            and b"cards" in decode_entry(data).payload
        )
        e = decode_entry(log[seq - 1])
        event = msgspec.msgpack.decode(e.payload)
        event["cards"] = [107]
        log[seq - 1] = encode_entry(Entry(e.v, e.kind, msgspec.msgpack.encode(event), e.hash))
        bad = await _verify(port, "v1")
        d = bad["divergence"]
        assert bad["ok"] is False and isinstance(d, dict)
        assert d["reason"] == "does not verify (details once it ends)"
        assert d["entry"] == at.position(SPECTATOR, seq) and d["expected"] is None
        assert d["actual"] is None and "107" not in json.dumps(bad)
    finally:
        await http.close()
        await replay.close()
        live.task.cancel()
