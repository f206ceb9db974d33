"""Read scenario files (SCENARIOS.md, format v1) into `Scenario` structs, or a `ScenarioFormatError`.

msgspec checks the shape against the structs of ``model.py`` (``schema.convert``); this module adds
what depends on more than one field: seat numbers within the table, roles only where the ruleset
has them, each card created once, event types and fields the engine really has. Every problem is
reported as `FILE: FIELD.PATH: expected …, got …` — never a traceback. Card names are kept as
written; the table builder resolves aliases (药/桃) and checks that the ruleset has them.
Note for authors: in YAML, ` #` starts a comment, so a second copy must be quoted: `"杀 S8 #2"`.
"""

from __future__ import annotations

import functools
from collections.abc import Iterable
from pathlib import Path
from typing import Any, NoReturn

import msgspec
import yaml

from .. import rulesets as _rulesets  # noqa: F401  (registers the rulesets' own event types)
from ..core.engine import DECISION_KINDS
from ..core.events import event_types
from ..core.keys import is_number
from ..core.registry import RULESETS
from .model import (
    ROLES,
    CardRef,
    EventPattern,
    Expect,
    ExpectError,
    Scenario,
    ScenarioFormatError,
    SeatExpect,
    SeatSpec,
    Step,
    Text,
    TurnSpec,
)
from .notation import CARD_RE, NotationError, parse_card, parse_intent
from .schema import convert

__all__ = ["load_text", "load_file", "load_paths", "parse_scenario", "parse_card", "parse_intent"]


class _File(msgspec.Struct, frozen=True, forbid_unknown_fields=True):
    """The top level of a file; `script`, `expect` and `options` are read with their own paths."""

    name: Text
    ruleset: Text
    seats: tuple[SeatSpec, ...]
    options: dict[str, Any] | None = None
    deck: tuple[CardRef, ...] = ()
    discard: tuple[CardRef, ...] = ()
    seed: int | None = None
    fill: bool = False
    turn: TurnSpec = TurnSpec()
    script: list[Any] = []
    expect: dict[str, Any] | None = None
    expect_error: ExpectError | None = None


