"""Bot levels for tables with people: what each plays and whether the bot service can serve it.

A contract between processes: the matchmaker checks a table's level and seats its bots as
``bot:LEVEL``, the engine names a hosted seat's level, the bot worker plays the level's policy.

| level | policy | what it is |
|---|---|---|
| `normal` | `heuristic` | the heuristic (the default level) |
| `easy` | `easy` | the heuristic, answering at random a third of the time |
| `hard` | `hard` | the heuristic with determinized look-ahead on key decisions (services/bots/search.py) |

A table names its level (``bot_level``); the matchmaker seats its bots as ``bot:LEVEL`` and the
bot worker plays that level's policy (services/bots/seats.py). ``hard`` looks ahead on worlds dealt from
the game state, which a bot worker (holding only the seat's view) does not have: the engine
deals them (GameService.Determinize, services/engine/worlds.py) from what the seat may know,
and the worker searches on them (services/bots/search.py, answer.py).
"""

from __future__ import annotations

from dataclasses import dataclass


@dataclass(frozen=True)
class Level:
    """One level: the policy it plays and whether tables with people may choose it."""

    policy: str
    offered: bool
    about: str


LEVELS: dict[str, Level] = {  # the first offered level is the default
    "normal": Level("heuristic", True, "the heuristic"),
    "easy": Level("easy", True, "the heuristic, answering at random a third of the time"),
    "hard": Level("hard", True, "the heuristic, checking key decisions by look-ahead"),
}


def offered() -> list[str]:
    """The levels a table with people may choose, the default first."""
    return [name for name, lv in LEVELS.items() if lv.offered]


POLICIES = ("heuristic", "random")  # served by their own names too (benches, old tables)


def accepted() -> list[str]:
    """What a table may name as its level: the offered levels, and the plain policies."""
    return offered() + [p for p in POLICIES if p not in LEVELS]


def policy_of(level: str) -> str:
    """The policy a level plays (a policy name is its own level)."""
    lv = LEVELS.get(level)
    return lv.policy if lv is not None else level
