"""`arena bench play` runs end to end and reports what #16 and #44 ask for: p50/p99 from an
answer's POST to the seat's next event beside the bot games, the platform's CPU per
person-answer measured apart from them (the people alone, less the idle platform), the bot games
alone, and the people held with p99 under 150 ms; with the bench seating its people (no table
round trip) and with `--tables` (the play API, the matchmaker). A smoke run with one person and
one bot game (-m slow: it starts a whole platform). No figure is asserted: it is a report, not
a timed test."""

from __future__ import annotations

import json
import subprocess

import pytest

from tests.process_helpers import arena


@pytest.mark.slow
@pytest.mark.parametrize("tables", [False, True], ids=["seated", "tables"])
def test_bench_play_reports_latency_cpu_apart_and_people_held(tables: bool) -> None:
    proc = arena(
        *("bench", "play", "--people", "1", "--seconds", "4", "--bot-games", "1", "--json"),
        *("--bots-seconds", "1", "--alone-seconds", "2", "--idle-seconds", "1"),
        *("--ruleset", "chengtian", "--players", "2"),  # 1v1: the person is asked often
        *(["--tables"] if tables else []),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    report = json.loads(out)
    (step,) = report["steps"]
    assert step["answers"] > 0 and step["errors_total"] == 0 and step["table_errors"] == 0, step
    assert step["tables"] == ("play API (matchmaker)" if tables else "seated by the bench")
    assert set(step["latency_ms"]) == {"p50", "p90", "p99", "max"}
    assert {"engine-0", "replay-server", "matchmaker"} <= set(step["cpu_share"])
    assert step["bots_alone"]["decisions_per_s"] > 0
    assert step["bots_alone"]["platform_cpu_us_per_decision"] > 0
    alone = step["people_alone"]
    assert alone["answers"] > 0 and alone["with_idle_cpu_us_per_person_answer"] > 0
    assert step["idle"]["platform_cpu_share"] >= 0
    assert report["in_process_cpu_us_per_decision"] > 0
    (row,) = report["by_people"]
    assert row["person_answer_vs_in_process_decision"]["median"] != 0
    assert "people_held_p99_under_150ms" in report and report["load_avg"]["before"]


@pytest.mark.slow
def test_bench_play_alternates_engine_layouts() -> None:
    """`--layouts 1+0,1+1`: a platform of each layout in turn; each step says its layout and
    where each kind of game was served (with a people's engine, the people's games there and
    the bot-only games on the other), and `by_people` has each layout's row."""
    proc = arena(
        *("bench", "play", "--people", "1", "--seconds", "3", "--bot-games", "1", "--json"),
        *("--bots-seconds", "1", "--alone-seconds", "1", "--idle-seconds", "1"),
        *("--ruleset", "chengtian", "--players", "2", "--layouts", "1+0,1+1"),
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )
    out, err = proc.communicate(timeout=300)
    assert proc.returncode == 0, err[-2000:]
    report = json.loads(out)
    assert report["layouts"] == ["1+0", "1+1"]
    old, split = report["steps"]
    assert (old["layout"], split["layout"]) == ("1+0", "1+1")
    assert set(old["table_answers_by_engine"]) == {"engine-0"}
    general, people = (
        split["table_answers_by_engine"]["engine-0"],
        split["table_answers_by_engine"]["engine-1"],
    )
    assert people.get("people", 0) > 0 and people.get("bots", 0) == 0, split
    assert general.get("bots", 0) > 0 and general.get("people", 0) == 0, split
    assert {"engine-0", "engine-1"} <= set(split["cpu_share"])
    # nothing runs below the rest unless asked (arena up --bot-nice; off by default)
    assert (old["niced"], split["niced"]) == ({}, {})
    assert [r["layout"] for r in report["by_people"]] == ["1+0", "1+1"]
