"""Read scenario files (SCENARIOS.md, format v1) into `Scenario` structs, or a `ScenarioFormatError`.

Every problem is reported as `FILE: FIELD.PATH: expected …, got …` — never a traceback. Card names
are kept as written; the ruleset resolves aliases (药/桃) and checks names when the runner plays.
Note for authors: in YAML, ` #` starts a comment, so a second copy must be quoted: `"杀 S8 #2"`.
"""

from __future__ import annotations

import re
from collections.abc import Iterable, Mapping
from pathlib import Path
from typing import NoReturn, cast

import yaml

from services.rules.scenario.model import (
    PHASES,
    ROLES,
    RULESETS_WITHOUT_ROLES,
    CardRef,
    EventPattern,
    Expect,
    ExpectError,
    Intent,
    IntentKind,
    Scenario,
    ScenarioFormatError,
    SeatExpect,
    SeatSpec,
    Step,
    Suit,
    TurnSpec,
    Waiting,
    Winners,
)

# The accepted keys are the model's field names, so the format and the structs cannot drift apart.
TOP_KEYS = frozenset(Scenario.__struct_fields__) - {"source"}
SEAT_KEYS = frozenset(SeatSpec.__struct_fields__)
SEAT_CHECKS = frozenset(SeatExpect.__struct_fields__)
CHECK_KEYS = frozenset(Expect.__struct_fields__)
GENDERS = ("male", "female")
_SUIT_MAP = {"S": "S", "H": "H", "C": "C", "D": "D", "♠": "S", "♥": "H", "♣": "C", "♦": "D"}
_RANKS = {"A": 1, "J": 11, "Q": 12, "K": 13, **{str(n): n for n in range(2, 11)}}
_SUIT_RANK = r"([SHCD♠♥♣♦])\s*(A|10|[2-9]|J|Q|K)"
_CARD_RE = re.compile(rf"^(\S+)\s+{_SUIT_RANK}(?:\s*#(\d+))?$")
_SUIT_RANK_RE = re.compile(rf"^{_SUIT_RANK}$")
_COPY_RE = re.compile(r"^#(\d+)$")
_WORD_RE = re.compile(r"^[a-z][a-z0-9_]*$")
CARD_FORMAT = "a card `NAME SUIT RANK [#N]` (suit S H C D or ♠ ♥ ♣ ♦, rank A 2..10 J Q K)"
INTENT_FORMAT = (
    "an intent: `use CARD [+ CARD…] [as NAME] [-> T, …]`, `play CARD [as NAME]`, "
    "`skill NAME [with CARD, …] [-> T, …]`, `choose WORD…`, `discard CARD, …`, `pass` or `end`"
)


class NotationError(ValueError):
    """A card or intent text that does not follow the notation (the loader adds file and path)."""


def parse_card(text: str) -> CardRef:
    """Parse `NAME SUIT RANK [#N]`, e.g. `杀 S7`, `闪电 ♠A`, `杀 S8 #2`."""
    text = text.strip()
    match = _CARD_RE.match(text)
    if not match:
        raise NotationError(f"expected {CARD_FORMAT}, got {text!r}")
    name, suit, rank, copy = match.groups()
    if copy is not None and int(copy) < 1:
        raise NotationError(f"expected a copy number #1 or more, got {text!r}")
    return CardRef(name, cast(Suit, _SUIT_MAP[suit]), _RANKS[rank], int(copy or 1))


def _cards(text: str, sep: str) -> tuple[CardRef, ...]:
    return tuple(parse_card(part) for part in text.split(sep))


def _targets(text: str) -> tuple[int, ...]:
    parts = [part.strip() for part in text.split(",")]
    if not all(part.isdigit() for part in parts):
        raise NotationError(f"expected targets as seat numbers `-> 1, 2`, got {text!r}")
    return tuple(int(part) for part in parts)


def _choices(text: str) -> Intent:
    tokens = text.split()
    cards: list[CardRef] = []
    seats: list[int] = []
    words: list[str] = []
    i = 0
    while i < len(tokens):
        token = tokens[i]
        nxt = tokens[i + 1] if i + 1 < len(tokens) else ""
        if token == "seat" and nxt.isdigit():
            seats.append(int(nxt))
            i += 2
        elif _SUIT_RANK_RE.match(nxt):
            copy = tokens[i + 2] if i + 2 < len(tokens) and _COPY_RE.match(tokens[i + 2]) else ""
            cards.append(parse_card(f"{token} {nxt} {copy}"))
            i += 3 if copy else 2
        else:
            words.append(_SUIT_MAP.get(token, token))
            i += 1
    return Intent("choose", cards=tuple(cards), targets=tuple(seats), words=tuple(words))


