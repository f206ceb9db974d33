"""`arena tournament --deployed ARCHIVE_DIR`: the small version of the slow compose run (it is
how that run plays through the stack). A platform of two engine workers and a bot worker runs
as a deployment would, and the tournament plays through them without starting any worker of
its own; a bad --deployed gets one line."""

from __future__ import annotations

import subprocess
from pathlib import Path

from process_helpers import arena, clean_env, tournament, up_config

from services.platform.up import Platform

ARGS = ["--players", "4", "--games", "4", "--policies", "heuristic,random", "--seed", "3"]


def test_a_tournament_plays_through_a_running_deployment(tmp_path: Path) -> None:
    cfg = up_config(tmp_path / "deployment", engines=2, bots=1, matchmaker=False, replay=False)
    with Platform(cfg) as platform:
        run = platform.start()
        Path(run.archive_dir).mkdir(parents=True, exist_ok=True)  # a deployment's volume
        env = {**clean_env(), "REDIS_URL": run.redis_url}  # as compose gives it
        result, err = tournament(
            tmp_path / "tools", "--deployed", run.archive_dir, *ARGS, timeout=180, env=env
        )
    assert result["games_done"] == result["games_played_now"] == 4
    assert result["platform"] == f"deployed (archive {run.archive_dir})"
    assert "starting a platform" not in err and "deployment's workers" in err
    archived = sorted(p.stem for p in Path(run.archive_dir).glob("*.arena"))
    assert archived == sorted(f"t{result['key'][:12]}-{i}" for i in range(4))


def test_deployed_needs_a_redis_and_an_archive_folder(tmp_path: Path) -> None:
    for extra, env, said in (
        ([str(tmp_path / "none")], {"REDIS_URL": "redis://127.0.0.1:1/0"}, "no such folder"),
        ([str(tmp_path)], {}, "--redis-url or $REDIS_URL"),
    ):
        p = arena(
            "tournament",
            "--deployed",
            *extra,
            "--var",
            str(tmp_path / "tools"),
            *ARGS,
            env={**clean_env(), **env},
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = p.communicate(timeout=60)
        assert p.returncode == 2, err
        assert said in err and len(err.strip().splitlines()) == 1, err
