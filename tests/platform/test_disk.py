"""`arena up` when a disk fills or a var folder is taken (#46 items 2, 3): a child's log lines
survive a log file that cannot be written (they come to arena up's stderr, said once each way;
the pump that died on ENOSPC left its child blocked on a full pipe), a Redis that exited for
want of room is restarted once there is room (not counted as a crash loop), and a second
platform never starts on a var folder one already uses."""

from __future__ import annotations

import errno
import sys
import time
from pathlib import Path

import pytest

from services.platform import supervise
from services.platform.procs import LogSink, Supervisor, any_line
from services.platform.supervise import Policy, Restarter
from services.platform.up import LOCK_FILE, Platform, UpConfig


class FullLog:
    """A log file on a full disk, until `room`."""

    def __init__(self) -> None:
        self.full = True
        self.lines: list[str] = []

    def write(self, line: str) -> int:
        if self.full:
            raise OSError(errno.ENOSPC, "No space left on device")
        self.lines.append(line)
        return len(line)

    def flush(self) -> None:
        pass

    def seek(self, *_: int) -> int:
        return 0

    def close(self) -> None:
        pass


def test_a_full_log_sends_the_lines_to_stderr(
    tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    log = FullLog()
    sink = LogSink("engine-0", tmp_path / "engine-0.log", log)  # type: ignore[arg-type]
    sink.write("one\n")
    sink.write("two\n")
    log.full = False
    sink.write("three\n")
    err = capsys.readouterr().err.splitlines()
    assert err == [
        f"arena up: cannot write {tmp_path / 'engine-0.log'} (No space left on device); "
        "engine-0's lines come here until it can",
        "engine-0: one",
        "engine-0: two",
        f"arena up: {tmp_path / 'engine-0.log'} can be written again",
    ]
    assert log.lines == ["three\n"]


def test_a_childs_stderr_is_pumped_to_its_log(tmp_path: Path) -> None:
    """Both streams go through the pumps (a child never writes its log file itself)."""
    sup = Supervisor(tmp_path / "logs")
    code = "import sys; print('ready', flush=True); print('to stderr', file=sys.stderr)"
    child = sup._spawn("c", [sys.executable, "-c", code], any_line, {})
    sup.children.append(child)
    sup.wait_ready(child)
    child.proc.wait(10)
    for _ in range(50):
        if "to stderr" in child.log_path.read_text():
            break
        time.sleep(0.05)
    assert "to stderr" in child.log_path.read_text()
    sup.stop()


class DeadRedis:
    def __init__(self, data_dir: Path) -> None:
        self.data_dir = data_dir
        self.restarted = 0

    @property
    def returncode(self) -> int | None:
        return 1

    def alive(self) -> bool:
        return False

    def restart(self) -> None:
        self.restarted += 1

    def last_words(self) -> str:
        return "Can't recover from AOF write error when the AOF fsync policy is 'always'."


def test_a_redis_without_room_is_restarted_once_there_is_room(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    room = {"why": "disk full (0 KB free)"}
    monkeypatch.setattr(supervise, "folder_state", lambda _: room["why"])
    server = DeadRedis(tmp_path)
    r = Restarter(Supervisor(tmp_path / "logs"), None, Policy(limit=2), servers={"redis": server})
    said = [line for t in range(10) for line in r.check(float(t))]  # no CrashLoop: not counted
    assert said == [
        f"redis exited (exit code 1): its data folder {tmp_path} is disk full (0 KB free); "
        "restarting it once there is room (free space there)"
    ]
    assert server.restarted == 0
    room["why"] = None  # type: ignore[assignment]
    said = r.check(10.0) + r.check(10.1)
    assert server.restarted == 1 and said[-1] == "redis restarted"


def test_one_platform_per_var_folder(tmp_path: Path) -> None:
    cfg = UpConfig(var_dir=tmp_path / "var")
    first = Platform(cfg)
    first.lock_var()
    try:
        with pytest.raises(RuntimeError, match=r"a platform already runs in .* \(pid \d+\)"):
            Platform(cfg).start()  # refused before anything starts
        assert (tmp_path / "var" / LOCK_FILE).read_text().strip().isdigit()
    finally:
        first.stop()
    second = Platform(cfg)
    second.lock_var()  # free again once the first stopped
    second.stop()
