"""`arena bench idle`: the /proc reading it rests on, its refusals, and (slow) a whole run."""

from __future__ import annotations

import json
import os
import subprocess
import sys
import time

import pytest

from services.bench import idle
from services.cli import main


def test_a_child_process_is_found_named_and_its_cpu_read() -> None:
    busy = "import time\nt = time.process_time()\nwhile time.process_time() - t < 0.3: pass\n"
    busy += "time.sleep(30)"
    child = subprocess.Popen([sys.executable, "-c", busy])
    try:
        tree = idle._tree(os.getpid())
        assert tree[child.pid].startswith("python")
        assert os.getpid() in tree
        deadline = time.monotonic() + 20
        while (idle._cpu(tree).get(child.pid) or 0) < 0.25 and time.monotonic() < deadline:
            time.sleep(0.05)
        assert idle._cpu(tree)[child.pid] >= 0.25  # the 0.3 s it spun, at the clock's tick
    finally:
        child.kill()
        child.wait()
    assert idle._stat(child.pid) is None  # gone: no reading, no error


@pytest.mark.parametrize(
    "args", [["--repeat", "0"], ["--seconds", "0"], ["--warm-s", "-1"]], ids=str
)
def test_bad_options_are_one_line_and_exit_2(
    args: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    assert main(["bench", "idle", *args]) == 2
    out, err = capsys.readouterr()
    assert out == "" and err.startswith("arena bench idle: ") and err.count("\n") == 1


@pytest.mark.slow
def test_an_idle_arena_up_is_measured_by_process() -> None:
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "bench", "idle", "--warm-s", "3", "--seconds", "3"],
        capture_output=True,
        text=True,
        timeout=180,
    )
    assert proc.returncode == 0, proc.stderr
    report = json.loads(proc.stdout)
    run = report["runs"][0]
    assert {"engine", "matchmaker", "bots", "replay-server", "redis-server", "up"} <= set(
        run["by_process"]
    )
    assert 0 < run["core_share"] == pytest.approx(sum(run["by_process"].values()), abs=1e-3)
    assert run["seconds"] >= 3
