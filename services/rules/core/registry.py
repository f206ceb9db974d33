"""The registered rulesets by name, and the ruleset of a game: how the engine reaches the few rules
that vary (``core/ruleset.py`` defines them; each ruleset registers itself)."""

from __future__ import annotations

from typing import TYPE_CHECKING

from .state import Game

if TYPE_CHECKING:  # the base class's defaults use the engine, which asks this module for them
    from .ruleset import Ruleset

RULESETS: dict[str, Ruleset] = {}


def ruleset_of(g: Game) -> Ruleset:
    """The ruleset object of a game."""
    return RULESETS[g.ruleset]
