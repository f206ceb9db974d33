"""Soak: thousands of bot games through the whole platform (`-m slow`), every one verified.

`arena tournament` starts Redis, two engine workers and a bot worker, keeps 200 games in
flight (so answers travel in batches, as they do under load), and every game's archive must
then verify: hash chain, seed commitment, and a replay by the rules engine that reproduces
every logged event. The default run plays ten the same way (all in flight at once); `-m slow`
plays 2,000.
"""

from __future__ import annotations

from pathlib import Path

import pytest
from process_helpers import tournament

from services.eventlog.catalog import load_catalog
from services.verify import verify


def _soak(var: Path, games: int, timeout_s: float) -> None:
    result, _ = tournament(
        var,
        *("--ruleset", "standard", "--players", "5", "--games", str(games)),
        *("--policies", "heuristic,random", "--seed", "11", "--engines", "2"),
        *("--concurrency", "200"),
        timeout=timeout_s,
    )
    assert result["games_done"] == games
    files = sorted((var / "archive").glob("t*.arena"))
    assert len(files) == games
    failed = [f.name for f in files if not verify(f).ok]
    assert failed == []
    assert len(load_catalog(var / "archive")) == games


def test_soak_small(tmp_path: Path) -> None:
    _soak(tmp_path / "var", 10, 300)


@pytest.mark.slow
def test_soak_two_thousand_games(tmp_path: Path) -> None:
    _soak(tmp_path / "var", 2000, 3600)
