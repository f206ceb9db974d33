"""The committed proto stubs and the event JSON Schema match their sources."""

from __future__ import annotations

import json
from pathlib import Path

import pytest

from services.proto_gen import build


def test_stubs_are_fresh(tmp_path: Path) -> None:
    pytest.importorskip("grpc_tools")
    fresh = {p.relative_to(tmp_path): p for p in build.generate_stubs(tmp_path)}
    committed = {p.relative_to(build.OUT) for p in (build.OUT / "arena").rglob("*_pb2*.py*")}
    assert committed == {rel for rel in fresh if "_pb2" in rel.name}, (
        "committed stubs differ from the generated set: run python3 -m services.proto_gen.build"
    )
    assert not any(rel.name == "common_pb2_grpc.py" for rel in fresh)  # no service, no stub
    for rel, path in fresh.items():
        committed = build.OUT / rel
        assert committed.exists(), f"{rel} missing: run python3 -m services.proto_gen.build"
        assert build.stable(committed.read_text()) == build.stable(path.read_text()), (
            f"{rel} is stale: run python3 -m services.proto_gen.build"
        )


def test_event_schema_is_fresh() -> None:
    assert build.SCHEMA.read_text() == build.schema_text(), (
        "proto/arena/v1/events.schema.json is stale: run python3 -m services.proto_gen.build"
    )


def test_schema_names_every_event_type() -> None:
    from services.rules.api import event_types

    schema = json.loads(build.SCHEMA.read_text())
    tags = {d["properties"]["type"]["enum"][0] for d in schema["$defs"].values()}
    assert tags == set(event_types())


def test_stubs_import() -> None:
    from services.proto_gen.arena.v1 import (
        game_pb2,
        game_pb2_grpc,
        matchmaker_pb2_grpc,
        replay_pb2_grpc,
    )

    assert game_pb2.SubmitActionRequest(game_id="g").game_id == "g"
    assert game_pb2_grpc.GameServiceStub and matchmaker_pb2_grpc.MatchmakerStub
    assert replay_pb2_grpc.ReplayServiceStub