def parse_intent(text: str) -> Intent:
    """Parse one intent of the script language into its structure."""
    head, _, rest = text.strip().partition(" ")
    rest = rest.strip()
    if head in ("pass", "end"):
        if rest:
            raise NotationError(f"expected `{head}` alone, got {text!r}")
        return Intent(cast(IntentKind, head))
    if not rest:
        raise NotationError(f"expected {INTENT_FORMAT}, got {text!r}")
    if head == "choose":
        return _choices(rest)
    if head == "discard":
        return Intent("discard", cards=_cards(rest, ","))
    body, arrow, tail = rest.partition("->")
    targets = _targets(tail) if arrow else ()
    if head == "skill":
        name, _, with_ = body.partition(" with ")
        if not name.strip() or " " in name.strip():
            raise NotationError(f"expected `skill NAME [with CARD, …]`, got {text!r}")
        cards = _cards(with_, ",") if with_.strip() else ()
        return Intent("skill", cards=cards, targets=targets, skill=name.strip())
    if head in ("use", "play"):
        if head == "play" and arrow:
            raise NotationError(
                f"expected no targets for `play` (it answers a demand), got {text!r}"
            )
        cards_text, as_, as_name = body.partition(" as ")
        if as_ and (not as_name.strip() or " " in as_name.strip()):
            raise NotationError(f"expected one card name after `as`, got {text!r}")
        return Intent(
            cast(IntentKind, head),
            cards=_cards(cards_text, "+"),
            as_name=as_name.strip() if as_ else None,
            targets=targets,
        )
    raise NotationError(f"expected {INTENT_FORMAT}, got {text!r}")


class _Reader:
    """Field readers for one file; each failure names the file, the field path and the expectation."""

    def __init__(self, source: str) -> None:
        self.source = source

    def fail(self, path: str, expected: str, got: object = ...) -> NoReturn:
        """Raise the format error for `path`."""
        tail = "" if got is ... else f", got {got!r}"
        raise ScenarioFormatError(self.source, path, f"expected {expected}{tail}")

    def mapping(
        self, value: object, path: str, keys: frozenset[str] | None = None
    ) -> dict[str, object]:
        """A mapping with string keys, all of them in `keys` when given."""
        if not isinstance(value, Mapping):
            self.fail(path, "a mapping", value)
        out: dict[str, object] = {}
        for key, item in value.items():
            if keys is not None and key not in keys:
                self.fail(
                    f"{path}.{key}" if path else str(key), f"one of {', '.join(sorted(keys))}"
                )
            out[str(key)] = item
        return out

    def string(self, value: object, path: str) -> str:
        """A non-empty string."""
        if not isinstance(value, str) or not value.strip():
            self.fail(path, "a non-empty string", value)
        return value.strip()

    def integer(
        self, value: object, path: str, low: int | None = None, high: int | None = None
    ) -> int:
        """An integer (not a boolean) within [low, high]."""
        if isinstance(value, bool) or not isinstance(value, int):
            self.fail(path, "an integer", value)
        if (low is not None and value < low) or (high is not None and value > high):
            bounds = f"{'' if low is None else low}..{'' if high is None else high}"
            self.fail(path, f"an integer in {bounds}", value)
        return value

    def boolean(self, value: object, path: str) -> bool:
        """true or false."""
        if not isinstance(value, bool):
            self.fail(path, "true or false", value)
        return value

    def seq(self, value: object, path: str) -> list[object]:
        """A list."""
        if not isinstance(value, list):
            self.fail(path, "a list", value)
        return value

    def card(self, value: object, path: str) -> CardRef:
        """One card in card notation."""
        if not isinstance(value, str):
            self.fail(path, CARD_FORMAT, value)
        try:
            return parse_card(value)
        except NotationError as err:
            self.fail(path, str(err).removeprefix("expected "))

    def cards(self, value: object, path: str) -> tuple[CardRef, ...]:
        """A list of cards."""
        return tuple(
            self.card(item, f"{path}[{i}]") for i, item in enumerate(self.seq(value, path))
        )

    def choice(self, value: object, path: str, allowed: Iterable[str]) -> str:
        """One of the allowed words."""
        options = tuple(allowed)
        if value not in options:
            self.fail(path, f"one of {', '.join(options)}", value)
        return str(value)

    def turn(self, value: object, path: str, seats: int) -> TurnSpec:
        """`{seat, phase}`."""
        raw = self.mapping(value, path, frozenset(("seat", "phase")))
        seat = self.integer(raw.get("seat", 0), f"{path}.seat", 0, seats - 1)
        return TurnSpec(seat, self.choice(raw.get("phase", "start"), f"{path}.phase", PHASES))


