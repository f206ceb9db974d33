"""The AsyncAPI document of the shared streams, generated from their typed messages.

`python3 -m services.proto_gen.build` writes it (with the other committed contract artefacts);
a test keeps the published file equal to what this module generates. Each shared stream (streams.py: `SHARED`)
is a channel whose address is its Redis key in the default namespace, with the partition's hash
tag as the parameter `partition` (streams.py: a game's messages go to its partition's stream,
consumers read every partition); its one message is the
stream's msgspec Struct, whose JSON Schema msgspec derives. On the wire the message is msgpack
in the entry's field `m` (`bytes` fields are msgpack bin; the JSON Schema shows them as base64
strings, as msgspec's JSON encoding would). Each consumer group is a `receive` operation.
"""

from __future__ import annotations

import json
from typing import Any

import msgspec

from .streams import FIELD, SHARED

NAMESPACE = "arena"
PARTITION = (
    "the hash tag of one of the ARENA_PARTITIONS partitions, braces included, e.g. `{p3}` or "
    "`{p0.41}` (services/contracts/streams.py `partition_tag`); a game's messages go to the "
    "stream of its partition (crc32 of the game id mod P); the matchmaker's matches stream is "
    "`arena:{mm}:matches`"
)

_PRODUCERS = {
    "matches": "the matchmaker (a table formed) and `arena tournament`",
    "decisions": "engine workers, in the same script that appends the entries before it",
    "finished": "engine workers, after the seed reveal",
}
_CONSUMERS = {
    "engine": "engine workers create the game (idempotent)",
    "bots": "bot workers answer the decision over gRPC with its seat token",
    "ratings": "the matchmaker rates the finished game once",
}


def document() -> dict[str, Any]:
    """The AsyncAPI 3.0 document (a JSON object) of `arena:matches`, `:decisions`, `:finished`."""
    _, schemas = msgspec.json.schema_components(
        [s.message for s in SHARED], ref_template="#/components/schemas/{name}"
    )
    channels: dict[str, Any] = {}
    operations: dict[str, Any] = {}
    messages: dict[str, Any] = {}
    for s in SHARED:
        name = s.message.__name__
        address = f"{NAMESPACE}:{{partition}}:{s.name}"  # the Redis key: {partition} is `{pN}`
        messages[name] = {
            "name": name,
            "contentType": "application/msgpack",
            "summary": f"one entry of {address}: the message in field `{FIELD.decode()}`",
            "payload": {"$ref": f"#/components/schemas/{name}"},
        }
        channels[s.name] = {
            "address": address,
            "parameters": {"partition": {"description": PARTITION}},
            "description": f"Redis stream; consumer groups: {', '.join(s.groups)} (created from "
            "id 0; acked after the handler; idle entries taken over with XAUTOCLAIM; dead "
            "letters in arena:dead). Trimmed below what every group acked.",
            "messages": {name: {"$ref": f"#/components/messages/{name}"}},
        }
        operations[f"publish_{s.name}"] = {
            "action": "send",
            "channel": {"$ref": f"#/channels/{s.name}"},
            "summary": f"written by {_PRODUCERS[s.name]}",
        }
        for group in s.groups:
            operations[f"{group}_reads_{s.name}"] = {
                "action": "receive",
                "channel": {"$ref": f"#/channels/{s.name}"},
                "summary": f"consumer group `{group}`: {_CONSUMERS[group]}",
            }
    return {
        "asyncapi": "3.0.0",
        "info": {
            "title": "Arena shared streams",
            "version": "1",
            "description": "The work streams between Arena's services (services/contracts/"
            "streams.py). Keys are shown in the default namespace `arena`.",
        },
        "defaultContentType": "application/msgpack",
        "servers": {
            "redis": {"host": "127.0.0.1:6379", "protocol": "redis", "description": "REDIS_URL"}
        },
        "channels": channels,
        "operations": operations,
        "components": {"messages": messages, "schemas": schemas},
    }


def text() -> str:
    """The document as published (indented JSON, trailing newline)."""
    return json.dumps(document(), indent=2, ensure_ascii=False, sort_keys=True) + "\n"
