"""A throw-away Redis Cluster from `redis-server` processes (tests, benchmarks, `arena up`).

`LocalCluster(masters=3)` starts 2 x masters servers on loopback (`--cluster-enabled yes`, each
in its own folder with its `nodes.conf`), joins them with `redis-cli --cluster create
--cluster-replicas 1 --cluster-yes` (one replica per master) and waits until every node says
`cluster_state:ok` and every replica is in sync. A node's bus port is its port + 10000, so ports
are drawn below 55536 with both free. `kill(port)` is `kill -9` of one node (the failover
tests); `stop()` ends them all and removes the folders.

Settings chosen for a local cluster: `cluster-node-timeout` 1000 ms (a dead master is failed
over in about two seconds), `cluster-require-full-coverage no` (while one master's slots fail
over, the others keep serving), `repl-diskless-sync-delay 0` (a replica's first sync starts at
once, not 5 s later as Redis 7 waits by default), AOF when `persist`. "In sync" means each
master's replica is `online` (its first sync done), not merely connected: a replica still
waiting for that sync is never promoted, so a master killed then stays dead and its slots
uncovered for good (the failover tournament killed one ~2 s before its replica's sync ended on
a quick run: no failover, and `arena tournament` gave up after 120 s of ConnectionError). With a `password` (`arena up` gives one)
every node requires it of clients and replicas use it with their masters (`requirepass`,
`masterauth`, in a 0600 file of the node's folder, never on a command line: `ps` shows those;
`redis-cli --cluster create` gets it in its environment); `url` and `nodes_url` carry it.
"""

from __future__ import annotations

import contextlib
import os
import random
import shutil
import socket
import subprocess
import tempfile
import time
from collections.abc import Callable
from pathlib import Path
from typing import Any

import redis

from .server import find_server_binary

BUS_OFFSET = 10000


def _free(port: int) -> bool:
    with socket.socket() as s:
        try:
            s.bind(("127.0.0.1", port))
        except OSError:
            return False
    return True


def free_cluster_port(rng: random.Random | None = None, taken: set[int] | None = None) -> int:
    """A port whose cluster bus port (+10000) is free too, both below 65536."""
    rng = rng or random.Random()
    taken = taken or set()
    for _ in range(1000):
        port = rng.randrange(20000, 55000)
        if port in taken or port + BUS_OFFSET in taken:
            continue
        if _free(port) and _free(port + BUS_OFFSET):
            return port
    raise RuntimeError("no free port pair for a cluster node")


def find_cli(server: Path) -> Path | None:
    """`redis-cli` beside the server binary, else on PATH."""
    beside = server.with_name("redis-cli")
    if beside.is_file():
        return beside
    found = shutil.which("redis-cli")
    return Path(found) if found else None


def _replica_online(repl: dict[str, Any]) -> bool:
    """Whether a master's INFO replication names a replica whose first sync is done (`state=
    online`; `wait_bgsave` and `send_bulk` are connected replicas that have no data yet and
    cannot be promoted)."""
    for n in range(int(repl.get("connected_slaves", 0))):
        slave = repl.get(f"slave{n}")
        state = slave.get("state") if isinstance(slave, dict) else None
        if state is None and isinstance(slave, (str, bytes)):  # unparsed "ip=…,state=…"
            text = slave.decode() if isinstance(slave, bytes) else slave
            state = dict(kv.split("=", 1) for kv in text.split(",") if "=" in kv).get("state")
        if str(state) == "online":
            return True
    return False


