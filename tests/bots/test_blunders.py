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

The default suite audits a few games of every ruleset for the rules that must never break, and
checks on random play that the detectors issue 42 added see what they count. The slow tests
audit 450 games per table (less noise: a count of 15 moves by ±4 from seed to seed): never a
lord kill its own side chose (issue 42's goal, 谋攻 included), and the teammate kills that the
killer or the victim chose at most a third of today's: not those a third seat forced (a 决斗 its
离间 made, a 杀 its 流离 passed on: ``forced_kills``). This stop's counts are in the bots README
("Blunders"), their history in docs/bots-history.md.

Friendly fire of the lord's side (issue 42's loose end, ``lord_side_kills_own_side``: the lord or
a loyalist chose the kill of a seat of its own side): the slow tests bound it per table below what
HEAD's heuristic did on the same games (tests/bots/test_friendly_fire.py pins two of the
situations that caused it).
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
FRIENDLY_FIRE = {  # lord's side kills of its own seats in these 450 games: before the fixes, bound
    ("standard", 8, False): (11, 7),
    ("standard", 5, False): (4, 2),
    ("jinyu", 8, True): (38, 33),
    ("jinyu", 8, False): (29, 21),
    ("extended", 8, False): (9, 5),
    ("honglou", 8, False): (28, 20),
}
FIRE_KILLS = {  # of them by fire or thunder (fire_kills_own_side + chain_kills_own_side), likewise
    ("standard", 8, False): (2, 1),
    ("standard", 5, False): (1, 0),
    ("jinyu", 8, True): (10, 8),
    ("jinyu", 8, False): (8, 6),
}
TODAY_TEAMMATE_KILLS = {  # per 150 games
    ("standard", 8): 34,
    ("standard", 5): 28,
    ("jinyu", 8): 101,  # 谋攻
    ("extended", 8): 44,
    ("honglou", 8): 37 * 3 // 2,  # 37 per 100
}


# six games a table (seeds 7-12): the first 3 by default, the other 3 under -m slow
@pytest.mark.parametrize("first", [7, pytest.param(10, marks=pytest.mark.slow)])
@pytest.mark.parametrize(("ruleset", "players", "options"), TABLES)
def test_never_self_defeating(
    ruleset: str, players: int, options: dict[str, object], first: int
) -> None:
    """借刀杀人 is never obeyed against a seat the bot believes a friend, 丈八蛇矛 never spends two
    cards while a real 杀 is in hand, and the detectors see the acts they count (every game is
    audited, hostile targetings are seen)."""
    au = audit_games(ruleset, players, 3, first, ["heuristic"], dict(options))
    c = au.counts
    assert c["games"] == 3 and c["hostile_targetings"] > 0
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
@pytest.mark.parametrize(("ruleset", "players", "options"), TABLES[:6])
def test_blunders_fall(ruleset: str, players: int, options: dict[str, object]) -> None:
    """450 games: never a chosen lord kill by the lord's own side while a rebel lives, on every
    table, 谋攻's hidden lord included (issue 42's goal); teammate kills the killer or the victim
    chose (all but those a third seat forced) at most a third of issue 21's, all of them fewer;
    the lord's side's chosen kills of its own seats (friendly fire) within a bound that HEAD's
    heuristic broke on these games (FRIENDLY_FIRE); no 借刀 against a believed friend, obeyed or
    used, no 丈八 with a 杀 in hand; 闪电 is played."""
    au = audit_games(ruleset, players, 450, 1, ["heuristic"], dict(options))
    c = au.counts
    assert c["lord_killed_by_own_side"] == 0, au.examples.get("lord_killed_by_own_side")
    assert c["jiedao_obeyed_vs_friend"] == 0 and c["jiedao_used_vs_friend"] == 0, dict(c)
    assert c["spear_with_slash"] == 0, dict(c)
    assert c["lightning_played"] > 0, dict(c)
    before, bound = FRIENDLY_FIRE[(ruleset, players, bool(options.get("mougong")))]
    assert c["lord_side_kills_own_side"] <= bound < before, dict(c)
    fire = FIRE_KILLS.get((ruleset, players, bool(options.get("mougong"))))
    if fire is not None:  # (extended and honglou had none to bound)
        assert c["fire_kills_own_side"] + c["chain_kills_own_side"] <= fire[1] < fire[0], dict(c)
    if ruleset == "jinyu" and not options.get("mougong"):
        return  # no count of issue 21's to hold it to
    today = TODAY_TEAMMATE_KILLS[(ruleset, players)]  # per 150 games
    chosen = c["teammate_kills"] - c["forced_kills"]
    assert 0 <= chosen <= today, dict(c)  # a third of 3 x today's
    assert c["teammate_kills"] < 3 * today, dict(c)


def test_arena_selfplay_audit_prints_the_counts() -> None:
    """`arena selfplay --audit` (the auditor's command-line caller) prints the counts of the
    same games audit_games plays, and refuses an unknown ruleset in one line."""
    import json
    import subprocess
    import sys

    argv = [sys.executable, "-m", "services.cli", "selfplay", "--audit", "--json"]
    table = ["--ruleset", "standard", "--players", "5", "--games", "2", "--seed", "3"]
    out = subprocess.run([*argv, *table, "--policies", "heuristic"], capture_output=True, text=True)
    assert out.returncode == 0, out.stderr
    want = audit_games("standard", 5, 2, 3, ["heuristic"], {})
    assert json.loads(out.stdout) == dict(want.counts)
    bad = subprocess.run([*argv, "--ruleset", "nope"], capture_output=True, text=True)
    assert bad.returncode == 2 and bad.stderr.strip().count("\n") == 0
    assert "unknown ruleset 'nope'" in bad.stderr
