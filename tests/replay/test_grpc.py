"""gRPC ReplayService: the same core behind a thin shim; redaction and hashes of live games."""

from __future__ import annotations

import asyncio
import json

import grpc
import pytest

from services.bots.demo import play_live
from services.eventlog import InMemoryEventStore
from services.proto_gen.arena.v1 import replay_pb2, replay_pb2_grpc
from services.replay import Replay
from services.replay.grpc_service import start_grpc
from services.rules.api import GOD, SPECTATOR

from .leaks import Truth, n_cards
from .live import LiveGame, settle


async def test_replay_service_end_to_end() -> None:
    store = InMemoryEventStore()
    await play_live(store, "done", players=5, seed=4)
    live = LiveGame(store, "live", players=5, seed=5)
    live.step(40)
    await settle()

    async def ids() -> list[str]:
        return ["done", "live"]

    replay = Replay(store, live_ids=ids, seat_check=lambda g, s, t: t == f"seat-{s}")
    server, port = await start_grpc(replay, "127.0.0.1:0")
    async with grpc.aio.insecure_channel(f"127.0.0.1:{port}") as channel:
        stub = replay_pb2_grpc.ReplayServiceStub(channel)
        games = await stub.ListGames(replay_pb2.ListGamesRequest(limit=1))
        assert len(games.games) == 1 and games.next_page_token == "1"
        rest = await stub.ListGames(replay_pb2.ListGamesRequest(page_token="1"))
        assert {g.game_id for g in [*games.games, *rest.games]} == {"done", "live"}
        assert (await stub.GetGame(replay_pb2.GetGameRequest(game_id="done"))).finished

        spec = await stub.GetEvents(replay_pb2.GetEventsRequest(game_id="live", viewer=SPECTATOR))
        assert spec.events and all(e.hash == b"" for e in spec.events)  # hashes would leak draws
        records = [d for _, d in await store.read("live")]
        truth = Truth(records, n_cards(records))
        leaks = [
            x
            for e in spec.events
            for x in truth.leaks(
                e.seq,
                e.json.encode(),  # the very bytes every channel sends
                SPECTATOR,
            )
        ]
        assert not leaks, leaks[:5]
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.GetEvents(replay_pb2.GetEventsRequest(game_id="live", viewer=GOD))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.GetEvents(replay_pb2.GetEventsRequest(game_id="live", viewer=1))
        assert err.value.code() == grpc.StatusCode.PERMISSION_DENIED
        seat = await stub.GetEvents(
            replay_pb2.GetEventsRequest(game_id="live", viewer=1),
            metadata=[("authorization", "Bearer seat-1")],
        )
        assert any(json.loads(e.json)["kind"] == "answer" for e in seat.events)
        with pytest.raises(grpc.aio.AioRpcError) as err:
            await stub.GetGame(replay_pb2.GetGameRequest(game_id="nope"))
        assert err.value.code() == grpc.StatusCode.NOT_FOUND

        got = []

        async def watch() -> None:
            call = stub.StreamGame(
                replay_pb2.StreamGameRequest(game_id="live", viewer=SPECTATOR, from_seq=10)
            )
            async for e in call:
                got.append(e.seq)

        task = asyncio.create_task(watch())
        await live.finish()
        await asyncio.wait_for(task, 10)
        full = await stub.GetEvents(replay_pb2.GetEventsRequest(game_id="live", viewer=SPECTATOR))
        assert got == [e.seq for e in full.events if e.seq > 10]
        god = await stub.GetEvents(replay_pb2.GetEventsRequest(game_id="done", viewer=GOD))
        assert all(len(e.hash) == 32 for e in god.events)
        assert json.loads(god.events[-1].json)["kind"] == "seed_reveal"
        report = await stub.Verify(replay_pb2.VerifyRequest(game_id="done"))
        assert report.ok and report.entries == god.events[-1].seq
    await server.stop(0)
    await replay.close()
