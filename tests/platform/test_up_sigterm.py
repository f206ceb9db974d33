"""SIGTERM at any moment of `arena up`'s start-up stops it: it exits 0 with its "stopped
(SIGTERM during start-up, N s in)" line, having stopped every process it had started (Ctrl-C
likewise).

The signal is sent at points the test sees from outside (the var folder's lock, Redis's log,
each service's log), so it lands while `arena up` waits for Redis, for an engine, for the
matchmaker, for the bot worker and the web server. A handler that raised wherever the main thread
was raised inside logging's after-fork hook while Popen started redis-server or a service; the
hook's exception was ignored, so start-up went on and the services ran until a second SIGTERM.
"""

from __future__ import annotations

import re
import signal
import subprocess
import time
from collections.abc import Callable
from pathlib import Path

import pytest
from process_helpers import FREE_PORTS, arena, descendants

STOPPED = r"arena up: stopped \({} during start-up, \d+ s in\)"


def _started_at(pid: int) -> int | None:
    """The process's start time (clock ticks since boot), None if gone or a zombie."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return None
    return None if fields[0] == "Z" else int(fields[19])


def _below(root: int) -> dict[int, int]:
    """Every live process below ``root``: pid -> start time (a pid reused later is not it)."""
    return {p: t for p in descendants(root) if (t := _started_at(p)) is not None}


def _has(path: Path, text: str = "") -> Callable[[], bool]:
    def check() -> bool:
        try:
            return text in path.read_text(errors="replace")
        except OSError:
            return False

    return check


# where to send the signal: what the test sees of arena up's start-up at that moment
POINTS: dict[str, Callable[[Path, int], Callable[[], bool]]] = {
    # lock_var ran (the handler is in place): Redis is being started
    "var locked": lambda var, pid: _has(var / "up.lock", f"{pid}\n"),
    # redis-server was launched: arena up waits for its PING, or starts the engine
    "redis launched": lambda var, pid: _has(var / "redis" / "redis.log"),
    # the engine was spawned: arena up waits for its readiness line
    "engine spawned": lambda var, pid: _has(var / "logs" / "engine-0.log"),
    # the matchmaker was spawned: the engine is up, arena up waits for the matchmaker
    "matchmaker spawned": lambda var, pid: _has(var / "logs" / "matchmaker.log"),
    # everything was spawned: arena up waits for the bot worker and the web server
    "bots spawned": lambda var, pid: _has(var / "logs" / "bots-0.log"),
}


@pytest.mark.parametrize(
    ("point", "sig"),
    [(point, signal.SIGTERM) for point in POINTS] + [("engine spawned", signal.SIGINT)],
    ids=lambda v: v.name if isinstance(v, signal.Signals) else str(v),
)
def test_a_signal_during_start_up_stops_everything(
    tmp_path: Path, point: str, sig: signal.Signals
) -> None:
    var = tmp_path / "var"
    proc = arena(
        "up", "--var", str(var), *FREE_PORTS, stdout=subprocess.PIPE, stderr=subprocess.PIPE
    )
    seen: dict[int, int] = {}
    try:
        reached = POINTS[point](var, proc.pid)
        deadline = time.monotonic() + 60
        while not reached():
            assert proc.poll() is None, proc.communicate()
            assert time.monotonic() < deadline, f"{point}: never seen in 60 s"
            seen |= _below(proc.pid)
            time.sleep(0.01)
        seen |= _below(proc.pid)
        proc.send_signal(sig)
        out, err = proc.communicate(timeout=30)  # a hang is the bug: it needed a second SIGTERM
    finally:
        if proc.poll() is None:
            proc.kill()
            proc.communicate()
    assert proc.returncode == 0, err
    assert "Traceback" not in err, err
    last = err.strip().splitlines()[-1] if err.strip() else ""
    said = "Ctrl-C" if sig == signal.SIGINT else "SIGTERM"
    assert re.fullmatch(STOPPED.format(said), last), f"{point}: {err}"
    assert out == "", out  # it never got as far as saying where it listens
    assert not (var / "up.json").exists()
    # stopped by arena up itself before it exited, not left to PR_SET_PDEATHSIG afterwards
    left = {p for p, t in seen.items() if _started_at(p) == t}
    assert not left, f"{point}: still running after arena up exited: {left}"
