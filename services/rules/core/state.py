"""The whole game state as plain data: players, piles, the frame stack and the pending decision.

Everything here encodes to msgpack and back (``snapshot``/``restore``), so a game can be stored,
forked for look-ahead, or handed to another worker at any decision point.
"""

from __future__ import annotations

import hashlib
from collections.abc import Callable, Sequence
from typing import TYPE_CHECKING, Any

import msgspec

from .cards import CardDef

if TYPE_CHECKING:  # the determinizer's draws (core/redeal.py reads the state defined here)
    from .redeal import Redeal

SLOTS = ("weapon", "armor", "plus", "minus", "mount")  # mount: a ruleset's single 坐骑 slot
PHASES = ("start", "judge", "draw", "play", "discard", "finish")


Step = Callable[["Game"], None]
"""A step of a frame: one of its methods, run with the game."""


class Frame(msgspec.Struct, kw_only=True, tag_field="kind"):
    """A procedure on the explicit stack: plain data, and methods that are its steps.

    ``step`` names the method that runs next, ``start`` first. A step may emit events, push
    child frames, ``pop`` the frame or ``ask`` a decision; before it pushes or asks, it names the
    step that carries on once the child has finished or the decision is answered
    (:meth:`then`). Nothing lives in Python locals between steps, so the game stays plain data.
    """

    step: str = "start"

    def start(self, g: Game) -> None:
        """The first step."""
        raise NotImplementedError(type(self).__name__)

    def then(self, step: Step) -> None:
        """Resume at ``step`` (a method of this frame) when what this step started is done."""
        self.step = step.__name__

    def goto(self, g: Game, step: Step) -> None:
        """Carry on with ``step`` (a method of this frame) at once."""
        self.step = step.__name__
        step(g)

    def carry_on(self, g: Game, step: Step) -> None:
        """Resume at ``step``: at once if this step started nothing to wait for (no frame
        pushed above this one, no decision asked), which is what the loop would run next;
        else once that is done (as :meth:`then`)."""
        self.step = step.__name__
        stack = g.stack
        if g.pending is None and stack[-1] is self:
            g.top = len(stack) - 1
            step(g)

    def refusal(self, g: Game, d: Decision, pick: str) -> str:
        """Why ``pick`` is not an option of the decision ``d`` this frame asked: the rule that
        forbids it (``core/refusal.py``), or "" if the frame cannot say. Reads the game only."""
        return ""

    def redeal(self, g: Game, rd: Redeal) -> None:
        """Deal again what this frame holds that seat ``rd.seat`` may not know (another seat's
        draft offer or secret pick, a card it chose face down), from ``rd``, once the
        determinizer (determinize.py) has dealt the hands, the pile and the roles again: the
        frame must read as it would in the state dealt. Most frames hold only what every seat
        saw happen, and keep it."""
        return None  # an optional hook, not an abstract one


_FRAME_TYPES: dict[str, type[Frame]] = {}


def frame_type(kind: str) -> type[Frame]:
    """The frame class whose ``kind`` tag is ``kind`` (KeyError if there is none)."""
    cls = _FRAME_TYPES.get(kind)
    if cls is None:
        found: dict[str, type[Frame]] = {}
        todo: list[type[Frame]] = [Frame]
        while todo:
            for sub in todo.pop().__subclasses__():
                tag = sub.__struct_config__.tag
                if isinstance(tag, str):
                    if tag in found:
                        raise TypeError(f"two frame classes have the kind {tag!r}")
                    found[tag] = sub
                todo.append(sub)
        _FRAME_TYPES.update(found)
        cls = _FRAME_TYPES[kind]
    return cls


class SeatExt(msgspec.Struct, kw_only=True):
    """A ruleset's own state of one seat (``Player.ext``): a subclass with the fields it needs,
    named by ``Ruleset.seat_state``. The engine reads it only through these methods."""

    def rule_skills(self) -> list[str]:
        """Skills the game's rules give the seat beside its general's (consulted like them;
        no general skill reads, copies or removes them)."""
        return []

    def has_lord_skills(self) -> bool:
        """Whether the general's lord skills work although the seat is not the lord."""
        return False


