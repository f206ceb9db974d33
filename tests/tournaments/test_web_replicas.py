"""Several web servers over one tournaments folder (the Kubernetes web server's replicas share
its claim): each resumes the unfinished tournaments made in the browser when it starts, and the
one that takes a tournament's lock (flock) plays it. The others lost a race, which is no error
of the tournament's: the page said "being played by another process" as its error while it ran
(#43 loose end)."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from typing import Any

from services.play.tournaments import TournamentHost
from services.tournaments import journal as files
from services.tournaments.spec import Spec


async def test_the_replica_that_loses_the_lock_leaves_the_tournament_as_it_is(
    tmp_path: Path,
) -> None:
    spec = Spec(ruleset="standard", players=5, games=4, policies=["random"])
    meta = files.Meta(key=spec.key(), spec=asdict(spec), name="Cup", host="web", concurrency=1)
    files.write_meta(tmp_path, meta)
    none: Any = None  # (losing the lock needs no Play)
    other = TournamentHost(none, none, tmp_path, 1, b"s" * 32)
    with files.locked(tmp_path, meta.key):  # a replica plays it
        assert files.running(tmp_path, meta.key)
        await asyncio.wait_for(other._play(meta, asyncio.Event()), 10)  # the race's loser
    after = files.read_meta(tmp_path, meta.key)
    assert after is not None and after.error == "" and not after.stopped
