"""`arena selfplay` with a game that does not end (#46 item 3): the game is reported (its seed,
on stderr and under `unfinished`) and left out; the other games' results stand. It stopped the
whole run with a traceback and lost every other game's summary."""

from __future__ import annotations

import json
import subprocess
import sys

from services.bots.selfplay import selfplay


def test_a_game_past_the_limit_is_reported_and_the_others_kept() -> None:
    assert not selfplay("standard", 5, 6, 1, ["random"])["unfinished"]
    cut = selfplay("standard", 5, 6, 1, ["random"], max_decisions=250)
    assert cut["unfinished"], "some of these games take more than 250 decisions"
    finished = 6 - len(cut["unfinished"])
    assert finished > 0
    assert sum(cut["wins_by_camp"].values()) == finished  # the others' results stand


def test_the_command_says_which_game_did_not_end() -> None:
    out = subprocess.run(
        [
            sys.executable,
            "-m",
            "services.cli",
            "selfplay",
            "--ruleset",
            "standard",
            "--players",
            "5",
            "--games",
            "6",
            "--seed",
            "1",
            "--max-decisions",
            "250",
            "--json",
        ],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert out.returncode == 0, out.stderr
    result = json.loads(out.stdout)
    lines = out.stderr.splitlines()
    assert len(lines) == len(result["unfinished"]) > 0
    seed = result["unfinished"][0]
    assert lines[0] == (
        f"arena selfplay: game {seed} did not end within 250 decisions (repeat it: --games 1 "
        f"--seed {seed}); left out of the summary"
    )
    assert "Traceback" not in out.stderr
