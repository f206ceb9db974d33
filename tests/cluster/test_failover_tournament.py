"""#19's done-when: a tournament through `arena tournament` on a 3-master Redis Cluster, one
master killed (`kill -9`) mid-run and its replica promoted; every game finishes, every archive
verifies, every game is rated exactly once. 20 games here, 100 under `-m slow`."""

from __future__ import annotations

import json
import subprocess
import time
from pathlib import Path
from typing import Any

import pytest
import redis
from process_helpers import arena, arena_up

from services.contracts.streams import stream_keys
from services.redisinfra.cluster_server import LocalCluster
from services.verify import verify


def _journal(var: Path) -> list[dict[str, Any]]:
    files = list((var / "tournaments").glob("*.jsonl"))
    if not files:
        return []
    return [json.loads(x) for x in files[0].read_text().splitlines() if x.strip()]


def _rated(cluster: LocalCluster, mode: str) -> list[str]:
    """Game ids in the ratings' per-game records of `mode` (one field per counted game)."""
    client = redis.RedisCluster.from_url(cluster.url)
    try:
        return [k.decode() for k in client.hkeys(f"arena:{{rt}}:res:{mode}")]
    finally:
        client.close()


def _shared_lengths(cluster: LocalCluster) -> dict[str, int]:
    """Entries left in the matches and decisions streams, over every partition."""
    client = redis.RedisCluster.from_url(cluster.url)
    try:
        return {
            name: sum(int(client.xlen(k)) for k in stream_keys("arena", name))
            for name in ("matches", "decisions")
        }
    finally:
        client.close()


def tournament_with_failover(cluster: LocalCluster, var: Path, games: int) -> dict[str, Any]:
    """Run `games` games against `cluster` through `arena up` + `arena tournament`, killing one
    master (not the one the URL names) after a fifth of them; check archives and ratings."""
    with arena_up(
        *("--redis-url", cluster.url, "--var", str(var), "--no-persist"),
        *("--engines", "2", "--bots", "1", "--think-ms", "0"),
    ):
        try:
            t0 = time.monotonic()
            tour = arena(
                "tournament",
                "--var",
                str(var),
                "--ruleset",
                "standard",
                "--players",
                "4",
                "--games",
                str(games),
                "--policies",
                "heuristic,random",
                "--seed",
                "19",
                "--json",
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            deadline = time.monotonic() + 120 + 12 * games  # generous: a loaded 2-core machine
            while len(_journal(var)) < max(1, games // 5):
                assert tour.poll() is None, tour.communicate()[1]
                assert time.monotonic() < deadline, "no games finished before the failover"
                time.sleep(0.1)
            url_port = int(cluster.url.rsplit(":", 1)[1].split("/")[0])
            victim = next(p for p in cluster.master_ports() if p != url_port)
            done_at_kill = len(_journal(var))
            cluster.kill(victim)
            killed_at = time.monotonic()
            out, err = tour.communicate(timeout=max(1.0, deadline - time.monotonic()))
            assert tour.returncode == 0, err
            result: dict[str, Any] = json.loads(out)
            assert result["games_done"] == games
            roles = cluster.roles()
            assert victim not in roles and list(roles.values()).count("master") == 3  # promoted
            ids = {p["game"] for p in _journal(var)}
            assert len(ids) == games
            while True:  # a game is finished once its last answer is in; the archive follows (a
                # game whose engine lost Redis mid-archive is archived by the finishing sweep)
                files = {f.stem: f for f in (var / "archive").glob("*.arena")}
                if ids <= set(files) or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert ids <= set(files), sorted(ids - set(files))
            for gid in ids:
                report = verify(files[gid])
                assert report.ok, (gid, report.divergence)
            while True:  # the matchmaker rates each finished game (from the finished partitions)
                rated = _rated(cluster, "standard-4")
                if set(rated) >= ids or time.monotonic() > deadline:
                    break
                time.sleep(0.2)
            assert sorted(rated) == sorted(ids), "a game rated twice or not at all"
            # the engines' keepers trim the shared streams on the cluster: once every match and
            # bot decision is acked, none is left (a keeper's round once failed on every cluster)
            left = _shared_lengths(cluster)
            while any(left.values()) and time.monotonic() < deadline:
                time.sleep(0.5)
                left = _shared_lengths(cluster)
            assert left == {"matches": 0, "decisions": 0}, left
            return {
                "games": games,
                "done_at_kill": done_at_kill,
                "after_kill_s": round(time.monotonic() - killed_at, 1),
                "total_s": round(time.monotonic() - t0, 1),
            }
        finally:
            if "tour" in locals() and tour.poll() is None:
                tour.kill()
                tour.communicate()


def test_tournament_survives_a_master_failover(own_cluster: LocalCluster, tmp_path: Path) -> None:
    tournament_with_failover(own_cluster, tmp_path / "var", 20)


@pytest.mark.slow
def test_hundred_game_tournament_survives_a_master_failover(
    own_cluster: LocalCluster, tmp_path: Path
) -> None:
    figures = tournament_with_failover(own_cluster, tmp_path / "var", 100)
    print(json.dumps(figures))
