"""`arena up`: Redis, engine and bot workers, the matchmaker and the replay/web server on one
machine, as child processes of this one.

`Platform` starts and stops the set (also used by `arena tournament` and `arena bench e2e`)
and restarts a service that dies (supervise.py); the command (up_command.py) writes where it
listens to ``VAR/up.json``, which services/running.py reads.
"""

from __future__ import annotations

import fcntl
import os
import secrets
import sys
import tempfile
import time
from dataclasses import dataclass, field
from pathlib import Path
from typing import IO, Any

from ..contracts.tokens import checked_secret, new_secret
from ..eventlog import signing
from ..ports import PortBusy, check_free
from ..redisinfra.cluster_server import LocalCluster
from ..redisinfra.durability import folder_state
from ..redisinfra.redis_client import CLUSTER_ENV
from ..redisinfra.server import RedisServer, die_with_parent, ping
from ..running import Running as Running  # what Platform.start returns
from .procs import StopFlag, Supervisor, replay_ready
from .supervise import Policy, Restarter

LOCK_FILE = "up.lock"  # held (flock) by the process whose platform uses the var folder


@dataclass
class UpConfig:
    """What to start and where. Port 0 means any free port (what tests use)."""

    engines: int = 1
    # engines for the games people sit at (`arena engine --role people`), after the others:
    # engine engines+k listens on engine_port + engines + k, /metrics likewise (issue 44)
    people_engines: int = 0
    bots: int = 1
    var_dir: Path = Path("var")
    namespace: str = "arena"
    host: str = "127.0.0.1"
    redis_url: str | None = None  # default: $REDIS_URL, else start redis-server
    redis_port: int = 0  # the started redis-server's port (0: a free one)
    persist: bool = True  # AOF under VAR/redis; False: a throw-away server in a temp folder
    redis_cluster: int = 0  # > 0: start a Redis Cluster of this many masters (one replica each)
    wait_replicas: int = 0  # engines acknowledge an append once this many replicas have it
    http_port: int = 8080  # web viewer (HTTP/SSE)
    replay_grpc_port: int = 50053  # ReplayService
    matchmaker_port: int = 50052  # Matchmaker
    engine_port: int = 50100  # engine i listens on engine_port + i
    metrics_port: int = 9100  # engine i: +i, bot worker j: +100+j (0: no /metrics at all)
    matchmaker_metrics_port: int = 9300  # the matchmaker's /metrics (0: any free port)
    replay_metrics_port: int = 9301  # the replay server's /metrics (0: any free port)
    bot_policy: str = "heuristic"  # for bot seats whose player id names no policy
    matchmaker: bool = True
    replay: bool = True
    demo: int = 0  # bot games kept running
    think_ms: int = 0  # each bot's pause before it answers (arena up: a watchable pace)
    restart: Policy = field(default_factory=Policy)  # restart with backoff; crash loop: stop
    # spectators are held this far behind the live game on every channel: the engines'
    # GameService and the replay server (web viewer, play API, ReplayService) alike
    spectator_delay_ms: int = 0
    # answers acknowledged only once fsynced (engines --fsync-ack; the started Redis runs
    # appendfsync always); else AOF fsynced every second (docs/durability.md)
    fsync_ack: bool = False
    disk_wait_s: float = 60.0  # stopping: how long to wait for room for Redis's unwritten AOF
    # how many steps below `arena up`'s scheduling priority (nice) the processes that serve only
    # bot games run, so that people's work has the CPU first when it is short: the engines
    # that are not people's engines, while people's engines run (without them every engine
    # serves people: none yields). Off by default: measured on a 2-core machine it slowed the
    # bot games by a quarter and did not lower people's latency (docs/benchmarks.md, "People
    # first", December 7th); an operator whose people wait on CPU can turn it on
    bot_nice: int = 0

    def bot_only_nice(self) -> int:
        """The nice increment of the bot-only processes (see `bot_nice`)."""
        return self.bot_nice if self.people_engines else 0


def _port(base: int, i: int) -> int:
    return base + i if base else 0


def run_secret() -> str:
    """ARENA_SECRET if set (several machines sharing one deployment), else a fresh random one
    for this run: no secret is kept on disk or known in advance, and seat tokens last as long
    as the run does."""
    given = os.environ.get("ARENA_SECRET")
    return checked_secret(given.encode()).decode() if given else new_secret()