class Player(msgspec.Struct, kw_only=True):
    """One seat: its general, role, HP and the three areas; ``ext`` is the ruleset's own."""

    seat: int
    general: str = "vanilla"
    gender: str = "male"
    faction: str = ""
    role: str = ""
    role_revealed: bool = False
    hp: int = 4
    max_hp: int = 4
    alive: bool = True
    hand: list[int] = msgspec.field(default_factory=list)
    equip: dict[str, int] = msgspec.field(default_factory=dict)
    judge: list[int] = msgspec.field(default_factory=list)  # bottom (first placed) first
    chained: bool = False
    skills: list[str] = msgspec.field(default_factory=list)
    # per-turn and per-game counters and marks (e.g. "slash_used", "wine", "limited:NAME")
    marks: dict[str, int] = msgspec.field(default_factory=dict)
    ext: SeatExt | None = None


class Decision(msgspec.Struct, kw_only=True):
    """The one pending choice: who, what kind, the legal option keys and how many to pick."""

    id: int
    seat: int
    kind: str
    options: list[str]
    min: int = 1
    max: int = 1
    declinable: bool = True
    info: dict[str, Any] = msgspec.field(default_factory=dict)


class Answer(msgspec.Struct, frozen=True, kw_only=True):
    """An answer to decision ``decision`` by ``seat``: the picked option keys (empty = decline)."""

    decision: int
    seat: int
    picks: list[str] = msgspec.field(default_factory=list)


class UnknownDeck(LookupError):
    """A state names a card table this process has not registered (and its ruleset does not
    build): it cannot be read here."""


_DECKS: dict[str, tuple[CardDef, ...]] = {}
_KEYS: dict[tuple[CardDef, ...], str] = {}
_DECK_ENC = msgspec.msgpack.Encoder()


def register_deck(cards: Sequence[CardDef]) -> str:
    """Intern a game's card table; returns its id (a digest of its contents, so the same table
    has the same id in every process and a state can name it instead of carrying it)."""
    table = tuple(cards)
    key = _KEYS.get(table)  # a table seen before: no encoding (cards are frozen, hashable)
    if key is None:
        key = hashlib.blake2b(_DECK_ENC.encode(table), digest_size=8).hexdigest()
        _DECKS.setdefault(key, table)
        _KEYS[table] = key
    return key


def deck_table(key: str) -> tuple[CardDef, ...] | None:
    """The card table registered as ``key``, if any."""
    return _DECKS.get(key)


class Game(msgspec.Struct, kw_only=True, dict=True):
    """The complete state of one game.

    The card table (``cards``: card id -> its printed name, suit, rank, type) is static for the
    whole game and the same for every game of a ruleset: it is not a field, so neither a
    snapshot nor a fork copies it. The state names it by ``deck`` (see :func:`register_deck`)
    and ``cards`` is attached when the state is built or decoded (``__post_init__``).
    """

    ruleset: str
    options: dict[str, Any]
    seed: int
    rng: int = 0  # counter of the seeded generator
    deck: str = ""  # the card table's id (register_deck)
    players: list[Player] = msgspec.field(default_factory=list)
    draw: list[int] = msgspec.field(default_factory=list)  # top is the END of the list
    discard: list[int] = msgspec.field(default_factory=list)  # top is the end
    processing: list[int] = msgspec.field(default_factory=list)
    removed: list[int] = msgspec.field(default_factory=list)  # out of the game
    as_name: dict[int, str] = msgspec.field(default_factory=dict)  # judge-area card -> trick it is
    current: int = 0
    dead: int = 0  # how many seats are dead (0 lets distance skip counting)
    phase: str = ""
    round: int = 0
    turn_marks: dict[str, int] = msgspec.field(default_factory=dict)
    stack: list[Any] = msgspec.field(default_factory=list)
    pending: Decision | None = None
    answer: list[str] | None = None
    ret: Any = None
    top: int = -1  # stack index of the frame whose step is running (what pop removes)
    next_decision: int = 1
    over: bool = False
    draw_game: bool = False
    winners: list[int] = msgspec.field(default_factory=list)
    reshuffles: int = 0
    events_emitted: int = 0
    auto_forced: bool = True  # answer forced one-answer decisions without asking
    out: list[Any] = msgspec.field(default_factory=list)  # events of the running advance()

    if TYPE_CHECKING:  # not fields at run time: the interned table named by ``deck``, and
        cards: tuple[CardDef, ...] = ()
        skill_index: Any = None  # which seat holds which skill (core/index.py), made on use

    def __post_init__(self) -> None:
        table = _DECKS.get(self.deck)
        if table is None:
            raise UnknownDeck(f"card table {self.deck!r} of a {self.ruleset} game is unknown here")
        self.cards = table
        self.skill_index = None
