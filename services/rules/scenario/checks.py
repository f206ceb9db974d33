"""The ``expect`` checks of a scenario, each reporting the expected and the actual value."""

from __future__ import annotations

from collections import Counter
from typing import Any

import msgspec

from ..core.cards import notation
from ..core.events import Event
from ..core.ruleset import RULESETS
from ..core.state import Game
from .model import CardRef, EventPattern, Scenario


class ScenarioFailed(Exception):
    """The scenario did not hold; the message says why."""


def _fail(what: str, expected: Any, actual: Any) -> None:
    raise ScenarioFailed(f"{what}: expected {expected}, got {actual}")


def _names(g: Game, ids: list[int]) -> list[str]:
    return sorted(notation(g.cards[c]) for c in ids)


def _ids(refs: tuple[CardRef, ...], refmap: dict[CardRef, int]) -> list[int]:
    return [refmap.get(r, -1) for r in refs]


def check_expect(sc: Scenario, g: Game, refmap: dict[CardRef, int], events: list[Event]) -> None:
    """Check every expectation of ``sc`` against the stopped game."""
    ex = sc.expect
    assert ex is not None
    show = {v: k for k, v in refmap.items()}

    def label(c: int) -> str:
        return str(show[c]) if c in show else notation(g.cards[c])

    def shown(ids: list[int]) -> list[str]:
        return sorted(label(c) for c in ids)

    for n, se in ex.seats.items():
        if n >= len(g.players):
            _fail(f"seats.{n}", "a seat of the table", f"{len(g.players)} seats")
        p = g.players[n]
        for field in ("hp", "max_hp", "alive", "role_revealed"):
            want = getattr(se, field)
            if want is not None and getattr(p, field) != want:
                _fail(f"seat {n} {field}", want, getattr(p, field))
        for field in ("armor", "jade", "rage"):  # kept in the ruleset's seat state, if at all
            want, have = getattr(se, field), getattr(p.ext, field, 0)
            if want is not None and have != want:
                _fail(f"seat {n} {field}", want, have)
        if se.hand_count is not None and len(p.hand) != se.hand_count:
            _fail(f"seat {n} hand_count", se.hand_count, len(p.hand))
        for field, actual in (("hand", p.hand), ("equip", list(p.equip.values()))):
            want_refs = getattr(se, field)
            if want_refs is not None and Counter(_ids(want_refs, refmap)) != Counter(actual):
                _fail(f"seat {n} {field}", sorted(str(r) for r in want_refs), shown(actual))
        if se.judge is not None and _ids(se.judge, refmap) != p.judge:  # bottom first: in order
            _fail(f"seat {n} judge", [str(r) for r in se.judge], [label(c) for c in p.judge])
        if se.general is not None and p.general != se.general:
            _fail(f"seat {n} general", se.general, p.general)
    for r in ex.discard_has:
        if refmap.get(r, -1) not in g.discard:
            _fail("discard_has", str(r), shown(g.discard))
    for r in ex.discard_lacks:
        if refmap.get(r, -1) in g.discard:
            _fail("discard_lacks", str(r), shown(g.discard))
    if ex.deck_count is not None and len(g.draw) != ex.deck_count:
        _fail("deck_count", ex.deck_count, len(g.draw))
    if ex.waiting is not None:
        d = g.pending
        now = f"seat {d.seat} {d.kind}" if d else "nothing (the game ended)"
        if d is None or d.seat != ex.waiting.seat or d.kind != ex.waiting.kind:
            _fail("waiting", f"seat {ex.waiting.seat} {ex.waiting.kind}", now)
    if ex.turn is not None and (g.current, g.phase) != (ex.turn.seat, ex.turn.phase):
        _fail("turn", f"seat {ex.turn.seat} {ex.turn.phase}", f"seat {g.current} {g.phase}")
    if ex.winners is not None:
        _check_winners(sc, g, ex.winners)
    if ex.events:
        _check_events(sc, g, refmap, events, ex.events)


def _check_winners(sc: Scenario, g: Game, want: Any) -> None:
    if not g.over:
        _fail("winners", want, "the game has not ended")
    if want == "draw":
        if not g.draw_game:
            _fail("winners", "draw", [g.players[s].role for s in g.winners])
        return
    if want and isinstance(want[0], int):
        if sorted(g.winners) != sorted(want):
            _fail("winners", sorted(want), g.winners)
        return
    roles = sorted({g.players[s].role for s in g.winners}) if not g.draw_game else ["draw"]
    if roles != sorted(set(want)):
        _fail("winners", sorted(set(want)), roles)


def _norm(rs_name: str, name: str) -> str:
    return RULESETS[rs_name].aliases.get(name, name)


def _value_matches(sc: Scenario, g: Game, refmap: dict[CardRef, int], want: Any, have: Any) -> bool:
    if isinstance(want, CardRef):
        if isinstance(have, int):
            return refmap.get(want) == have
        if isinstance(have, str):
            return _norm(sc.ruleset, want.name) == have
        return False
    if isinstance(want, tuple | list):
        if not isinstance(have, list) or len(want) != len(have):
            return False
        return all(_value_matches(sc, g, refmap, w, h) for w, h in zip(want, have, strict=True))
    if isinstance(want, str) and isinstance(have, int) and not isinstance(have, bool):
        return 0 <= have < len(g.cards) and g.cards[have].name == _norm(sc.ruleset, want)
    if isinstance(want, str) and isinstance(have, str):
        return _norm(sc.ruleset, want) == have
    return bool(want == have)


def _matches(
    sc: Scenario, g: Game, refmap: dict[CardRef, int], pat: EventPattern, e: Event
) -> bool:
    if e.__struct_config__.tag != pat.type:
        return False
    data = msgspec.structs.asdict(e)
    for k, want in pat.fields.items():
        if k not in data or not _value_matches(sc, g, refmap, want, data[k]):
            return False
    return True


def _check_events(
    sc: Scenario,
    g: Game,
    refmap: dict[CardRef, int],
    events: list[Event],
    pats: tuple[EventPattern, ...],
) -> None:
    i = 0
    for n, pat in enumerate(pats):
        while i < len(events) and not _matches(sc, g, refmap, pat, events[i]):
            i += 1
        if i >= len(events):
            seen = [
                msgspec.structs.asdict(e) | {"type": e.__struct_config__.tag}
                for e in events
                if e.__struct_config__.tag == pat.type
            ][:6]
            _fail(
                f"events[{n}]",
                {"type": pat.type, **{k: str(v) for k, v in pat.fields.items()}},
                f"no such event in order; events of that type: {seen}",
            )
        i += 1
