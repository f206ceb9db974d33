"""A cluster outlives the node its URL named: services are given every node (one URL naming
them all), so a service started after that node died still finds the cluster; and
`arena up --redis-cluster N` restarts a node that died, which rejoins as a replica."""

from __future__ import annotations

import json
import os
import signal
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from process_helpers import FREE_PORTS, arena, descendants, until
from redis.backoff import NoBackoff
from redis.retry import Retry

from services.redisinfra.cluster_server import LocalCluster
from services.redisinfra.redis_client import connect, node_urls
from services.redisinfra.server import ping


async def test_a_client_started_after_the_first_node_died_finds_the_cluster(
    own_cluster: LocalCluster,
) -> None:
    nodes = own_cluster.nodes_url
    assert node_urls(nodes) == [f"redis://127.0.0.1:{p}/0" for p in own_cluster.ports]
    first = own_cluster.ports[0]
    assert first in own_cluster.master_ports()
    own_cluster.kill(first)
    until(lambda: len(own_cluster.master_ports()) == 3, 30, "the replica's promotion")
    # and every node knows of it: until then a node may still map the slots to the dead master,
    # and a client that read its topology from that node failed its first command (1 run in 3)
    until(own_cluster.converged, 30, "every node learning of the promotion")
    assert not ping(f"redis://127.0.0.1:{first}/0") and ping(nodes)
    client = connect(nodes)  # as a service restarted now would
    try:
        for i in range(64):  # keys over every master's slots
            await client.set(f"k{i}", i)
        assert [int(await client.get(f"k{i}")) for i in range(64)] == list(range(64))
    finally:
        await client.aclose()


def _node_pid(up_pid: int, port: int) -> int:
    """The redis-server below `arena up` serving `port` (it retitles itself "HOST:PORT")."""
    for pid in descendants(up_pid):
        try:
            cmdline = Path(f"/proc/{pid}/cmdline").read_bytes().replace(b"\0", b" ")
        except OSError:
            continue
        if b"redis-server" in cmdline and f":{port}".encode() in cmdline:
            return pid
    raise AssertionError(f"no redis-server on {port} below arena up")


def _cmdline(pid: int) -> bytes:
    return Path(f"/proc/{pid}/cmdline").read_bytes()


def _refuses_without_password(port: int) -> None:
    # no retries: redis-py retries an AuthenticationError (a ConnectionError) with backoff by
    # default, 4.6 s a refusal, and the six nodes took 24 s of the default suite
    with (
        redis.Redis(port=port, socket_timeout=5, retry=Retry(NoBackoff(), 0)) as anonymous,
        pytest.raises(redis.AuthenticationError),
    ):
        anonymous.ping()


def _replica_synced(node: redis.Redis) -> bool:
    info: Any = node.info("replication")
    return info["role"] == "slave" and info.get("master_link_status") == "up"


def test_arena_up_restarts_a_dead_cluster_node(tmp_path: Path) -> None:
    up = arena(
        "up",
        "--var",
        str(tmp_path / "var"),
        "--redis-cluster",
        "3",
        "--engines",
        "1",
        "--bots",
        "1",
        "--no-persist",
        "--json",
        *FREE_PORTS,
        stdout=subprocess.PIPE,
        stderr=(tmp_path / "up.err").open("w"),
    )
    try:
        assert up.stdout is not None
        run = json.loads(up.stdout.readline())
        assert len(node_urls(run["redis_url"])) == 6, run  # the services get every node
        # a password, as a single Redis has: every URL handed out carries it, every node
        # refuses a client without it, and no node shows it on its command line
        password = run["redis_url"].split("://:", 1)[1].split("@", 1)[0]
        assert len(password) >= 32, run["redis_url"]
        ports = [int(url.rsplit(":", 1)[1].split("/")[0]) for url in run["redis_cluster"]]
        assert run["redis_cluster"] == [f"redis://:{password}@127.0.0.1:{p}/0" for p in ports]
        for p in ports:
            _refuses_without_password(p)
            assert password.encode() not in _cmdline(_node_pid(up.pid, p))
        port = ports[-1]
        os.kill(_node_pid(up.pid, port), signal.SIGKILL)
        err = tmp_path / "up.err"
        until(lambda: f"redis-{port} restarted" in err.read_text(), 30, "the node's restart")
        url = run["redis_cluster"][-1]
        until(lambda: ping(url), 30, "the node answering again")
        assert f"redis-{port} exited (killed by SIGKILL)" in err.read_text()
        _refuses_without_password(port)
        # it rejoined as a replica that authenticates to its master (masterauth)
        with redis.Redis.from_url(url) as node:
            until(lambda: _replica_synced(node), 30, "the restarted node syncing")
        assert up.poll() is None
    finally:
        up.send_signal(signal.SIGTERM)
        try:
            up.wait(30)
        except subprocess.TimeoutExpired:
            up.kill()
            up.wait()


def test_a_master_killed_as_soon_as_the_cluster_is_up_is_failed_over(
    own_cluster: LocalCluster,
) -> None:
    """LocalCluster is up only once every master's replica has its first sync done: a replica
    still waiting for it (Redis 7 delays a diskless sync 5 s) is never promoted, so a master
    killed then left its slots dead for good (the 10-game failover tournament, its master
    killed after the second game, gave up after 120 s of ConnectionError 4 runs of 6)."""
    victim = own_cluster.master_ports()[0]
    own_cluster.kill(victim)
    deadline = time.monotonic() + 15
    while list(own_cluster.roles().values()).count("master") < 3:
        assert time.monotonic() < deadline, f"no replica promoted: {own_cluster.roles()}"
        time.sleep(0.1)
    assert victim not in own_cluster.roles()
