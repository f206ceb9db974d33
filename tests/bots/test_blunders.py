"""Blunder detectors (services/bots/audit.py) over seeded all-heuristic games of every ruleset,
judged with the true roles.

Today's counts before the fixes (issue 21; heuristic only, seeds 1..150, this audit):

| table | teammate kills | 借刀 obeyed vs believed friend | 丈八 with a 杀 in hand | 闪电 played |
|---|---|---|---|---|
| standard 8 | 34 | 113 (of 153 obeyed) | 40 | 0 |
| standard 5 | 28 | 79 | 82 | 0 |
| jinyu 8 谋攻 | 101 | 79 | 75 | 0 |
| extended 8 | 44 | 96 | 72 | 0 |
| honglou 8 (100 games) | 37 | 47 | 25 | 0 |

The default suite audits a few games per table for the rules that must never break; the slow
tests audit three times as many games (less noise: a count of 15 moves by ±4 from seed to seed)
and hold the teammate kills that the killer or the victim chose to a third of today's on every
table: not the duels a third seat's 离间 made between two teammates (the 离间 user's good play,
counted apart as ``forced_duel_kills``). With the belief's evidence counted once per turn and
tempered (services/bots/roles.py TEMPER, memory.py `_evidence`) and no 杀 a 流离 could pass on
to kill a friend, all teammate kills (of them forced duels), seeds 1..450 (honglou 1..300) /
seeds 20001..20450 (20001..20300), against the heuristic before on the second set: standard 8
14 (0) / 11 (0), before 41; standard 5 4 (0) / 7 (0), before 18; jinyu 谋攻 93 (39) / 75 (30),
before 159; extended 8 34 (28) / 54 (43), before 69; honglou 26 (11) / 19 (11), before 49. The
lord killed by its own side while a rebel lives (not in a duel a rebel's 离间 forced): 0 on both
sets but in jinyu 谋攻 (1 / 2), whose lord is hidden from its own side.
"""

from __future__ import annotations

import pytest

from services.bots.audit import audit_games

TABLES = [
    ("standard", 8, {}),
    ("standard", 5, {}),
    ("jinyu", 8, {"mougong": True}),
    ("extended", 8, {}),
    ("honglou", 8, {}),
    ("jinyu", 8, {}),
    ("chengtian", 2, {}),
]
NEW_DETECTORS = (  # issue 42
    "lord_killed_by_own_side",
    "lord_dying_peach_held",
    "chain_kills_own_side",
    "fire_kills_own_side",
    "jiedao_used_vs_teammate",
)
TODAY_TEAMMATE_KILLS = {  # per 150 games
    ("standard", 8): 34,
    ("standard", 5): 28,
    ("jinyu", 8): 101,
    ("extended", 8): 44,
    ("honglou", 8): 37 * 3 // 2,  # 37 per 100
}


@pytest.mark.parametrize(("ruleset", "players", "options"), TABLES)
def test_never_self_defeating(ruleset: str, players: int, options: dict[str, object]) -> None:
    """借刀杀人 is never obeyed against a seat the bot believes a friend, 丈八蛇矛 never spends two
    cards while a real 杀 is in hand, and the detectors see the acts they count (every game is
    audited, hostile targetings are seen)."""
    au = audit_games(ruleset, players, 6, 7, ["heuristic"], dict(options))
    c = au.counts
    assert c["games"] == 6 and c["hostile_targetings"] > 0
    assert c["jiedao_obeyed_vs_friend"] == 0, au.examples
    assert c["jiedao_used_vs_friend"] == 0, au.examples
    assert c["spear_with_slash"] == 0, au.examples
    assert c["lord_killed_by_own_side"] == 0, au.examples
    assert c["lord_dying_peach_held"] == 0, au.examples


def test_the_detectors_see_random_plays_blunders() -> None:
    """Random play makes every blunder the new detectors look for (the lord killed by its own
    side by choice, the dying lord left with a 桃 of its side unspent, fire or a chain killing
    the lord's side, 借刀杀人 naming a teammate), so a detector that saw nothing would fail here
    (jinyu 谋攻 8, seeds 1-12: 2 of each)."""
    au = audit_games("jinyu", 8, 12, 1, ["random"], {"mougong": True})
    assert all(au.counts[k] > 0 for k in NEW_DETECTORS), dict(au.counts)


@pytest.mark.slow
@pytest.mark.parametrize(("ruleset", "players", "options"), TABLES[:5])
def test_blunders_fall(ruleset: str, players: int, options: dict[str, object]) -> None:
    """450 games: teammate kills the killer or the victim chose (all but duels a third seat's 离间
    forced) at most a third of today's (the issue's goal), and all of them fewer than today's;
    the lord never killed by its own side while a rebel lives (where the lord is known); no 借刀
    against a believed friend, no 丈八 with a 杀 in hand; 闪电 is played."""
    au = audit_games(ruleset, players, 450, 1, ["heuristic"], dict(options))
    c = au.counts
    today = TODAY_TEAMMATE_KILLS[(ruleset, players)]  # per 150 games
    chosen = c["teammate_kills"] - c["forced_kills"]
    assert 0 <= chosen <= today, dict(c)  # a third of 3 x today's
    assert c["teammate_kills"] < 3 * today, dict(c)
    if not options.get("mougong"):  # (谋攻 hides the lord from its own side too)
        assert c["lord_killed_by_own_side"] == 0, au.examples.get("lord_killed_by_own_side")
    assert c["jiedao_obeyed_vs_friend"] == 0 and c["spear_with_slash"] == 0, dict(c)
    assert c["lightning_played"] > 0, dict(c)
