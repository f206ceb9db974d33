"""The document client's schema checks (openapi_client.py) give jsonschema's own verdicts: its
`anyOf` tries the branches a value's tags point to first and gives a branch up at its first
error, which must change nothing but the time. Every event kind of EventEntry and every entry
kind of an events page, valid and then broken in a few hundred ways, is judged by it and by the
standard Draft 2020-12 validator: the same verdict, the same first error."""

from __future__ import annotations

import copy
import random
from typing import Any

import jsonschema

from services.play import routes

from .openapi_client import DOC, Client


def _example(schema: Any, doc: dict[str, Any]) -> Any:
    """A value of `schema` with only its required parts (refs into the document followed)."""
    while "$ref" in schema:
        schema = doc["components"]["schemas"][schema["$ref"].rsplit("/", 1)[1]]
    if "anyOf" in schema:
        return _example(schema["anyOf"][0], doc)
    if "const" in schema:
        return schema["const"]
    if "enum" in schema:
        return schema["enum"][0]
    kind = schema.get("type")
    kind = kind[0] if isinstance(kind, list) else kind
    if kind == "object" or "properties" in schema:
        props = schema.get("properties", {})
        return {k: _example(props.get(k, {}), doc) for k in schema.get("required", [])}
    return {"integer": 0, "number": 0, "string": "", "boolean": False, "array": []}.get(kind)


def _broken(value: Any, rng: random.Random) -> Any:
    """`value` with one part removed or replaced by a value of another type."""
    value = copy.deepcopy(value)
    node = value
    while isinstance(node, dict) and node:
        key = rng.choice(list(node))
        if isinstance(node[key], dict) and node[key] and rng.random() < 0.5:
            node = node[key]
            continue
        if rng.random() < 0.5:
            del node[key]
        else:
            node[key] = rng.choice([None, "x", 7, [1], {"y": 1}, True])
        break
    return value


def test_the_clients_checks_give_the_standard_verdicts() -> None:
    doc = routes.openapi()
    client = Client("http://127.0.0.1:1", doc)
    schemas = doc["components"]["schemas"]
    events = [_example(s, doc) for s in schemas["EventEntry"]["properties"]["event"]["anyOf"]]
    entries = [
        _example(s, doc) for s in schemas["EventsPage"]["properties"]["entries"]["items"]["anyOf"]
    ]
    cases: list[tuple[str, Any]] = [
        ("EventEntry", {"kind": "event", "seq": 1, "event": e}) for e in events
    ]
    cases += [
        ("EventsPage", {**_example(schemas["EventsPage"], doc), "entries": [e]}) for e in entries
    ]
    rng = random.Random(5)
    cases += [(name, _broken(value, rng)) for name, value in cases for _ in range(6)]
    valid = 0
    for name, value in cases:
        schema = {"$ref": f"{DOC}#/components/schemas/{name}"}
        standard = jsonschema.Draft202012Validator(schema, registry=client.registry)
        ours = client.validator_class(schema, registry=client.registry)
        want = [e.message for e in standard.iter_errors(value)]
        got = [e.message for e in ours.iter_errors(value)]
        assert got == want, (name, value)
        valid += not want
    assert 40 <= valid < len(cases) - 100, (valid, len(cases))  # both kinds were judged
