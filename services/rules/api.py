"""The engine's one public interface (see services/rules/README.md).

Everything outside ``services.rules`` — event log, engine worker, bots, replay, matchmaking —
imports from here and nothing deeper: the functions below, the types they take and return, and
the named sub-APIs ``events`` (every event type, the rulesets' too), ``keys`` (building and
reading option keys), ``views`` (redaction and the view fold) and ``rng`` (the counter-based
generator the bots share), plus the read-only tables a player's program may consult
(``RULESETS``, ``SKILLS``, ``RANGE_OF_WEAPON``, ``EQUIP_SLOTS``, ``SLASHES`` and ``nature_of``,
``card_uses``: what each card does to its targets, from the card registry; ``CHOICES``: what
each card's or skill's ``choose`` decision asks, by its ``info["about"]``).
"""

from __future__ import annotations

from collections.abc import Callable
from typing import Any, Union

import msgspec

from . import cards as _cards  # noqa: F401  (registers the card specs)
from . import determinize as _determinize
from . import events
from . import rulesets as _rulesets  # noqa: F401  (registers the rulesets)
from .core import keys, rng, views
from .core.cards import ENGLISH_NAMES, CardDef, color_of
from .core.choices import CHOICES, Choice
from .core.engine import DECISION_KINDS, IllegalAnswer, abandon, advance, submit
from .core.events import Event, event_types
from .core.options import RULES_VERSION
from .core.query import RANGE_OF_WEAPON
from .core.ruleset import (
    EQUIP_SLOTS,
    RULESETS,
    General,
    Ruleset,
    UnknownOption,
    allows,
    describe_choices,
)
from .core.skills import SKILLS, Skill
from .core.state import (
    Answer,
    Decision,
    Game,
    UnknownDeck,
    deck_table,
    frame_type,
    register_deck,
)
from .core.use import CardUse, card_uses
from .core.vcard import SLASHES, nature_of
from .core.views import GOD, SPECTATOR, SeatView, View, decision_visible, fold, new_view, redact
from .core.views import apply as fold_view

__all__ = [
    "Answer",
    "CardDef",
    "CardUse",
    "CHOICES",
    "Choice",
    "EQUIP_SLOTS",
    "Decision",
    "Event",
    "Game",
    "General",
    "IllegalAnswer",
    "GOD",
    "RANGE_OF_WEAPON",
    "RULESETS",
    "DECISION_KINDS",
    "RULES_VERSION",
    "Ruleset",
    "SKILLS",
    "SLASHES",
    "SNAPSHOT_FORMAT",
    "SPECTATOR",
    "SeatView",
    "Skill",
    "StaleSnapshot",
    "UnknownOption",
    "View",
    "abandon",
    "advance",
    "apply_view",
    "card_uses",
    "color_of",
    "decision_visible",
    "decode_event",
    "default_answer",
    "determinize",
    "display_names",
    "english_names",
    "encode_event",
    "event_types",
    "events",
    "fold",
    "fold_view",
    "fork",
    "general_table",
    "is_over",
    "keys",
    "nature_of",
    "new_game",
    "new_view",
    "option_table",
    "pending",
    "redact",
    "restore",
    "rng",
    "rulesets",
    "snapshot",
    "snapshot_current",
    "submit",
    "views",
]


def apply_view(view: View, e: Event) -> View:
    """Fold one event into ``view`` as its viewer may see it (redaction applied here;
    ``fold_view`` folds an event already redacted for the view's viewer)."""
    return fold_view(view, redact(e, view.viewer))


def rulesets() -> list[str]:
    """The registered ruleset ids."""
    return sorted(RULESETS)


def display_names(ruleset: str) -> dict[str, str]:
    """Card, role and label names as ``ruleset`` prints them, where they differ from the
    engine's (红楼梦: 桃 -> 药, lord -> 主人); pages and clients show these."""
    rs = RULESETS[ruleset]
    names: set[str] = set(rs.aliases.values())
    for players, options in rs.tables():
        opts = resolve_options(ruleset, options)
        names.update(c.name for c in rs.deck(opts))
        names.update(rs.roles(players, opts))
    return {n: p for n in sorted(names) if n and (p := rs.display_name(n)) != n}


