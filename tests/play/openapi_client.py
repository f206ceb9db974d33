"""A client of the play API written only from its OpenAPI document: operations are found by
their operationId, URLs built from the path templates, bodies sent as the document says, and
every JSON response checked against the schema the document gives for its status. Nothing
here knows a route or a field name that the document does not name."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass
from typing import Any
from urllib.parse import quote, urlsplit

import jsonschema
from referencing import Registry, Resource
from referencing.jsonschema import DRAFT202012

DOC = "urn:arena-play-openapi"


_ANY_OF = jsonschema.Draft202012Validator.VALIDATORS["anyOf"]


def _validator_class(document: dict[str, Any]) -> Any:
    """Draft 2020-12 with an `anyOf` that gives the standard one's verdict sooner (the play
    tests spent nine tenths of their CPU in it: each event is checked against EventEntry's 36
    kinds, and the standard keyword lists every error of every kind it is not). The branches
    whose tags (a property of one allowed value: `type`, `kind`) the value carries are tried
    first, and a branch is given up at its first error; only when no branch holds does the
    standard keyword run, for its errors. Whether a value is valid, and the errors of one that
    is not, are the standard ones: the order branches are tried in decides nothing."""

    def resolve(subschema: Any) -> Any:
        ref = subschema.get("$ref", "") if isinstance(subschema, dict) else ""
        if not ref.startswith("#/"):
            return subschema
        node: Any = document
        for part in ref[2:].split("/"):
            node = node[part.replace("~1", "/").replace("~0", "~")]
        return node

    tags: dict[int, tuple[Any, list[dict[str, Any]]]] = {}  # id(anyOf) -> (it, each branch's)

    def tags_of(any_of: Any) -> list[dict[str, Any]]:
        if id(any_of) not in tags:
            found = []
            for subschema in any_of:
                props = resolve(subschema)
                props = props.get("properties", {}) if isinstance(props, dict) else {}
                found.append(
                    {
                        name: s["const"] if "const" in s else s["enum"][0]
                        for name, s in props.items()
                        if isinstance(s, dict) and ("const" in s or len(s.get("enum", ())) == 1)
                    }
                )
            tags[id(any_of)] = (any_of, found)  # (holding it keeps its id its own)
        return tags[id(any_of)][1]

    def any_of_keyword(validator: Any, any_of: Any, instance: Any, schema: Any) -> Any:
        order = list(range(len(any_of)))
        if isinstance(instance, dict):
            branch_tags = tags_of(any_of)
            carried = [
                i
                for i in order
                if branch_tags[i]
                and all(
                    name in instance and instance[name] == v for name, v in branch_tags[i].items()
                )
            ]
            order = carried + [i for i in order if i not in carried]
        for index in order:
            if (
                next(iter(validator.descend(instance, any_of[index], schema_path=index)), None)
                is None
            ):
                return
        yield from _ANY_OF(validator, any_of, instance, schema)

    return jsonschema.validators.extend(jsonschema.Draft202012Validator, {"anyOf": any_of_keyword})


class ApiRefused(Exception):
    """A documented error response: its status and body."""

    def __init__(self, status: int, body: Any) -> None:
        super().__init__(f"{status}: {body}")
        self.status = status
        self.body = body


@dataclass
class Operation:
    """One operation of the document."""

    method: str
    path: str
    spec: dict[str, Any]


async def _request(
    host: str, port: int, method: str, target: str, headers: dict[str, str], body: bytes
) -> tuple[int, dict[str, str], asyncio.StreamReader, asyncio.StreamWriter]:
    reader, writer = await asyncio.open_connection(host, port)
    lines = [f"{method} {target} HTTP/1.1", f"Host: {host}:{port}"]
    lines += [f"{k}: {v}" for k, v in headers.items()]
    if body:
        lines.append(f"Content-Length: {len(body)}")
    writer.write(("\r\n".join(lines) + "\r\n\r\n").encode() + body)
    await writer.drain()
    status_line = await reader.readline()
    status = int(status_line.split()[1])
    got: dict[str, str] = {}
    while (line := await reader.readline()) not in (b"\r\n", b""):
        k, _, v = line.decode().partition(":")
        got[k.strip().lower()] = v.strip()
    return status, got, reader, writer


class Client:
    """Calls operations by id; `token` (from the guest operation) is sent as a bearer token."""

    def __init__(self, base: str, document: dict[str, Any]) -> None:
        url = urlsplit(base)
        self.host, self.port = url.hostname or "127.0.0.1", url.port or 80
        self.doc = document
        self.token = ""
        self.ops: dict[str, Operation] = {}
        for path, item in document["paths"].items():
            for method, spec in item.items():
                self.ops[spec["operationId"]] = Operation(method.upper(), path, spec)
        resource = Resource.from_contents(document, default_specification=DRAFT202012)
        self.registry = Registry().with_resource(DOC, resource)
        self.validator_class = _validator_class(document)
        self.validators: dict[str, Any] = {}  # by schema (its JSON): built once

    @classmethod
    async def fetch(cls, base: str, path: str = "/api/openapi.json") -> Client:
        """A client for the document the server serves at `path`."""
        url = urlsplit(base)
        status, _, reader, writer = await _request(
            url.hostname or "", url.port or 80, "GET", path, {}, b""
        )
        body = await reader.read()
        writer.close()
        assert status == 200
        return cls(base, json.loads(body))

    def _target(self, op: Operation, params: dict[str, Any]) -> str:
        path, query = op.path, []
        for p in op.spec.get("parameters", []):
            if p["name"] not in params:
                assert not p["required"], f"{op.spec['operationId']} needs {p['name']}"
                continue
            if p["in"] == "path":
                path = path.replace("{" + p["name"] + "}", quote(str(params[p["name"]]), safe=""))
            else:
                query.append(f"{quote(p['name'])}={quote(str(params[p['name']]), safe='')}")
        return path + ("?" + "&".join(query) if query else "")

    def _headers(self, op: Operation, body: bytes) -> dict[str, str]:
        h = {"Connection": "close"}
        if body:
            h["Content-Type"] = next(iter(op.spec["requestBody"]["content"]))
        if self.token and op.spec.get("security"):
            h["Authorization"] = f"Bearer {self.token}"
        return h

    def _check(self, op: Operation, status: int, ctype: str, value: Any) -> None:
        responses = op.spec["responses"]
        assert str(status) in responses, f"{op.spec['operationId']}: undocumented {status}"
        self._validate(responses[str(status)]["content"][ctype]["schema"], value)

    def _validate(self, schema: dict[str, Any], value: Any) -> None:
        if schema.get("$ref", "").startswith("#"):  # a reference into the document
            schema = {"$ref": DOC + schema["$ref"]}
        key = json.dumps(schema, sort_keys=True)
        if key not in self.validators:
            self.validators[key] = self.validator_class(schema, registry=self.registry)
        self.validators[key].validate(value)

    async def call(self, operation: str, body: Any = None, **params: Any) -> Any:
        """Call an operation; its JSON result (a documented error raises ApiRefused)."""
        op = self.ops[operation]
        data = json.dumps(body).encode() if body is not None else b""
        status, headers, reader, writer = await _request(
            self.host, self.port, op.method, self._target(op, params), self._headers(op, data), data
        )
        raw = await reader.read()
        writer.close()
        value = json.loads(raw) if raw else None
        self._check(op, status, headers.get("content-type", "").split(";")[0], value)
        if status >= 400:
            raise ApiRefused(status, value)
        return value

    async def events(self, operation: str, **params: Any) -> AsyncIterator[tuple[str, str, Any]]:
        """An event-stream operation: (event, id, data as JSON) until the stream ends."""
        op = self.ops[operation]
        status, headers, reader, writer = await _request(
            self.host, self.port, op.method, self._target(op, params), self._headers(op, b""), b""
        )
        try:
            if status != 200:
                body = await reader.read()
                raise ApiRefused(status, json.loads(body))
            assert headers["content-type"].startswith(
                next(iter(op.spec["responses"]["200"]["content"]))
            )
            event, eid, data = "message", "", b""
            while line := await reader.readline():
                line = line.rstrip(b"\n")
                if not line:
                    if data:
                        yield event, eid, json.loads(data)
                    event, eid, data = "message", "", b""
                elif not line.startswith(b":"):
                    name, _, value = line.partition(b":")
                    value = value[1:] if value.startswith(b" ") else value
                    if name == b"event":
                        event = value.decode()
                    elif name == b"id":
                        eid = value.decode()
                    elif name == b"data":
                        data = value
        finally:
            writer.close()

    def validate(self, name: str, value: Any) -> None:
        """Check a value against a component schema (a streamed message, say)."""
        self._validate({"$ref": f"#/components/schemas/{name}"}, value)