class Platform:
    """A set of services as child processes; start() then stop() (or use `with`)."""

    def __init__(self, cfg: UpConfig) -> None:
        self.cfg = cfg
        self.redis: RedisServer | None = None
        self.cluster: LocalCluster | None = None
        self._tmp: tempfile.TemporaryDirectory[str] | None = None
        # only the services that sign or check tokens get the secret: bot workers never do
        self.secret = {"ARENA_SECRET": run_secret()}
        env = {k: v for k, v in os.environ.items() if k != "ARENA_SECRET"}
        # a signal handler's note (`arena up`'s SIGTERM and Ctrl-C during start-up): start()
        # looks at it in every wait and between services, and stops with StopAsked there
        self.stopping = StopFlag()
        self.sup = Supervisor(cfg.var_dir / "logs", env, self.stopping)
        self.restarter: Restarter | None = None
        self._lock: IO[str] | None = None

    def _redis_url(self) -> tuple[str, bool]:
        url = self.cfg.redis_url or os.environ.get("REDIS_URL")
        if self.cfg.redis_cluster and not self.cfg.redis_url:
            return self._start_cluster(self.cfg.redis_cluster), True
        if url:
            if not ping(url):
                raise RuntimeError(f"no Redis answers at {url} (REDIS_URL)")
            return url, False
        if self.cfg.persist:
            data = self.cfg.var_dir / "redis"
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="arena-redis-")
            data = Path(self._tmp.name)
        # a password by default (issue 40): every client URL this platform hands out carries it
        self.redis = RedisServer(
            data,
            self.cfg.redis_port,
            fsync="always" if self.cfg.fsync_ack else "everysec",
            persist=self.cfg.persist,
            password=secrets.token_hex(24),
            check=self.stopping.check,
        )
        return self.redis.url, True

    def _start_cluster(self, masters: int) -> str:
        """A local cluster of `masters` masters and one replica each (AOF under
        VAR/redis-cluster/PORT with persistence); services are told it is one."""
        if self.cfg.persist:
            data = self.cfg.var_dir / "redis-cluster"
        else:
            self._tmp = tempfile.TemporaryDirectory(prefix="arena-cluster-")
            data = Path(self._tmp.name)
        # a password as for one Redis (issue 40): every node requires it, replicas use it
        self.cluster = LocalCluster(
            masters,
            data_dir=data.resolve(),
            persist=self.cfg.persist,
            child_setup=die_with_parent,
            password=secrets.token_hex(24),
            check=self.stopping.check,
        )
        self.sup.env[CLUSTER_ENV] = "1"
        return self.cluster.nodes_url  # every node: a service restarted later finds a live one

    def start(self) -> Running:
        """Start Redis (unless given), engines, bots, matchmaker, replay server; wait for each.
        StopAsked (having stopped what it started) once `stopping` notes a signal."""
        cfg = self.cfg
        self.lock_var()  # before anything starts: one platform per var folder
        try:
            return self._start(cfg)
        except BaseException:
            self.stop()
            raise

    def lock_var(self) -> None:
        """Take the var folder (`VAR/up.lock`, an flock this process holds until `stop`), or
        RuntimeError naming the process that has it: two platforms on one folder would share
        its Redis data, archive and logs (an `arena tournament` whose PING of a busy `arena
        up` failed once started a second one there)."""
        var = self.cfg.var_dir
        var.mkdir(parents=True, exist_ok=True)
        f = (var / LOCK_FILE).open("a+")
        try:
            fcntl.flock(f, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            f.seek(0)
            holder = f.read().strip() or "?"
            f.close()
            raise RuntimeError(
                f"a platform already runs in {var} (pid {holder}); not starting a second one "
                "on the same Redis data, archive and logs: stop it, or use another --var"
            ) from None
        f.seek(0)
        f.truncate()
        f.write(f"{os.getpid()}\n")
        f.flush()
        self._lock = f

    def ports(self) -> list[tuple[int, str]]:
        """Every fixed port this platform will listen on, with the `arena up` flag that sets
        it (port 0, any free one, is left out)."""
        cfg, out = self.cfg, []
        metrics = cfg.metrics_port
        out += [(cfg.redis_port, "--redis-port")] if cfg.redis_url is None else []
        n = cfg.engines + cfg.people_engines
        out += [(_port(cfg.engine_port, i), "--engine-port") for i in range(n)]
        out += [(_port(metrics, i), "--metrics-port") for i in range(n)]
        out += [(_port(metrics, 100 + j), "--metrics-port") for j in range(cfg.bots)]
        if cfg.matchmaker:
            out += [(cfg.matchmaker_port, "--matchmaker-port")]
            out += [(cfg.matchmaker_metrics_port, "--matchmaker-metrics-port")] if metrics else []
        if cfg.replay:
            out += [(cfg.http_port, "--http-port"), (cfg.replay_grpc_port, "--replay-grpc-port")]
            out += [(cfg.replay_metrics_port, "--replay-metrics-port")] if metrics else []
        return [(port, flag) for port, flag in out if port]

    def check_ports(self) -> None:
        """RuntimeError naming the first busy port and its flag, before anything starts (a
        second `arena up` on the same ports fails at once, not half-started)."""
        for port, flag in self.ports():
            try:
                check_free(self.cfg.host, port, flag)
            except PortBusy as exc:
                raise RuntimeError(str(exc)) from None

    def _start(self, cfg: UpConfig) -> Running:
        self.check_ports()
        # the archive key: kept in VAR/keys across runs (eventlog/signing.py); engines sign
        # with it, the web server and the matchmaker check archives against its public half
        key_path, public = signing.keep_in(cfg.var_dir)
        signer_env = {**self.secret, signing.KEY_ENV: str(key_path.resolve())}
        checker_env = {**self.secret, signing.PUBKEY_ENV: public.hex}
        self.stopping.check()
        url, started = self._redis_url()
        self.stopping.check()
        archive = str((cfg.var_dir / "archive").resolve())
        # the Redis URL carries its password: in the children's environment (REDIS_URL, read
        # by every service), never on their command lines, which `ps` shows to every user
        self.sup.env["REDIS_URL"] = url
        common = ["--namespace", cfg.namespace]
        run = Running(os.getpid(), url, cfg.namespace, archive, redis_started=started)
        if self.cluster is not None:
            run.redis_cluster = [self.cluster.node_url(p) for p in self.cluster.ports]
        engines = []
        for i in range(cfg.engines + cfg.people_engines):
            argv = [
                "engine",
                *common,
                "--host",
                cfg.host,
                "--port",
                str(_port(cfg.engine_port, i)),
                "--consumer",
                f"engine-{i}",
                "--archive-dir",
                archive,
                "--spectator-delay-ms",
                str(cfg.spectator_delay_ms),
                "--wait-replicas",
                str(cfg.wait_replicas),
                *(["--fsync-ack"] if cfg.fsync_ack else []),
                *(["--role", "people"] if i >= cfg.engines else []),
            ]
            if cfg.metrics_port:
                argv += ["--metrics-port", str(cfg.metrics_port + i)]
                run.metrics.append(f"http://{cfg.host}:{cfg.metrics_port + i}/metrics")
            # a bot-only engine (people's engines run beside it) yields the CPU to people's work
            nice = cfg.bot_only_nice() if cfg.people_engines and i < cfg.engines else 0
            self.stopping.check()
            engines.append(self.sup.start(f"engine-{i}", argv, env=signer_env, nice=nice))
        for i, c in enumerate(engines):
            port = self.sup.wait_ready(c)["port"]
            c.pin("--port", port)  # a restart listens where the others were told it does
            (run.engines if i < cfg.engines else run.people_engines).append(f"{cfg.host}:{port}")
        # the people's engines: the play API's calls and the bot seats of people's games go
        # there first (--people-engine), the bot-only games stay on the others
        people = ["--people-engine", ",".join(run.people_engines)] if run.people_engines else []
        mm_address = None
        if cfg.matchmaker:
            argv = [
                "matchmaker",
                *common,
                "--host",
                cfg.host,
                "--port",
                str(cfg.matchmaker_port),
                "--consumer",
                "matchmaker-0",
                "--archive-dir",
                archive,
            ]
            if cfg.metrics_port:
                argv += ["--metrics-port", str(cfg.matchmaker_metrics_port)]
            self.stopping.check()
            mm = self.sup.start("matchmaker", argv, env=checker_env)
            info = self.sup.wait_ready(mm)  # the web server's play API needs its address
            mm_address = run.matchmaker = f"{cfg.host}:{info['port']}"
            mm.pin("--port", info["port"])
            if "metrics_port" in info:  # the bound port: the flag may have said 0
                mm.pin("--metrics-port", info["metrics_port"])
                run.metrics.append(f"http://{cfg.host}:{info['metrics_port']}/metrics")
        if cfg.replay:
            argv = [
                "replay-server",
                *common,
                "--host",
                cfg.host,
                "--http-port",
                str(cfg.http_port),
                "--port",
                str(cfg.replay_grpc_port or 0),
                "--archive",
                archive,
                "--spectator-delay-ms",
                str(cfg.spectator_delay_ms),
                # any worker serves any game: the live table asks the first for decisions,
                # people's answers go to the worker a hash of the game picks
                *(["--engine", ",".join(run.engines)] if run.engines else []),
                *people,
                *(["--matchmaker", mm_address] if mm_address else []),
            ]
            if cfg.metrics_port:
                argv += ["--metrics-port", str(cfg.replay_metrics_port)]
            self.stopping.check()
            rp = self.sup.start("replay-server", argv, replay_ready, env=checker_env)
        bots = []
        for j in range(cfg.bots):
            argv = [
                "bots",
                *common,
                "--engine",
                ",".join(run.engines),
                *people,
                "--consumer",
                f"bots-{j}",
                "--policy",
                cfg.bot_policy,
                "--think-ms",
                str(cfg.think_ms),
            ]
            if cfg.metrics_port:
                argv += ["--metrics-port", str(cfg.metrics_port + 100 + j)]
                run.metrics.append(f"http://{cfg.host}:{cfg.metrics_port + 100 + j}/metrics")
            # (at the people's priority: they answer the bot seats of people's tables too, and
            # niced they made people wait longer: docs/benchmarks.md, December 7th)
            self.stopping.check()
            bots.append(self.sup.start(f"bots-{j}", argv))
        for c in bots:
            self.sup.wait_ready(c)
        if cfg.replay:
            info = self.sup.wait_ready(rp)
            run.viewer_url = str(info["url"])
            rp.pin("--http-port", run.viewer_url.rstrip("/").rsplit(":", 1)[1])
            if "metrics_port" in info:
                rp.pin("--metrics-port", info["metrics_port"])
            if cfg.replay_grpc_port:
                run.replay_grpc = f"{cfg.host}:{cfg.replay_grpc_port}"
            if "metrics_port" in info:
                run.metrics.append(f"http://{cfg.host}:{info['metrics_port']}/metrics")
        self.stopping.check()  # a signal after the last wait: not lost either
        return run

    def dead(self) -> list[str]:
        """Names of services that exited on their own."""
        return [c.name for c in self.sup.dead()]

    def keep_alive(self) -> list[str]:
        """Restart the services (and the Redis this started) that died, with backoff; the
        lines that say so. CrashLoop (supervise.py) when one keeps dying."""
        if self.restarter is None:
            nodes = {n.name: n for n in self.cluster.nodes()} if self.cluster else {}
            self.restarter = Restarter(self.sup, self.redis, self.cfg.restart, servers=nodes)
        return self.restarter.check()

    def stop(self, timeout: float = 10.0) -> None:
        """Stop every service (SIGTERM, wait, SIGKILL), then the Redis this started."""
        self.sup.stop(timeout)
        if self.redis is not None:
            wait_for_room(self.redis.url, self.redis.data_dir, self.cfg.disk_wait_s)
            self.redis.stop(timeout)
            self.redis = None
        if self.cluster is not None:
            self.cluster.stop()
            self.cluster = None
        if self._tmp is not None:
            self._tmp.cleanup()
            self._tmp = None
        if self._lock is not None:  # (the flock goes with the file)
            self._lock.close()
            self._lock = None

    def __enter__(self) -> Platform:
        return self

    def __exit__(self, *exc: object) -> None:
        self.stop()


def wait_for_room(url: str, data_dir: Path, wait_s: float) -> bool:
    """Before stopping the Redis this started: while it cannot write its AOF (its disk is full
    or unwritable), the last writes it took live only in its memory and are written once there
    is room, so stopping it now would lose them. Say so and wait up to `wait_s` for room;
    whether its AOF is written (True also when there was nothing to wait for)."""
    import redis

    def failing() -> bool:
        try:
            with redis.Redis.from_url(url, socket_timeout=2) as client:
                info: Any = client.info("persistence")
        except (redis.RedisError, OSError):
            return False  # gone or away: nothing this can save
        return bool(int(info.get("aof_enabled", 0))) and info.get("aof_last_write_status") != "ok"

    if not failing():
        return True
    print(
        f"arena up: Redis cannot write its AOF in {data_dir} ({folder_state(data_dir) or 'err'}): "
        f"what it took last is only in its memory; waiting up to {wait_s:.0f} s for room "
        "before stopping it (free space now)",
        file=sys.stderr,
        flush=True,
    )
    deadline = time.monotonic() + wait_s
    while time.monotonic() < deadline:
        time.sleep(0.5)
        if not failing():
            print("arena up: Redis wrote its AOF; stopping it", file=sys.stderr, flush=True)
            return True
    print(
        f"arena up: stopping Redis with its AOF unwritten: the writes since {data_dir} filled "
        "are lost",
        file=sys.stderr,
        flush=True,
    )
    return False