def english_names(ruleset: str) -> dict[str, str]:
    """Every card name of ``ruleset`` (the engine's) -> its English name, of the name the
    ruleset prints (红楼梦's 桃 is 药: Medicine), for English pages and labels
    (core/cards.py ENGLISH_NAMES; a card without one keeps its Chinese name)."""
    rs = RULESETS[ruleset]
    names: set[str] = set()
    for _, options in rs.tables():
        names.update(c.name for c in rs.deck(resolve_options(ruleset, options)))
    out = {}
    for n in sorted(names):
        en = ENGLISH_NAMES.get(rs.display_name(n)) or ENGLISH_NAMES.get(n)
        if en:
            out[n] = en
    return out


def general_table(ruleset: str) -> dict[str, tuple[str, int]]:
    """Every general ``ruleset`` may deal: name -> (faction, max HP)."""
    return {name: (g.faction, g.hp) for name, g in RULESETS[ruleset].generals().items()}


def resolve_options(ruleset: str, options: dict[str, Any] | None) -> dict[str, Any]:
    """The ruleset's defaults overlaid with ``options``; an unknown name, or a value the option
    does not allow, is an error that lists what is allowed."""
    if ruleset not in RULESETS:
        raise UnknownOption(f"unknown ruleset {ruleset!r} (known: {', '.join(rulesets())})")
    rs = RULESETS[ruleset]
    out = rs.option_defaults()
    for k, v in (options or {}).items():
        if k not in out:
            raise UnknownOption(
                f"unknown option {k!r} for ruleset {ruleset!r} (known: {', '.join(sorted(out))})"
            )
        allowed = rs.option_choices(k)
        if not allows(allowed, v):
            raise UnknownOption(
                f"option {k!r} of ruleset {ruleset!r} does not allow {v!r} "
                f"(allowed: {describe_choices(allowed)})"
            )
        out[k] = v
    return out


def option_table(ruleset: str) -> dict[str, tuple[Any, str]]:
    """Every option a table of ``ruleset`` may set: name -> (its default, the values it allows
    in words), the ruleset's own and those every ruleset shares (``core/options.py``)."""
    rs = RULESETS[ruleset]
    return {k: (v, describe_choices(rs.option_choices(k))) for k, v in rs.option_defaults().items()}


def table_options(ruleset: str, players: int, options: dict[str, Any] | None) -> dict[str, Any]:
    """``options`` completed by the one table of the ruleset (``Ruleset.tables()``) that seats
    ``players`` and agrees with what was given: `extended` at 12 players is the advanced game
    without naming ``variant``. Options given are never changed."""
    given = dict(options or {})
    if ruleset not in RULESETS:
        return given
    fits = [
        table
        for n, table in RULESETS[ruleset].tables()
        if n == players and all(given.get(k, v) == v for k, v in table.items())
    ]
    return {**fits[0], **given} if len(fits) == 1 else given


def new_game(ruleset: str, players: int, seed: int, options: dict[str, Any] | None = None) -> Game:
    """A freshly dealt game; call :func:`advance` to run it to its first decision (the table's
    own options, such as `extended`'s ``variant``, follow from ``players`` when not given)."""
    opts = resolve_options(ruleset, table_options(ruleset, players, options))
    rs = RULESETS[ruleset]
    if not rs.min_players <= players <= rs.max_players:
        raise UnknownOption(
            f"{ruleset} takes {rs.min_players}–{rs.max_players} players, not {players}"
        )
    g = Game(
        ruleset=ruleset,
        options=opts,
        seed=seed,
        deck=register_deck(rs.deck(opts)),
        players=[rs.new_player(i) for i in range(players)],
    )
    rs.setup(g)
    return g


def pending(g: Game) -> Decision | None:
    """The pending decision, if any."""
    return g.pending


def is_over(g: Game) -> bool:
    """Whether the game has ended."""
    return g.over


def default_answer(d: Decision) -> Answer:
    """What a silent seat answers: decline if it may, else the first forced minimum."""
    if d.declinable:
        return Answer(decision=d.id, seat=d.seat, picks=[])
    return Answer(decision=d.id, seat=d.seat, picks=list(d.options[: d.min]))


