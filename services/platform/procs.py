"""Child processes of `arena up`: each in its own process group, stopped as a group.

A service is started as ``python -m services.cli COMMAND ...`` in a new session (its own process
group), with PR_SET_PDEATHSIG so that even a ``kill -9`` of the parent takes the children down.
Its first stdout line that says where it listens is its readiness signal; everything after it,
and all of stderr, goes to ``LOGDIR/NAME.log`` (through pipes: while the log cannot be written,
to this process's stderr, `LogSink`). Stopping sends SIGTERM to every group, waits up
to a timeout for all of them, then SIGKILLs whatever group is left.
"""

from __future__ import annotations

import contextlib
import os
import re
import signal
import subprocess
import sys
import threading
import time
from collections.abc import Callable
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO

from ..redisinfra.server import die_with_parent, signal_group

Ready = Callable[[str], dict[str, object] | None]
"""Reads one stdout line; returns what it announced (ports, URL) or None if not the one."""


def json_ready(line: str) -> dict[str, object] | None:
    """The JSON object line a service prints once it is up: `{"port": ...}` from `arena engine`
    and `arena matchmaker` (the bound gRPC port; the matchmaker adds `metrics_port` when it
    serves /metrics), `{"consumer": ...}` from `arena bots`."""
    import json

    text = line.strip()
    if not text.startswith("{"):
        return None
    try:
        value = json.loads(text)
    except ValueError:
        return None
    return value if isinstance(value, dict) and value else None


_URL = re.compile(r"web viewer on (http://\S+)")
_METRICS = re.compile(r"/metrics on port (\d+)")


def replay_ready(line: str) -> dict[str, object] | None:
    """`arena replay-server` prints its viewer URL once the HTTP socket is bound (and, with
    `--metrics-port`, the port of its /metrics, in the same line)."""
    m = _URL.search(line)
    if m is None:
        return None
    metrics = _METRICS.search(line)
    return {"url": m.group(1), **({"metrics_port": int(metrics.group(1))} if metrics else {})}


def any_line(line: str) -> dict[str, object] | None:
    """For services that announce nothing in particular: the first line means started."""
    return {"line": line.strip()}


@dataclass
class Child:
    """One supervised service process."""

    name: str
    argv: list[str]
    proc: subprocess.Popen[str]
    log_path: Path
    info: dict[str, object] = field(default_factory=dict)
    _ready: threading.Event = field(default_factory=threading.Event)
    ready: Ready = json_ready
    env: dict[str, str] = field(default_factory=dict)
    nice: int = 0  # started this many steps below this process's priority (os.nice)

    def pin(self, flag: str, value: object) -> None:
        """Start again with ``flag value`` (the port it bound when asked for any free one:
        a restarted engine must listen where its peers and up.json say it does)."""
        if flag in self.argv:
            self.argv[self.argv.index(flag) + 1] = str(value)

    def last_words(self, limit: int = 200) -> str:
        """The last non-empty line of its log (why it exited, usually)."""
        try:
            with self.log_path.open("rb") as f:
                f.seek(max(0, f.seek(0, 2) - 4096))
                lines = f.read().decode("utf-8", "replace").splitlines()
        except OSError:
            return ""
        last = next((x.strip() for x in reversed(lines) if x.strip()), "")
        return last if len(last) <= limit else last[: limit - 1] + "…"

    @property
    def pid(self) -> int:
        """The child's pid (= its process group id)."""
        return self.proc.pid

    def alive(self) -> bool:
        """Whether the process is still running."""
        return self.proc.poll() is None


class LogSink:
    """Where a child's output lines go: its log file while that can be written; while it
    cannot (the disk is full, the folder unwritable) the lines go to this process's stderr,
    named, and that is said once each way. A pump that died on ENOSPC left the child blocked
    on a full pipe (and stopped `arena up` soon after)."""

    def __init__(self, name: str, path: Path, log: IO[str]) -> None:
        self.name, self.path, self.log = name, path, log
        self.lock = threading.Lock()  # (stdout and stderr pumps)
        self.failing = False
        self.open = 2  # pumps still running: the last one closes the file

    def write(self, line: str) -> None:
        """One line to the log, or to stderr while the log cannot take it."""
        with self.lock:
            try:
                self.log.write(line)
                self.log.flush()
            except ValueError:  # closed by Supervisor.stop while a last line came: dropped
                return
            except OSError as exc:
                if not self.failing:
                    self.failing = True
                    _stderr(
                        f"arena up: cannot write {self.path} ({exc.strerror}); {self.name}'s "
                        "lines come here until it can"
                    )
                with contextlib.suppress(OSError, ValueError):
                    self.log.seek(0, 2)  # (a partly written line is dropped with the error)
                _stderr(f"{self.name}: {line.rstrip()}")
                return
            if self.failing:
                self.failing = False
                _stderr(f"arena up: {self.path} can be written again")

    def done(self) -> None:
        """One pump is done; the last closes the file (a child restarted many times must not
        keep a file open per run)."""
        with self.lock:
            self.open -= 1
            if self.open == 0:
                with contextlib.suppress(OSError):
                    self.log.close()


def _stderr(line: str) -> None:
    with contextlib.suppress(OSError):
        print(line, file=sys.stderr, flush=True)


def _pump(child: Child, ready: Ready | None, out: IO[str], sink: LogSink) -> None:
    for line in out:
        if ready is not None and not child._ready.is_set():
            got = ready(line)
            if got is not None:
                child.info.update(got)
                child._ready.set()
        sink.write(line)
    if ready is not None:
        child._ready.set()  # end of output: wake the waiter (it then sees the exit)
    sink.done()


