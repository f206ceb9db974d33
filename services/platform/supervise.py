"""What `arena up` does when one of its children dies: restart it, with backoff, and give up
only when it crash-loops.

Every service of the platform holds no state a restart loses (a game is its log in Redis, a
worker's cache is a copy; consumer groups hand a dead worker's messages to the others), and
every loop in them rides out a Redis restart, so a dead child (an engine, a bot worker, the
matchmaker, the replay server, the Redis `arena up` started, each node of the local cluster
`arena up --redis-cluster N` started) is simply started again: at once
the first time, then after 0.5 s, 1 s, 2 s … (up to ``cap_s``, with jitter), and the line that
says so names the child, how it exited and the last line of its log. A child that exits
``limit`` times within ``window_s`` seconds is crash-looping (a bad flag, a port taken, a
broken install): the platform then stops and says which child and why.
"""

from __future__ import annotations

import random
import signal
import time
from collections import deque
from collections.abc import Mapping
from dataclasses import dataclass, field
from pathlib import Path
from typing import Protocol

from ..redisinfra.durability import folder_state
from ..redisinfra.server import RedisServer
from .procs import Child, Supervisor


class Server(Protocol):
    """A Redis process `arena up` started: one server, or one node of a local cluster."""

    @property
    def returncode(self) -> int | None:
        """The exit code, None while it runs."""

    def alive(self) -> bool:
        """Whether it runs."""

    def restart(self) -> None:
        """Start it again (returns at once; a server that cannot start exits again)."""

    def last_words(self) -> str:
        """The last line of its log."""


@dataclass
class Policy:
    """When to restart, and when to give up."""

    limit: int = 5  # exits within window_s that mean "crash-looping"
    window_s: float = 60.0
    base_s: float = 0.5  # delay before the 2nd restart in a row; doubled each time after
    cap_s: float = 10.0


@dataclass
class _History:
    exits: deque[float] = field(default_factory=deque)
    restart_at: float | None = None
    waiting: str | None = None  # why it is not restarted yet (its disk is full)


def _no_room(server: Server) -> str | None:
    """Why a Redis that exited cannot start again now: its data folder has no room (a Redis
    with `appendfsync always` exits when its AOF cannot be written), else None."""
    data = getattr(server, "data_dir", None)
    if not isinstance(data, Path):
        return None
    why = folder_state(data)
    return f"its data folder {data} is {why}" if why and why.startswith("disk full") else None


class CrashLoop(Exception):
    """A child exited too often too fast: the platform stops (the message says which, why)."""


def how(code: int | None) -> str:
    """An exit status in words: "exit code 1", "killed by SIGKILL"."""
    if code is None:
        return "still running"
    if code < 0:
        try:
            return f"killed by {signal.Signals(-code).name}"
        except ValueError:
            return f"killed by signal {-code}"
    return f"exit code {code}"


class Restarter:
    """Checks the children (and the started Redis) and restarts the dead ones; `check` is
    called about every half second by `arena up`'s loop and returns the lines to print."""

    def __init__(
        self,
        sup: Supervisor,
        redis: RedisServer | None,
        policy: Policy | None = None,
        rng: random.Random | None = None,
        servers: Mapping[str, Server] | None = None,
    ) -> None:
        self.sup = sup
        self.servers: dict[str, Server] = dict(servers or {})
        if redis is not None:
            self.servers["redis"] = redis
        self.policy = policy or Policy()
        self.rng = rng or random.Random()
        self.history: dict[str, _History] = {}
        self.restarts = 0

    def check(self, now: float | None = None) -> list[str]:
        """Restart what is due; the lines that say what happened. CrashLoop to give up."""
        now = time.monotonic() if now is None else now
        lines: list[str] = []
        for name, server in self.servers.items():
            if not server.alive():
                full = _no_room(server)
                if full is not None:  # it would exit again at once: wait for room, uncounted
                    if self.history.setdefault(name, _History()).waiting != full:
                        self.history[name].waiting = full
                        lines.append(
                            f"{name} exited ({how(server.returncode)}): {full}; restarting it "
                            "once there is room (free space there)"
                        )
                    continue
                self.history.setdefault(name, _History()).waiting = None
                lines += self._dead(name, how(server.returncode), server.last_words(), now, server)
        for child in list(self.sup.children):
            if not child.alive():
                lines += self._dead(
                    child.name, how(child.proc.poll()), child.last_words(), now, child
                )
        return lines

    def _dead(
        self, name: str, exit: str, why: str, now: float, target: Child | Server
    ) -> list[str]:
        h = self.history.setdefault(name, _History())
        if h.restart_at is None:  # newly found dead: count it, schedule the restart
            h.exits.append(now)
            while h.exits and now - h.exits[0] > self.policy.window_s:
                h.exits.popleft()
            said = f"; last log line: {why}" if why else ""
            if len(h.exits) >= self.policy.limit:
                raise CrashLoop(
                    f"{name} crash-looped: {len(h.exits)} exits in "
                    f"{self.policy.window_s:.0f} s, the last one {exit}{said}"
                )
            delay = self._delay(len(h.exits))
            h.restart_at = now + delay
            return [f"{name} exited ({exit}){said}; restarting in {delay:.1f} s"]
        if now < h.restart_at:
            return []
        h.restart_at = None
        self.restarts += 1
        server = self.servers.get(name)
        if server is not None:
            server.restart()
        else:
            self.sup.respawn(target)  # type: ignore[arg-type]  # a child, not a server
        return [f"{name} restarted"]

    def _delay(self, exits: int) -> float:
        """0 for the first exit in the window, then base, 2 base, … up to cap, jittered."""
        if exits <= 1:
            return 0.0
        top = min(self.policy.cap_s, self.policy.base_s * 2.0 ** (exits - 2))
        return top / 2 + self.rng.uniform(0, top / 2)
