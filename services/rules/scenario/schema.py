"""Convert YAML data into the scenario structs with msgspec, turning its validation errors into
`ScenarioFormatError`s that name the file, the field path and what was expected (with the allowed
keys or values spelt out), never a traceback."""

from __future__ import annotations

import re
import types
import typing
from typing import Any, TypeVar

import msgspec

from .model import CardRef, ScenarioFormatError
from .notation import CARD_FORMAT, NotationError, parse_card

T = TypeVar("T")

_AT = re.compile(r"^(?P<msg>.*?)(?: - at `(?:key` in `)?\$(?P<path>[^`]*)`)?$", re.S)
_SEGMENT = re.compile(r"\.([^.\[]+)|\[(\d+|\.\.\.)\]")
_WORDS = {
    "int": "an integer",
    "str": "a string",
    "bool": "true or false",
    "array": "a list",
    "object": "a mapping",
    "float": "a number",
}


def _card_hook(typ: type, value: object) -> object:
    """Card notation strings become CardRef (the loader's parse_card raises the message)."""
    if typ is CardRef:
        if not isinstance(value, str):
            raise ValueError(f"expected {CARD_FORMAT}, got {value!r}")
        try:
            return parse_card(value)
        except NotationError as err:
            raise ValueError(str(err)) from None
    raise NotImplementedError(typ)


def _strip(tp: Any) -> Any:
    """The type under Annotated and Optional (the first non-None member of a union)."""
    while True:
        origin = typing.get_origin(tp)
        if origin is typing.Annotated:
            tp = typing.get_args(tp)[0]
        elif origin in (typing.Union, types.UnionType):
            members = [a for a in typing.get_args(tp) if a is not type(None)]
            structs = [a for a in members if isinstance(a, type) and issubclass(a, msgspec.Struct)]
            tp = (structs or members)[0]
        else:
            return tp


def _type_at(tp: Any, path: str) -> Any:
    """The declared type of the value at a msgspec path such as `.seats[0].hp`."""
    for name, _index in _SEGMENT.findall(path):
        tp = _strip(tp)
        if name:
            fields = {f.encode_name: f.type for f in msgspec.structs.fields(tp)}
            tp = fields.get(name, Any)
        else:
            args = typing.get_args(tp)
            tp = args[-1] if args and args[-1] is not Ellipsis else (args[0] if args else Any)
    return tp


def _value_at(data: Any, path: str) -> Any:
    """The data at a msgspec path (``...`` when it cannot be followed)."""
    for name, index in _SEGMENT.findall(path):
        try:
            data = data[name] if name else data[int(index)]
        except (KeyError, IndexError, TypeError, ValueError):
            return ...
    return data


def _literals(tp: Any) -> list[str]:
    """The allowed values of a Literal type (looked for under Annotated/Optional/unions)."""
    out: list[str] = []
    stack = [tp]
    while stack:
        t = stack.pop()
        if typing.get_origin(t) is typing.Literal:
            out += [str(a) for a in typing.get_args(t)]
        else:
            stack += reversed(typing.get_args(t))
    return out


def _explain(err: msgspec.ValidationError, data: Any, tp: Any) -> tuple[str, str]:
    """(field path, what was expected) for one msgspec validation error."""
    match = _AT.match(str(err))
    assert match is not None
    msg, raw = match.group("msg"), match.group("path") or ""
    path = raw.lstrip(".")
    if m := re.match(r"Object contains unknown field `(.+)`", msg):
        allowed = [f.encode_name for f in msgspec.structs.fields(_strip(_type_at(tp, raw)))]
        return f"{path}.{m[1]}".lstrip("."), f"one of {', '.join(sorted(allowed))}"
    if m := re.match(r"Object missing required field `(.+)`", msg):
        return f"{path}.{m[1]}".lstrip("."), f"the required field `{m[1]}`"
    got = _value_at(data, raw)
    tail = "" if got is ... else f", got {got!r}"
    if msg.startswith("Invalid enum value"):
        return path, f"one of {', '.join(_literals(_type_at(tp, raw)))}{tail}"
    if m := re.match(r"Expected `([^`]+)`(?:, got `[^`]+`)?(.*)$", msg):
        words = [_WORDS.get(w, w) for w in m[1].split(" | ") if w != "null"]
        bound = m[2].strip()
        if bound.startswith("of length >= 1"):
            return path, f"a non-empty string{tail}"
        return path, f"{' or '.join(words)}{' ' + bound if bound else ''}{tail}"
    return path, msg.removeprefix("expected ")


def convert(source: str, data: Any, tp: type[T], prefix: str = "") -> T:
    """``data`` as the struct ``tp`` (lenient about YAML's string keys), or a ScenarioFormatError
    naming ``source``, the field under ``prefix`` and what was expected."""
    try:
        return msgspec.convert(data, tp, strict=False, dec_hook=_card_hook)
    except msgspec.ValidationError as err:
        path, expected = _explain(err, data, tp)
        full = ".".join(p for p in (prefix, path) if p).replace(".[", "[")
        raise ScenarioFormatError(source, full, f"expected {expected}") from None