class _Checks:
    """The cross-field checks of one file; each failure names the file and the field path."""

    def __init__(self, source: str, seats: int) -> None:
        self.source = source
        self.seats = seats

    def fail(self, path: str, expected: str, got: object = ...) -> NoReturn:
        """Raise the format error for `path`."""
        tail = "" if got is ... else f", got {got!r}"
        raise ScenarioFormatError(self.source, path, f"expected {expected}{tail}")

    def seat(self, value: int, path: str) -> int:
        """A seat number of the table."""
        if not 0 <= value < self.seats:
            self.fail(path, f"a seat number in 0..{self.seats - 1}", value)
        return value

    def step(self, value: object, path: str) -> Step:
        """One script step `SEAT: INTENT`."""
        if not isinstance(value, dict) or len(value) != 1:
            self.fail(path, "one step `SEAT: INTENT`", value)
        ((seat, text),) = value.items()
        if isinstance(seat, str) and is_number(seat):
            seat = int(seat)
        if isinstance(seat, bool) or not isinstance(seat, int):
            self.fail(f"{path} (seat)", f"a seat number in 0..{self.seats - 1}", seat)
        self.seat(seat, f"{path} (seat)")
        if not isinstance(text, str) or not text.strip():
            self.fail(f"{path}.{seat}", "an intent", text)
        try:
            parsed = parse_intent(text)
        except NotationError as err:
            self.fail(f"{path}.{seat}", str(err).removeprefix("expected "))
        for target in parsed.targets:
            self.seat(target, f"{path}.{seat} (target)")
        return Step(seat, text.strip(), parsed)

    def events(self, value: object, path: str) -> tuple[EventPattern, ...]:
        """Event patterns: a type the engine has and only that event's fields."""
        known = event_types()
        if not isinstance(value, list):
            self.fail(path, "a list", value)
        out = []
        for i, item in enumerate(value):
            if not isinstance(item, dict):
                self.fail(f"{path}[{i}]", "a mapping `{type: …, FIELD: VALUE}`", item)
            raw = dict(item)
            kind = raw.pop("type", None)
            if kind not in known:
                self.fail(f"{path}[{i}].type", f"an event type ({', '.join(sorted(known))})", kind)
            fields = {f.encode_name for f in msgspec.structs.fields(known[kind])}
            for key in raw:
                if key not in fields:
                    self.fail(
                        f"{path}[{i}].{key}", f"a field of {kind} ({', '.join(sorted(fields))})"
                    )
            out.append(EventPattern(kind, {str(k): _event_value(v) for k, v in raw.items()}))
        return tuple(out)

    def expect(self, value: dict[str, Any], roles: tuple[str, ...]) -> Expect:
        """The `expect` checks."""
        raw = dict(value)
        per_seat = raw.pop("seats", {})
        events = raw.pop("events", [])
        ex = convert(self.source, raw, Expect, "expect")
        if not isinstance(per_seat, dict):
            self.fail("expect.seats", "a mapping of seat numbers", per_seat)
        seats: dict[int, SeatExpect] = {}
        for key, item in per_seat.items():
            if not is_number(str(key)):
                self.fail(f"expect.seats.{key}", "a seat number")
            n = self.seat(int(key), f"expect.seats.{key}")
            seats[n] = convert(self.source, item, SeatExpect, f"expect.seats.{n}")
        if ex.waiting is not None:
            self.seat(ex.waiting.seat, "expect.waiting.seat")
            if ex.waiting.kind not in DECISION_KINDS:
                self.fail(
                    "expect.waiting.kind",
                    f"one of {', '.join(sorted(DECISION_KINDS))}",
                    ex.waiting.kind,
                )
        if ex.turn is not None:
            self.seat(ex.turn.seat, "expect.turn.seat")
        if isinstance(ex.winners, tuple):
            for i, w in enumerate(ex.winners):
                if roles and w not in roles:
                    self.fail(f"expect.winners[{i}]", f"one of {', '.join(roles)}", w)
                if not roles and (not isinstance(w, int) or not 0 <= w < self.seats):
                    self.fail(f"expect.winners[{i}]", f"a seat number in 0..{self.seats - 1}", w)
        return msgspec.structs.replace(ex, seats=seats, events=self.events(events, "expect.events"))

    def unique(self, f: _File) -> None:
        """Each card is created once (a second copy is written `NAME SUIT RANK #2`)."""
        seen: set[CardRef] = set()
        places = [
            (f"seats[{i}].{area}", getattr(s, area))
            for i, s in enumerate(f.seats)
            for area in ("hand", "equip", "judge")
        ]
        for path, cards in [*places, ("deck", f.deck), ("discard", f.discard)]:
            for j, card in enumerate(cards):
                if card in seen:
                    self.fail(
                        f"{path}[{j}]",
                        f"a card not already on the table (write the second copy `{card} #2`)",
                        str(card),
                    )
                seen.add(card)


def _event_value(value: object) -> object:
    if isinstance(value, list):
        return tuple(_event_value(item) for item in value)
    if isinstance(value, str) and CARD_RE.match(value.strip()):
        return parse_card(value)
    return value


@functools.cache
def ruleset_roles(ruleset: str) -> tuple[str, ...]:
    """The roles a seat of `ruleset` may hold: those it deals at any of its tables and those
    play may turn a seat into (its camps: 叛徒); () for a ruleset without roles (a 1v1), and
    every role the notation knows for a ruleset not registered (the table builder names that)."""
    rs = RULESETS.get(ruleset)
    if rs is None:
        return ROLES
    dealt: set[str] = set()
    for players in range(rs.min_players, rs.max_players + 1):
        for options in [dict(rs.defaults), *(dict(rs.defaults, **o) for _, o in rs.tables())]:
            try:
                dealt |= set(rs.roles(players, options)) - {""}
            except (ValueError, KeyError):
                continue  # a count the variant does not seat
    if not dealt:
        return ()
    found = dealt | set(rs.camps)
    return tuple(r for r in ROLES if r in found)


