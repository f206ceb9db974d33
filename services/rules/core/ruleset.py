"""The ruleset interface: data (deck, roles, generals, options) plus the few rules that vary."""

from __future__ import annotations

import re
from abc import ABC, abstractmethod
from collections.abc import Mapping
from typing import TYPE_CHECKING, Any, ClassVar

from .cards import CardDef
from .damage import Death, recover
from .engine import emit, end_game
from .events import GameStarted, GeneralChosen
from .options import COMMON_CHOICES, COMMON_DEFAULTS, RULES_VERSION
from .registry import RULESETS, ruleset_of
from .state import Game, Player, SeatExt
from .use import specs_of
from .zones import discard_areas, draw

if TYPE_CHECKING:  # the determinizer's draws (core/redeal.py names General, defined here)
    from .redeal import Redeal

__all__ = [
    "RULESETS",
    "General",
    "Ruleset",
    "UnknownOption",
    "allows",
    "describe_choices",
    "register_ruleset",
    "ruleset_of",
]


class UnknownOption(ValueError):
    """A game was asked for with an unknown ruleset, option or player count."""


def announce_start(g: Game, deck: int | None = None) -> None:
    """Emit ``GameStarted``, the game's first event: the one place it is written (the ruleset,
    table size, options and this build's ``RULES_VERSION``). ``deck``: the cards in play, where
    that is not every card of the game's table."""
    emit(
        g,
        GameStarted(
            ruleset=g.ruleset,
            players=len(g.players),
            options=g.options,
            rules_version=RULES_VERSION,
            deck=len(g.cards) if deck is None else deck,
        ),
    )


def announce_general(
    g: Game,
    seat: int,
    gen: General | None = None,
    *,
    seen_by: list[int] | None = None,
) -> None:
    """Emit ``GeneralChosen`` for ``seat``: the one place it is written. By default the general
    the seat plays now, with its HP; ``gen`` (at its printed HP) for a general not given to the
    seat yet (a draft's secret pick). ``seen_by``: only those seats see it (a
    secret pick, a general deployed face down)."""
    if gen is None:
        p = g.players[seat]
        name, gender, faction, max_hp, now = p.general, p.gender, p.faction, p.max_hp, p.hp
    else:
        name, gender, faction, max_hp, now = gen.name, gen.gender, gen.faction, gen.hp, gen.hp
    emit(
        g,
        GeneralChosen(
            seat=seat,
            general=name,
            gender=gender,
            faction=faction,
            max_hp=max_hp,
            hp=now,
            seen_by=seen_by,
        ),
    )


EQUIP_SLOTS = {
    "weapon": "weapon",
    "armor": "armor",
    "defensive_horse": "plus",
    "offensive_horse": "minus",
}
"""The equipment slot of each equipment subtype (a ruleset may place them otherwise)."""


class General:
    """A general (or seed character): name, faction, gender, HP and skill names."""

    def __init__(
        self,
        name: str,
        faction: str,
        gender: str,
        hp: int,
        skills: tuple[str, ...] = (),
        lord: bool = False,
        texts: Mapping[str, Any] | None = None,
    ) -> None:
        self.name = name
        self.faction = faction
        self.gender = gender
        self.hp = hp
        self.skills = skills
        self.lord = lord  # offered to the lord in the draft
        # the option values of the texts its skills are printed with, for games whose ruleset
        # has no such option (seed 000's 反间 deals its damage first wherever 夏金桂 plays)
        self.texts: Mapping[str, Any] = texts or {}


VANILLA = General("vanilla", "", "male", 4)


