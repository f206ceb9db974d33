"""`arena bench play` runs end to end and reports what #16 asks for (p50/p99 from an answer's
POST to the seat's next event, the people held with p99 under 250 ms, CPU beside wall): a smoke
run with one person and one bot game (-m slow: it starts a whole platform). No figure is
asserted: it is a report, not a timed test."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.process_helpers import arena


@pytest.mark.slow
def test_bench_play_reports_latency_and_people_held() -> None:
    proc = arena(
        *("bench", "play", "--people", "1", "--seconds", "4", "--bot-games", "1", "--json"),
        *("--ruleset", "chengtian", "--players", "2"),  # 1v1: the person is asked often
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(timeout=240)
    assert proc.returncode == 0, err[-2000:]
    report = json.loads(out)
    (step,) = report["steps"]
    assert step["answers"] > 0 and step["errors_total"] == 0, step
    assert set(step["latency_ms"]) == {"p50", "p90", "p99", "max"}
    assert {"engine-0", "replay-server", "matchmaker"} <= set(step["cpu_share"])
    assert "people_held_p99_under_250ms" in report and report["load_avg"]["before"]
