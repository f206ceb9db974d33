"""What every ruleset shares: the rules version and the options every table may set.

``RULES_VERSION`` is written into every game's ``game_started`` (archives keep it; verify and
replay refuse a log of another version). Bump it whenever a rule change, or a change of an
option's default, alters the events a given input produces (tests/rules/test_event_digests.py
pins them).

``COMMON_DEFAULTS`` are declared here once and offered by every ruleset (``Ruleset.
option_defaults``), after the ruleset's own options; ``COMMON_CHOICES`` lists their allowed
values where they are not booleans:

* ``max_reshuffles`` (19): A-STD-05 — every game ends. The most times the discard pile is
  shuffled into a new draw pile; when it would be shuffled once more (by default the 20th time)
  the game ends at once in a draw, ``game_ended`` with no winners and ``reason``
  ``reshuffle_limit`` (QSanguosha's pile-swapping limit). 0 = unlimited (a game may then run
  forever: 谋攻's 强化桃 at full HP raises max HP).
* ``chain_hit_effects`` (false): A-STD-03 — the user's own hit effects (古锭刀's +1, 寒冰剑,
  麒麟弓, 裸衣's +1: "when your 杀 deals damage") apply to propagated chain damage as well. The
  default is the peers' (``by_user && !chain``): only the first, unpropagated damage has them.
* ``equip_slash_keeps_range`` (false): A-STD-04 — a card of the user's own equipment area used
  as the 杀 (武圣 with a red weapon or horse) still counts for that 杀's range. The default is
  the peers': the range is measured without that card.
"""

from __future__ import annotations

from typing import Any

RULES_VERSION = "5"  # bump when a rule change alters the events a given input produces

MAX_RESHUFFLES = "max_reshuffles"
CHAIN_HIT_EFFECTS = "chain_hit_effects"
EQUIP_SLASH_KEEPS_RANGE = "equip_slash_keeps_range"

COMMON_DEFAULTS: dict[str, Any] = {
    MAX_RESHUFFLES: 19,  # the 20th reshuffle ends the game in a draw
    CHAIN_HIT_EFFECTS: False,
    EQUIP_SLASH_KEEPS_RANGE: False,
}
COMMON_CHOICES: dict[str, tuple[Any, ...] | range] = {
    MAX_RESHUFFLES: range(0, 10_001),  # 0 = unlimited
}

# game_ended's reason for a draw
RESHUFFLE_LIMIT = "reshuffle_limit"  # A-STD-05: the draw pile would be reshuffled past the limit
DECK_EXHAUSTED = "deck_exhausted"  # §1.14: even the reshuffled discard pile cannot supply a draw
NO_WINNER = "no_winner"  # a ruleset's own draw (extended §6: nobody's victory condition holds)
