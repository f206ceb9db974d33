"""A real Redis Cluster for the cluster tests: 3 masters and 3 replicas, `redis-server`
processes on free loopback ports joined by `redis-cli --cluster create` (no mocks). Tests that
kill a node start a cluster of their own; the rest share one for the session."""

from __future__ import annotations

from collections.abc import Iterator

import pytest

from services.redisinfra.cluster_server import LocalCluster, find_cli
from services.redisinfra.server import find_server_binary


def cluster_or_skip() -> LocalCluster:
    """A fresh 3-master cluster; a skip naming the package when a program is missing."""
    binary = find_server_binary()
    if binary is None or find_cli(binary) is None:
        have = "redis-server" if binary else "nothing"
        pytest.skip(f"needs redis-server and redis-cli (Debian package redis-server); found {have}")
    return LocalCluster(3)


@pytest.fixture(scope="session")
def redis_cluster() -> Iterator[LocalCluster]:
    """A 3-master, 3-replica cluster shared by the session (do not kill its nodes)."""
    cluster = cluster_or_skip()
    try:
        yield cluster
    finally:
        cluster.stop()


@pytest.fixture
def own_cluster() -> Iterator[LocalCluster]:
    """A 3-master, 3-replica cluster for one test (it may kill nodes)."""
    cluster = cluster_or_skip()
    try:
        yield cluster
    finally:
        cluster.stop()