def _seat(r: _Reader, value: object, path: str, roles: bool) -> SeatSpec:
    raw = r.mapping(value, path, SEAT_KEYS)
    if "general" not in raw:
        r.fail(f"{path}.general", "a general name (or `vanilla`)")
    role: str | None = None
    if roles:
        role = r.choice(raw.get("role"), f"{path}.role", ROLES)
    elif "role" in raw:
        r.fail(f"{path}.role", "no role: this ruleset has no roles")
    hp = r.integer(raw["hp"], f"{path}.hp") if "hp" in raw else None
    max_hp = r.integer(raw["max_hp"], f"{path}.max_hp", 1) if "max_hp" in raw else None
    if hp is not None and max_hp is not None and hp > max_hp:
        r.fail(f"{path}.hp", f"at most max_hp ({max_hp})", hp)
    camp = r.seq(raw.get("camp", []), f"{path}.camp")
    return SeatSpec(
        general=r.string(raw["general"], f"{path}.general"),
        role=role,
        hp=hp,
        max_hp=max_hp,
        hand=r.cards(raw.get("hand", []), f"{path}.hand"),
        equip=r.cards(raw.get("equip", []), f"{path}.equip"),
        judge=r.cards(raw.get("judge", []), f"{path}.judge"),
        gender=r.choice(raw["gender"], f"{path}.gender", GENDERS) if "gender" in raw else None,
        armor=r.integer(raw.get("armor", 0), f"{path}.armor", 0),
        jade=r.integer(raw.get("jade", 0), f"{path}.jade", 0),
        rage=r.integer(raw.get("rage", 0), f"{path}.rage", 0),
        camp=tuple(r.string(g, f"{path}.camp[{i}]") for i, g in enumerate(camp)),
        alive=r.boolean(raw.get("alive", True), f"{path}.alive"),
    )


def _step(r: _Reader, value: object, path: str, seats: int) -> Step:
    if not isinstance(value, Mapping) or len(value) != 1:
        r.fail(path, "one step `SEAT: INTENT`", value)
    ((seat, text),) = value.items()
    if isinstance(seat, str) and seat.isdigit():
        seat = int(seat)
    seat = r.integer(seat, f"{path} (seat)", 0, seats - 1)
    text = r.string(text, f"{path}.{seat}")
    try:
        parsed = parse_intent(text)
    except NotationError as err:
        r.fail(f"{path}.{seat}", str(err).removeprefix("expected "))
    for target in parsed.targets:
        r.integer(target, f"{path}.{seat} (target)", 0, seats - 1)
    return Step(seat, text, parsed)


def _event_value(value: object) -> object:
    if isinstance(value, list):
        return tuple(_event_value(item) for item in value)
    if isinstance(value, str) and _CARD_RE.match(value.strip()):
        return parse_card(value)
    return value


def _seat_expect(r: _Reader, value: object, path: str) -> SeatExpect:
    raw = r.mapping(value, path, SEAT_CHECKS)

    def opt_int(key: str, low: int | None = 0) -> int | None:
        return r.integer(raw[key], f"{path}.{key}", low) if key in raw else None

    def opt_cards(key: str) -> tuple[CardRef, ...] | None:
        return r.cards(raw[key], f"{path}.{key}") if key in raw else None

    def opt_bool(key: str) -> bool | None:
        return r.boolean(raw[key], f"{path}.{key}") if key in raw else None

    return SeatExpect(
        hp=opt_int("hp", None),
        max_hp=opt_int("max_hp"),
        alive=opt_bool("alive"),
        hand=opt_cards("hand"),
        hand_count=opt_int("hand_count"),
        equip=opt_cards("equip"),
        judge=opt_cards("judge"),
        role_revealed=opt_bool("role_revealed"),
        armor=opt_int("armor"),
        jade=opt_int("jade"),
        rage=opt_int("rage"),
        general=r.string(raw["general"], f"{path}.general") if "general" in raw else None,
    )


def _winners(r: _Reader, value: object, path: str, roles: bool, seats: int) -> Winners:
    if value == "draw":
        return "draw"
    items = r.seq(value, path)
    if roles:
        return tuple(r.choice(v, f"{path}[{i}]", ROLES) for i, v in enumerate(items))
    return tuple(r.integer(v, f"{path}[{i}]", 0, seats - 1) for i, v in enumerate(items))


def _events(r: _Reader, value: object, path: str) -> tuple[EventPattern, ...]:
    out = []
    for i, item in enumerate(r.seq(value, path)):
        raw = r.mapping(item, f"{path}[{i}]")
        kind = raw.pop("type", None)
        if not isinstance(kind, str) or not _WORD_RE.match(kind):
            r.fail(f"{path}[{i}].type", "an event type name such as `damaged`", kind)
        out.append(EventPattern(kind, {k: _event_value(v) for k, v in raw.items()}))
    return tuple(out)


