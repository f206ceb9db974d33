"""The running platform, as the tools find it: ``VAR/up.json``, which `arena up` writes.

`arena up` (services/platform/up_command.py) writes where its services listen to
``VAR/up.json`` (one `Running`, as JSON) and removes it when it stops; the tools (export,
verify, archive, ratings, accounts, tournaments) read it with `find_running` to reach the same
Redis without being told, unless given ``--redis-url``.
"""

from __future__ import annotations

import json
import os
from dataclasses import asdict, dataclass, field
from pathlib import Path

from .redisinfra.server import ping

STATE_FILE = "up.json"


@dataclass
class Running:
    """Where a started platform listens (also the content of VAR/up.json)."""

    pid: int
    redis_url: str
    namespace: str
    archive_dir: str
    viewer_url: str | None = None
    matchmaker: str | None = None
    replay_grpc: str | None = None
    engines: list[str] = field(default_factory=list)
    people_engines: list[str] = field(default_factory=list)  # (arena up --people-engines)
    metrics: list[str] = field(default_factory=list)
    redis_started: bool = False
    redis_cluster: list[str] = field(default_factory=list)  # the started cluster's node URLs

    def to_json(self) -> str:
        """One JSON line."""
        return json.dumps(asdict(self))


def find_running(var_dir: Path) -> Running | None:
    """The platform an `arena up` in ``var_dir`` runs, if its process lives and Redis answers."""
    path = var_dir / STATE_FILE
    try:
        run = Running(**json.loads(path.read_text()))
    except (OSError, ValueError, TypeError):
        return None
    try:
        os.kill(run.pid, 0)
    except (ProcessLookupError, PermissionError):
        return None
    for url in [run.redis_url, *run.redis_cluster]:  # a cluster: any live node will do
        if ping(url):
            run.redis_url = url
            return run
    return None
