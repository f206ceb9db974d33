"""Every command shown in README.md exists and accepts the flags it is shown with.

Each `arena ...` line of the README's code blocks is run in-process with `--help` appended:
argparse walks the sub-commands and positionals before it and prints the innermost help,
which must name every flag the line uses. The commands that a user runs first are also run
for real elsewhere: `arena up` and `arena tournament` in this folder, `arena bench e2e` below,
the scenario, self-play, bench and event-log commands in their packages' tests.
"""

from __future__ import annotations

import shlex
from pathlib import Path

import pytest

from services.bench.e2e import bench_e2e, bottleneck
from services.cli import COMMANDS, main

README = Path(__file__).resolve().parents[2] / "README.md"


def readme_commands() -> list[str]:
    """Every `arena ...` command in the README's fenced code blocks."""
    out: list[str] = []
    fence: str | None = None  # the open block's language ("" for a plain block)
    for line in README.read_text().splitlines():
        if line.startswith("```"):
            fence = line[3:].strip() if fence is None else None
        elif fence == "":  # plain blocks hold commands; ```text holds the diagram
            for part in line.split("&&"):
                part = part.split("#", 1)[0].strip()
                if part.startswith("arena "):
                    out.append(part)
    return out


def test_the_readme_shows_the_platform_commands() -> None:
    shown = {shlex.split(c)[1] for c in readme_commands()}
    assert {
        "up",
        "tournament",
        "bench",
        "export",
        "verify",
        "replay-server",
        "bots",
        "engine",
        "matchmaker",
    } <= shown


@pytest.mark.parametrize("line", readme_commands())
def test_readme_command_parses(line: str, capsys: pytest.CaptureFixture[str]) -> None:
    argv = shlex.split(line)[1:]
    assert argv[0] in COMMANDS, f"README shows `arena {argv[0]}`, which does not exist"
    with pytest.raises(SystemExit) as exit_:
        main([*argv, "--help"])
    assert exit_.value.code in (0, None), line
    text = capsys.readouterr().out
    for flag in (a.split("=", 1)[0] for a in argv if a.startswith("-")):
        assert flag in text, f"`{line}`: no {flag} in its --help"


def test_bench_e2e_runs_small() -> None:
    out = bench_e2e("standard", 4, 1, 3, "random", [1], 1, None, repeat=1)
    assert out["load_avg"]["before"] and out["load_avg"]["after"] and out["machine"]["cpus"]
    assert out["platform"][0]["repeats"] == 1
    run = out["platform"][0]["runs"][0]
    assert out["in_process"]["games_per_s"]["median"] > 0 and run["games_per_s"] > 0
    assert out["in_process"]["cpu_us_per_decision"]["median"] > 0
    assert set(run["cpu_share"]) == {"engine-0", "bots-0", "redis"}
    # CPU per decision: every process and the total, over the answers of the timed game
    per = run["cpu_us_per_decision"]
    assert set(per) == {"engine-0", "bots-0", "redis", "total"} and run["decisions"] > 0
    assert per["total"] == pytest.approx(sum(v for k, v in per.items() if k != "total"), abs=1)
    assert per["engine-0"] > 0 and per["redis"] > 0
    assert run["ratio_to_in_process"] > 0 and run["bottleneck"]
    # the workers' exit reports: every answer of the timed and warm-up games, in batches
    assert run["workers"]["bots-0"]["answers"] > 0
    bots = run["workers"]["bots-0"]  # answers on bot sessions, or in SubmitActions calls
    assert max(bots["answers_per_submit_call"], bots["answers_per_session_message"]) >= 1
    assert run["redis_version"][0].isdigit()
    assert run["workers"]["engine-0"]["appends"] >= run["workers"]["bots-0"]["answers"]


def test_bottleneck_names_the_saturated_process() -> None:
    assert bottleneck({"engine-0": 0.97, "bots-0": 0.4}, 2).startswith("engine")
    assert "cores" in bottleneck({"engine-0": 0.8, "engine-1": 0.8, "bots-0": 0.5}, 2)
    assert bottleneck({"engine-0": 0.2, "bots-0": 0.1}, 2).startswith("none")