class Ruleset(ABC):
    """Base ruleset: standard identity rules (REFERENCE §1). Subclasses override what differs."""

    name: ClassVar[str] = ""
    min_players: ClassVar[int] = 4
    max_players: ClassVar[int] = 10
    defaults: ClassVar[dict[str, Any]] = {}
    # option -> its allowed values: a tuple, or a range for a count; a boolean option allows
    # false and true without being listed. Every other option must be listed (a test checks).
    choices: ClassVar[dict[str, tuple[Any, ...] | range]] = {}
    aliases: ClassVar[dict[str, str]] = {}  # printed name -> engine name (e.g. 药 -> 桃)
    # role -> camp for ratings and tournaments; a role not named plays alone (each renegade)
    camps: ClassVar[dict[str, str]] = {"lord": "lord", "loyalist": "lord", "rebel": "rebel"}
    # False: no distance and no attack range — every other seat is at distance 1 and
    # every attack range is 1, so each other seat is in range whatever the weapon or horse
    measures_distance: ClassVar[bool] = True
    # the ruleset's own per-seat state (Player.ext), if it keeps any
    seat_state: ClassVar[type[SeatExt] | None] = None

    def tables(self) -> list[tuple[int, dict[str, Any]]]:
        """The tables this ruleset can seat: (players, the options that select that table).
        Default: every size from min to max players with default options."""
        return [(n, {}) for n in range(self.min_players, self.max_players + 1)]

    def option_defaults(self) -> dict[str, Any]:
        """Every named option with its default: the ruleset's own, then those every ruleset
        shares (``core/options.py``: ``max_reshuffles``, A-STD-03, A-STD-04)."""
        return {**self.defaults, **COMMON_DEFAULTS}

    def option_choices(self, name: str) -> tuple[Any, ...] | range:
        """The allowed values of the option ``name`` (empty if it is undeclared)."""
        if name in self.choices:
            return self.choices[name]
        if name in COMMON_CHOICES:
            return COMMON_CHOICES[name]
        default = self.defaults.get(name, COMMON_DEFAULTS.get(name))
        return (False, True) if isinstance(default, bool) else ()

    @abstractmethod
    def deck(self, options: dict[str, Any]) -> list[CardDef]:
        """The physical cards of a game."""

    @abstractmethod
    def roles(self, players: int, options: dict[str, Any]) -> list[str]:
        """The role cards for ``players`` (seat 0 gets the lord)."""

    def generals(self, options: Mapping[str, Any] | None = None) -> dict[str, General]:
        """Generals by name (``vanilla`` always exists), as the game's ``options`` make them (an
        option may change a general, e.g. its gender)."""
        return {"vanilla": VANILLA}

    def lord_bonus(self, g: Game) -> int:
        """Extra max HP of the lord (A-STD-01)."""
        return self.lord_bonus_for(g.options, len(g.players))

    def lord_bonus_for(self, options: dict[str, Any], players: int) -> int:
        """Extra max HP of the lord at a table of ``players`` with ``options``."""
        if options.get("lord_bonus_min_players", 0) > players:
            return 0
        return 1

    @abstractmethod
    def setup(self, g: Game) -> None:
        """Deal roles and generals, push the first frames (called once for a new game)."""

    def equip_slot(self, subtype: str) -> str:
        """The equipment slot of a card subtype (weapon, armor, plus, minus)."""
        return EQUIP_SLOTS[subtype]

    def display_name(self, name: str) -> str:
        """A card or role name as this ruleset prints it."""
        return name

    def printed(self, g: Game, text: str) -> str:
        """``text`` (a refusal) with the card and label names as this ruleset prints them
        (红楼梦: 桃 -> 药, 主公技 -> 主人技). Whole names only: 桃园结义 stays itself. Role words
        in English prose ("the lord") are left alone."""
        if type(self).display_name is Ruleset.display_name:
            return text
        words = {c.name for c in g.cards} | set(specs_of(g)) | set(self.aliases.values())
        rename = {w: p for w in words if not w.isascii() and (p := self.display_name(w)) != w}
        if not rename:
            return text
        known = sorted((w for w in words if not w.isascii()), key=len, reverse=True)
        pattern = re.compile("|".join(map(re.escape, known)))
        return pattern.sub(lambda m: rename.get(m[0], m[0]), text)

    def prepare_table(self, g: Game) -> None:
        """A scenario's exact table has been built (seats, roles, piles): attach what the ruleset
        keeps per seat beyond the general (its ``seat_state``). Standard: nothing."""
        return None  # an optional hook, not an abstract one

    # --- rules that vary -------------------------------------------------------------------------
    def peach_at_full_hp(self, g: Game, seat: int) -> bool:
        """Whether ``seat`` may use 桃 on itself at full HP (standard: no)."""
        return False

    def wine_beyond_limit(self, g: Game, seat: int) -> bool:
        """Whether ``seat`` may use a 酒 after the turn's one (standard: no; a ruleset may let a
        酒 that its limit does not count through)."""
        return False

    def peach_recover(self, g: Game, user: int, target: int, vc: Any) -> None:
        """The recovery of the 桃 ``vc`` (or a dying seat's own 酒) ``user`` uses on ``target``:
        1 HP (a ruleset may heal more, e.g. for a tag on ``vc``)."""
        recover(g, target, 1)

    def absorb_damage(self, g: Game, seat: int, amount: int) -> int:
        """Damage left after shields (护甲, 玉佩) absorb; standard has none."""
        return amount

    def check_winner(self, g: Game) -> None:
        """Game-over check after a death (§1.3); ends the game if decided."""
        ps = g.players
        lord_alive = any(p.alive and p.role == "lord" for p in ps)
        if not lord_alive:
            alive = [p for p in ps if p.alive]
            if len(alive) == 1 and alive[0].role == "renegade":
                end_game(g, [alive[0].seat])
            end_game(g, [p.seat for p in ps if p.role == "rebel"])
        if not any(p.alive and p.role in ("rebel", "renegade") for p in ps):
            end_game(g, [p.seat for p in ps if p.role in ("lord", "loyalist")])

    def death_penalty(self, g: Game, dead: int, killer: int) -> None:
        """Rewards and penalties (§1.11): a rebel's killer draws 3; a lord who kills a loyalist
        discards all hand and equipment cards."""
        if killer < 0 or not g.players[killer].alive:
            return
        victim = g.players[dead]
        k = g.players[killer]
        if victim.role == "rebel":
            draw(g, killer, 3, reason="reward")
        elif victim.role == "loyalist" and k.role == "lord":
            discard_areas(g, killer, reason="penalty", judge=False)

    def unsaved(self, g: Game, seat: int, killer: int) -> None:
        """Nobody saved a dying seat (§1.11): it dies. Seed 003 deploys its next general."""
        g.stack.append(Death(seat=seat, killer=killer))

    def equip_protected(self, g: Game, owner: int, by: int, cid: int) -> bool:
        """Whether ``owner``'s equipped card ``cid`` is beyond the reach of ``by``'s cards and
        skills. Standard: never."""
        return False

    def judge_area_changed(self, g: Game, seat: int) -> None:
        """A card entered or left ``seat``'s judgement area (a ruleset's 乐不思蜀 may seal skills
        while it lies there)."""
        return None  # an optional hook, not an abstract one

    # --- what the determinizer deals again (determinize.py, core/redeal.py) ----------------------
    def roles_redealt(self, g: Game, seat: int, before: dict[int, str], rd: Redeal) -> None:
        """The role cards of the seats in ``before`` (seat -> the role it held) were dealt again
        for ``seat``'s look-ahead: bring what goes with a role card in line (identity skills, a
        hidden lord's skills, a disguise), as a function of the new roles and of what ``seat``
        knows only. Standard: nothing (lord skills follow the role by themselves)."""
        return None  # an optional hook, not an abstract one

    def general_pool(self, g: Game) -> list[str]:
        """The generals this game deals from (a draft's roster); standard's vanilla game: none."""
        return []

    def seen_generals(self, g: Game, seat: int) -> set[str]:
        """The generals ``seat`` knows where they are: every seated one (they are chosen in
        public), and its own in a draft (``Frame.redeal`` deals the others' offers again)."""
        return {p.general for p in g.players}

    def redeal_generals(self, g: Game, seat: int, rd: Redeal) -> None:
        """Deal again, from ``rd``, the generals this ruleset keeps face down from ``seat``
        (none: every seated general is public)."""
        return None  # an optional hook, not an abstract one

    def new_player(self, seat: int) -> Player:
        """An empty seat, with the ruleset's own seat state."""
        return Player(seat=seat, ext=self.new_seat_state())

    def new_seat_state(self) -> SeatExt | None:
        """A fresh ``Player.ext`` for this ruleset (None if it keeps no state of its own)."""
        return None if self.seat_state is None else self.seat_state()


def allows(choices: tuple[Any, ...] | range, value: Any) -> bool:
    """Whether ``value`` is one of ``choices`` (of the same type: 1 is not true, "1" not 1)."""
    if isinstance(choices, range):
        return isinstance(value, int) and not isinstance(value, bool) and value in choices
    return any(type(value) is type(c) and value == c for c in choices)


def describe_choices(choices: tuple[Any, ...] | range) -> str:
    """The allowed values in words: ``beginner, advanced`` or ``an integer in 0..10``."""
    if isinstance(choices, range):
        return f"an integer in {choices.start}..{choices.stop - 1}"
    return ", ".join(str(c).lower() if isinstance(c, bool) else str(c) for c in choices)


def register_ruleset(cls: type[Ruleset]) -> type[Ruleset]:
    """Class decorator registering a ruleset."""
    RULESETS[cls.name] = cls()
    return cls
