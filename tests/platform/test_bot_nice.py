"""People first when the CPU is short (issue 44): with people's engines, `arena up` starts the
processes that serve only bot games at a lower scheduling priority when asked (`--bot-nice N`;
off by default: it did not lower people's latency where measured), and leaves the people's path (people's engines, web server, matchmaker, Redis) at its
own. Read from each child's /proc/PID/stat, not from what `arena up` says."""

from __future__ import annotations

import os
import signal
import subprocess
import time
from pathlib import Path

from process_helpers import FREE_PORTS, arena, arena_up, find_below, up_config

from services.platform.up import Platform
from services.platform.up_command import describe


def nice_of(pid: int) -> int:
    """The process's nice value (field 19 of /proc/PID/stat)."""
    fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    return int(fields[16])


def _service(root: int, command: str, *words: str) -> int:
    pid = find_below(root, f"services.cli {command} ", *words)
    assert pid is not None, (command, words)
    return pid


def test_up_runs_the_bot_only_engines_below_the_peoples_work(tmp_path: Path) -> None:
    base = nice_of(os.getpid())  # arena up inherits it; the children are set against it
    args = ["--var", str(tmp_path / "var"), "--no-persist", "--think-ms", "0"]
    layout = ("--engines", "1", "--people-engines", "1", "--bots", "1", "--bot-nice", "10")
    with arena_up(*args, *layout) as (up, _):
        assert nice_of(up.pid) == base
        general = _service(up.pid, "engine", "--consumer engine-0")
        people = _service(up.pid, "engine", "--consumer engine-1", "--role people")
        assert "--role" not in Path(f"/proc/{general}/cmdline").read_text()
        assert nice_of(general) == min(19, base + 10)
        assert nice_of(people) == base
        # the people's path: the web server, the matchmaker, Redis; the bot worker too (it
        # answers the bot seats of the people's tables)
        for command in ("replay-server", "matchmaker", "bots"):
            assert nice_of(_service(up.pid, command)) == base, command
        redis = find_below(up.pid, "redis-server")
        assert redis is not None and nice_of(redis) == base


def test_bot_nice_is_set_kept_over_a_restart_and_off_without_peoples_engines(
    tmp_path: Path,
) -> None:
    base = nice_of(os.getpid())
    quiet = {"matchmaker": False, "replay": False, "bots": 1}
    cfg = up_config(tmp_path / "a", engines=1, people_engines=1, bot_nice=3, **quiet)
    with Platform(cfg) as p:
        run = p.start()
        kids = {c.name: c for c in p.sup.children}
        # what arena up says at start: which processes yield, and by how much
        said = describe(run, cfg, [c.name for c in p.sup.children if c.nice])
        assert "bot-only work     engine-0 at nice +3" in said, said
        assert {n: nice_of(c.pid) for n, c in kids.items()} == {
            "engine-0": min(19, base + 3),
            "engine-1": base,
            "bots-0": base,
        }
        # a restarted engine is started as it was: still below the people's
        old = kids["engine-0"].pid
        os.killpg(old, signal.SIGKILL)
        deadline = time.monotonic() + 30
        while time.monotonic() < deadline:
            p.keep_alive()
            new = next(c for c in p.sup.children if c.name == "engine-0")
            if new.pid != old and new.alive():
                break
            time.sleep(0.1)
        assert new.pid != old and new.alive()
        assert nice_of(new.pid) == min(19, base + 3)
    # every engine serves people without people's engines: none yields even when asked; and
    # with them nothing yields by default
    for people, given in ((0, 3), (1, 0)):
        var = tmp_path / f"b{people}"
        cfg = up_config(var, engines=1, people_engines=people, bot_nice=given, **quiet)
        with Platform(cfg) as p:
            p.start()
            assert {c.name: nice_of(c.pid) for c in p.sup.children} == {
                **{f"engine-{i}": base for i in range(1 + people)},
                "bots-0": base,
            }


def test_a_bad_bot_nice_is_one_line_and_exit_2(tmp_path: Path) -> None:
    for value in ("-1", "20", "ten"):
        p = arena(
            "up",
            *FREE_PORTS,
            "--var",
            str(tmp_path / "var"),
            "--people-engines",
            "1",
            "--bot-nice",
            value,
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = p.communicate(timeout=60)
        assert p.returncode == 2, (value, err)
        assert out == "" and len(err.strip().splitlines()) == 1, (value, err)
        assert "--bot-nice" in err, err
    assert not (tmp_path / "var" / "up.json").exists()
