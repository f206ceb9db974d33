"""#46's goal for a hung engine, as the issue ran it: `arena up --engines 2 --bots 2 --think-ms
0`, `arena tournament --games 100 --concurrency 20 --policies random`, then `kill -STOP`
engine-0 once play is under way. Every game must finish while engine-0 is still stopped (within
90 s of the stop), every archive verify. Before the heartbeats every game stalled within ~7 s,
including games created afterwards on the healthy engine. (tests/engine/test_hung.py is the
default suite's small version.)"""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path

import pytest
from process_helpers import arena, arena_up, find_below

from services.verify import verify

STOPPED_S = 90.0


def _journal(var: Path) -> int:
    files = list((var / "tournaments").glob("*.jsonl"))
    return sum(1 for x in files[0].read_text().splitlines() if x.strip()) if files else 0


def _state(pid: int) -> str:
    return Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()[0]


@pytest.mark.slow
def test_every_game_finishes_while_an_engine_is_stopped(tmp_path: Path) -> None:
    var = tmp_path / "var"
    engine0 = None
    with (
        (tmp_path / "up.err").open("w") as up_err,
        arena_up(
            *("--var", str(var), "--engines", "2", "--bots", "2", "--think-ms", "0"),
            stderr=up_err,
            stop_s=60,
        ) as (up, _),
    ):
        try:
            engine0 = find_below(up.pid, "services.cli engine", "engine-0")
            assert engine0 is not None
            tour = arena(
                "tournament",
                "--var",
                str(var),
                "--games",
                "100",
                "--concurrency",
                "20",
                "--policies",
                "random",
                "--json",
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            deadline = time.monotonic() + 120
            while _journal(var) < 10:  # play under way on both engines
                assert tour.poll() is None, tour.communicate()
                assert time.monotonic() < deadline, "no games finished"
                time.sleep(0.1)
            done_at_stop = _journal(var)
            os.kill(engine0, signal.SIGSTOP)
            stopped = time.monotonic()
            out, err = tour.communicate(timeout=STOPPED_S + 30)
            took = time.monotonic() - stopped
            still = _state(engine0) == "T"
            print(
                f"{100 - done_at_stop} games finished {took:.1f} s after engine-0 was stopped "
                f"({done_at_stop} before)"
            )
            assert tour.returncode == 0, err
            assert json.loads(out)["games_done"] == 100
            assert still and took < STOPPED_S, f"took {took:.1f} s"
            assert "Traceback" not in err
            logs = "".join(p.read_text() for p in (var / "logs").glob("*.log"))
            assert "engine:engine-0 silent for" in logs  # engine-1 said which worker and how long
            assert "silent for" in (var / "logs" / "bots-0.log").read_text()
        finally:
            if engine0 is not None:
                os.kill(engine0, signal.SIGCONT)
    files = sorted((var / "archive").glob("*.arena"))
    assert len(files) >= 100
    for f in files:
        assert verify(f).ok, f.name