def parse_scenario(data: object, source: str) -> Scenario:
    """Build a Scenario from the YAML data of the file `source`; raise ScenarioFormatError."""
    f = convert(source, data, _File)
    c = _Checks(source, len(f.seats))
    if not f.seats:
        c.fail("seats", "at least one seat")
    roles = ruleset_roles(f.ruleset.strip())
    for i, seat in enumerate(f.seats):
        if roles and seat.role not in roles:
            c.fail(
                f"seats[{i}].role",
                f"one of {', '.join(roles)} (the roles of {f.ruleset})",
                seat.role,
            )
        if not roles and seat.role is not None:
            c.fail(f"seats[{i}].role", "no role: this ruleset has no roles")
        if seat.hp is not None and seat.max_hp is not None and seat.hp > seat.max_hp:
            c.fail(f"seats[{i}].hp", f"at most max_hp ({seat.max_hp})", seat.hp)
    c.seat(f.turn.seat, "turn.seat")
    c.unique(f)
    script = tuple(c.step(s, f"script[{i}]") for i, s in enumerate(f.script))
    if f.expect is not None and f.expect_error is not None:
        c.fail("expect_error", "either `expect` or `expect_error`, not both")
    if f.expect_error is not None and f.expect_error.step >= len(script):
        c.fail("expect_error.step", f"an integer in 0..{len(script) - 1}", f.expect_error.step)
    return Scenario(
        source=source,
        name=f.name.strip(),
        ruleset=f.ruleset.strip(),
        seats=f.seats,
        options=dict(f.options or {}),
        deck=f.deck,
        discard=f.discard,
        seed=f.seed,
        fill=f.fill,
        turn=f.turn,
        script=script,
        expect=c.expect(f.expect, roles) if f.expect is not None else None,
        expect_error=f.expect_error,
    )


# libyaml's safe loader where PyYAML was built with it (its wheels are): the same documents as
# yaml.safe_load, at an eighth of the time (531 scenario files: 0.32 s against 2.6 s, which
# every test process paid when it collected the suite)
_LOADER = getattr(yaml, "CSafeLoader", yaml.SafeLoader)


def load_text(text: str, source: str) -> Scenario:
    """Parse the YAML text of a scenario file; raise ScenarioFormatError."""
    try:
        data = yaml.load(text, Loader=_LOADER)  # (a safe loader: _LOADER)
    except yaml.YAMLError as err:
        mark = getattr(err, "problem_mark", None)
        where = f"line {mark.line + 1}" if mark is not None else "YAML"
        problem = getattr(err, "problem", None) or str(err)
        raise ScenarioFormatError(source, where, f"expected valid YAML ({problem})") from None
    return parse_scenario(data, source)


def load_file(path: str | Path) -> Scenario:
    """Read and parse one scenario file; raise ScenarioFormatError (also for unreadable files)."""
    try:
        text = Path(path).read_text(encoding="utf-8")
    except (OSError, UnicodeDecodeError) as err:
        raise ScenarioFormatError(
            str(path), "", f"expected a readable UTF-8 file ({err})"
        ) from None
    return load_text(text, str(path))


def load_paths(paths: Iterable[str | Path]) -> list[tuple[Path, Scenario | ScenarioFormatError]]:
    """Load files and folders (recursively, `*.yaml` in sorted order); errors are returned, not raised."""
    files: list[Path] = []
    for path in map(Path, paths):
        files.extend(sorted(path.rglob("*.yaml")) if path.is_dir() else [path])
    out: list[tuple[Path, Scenario | ScenarioFormatError]] = []
    for file in files:
        try:
            out.append((file, load_file(file)))
        except ScenarioFormatError as err:
            out.append((file, err))
    return out