SNAPSHOT_FORMAT = 4
"""Bumped whenever the state's layout changes (a frame's fields or steps, a player's fields), so
snapshots stored by an older engine are never misread: :func:`restore` refuses them and the
game is rebuilt from its log. 3: the card table is named by its id (``Game.deck``), not
carried. 4: a phase no skill listens at runs in the turn's frame (no PhaseFrame; the turn's
step ``phase_over``), a 杀's and a 南蛮入侵's effect frames end before their damage."""

# 0xC1 is never used by msgpack, so no snapshot of the unversioned format 1 (a bare msgpack map)
# can start with this header
_HEADER = bytes([0xC1, SNAPSHOT_FORMAT])
_STATE_ENC = msgspec.msgpack.Encoder()
_RAW_DEC = msgspec.msgpack.Decoder(type=dict[str, Any])


class StaleSnapshot(ValueError):
    """Snapshot bytes of another state format: rebuild the game from its log instead."""


def snapshot(g: Game) -> bytes:
    """The whole state as bytes (at a decision point), tagged with :data:`SNAPSHOT_FORMAT`."""
    return _HEADER + _STATE_ENC.encode(g)


def snapshot_current(data: bytes) -> bool:
    """Whether :func:`restore` can read ``data`` (it is of the current state format)."""
    return data[:2] == _HEADER


def restore(data: bytes) -> Game:
    """A game from :func:`snapshot` bytes; StaleSnapshot if they are of another format, or name
    a card table this process cannot build (a table made for one test scenario)."""
    if not snapshot_current(data):
        raise StaleSnapshot(f"not a snapshot of state format {SNAPSHOT_FORMAT}")
    try:
        return _decode_state(memoryview(data)[2:])
    except UnknownDeck as err:
        raise StaleSnapshot(str(err)) from None


def _decode_state(data: bytes | memoryview) -> Game:
    raw = _RAW_DEC.decode(data)
    if deck_table(raw.get("deck", "")) is None:  # first seen in this process: its ruleset's?
        rs = RULESETS.get(raw.get("ruleset", ""))
        if rs is not None:
            register_deck(rs.deck(raw.get("options", {})))
    stack = raw.pop("stack")
    exts = [p.pop("ext", None) for p in raw["players"]]
    g = msgspec.convert(raw, Game)
    g.stack = [msgspec.convert(fr, frame_type(fr["kind"])) for fr in stack]
    kind = RULESETS[g.ruleset].seat_state
    if kind is not None:
        for p, ext in zip(g.players, exts, strict=True):
            p.ext = None if ext is None else msgspec.convert(ext, kind)
    return g


def fork(g: Game) -> Game:
    """An independent copy of a game (for look-ahead)."""
    return _decode_state(_STATE_ENC.encode(g))


def determinize(
    g: Game,
    seat: int,
    belief: _determinize.Belief | None,
    seed: int,
    *,
    view: View,
    number: int = 1,
) -> Game:
    """A copy of ``g`` as ``seat`` (whose ``view`` is given) could find it at its decision:
    what it has seen and its own seat kept; the unseen hands, the draw pile, the hidden roles
    (weighted by ``belief``, seat -> role -> probability) with what goes with them, the generals
    it has not seen, what the frames hold secretly and the game's seed resampled from ``seed``;
    the pending decision numbered ``number``, the id the seat knows it by
    (services/rules/determinize.py). ViewMismatch (a ValueError) if ``view`` is not a view of
    ``g``, NotDeciding (a ValueError) if another seat's decision is pending."""
    return _determinize.resample(fork(g), seat, belief, seed, view, number)


_EVENT_ENC = msgspec.msgpack.Encoder()
_EVENT_DEC: msgspec.msgpack.Decoder[Any] | None = None


encode_event: Callable[[Event], bytes] = _EVENT_ENC.encode
"""An event as msgpack bytes (tagged by ``type``). (The encoder's own method, not a function
calling it: the engine encodes every event it logs, a call of Python each.)"""


def decode_event(data: bytes) -> Event:
    """An event from :func:`encode_event` bytes."""
    global _EVENT_DEC
    if _EVENT_DEC is None:
        _EVENT_DEC = msgspec.msgpack.Decoder(Union[tuple(event_types().values())])  # noqa: UP007
    ev: Event = _EVENT_DEC.decode(data)
    return ev