def _expect(r: _Reader, value: object, path: str, roles: bool, seats: int) -> Expect:
    raw = r.mapping(value, path, CHECK_KEYS)
    per_seat = r.mapping(raw.get("seats", {}), f"{path}.seats")
    checks: dict[int, SeatExpect] = {}
    for key, item in per_seat.items():
        seat = int(key) if key.isdigit() else r.fail(f"{path}.seats.{key}", "a seat number")
        r.integer(seat, f"{path}.seats.{key}", 0, seats - 1)
        checks[seat] = _seat_expect(r, item, f"{path}.seats.{seat}")
    waiting = None
    if "waiting" in raw:
        w = r.mapping(raw["waiting"], f"{path}.waiting", frozenset(("seat", "kind")))
        waiting = Waiting(
            r.integer(w.get("seat"), f"{path}.waiting.seat", 0, seats - 1),
            r.string(w.get("kind"), f"{path}.waiting.kind"),
        )
    return Expect(
        seats=checks,
        discard_has=r.cards(raw.get("discard_has", []), f"{path}.discard_has"),
        discard_lacks=r.cards(raw.get("discard_lacks", []), f"{path}.discard_lacks"),
        deck_count=r.integer(raw["deck_count"], f"{path}.deck_count", 0)
        if "deck_count" in raw
        else None,
        waiting=waiting,
        turn=r.turn(raw["turn"], f"{path}.turn", seats) if "turn" in raw else None,
        winners=_winners(r, raw["winners"], f"{path}.winners", roles, seats)
        if "winners" in raw
        else None,
        events=_events(r, raw.get("events", []), f"{path}.events"),
    )


def _check_unique(
    r: _Reader, seats: tuple[SeatSpec, ...], deck: tuple[CardRef, ...], discard: tuple[CardRef, ...]
) -> None:
    seen: set[CardRef] = set()
    places = [
        (f"seats[{i}].{area}", getattr(s, area))
        for i, s in enumerate(seats)
        for area in ("hand", "equip", "judge")
    ]
    for path, cards in [*places, ("deck", deck), ("discard", discard)]:
        for j, card in enumerate(cards):
            if card in seen:
                r.fail(
                    f"{path}[{j}]",
                    f"a card not already on the table (write the second copy `{card} #2`)",
                    str(card),
                )
            seen.add(card)


def parse_scenario(data: object, source: str) -> Scenario:
    """Build a Scenario from the YAML data of the file `source`; raise ScenarioFormatError."""
    r = _Reader(source)
    raw = r.mapping(data, "", TOP_KEYS)
    for key in ("name", "ruleset", "seats"):
        if key not in raw:
            r.fail(key, f"the required field `{key}`")
    if "expect" in raw and "expect_error" in raw:
        r.fail("expect_error", "either `expect` or `expect_error`, not both")
    ruleset = r.string(raw["ruleset"], "ruleset")
    roles = ruleset not in RULESETS_WITHOUT_ROLES
    seat_list = r.seq(raw["seats"], "seats")
    if not seat_list:
        r.fail("seats", "at least one seat")
    seats = tuple(_seat(r, s, f"seats[{i}]", roles) for i, s in enumerate(seat_list))
    deck = r.cards(raw.get("deck", []), "deck")
    discard = r.cards(raw.get("discard", []), "discard")
    _check_unique(r, seats, deck, discard)
    script = tuple(
        _step(r, s, f"script[{i}]", len(seats))
        for i, s in enumerate(r.seq(raw.get("script", []), "script"))
    )
    expect_error = None
    if "expect_error" in raw:
        e = r.mapping(raw["expect_error"], "expect_error", frozenset(("step", "contains")))
        expect_error = ExpectError(
            r.integer(e.get("step"), "expect_error.step", 0, len(script) - 1),
            r.string(e["contains"], "expect_error.contains") if "contains" in e else None,
        )
    return Scenario(
        source=source,
        name=r.string(raw["name"], "name"),
        ruleset=ruleset,
        seats=seats,
        options=r.mapping(raw.get("options") or {}, "options"),
        deck=deck,
        discard=discard,
        seed=r.integer(raw["seed"], "seed") if "seed" in raw else None,
        fill=r.boolean(raw.get("fill", False), "fill"),
        turn=r.turn(raw["turn"], "turn", len(seats)) if "turn" in raw else TurnSpec(),
        script=script,
        expect=_expect(r, raw["expect"], "expect", roles, len(seats)) if "expect" in raw else None,
        expect_error=expect_error,
    )


def load_text(text: str, source: str) -> Scenario:
    """Parse the YAML text of a scenario file; raise ScenarioFormatError."""
    try:
        data = yaml.safe_load(text)
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