def _child_setup(nice: int) -> Callable[[], None]:
    """What a child runs before exec: die with this process, and with ``nice`` > 0 lower its
    scheduling priority by that much (every thread it starts inherits it; a restart too)."""
    if not nice:
        return die_with_parent

    def setup() -> None:
        die_with_parent()
        os.nice(nice)

    return setup


class StopAsked(Exception):
    """A signal asked start-up to stop (`StopFlag.check` raises it at a safe point)."""

    def __init__(self, signum: int) -> None:
        super().__init__(signal.Signals(signum).name)
        self.signum = signum


class StopFlag:
    """What `arena up`'s SIGTERM (and Ctrl-C) handler does during start-up: it only notes the
    signal, and start-up checks the note at safe points (every slice of every wait, between
    services), raising StopAsked there. A handler that raised wherever the main thread happened
    to be was lost in an `except Exception` on the way (start-up went on, the services ran until
    a second SIGTERM), or broke a lock it fired inside. Setting an attribute is all a handler
    does here: a threading.Event's set() takes a lock the interrupted code may hold."""

    def __init__(self) -> None:
        self.signum: int | None = None

    def ask(self, signum: int) -> None:
        """From a signal handler: stop at the next safe point (the first signal is kept)."""
        if self.signum is None:
            self.signum = signum

    def check(self) -> None:
        """StopAsked if a signal asked to stop."""
        if self.signum is not None:
            raise StopAsked(self.signum)


WAIT_SLICE = 0.1
"""Seconds: how often a wait of start-up looks at the StopFlag."""


class Supervisor:
    """Starts services, waits for their readiness line, stops them all."""

    def __init__(
        self, log_dir: Path, env: dict[str, str] | None = None, stopping: StopFlag | None = None
    ) -> None:
        self.log_dir = log_dir
        self.env = dict(os.environ if env is None else env)
        self.children: list[Child] = []
        self._logs: list[IO[str]] = []
        self.stopping = stopping or StopFlag()  # wait_ready checks it

    def start(
        self,
        name: str,
        argv: list[str],
        ready: Ready = json_ready,
        env: dict[str, str] | None = None,
        nice: int = 0,
    ) -> Child:
        """Start ``argv`` (an `arena` sub-command line, without "arena") in its own group,
        ``nice`` steps below this process's scheduling priority (`nice -n`; 0: the same)."""
        full = [sys.executable, "-m", "services.cli", *argv]
        child = self._spawn(name, full, ready, env or {}, nice)
        self.children.append(child)
        return child

    def respawn(self, child: Child) -> Child:
        """Start ``child``'s command again (after it exited); it takes the old one's place."""
        new = self._spawn(child.name, child.argv, child.ready, child.env, child.nice)
        self.children[self.children.index(child)] = new
        return new

    def _spawn(
        self, name: str, full: list[str], ready: Ready, env: dict[str, str], nice: int = 0
    ) -> Child:
        self.log_dir.mkdir(parents=True, exist_ok=True)
        log_path = self.log_dir / f"{name}.log"
        log = log_path.open("a", encoding="utf-8")
        self._logs.append(log)
        # stderr through a pipe too: a child writing its log file itself would die of a
        # full disk (a bot worker crash-looped so); the pumps ride it out (LogSink)
        proc = subprocess.Popen(
            list(full),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
            text=True,
            errors="replace",
            env={**self.env, **env, "PYTHONUNBUFFERED": "1"},
            start_new_session=True,
            preexec_fn=_child_setup(nice),
        )
        child = Child(name, list(full), proc, log_path, ready=ready, env=env, nice=nice)
        assert proc.stdout is not None and proc.stderr is not None
        sink = LogSink(name, log_path, log)
        for stream, reads in ((proc.stdout, ready), (proc.stderr, None)):
            threading.Thread(
                target=_pump, args=(child, reads, stream, sink), daemon=True, name=f"pump-{name}"
            ).start()
        return child

    def wait_ready(self, child: Child, timeout: float = 30.0) -> dict[str, object]:
        """Block until ``child`` announced itself; RuntimeError if it exits or times out,
        StopAsked as soon as a signal asked to stop (`stopping` is looked at every slice)."""
        deadline = time.monotonic() + timeout
        ready = False
        while not ready:
            self.stopping.check()
            left = deadline - time.monotonic()
            if left <= 0:
                break
            ready = child._ready.wait(min(WAIT_SLICE, left))
        if not ready or not child.info:
            tail = child.log_path.read_text(encoding="utf-8", errors="replace")[-2000:]
            state = "exited" if not child.alive() else "did not get ready in time"
            raise RuntimeError(f"{child.name} {state}; log {child.log_path}:\n{tail}")
        return child.info

    def dead(self) -> list[Child]:
        """Children that exited on their own."""
        return [c for c in self.children if not c.alive()]

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM every group, wait up to ``timeout`` for all, SIGKILL the rest."""
        for c in reversed(self.children):
            signal_group(c.pid, signal.SIGTERM)
        deadline = time.monotonic() + timeout
        for c in self.children:
            with contextlib.suppress(subprocess.TimeoutExpired):
                c.proc.wait(max(0.0, deadline - time.monotonic()))
        for c in self.children:
            signal_group(c.pid, signal.SIGKILL)  # the leader's stragglers too
            with contextlib.suppress(subprocess.TimeoutExpired):
                c.proc.wait(5)
        for log in self._logs:
            log.close()
        self._logs.clear()


def cpu_seconds(pid: int) -> float:
    """User + system CPU seconds a process has used so far (Linux /proc; 0 if unknown)."""
    try:
        fields = Path(f"/proc/{pid}/stat").read_text().rsplit(")", 1)[1].split()
    except OSError:
        return 0.0
    ticks = os.sysconf("SC_CLK_TCK")
    return (int(fields[11]) + int(fields[12])) / ticks
