"""`arena up --spectator-delay-ms` holds spectators behind on every channel it starts: the
engines' GameService and the replay server's JSON, SSE, lobby, game summary and ReplayService. Before it, `arena up`
passed no delay to anyone, so a deployment run by `arena up` had none whatever it wanted.

Real processes (what `arena up` runs), a real Redis, a client that holds no seat token."""

from __future__ import annotations

import contextlib
import json
import socket
import urllib.request
from pathlib import Path

import grpc
import pytest

from services.cli import parser
from services.contracts import tokens
from services.platform.up import Platform
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc, replay_pb2, replay_pb2_grpc
from tests.process_helpers import up_config

DELAY_MS = 600_000  # far longer than the test: nothing may reach a spectator


def _free_port() -> int:
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


def _read_for(base: str, path: str, seconds: float) -> bytes:
    """What a GET of `path` receives in `seconds` (a stream that stays open)."""
    host, port = base.split("//")[1].strip("/").split(":")
    with socket.create_connection((host, int(port)), timeout=5) as s:
        s.sendall(f"GET {path} HTTP/1.1\r\nHost: x\r\n\r\n".encode())
        s.settimeout(seconds)
        got = b""
        with contextlib.suppress(TimeoutError):
            while chunk := s.recv(65536):
                got += chunk
    return got


def _json(url: str) -> dict:  # type: ignore[type-arg]
    with urllib.request.urlopen(url, timeout=5) as r:
        assert r.status == 200
        out: dict = json.loads(r.read())  # type: ignore[type-arg]
        return out


def test_arena_up_parses_the_spectator_delay() -> None:
    a = parser().parse_args(["up", "--spectator-delay-ms", "1500"])
    assert a.spectator_delay_ms == 1500
    assert parser().parse_args(["up"]).spectator_delay_ms == 0


def test_arena_up_holds_spectators_behind_on_the_engine_and_the_replay_server(
    tmp_path: Path, redis_url: str, redis_namespace: str
) -> None:
    cfg = up_config(
        tmp_path / "var",
        engines=1,
        bots=0,
        namespace=redis_namespace,
        redis_url=redis_url,
        replay_grpc_port=_free_port(),  # 0 would start no ReplayService
        matchmaker=False,
        spectator_delay_ms=DELAY_MS,
    )
    with Platform(cfg) as platform:
        run = platform.start()
        secret = platform.secret["ARENA_SECRET"].encode()
        game = "delay-up-1"
        with grpc.insecure_channel(run.engines[0]) as ch:
            stub = game_pb2_grpc.GameServiceStub(ch)
            stub.CreateGame(
                tokens.create_request(
                    *tokens.sign_create(
                        secret, game, "standard", [(f"p{i}", False) for i in range(4)]
                    )
                ),
                timeout=10,
            )
            # people's seats that nobody answers: the game stays live, and a seat sees it live
            seat = tokens.issue(secret, game, 0)
            mine = stub.GetView(game_pb2.GetViewRequest(game_id=game, seat_token=seat))
            assert mine.version > 1 and mine.events
            watched = stub.GetView(game_pb2.GetViewRequest(game_id=game), timeout=10)
            assert (watched.version, len(watched.events)) == (0, 0)
            assert not watched.HasField("pending")
            decision = stub.GetDecision(game_pb2.GetDecisionRequest(game_id=game), timeout=10)
            assert decision.version == 0 and not decision.HasField("decision")
        base = str(run.viewer_url)
        lobby = [g for g in _json(base + "api/games")["games"] if g["id"] == game]
        assert [g["version"] for g in lobby] == [0]
        assert _json(f"{base}api/games/{game}")["version"] == 0
        events = _json(f"{base}api/games/{game}/events")
        assert (events["entries"], events["delay_ms"]) == ([], DELAY_MS)
        # the SSE stream sends nothing but its preamble and keep-alives
        sse = _read_for(base, f"/api/games/{game}/stream", 1.5)
        assert sse.startswith(b"HTTP/1.1 200") and b"retry:" in sse and b"data:" not in sse, sse
        # ReplayService (gRPC): GetEvents and StreamGame hold the spectator back too
        assert run.replay_grpc
        with grpc.insecure_channel(run.replay_grpc) as ch:
            replay = replay_pb2_grpc.ReplayServiceStub(ch)
            got = replay.GetEvents(replay_pb2.GetEventsRequest(game_id=game, viewer=-1), timeout=10)
            assert list(got.events) == []
            call = replay.StreamGame(
                replay_pb2.StreamGameRequest(game_id=game, viewer=-1), timeout=1.5
            )
            with pytest.raises(grpc.RpcError) as err:
                next(iter(call))
            assert err.value.code() == grpc.StatusCode.DEADLINE_EXCEEDED  # nothing came
            summary = replay.GetGame(replay_pb2.GetGameRequest(game_id=game), timeout=10)
            assert not summary.finished
