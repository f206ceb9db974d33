"""The shared streams' AsyncAPI document: published as generated, and every reference in it
resolves to the messages producers and consumers really exchange."""

from __future__ import annotations

import json
from pathlib import Path
from typing import Any

import msgspec

from services.contracts import asyncapi
from services.contracts.streams import (
    SHARED,
    BotDecision,
    GameFinished,
    NewMatch,
    Seat,
    decode,
    encode,
    stream_key,
)
from services.proto_gen import build

DOC = Path(__file__).resolve().parents[2] / "docs" / "asyncapi.json"


def _resolve(doc: dict[str, Any], ref: str) -> Any:
    node: Any = doc
    for part in ref.removeprefix("#/").split("/"):
        node = node[part]
    return node


def _refs(node: Any) -> list[str]:
    if isinstance(node, dict):
        return [v for k, v in node.items() if k == "$ref"] + [
            r for v in node.values() for r in _refs(v)
        ]
    if isinstance(node, list):
        return [r for v in node for r in _refs(v)]
    return []


def test_the_published_document_is_the_generated_one() -> None:
    """`python3 -m services.proto_gen.build` after a message changes."""
    assert DOC == build.ASYNCAPI
    assert DOC.read_text() == asyncapi.text()


def test_every_stream_group_and_reference_is_there() -> None:
    doc = json.loads(DOC.read_text())
    assert doc["asyncapi"] == "3.0.0"
    for ref in _refs(doc):
        _resolve(doc, ref)  # KeyError if dangling
    for s in SHARED:
        channel = doc["channels"][s.name]
        # the address names every partition's key: {partition} stands for the braced tag
        assert channel["address"].replace("{partition}", "{p0}") == stream_key(
            "arena", s.name, "p0"
        )
        assert "partition" in channel["parameters"]
        (message,) = channel["messages"].values()
        payload = _resolve(doc, _resolve(doc, message["$ref"])["payload"]["$ref"])
        assert payload["title"] == s.message.__name__
        receivers = {
            k
            for k, op in doc["operations"].items()
            if op["action"] == "receive" and op["channel"]["$ref"] == f"#/channels/{s.name}"
        }
        assert receivers == {f"{g}_reads_{s.name}" for g in s.groups}


def test_the_schema_describes_what_is_encoded() -> None:
    """A message as its stream carries it has exactly the schema's properties, and the
    schema's required ones."""
    doc = json.loads(DOC.read_text())
    samples: list[Any] = [
        NewMatch(match_id="m", ruleset="standard", seats=[Seat("a"), Seat("bot:random", True)]),
        BotDecision(game="g", decision=1, seat=0, player="bot:random", version=3, body=b"{}"),
        GameFinished(game="g", winners=[0]),
    ]
    streams: list[Any] = list(SHARED)
    for s, message in zip(streams, samples, strict=True):
        schema = doc["components"]["schemas"][s.message.__name__]
        assert decode(encode(message), s.message) == message
        as_json = msgspec.to_builtins(message)
        assert set(as_json) == set(schema["properties"])
        assert set(schema["required"]) <= set(as_json)