class LocalCluster:
    """`masters` masters with one replica each, on 127.0.0.1; a context manager. `check` is
    called between the start-up's waits: what it raises (`arena up`'s "a signal asked to stop")
    stops the nodes and propagates."""

    def __init__(
        self,
        masters: int = 3,
        *,
        data_dir: Path | None = None,
        persist: bool = False,
        node_timeout_ms: int = 1000,
        binary: Path | None = None,
        child_setup: Callable[[], None] | None = None,
        password: str | None = None,
        check: Callable[[], None] | None = None,
    ) -> None:
        if masters < 3:
            raise RuntimeError("a Redis Cluster needs at least 3 masters")
        server = binary or find_server_binary()
        if server is None:
            raise RuntimeError("no redis-server >= 6.2 on PATH and none bundled")
        cli = find_cli(server)
        if cli is None:
            raise RuntimeError("no redis-cli beside redis-server or on PATH (package redis-tools)")
        self._tmp = None if data_dir else tempfile.TemporaryDirectory(prefix="arena-cluster-")
        self.data_dir = data_dir or Path(self._tmp.name if self._tmp else ".")
        self.masters = masters
        self.password = password
        self.processes: dict[int, subprocess.Popen[bytes]] = {}
        self._args: dict[int, list[str]] = {}
        self._child_setup = child_setup
        taken: set[int] = set()
        self.ports: list[int] = []
        for _ in range(2 * masters):
            port = free_cluster_port(taken=taken)
            taken |= {port, port + BUS_OFFSET}
            self.ports.append(port)
        durability = ["--appendonly", "yes"] if persist else ["--save", "", "--appendonly", "no"]
        try:
            for port in self.ports:
                folder = self.data_dir / str(port)
                folder.mkdir(parents=True, exist_ok=True)
                args = [str(server), *self._auth_conf(folder)]
                args += ["--port", str(port), "--bind", "127.0.0.1"]
                args += ["--dir", str(folder), "--daemonize", "no", *durability]
                args += ["--cluster-enabled", "yes", "--cluster-config-file", "nodes.conf"]
                args += ["--cluster-node-timeout", str(node_timeout_ms)]
                args += ["--cluster-require-full-coverage", "no"]
                args += ["--repl-diskless-sync-delay", "0"]
                args += ["--logfile", "redis.log"]  # in --dir: a node's last words
                self._args[port] = args
                self._launch(port)
            for port in self.ports:
                self._wait_ping(port, check)
            nodes = [f"127.0.0.1:{p}" for p in self.ports]
            create = [str(cli), "--cluster", "create", *nodes]
            create += ["--cluster-replicas", "1", "--cluster-yes"]
            auth = {"REDISCLI_AUTH": password} if password else {}
            out = subprocess.run(
                create, capture_output=True, text=True, timeout=60, env={**os.environ, **auth}
            )
            if out.returncode != 0:
                raise RuntimeError(f"redis-cli --cluster create failed: {out.stdout}{out.stderr}")
            self.wait_ok(check=check)
        except BaseException:
            self.stop()
            raise

    def _auth_conf(self, folder: Path) -> list[str]:
        """The node's config file holding the password (none without one)."""
        if not self.password:
            return []
        path = folder / "arena-auth.conf"
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_TRUNC, 0o600)
        with os.fdopen(fd, "w") as f:
            f.write(f"requirepass {self.password}\nmasterauth {self.password}\n")
        return [str(path.resolve())]

    @property
    def _auth(self) -> str:
        return f":{self.password}@" if self.password else ""

    def _launch(self, port: int) -> None:
        self.processes[port] = subprocess.Popen(
            self._args[port],
            stdout=subprocess.DEVNULL,
            stderr=subprocess.PIPE,
            start_new_session=self._child_setup is not None,
            preexec_fn=self._child_setup,
        )

    @property
    def url(self) -> str:
        """A URL of one live node (the cluster client discovers the rest)."""
        return self.node_url(next(p for p in self.ports if self.processes[p].poll() is None))

    def node_url(self, port: int) -> str:
        """The URL of the node on `port` (with the password)."""
        return f"redis://{self._auth}127.0.0.1:{port}/0"

    @property
    def nodes_url(self) -> str:
        """One URL naming every node (``redis://127.0.0.1:P1,127.0.0.1:P2,…/0``, see
        `redis_client.node_urls`): what services are given, so a client started after any
        node died still finds the cluster through the others."""
        return f"redis://{self._auth}" + ",".join(f"127.0.0.1:{p}" for p in self.ports) + "/0"

    def nodes(self) -> list[ClusterNodeProcess]:
        """Each node as a process a supervisor can watch and restart."""
        return [ClusterNodeProcess(self, port) for port in self.ports]

    def restart(self, port: int) -> None:
        """Start the node on `port` again with its own nodes.conf (and AOF, if kept): it
        rejoins the cluster, as the replica of whoever took its slots over."""
        proc = self.processes[port]
        if proc.poll() is None:
            return
        if proc.stderr:
            proc.stderr.close()
        self._launch(port)  # returns at once: a node that cannot start exits again

    def _client(self, port: int) -> redis.Redis:
        return redis.Redis(
            port=port, password=self.password, socket_timeout=2, socket_connect_timeout=2
        )

    def _wait_ping(
        self, port: int, check: Callable[[], None] | None, timeout: float = 10.0
    ) -> None:
        deadline = time.monotonic() + timeout
        while time.monotonic() < deadline:
            if check is not None:
                check()
            proc = self.processes[port]
            if proc.poll() is not None:
                err = proc.stderr.read().decode() if proc.stderr else ""
                raise RuntimeError(f"redis-server on {port} exited: {err.strip()}")
            with contextlib.suppress(redis.RedisError, OSError), self._client(port) as c:
                if c.ping():
                    return
            time.sleep(0.05)
        raise RuntimeError(f"redis-server on {port} did not answer PING in time")

    def live_ports(self) -> list[int]:
        """Ports of the nodes still running."""
        return [p for p in self.ports if self.processes[p].poll() is None]

    def roles(self) -> dict[int, str]:
        """Each live node's role (`master` or `slave`), as it says."""
        out = {}
        for port in self.live_ports():
            with contextlib.suppress(redis.RedisError, OSError), self._client(port) as c:
                info: Any = c.info("replication")
                out[port] = str(info["role"])
        return out

    def master_ports(self) -> list[int]:
        """Ports of the live masters that own slots."""
        owners = []
        for port, role in self.roles().items():
            if role != "master":
                continue
            with self._client(port) as c:
                info: Any = c.execute_command("CLUSTER", "INFO")
                text = info.decode() if isinstance(info, bytes) else str(info)
                mine: Any = c.execute_command("CLUSTER", "MYID")
                myid = mine.decode() if isinstance(mine, bytes) else str(mine)
                shards: Any = c.execute_command("CLUSTER", "SLOTS")
                if "cluster_state:ok" in text and any(
                    (s[2][2].decode() if isinstance(s[2][2], bytes) else s[2][2]) == myid
                    for s in shards
                ):
                    owners.append(port)
        return owners

    def wait_ok(
        self,
        timeout: float = 30.0,
        replicas: bool = True,
        check: Callable[[], None] | None = None,
    ) -> None:
        """Until every live node says cluster_state:ok with all slots assigned (and, with
        `replicas`, every master has an in-sync replica). `check` is called between tries:
        what it raises ends the wait."""
        deadline = time.monotonic() + timeout
        last = ""
        while time.monotonic() < deadline:
            if check is not None:
                check()
            try:
                if self._ok(replicas):
                    return
            except (redis.RedisError, OSError) as exc:
                last = repr(exc)
            time.sleep(0.1)
        raise RuntimeError(f"the cluster did not become ok in {timeout:.0f} s {last}")

    def _ok(self, replicas: bool) -> bool:
        synced = 0
        for port in self.live_ports():
            with self._client(port) as c:
                info: Any = c.execute_command("CLUSTER", "INFO")
                text = info.decode() if isinstance(info, bytes) else str(info)
                if "cluster_state:ok" not in text or "cluster_slots_ok:16384" not in text:
                    return False
                repl: Any = c.info("replication")
                if repl["role"] == "master":
                    synced += _replica_online(repl)
        return not replicas or synced >= self.masters

    def converged(self) -> bool:
        """Whether every live node's slot map (CLUSTER SLOTS) names only live nodes as the
        slots' masters. Right after a failover some nodes still map the dead master's slots to
        it for a moment (gossip): a client that reads its topology from one of them then
        (redis-py reads it from a startup node) sends its first command to the dead node."""
        live = set(self.live_ports())
        for port in live:
            try:
                with self._client(port) as c:
                    shards: Any = c.execute_command("CLUSTER", "SLOTS")
            except (redis.RedisError, OSError):
                return False
            if any(int(s[2][1]) not in live for s in shards):
                return False
        return True

    def kill(self, port: int) -> None:
        """`kill -9` the node on `port`."""
        proc = self.processes[port]
        proc.kill()
        proc.wait()

    def stop(self) -> None:
        """Terminate every node and remove the temporary folder."""
        for proc in self.processes.values():
            if proc.poll() is None:
                proc.terminate()
        for proc in self.processes.values():
            try:
                proc.wait(5)
            except subprocess.TimeoutExpired:
                proc.kill()
                proc.wait()
            if proc.stderr:
                proc.stderr.close()
        if self._tmp:
            self._tmp.cleanup()
            self._tmp = None

    def __enter__(self) -> LocalCluster:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


class ClusterNodeProcess:
    """One node of a `LocalCluster` seen as a child process (what `arena up` supervises)."""

    def __init__(self, cluster: LocalCluster, port: int) -> None:
        self.cluster, self.port = cluster, port

    @property
    def name(self) -> str:
        """How the supervisor names it (`redis-PORT`)."""
        return f"redis-{self.port}"

    @property
    def returncode(self) -> int | None:
        """The exit code, None while it runs."""
        return self.cluster.processes[self.port].poll()

    def alive(self) -> bool:
        """Whether the process runs."""
        return self.returncode is None

    def restart(self) -> None:
        """Start it again (see `LocalCluster.restart`)."""
        self.cluster.restart(self.port)

    def last_words(self) -> str:
        """The last line of its log, if any."""
        log = self.cluster.data_dir / str(self.port) / "redis.log"
        try:
            lines = log.read_text(errors="replace").strip().splitlines()
        except OSError:
            return ""
        return lines[-1].strip() if lines else ""
