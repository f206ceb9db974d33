"""Several web servers over one tournaments folder (the Kubernetes web server's replicas share
its claim): each resumes the unfinished tournaments made in the browser when it starts, and the
one that takes a tournament's lock (flock) plays it. The others lost a race, which is no error
of the tournament's: the page said "being played by another process" as its error while it ran
(#43 loose end). An organiser's stop reaches the replica that plays it through the meta file,
whichever replica received it."""

from __future__ import annotations

import asyncio
from dataclasses import asdict
from pathlib import Path
from types import SimpleNamespace
from typing import Any

import pytest

from services.errors import Refused
from services.play.tournaments import TournamentHost
from services.tournaments import journal as files
from services.tournaments import runner
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


def _host(folder: Path) -> TournamentHost:
    """A web server's tournament host whose plays need no platform (runner.play is faked)."""
    play: Any = SimpleNamespace(replay=SimpleNamespace(archive_dir=folder / "archive"))
    accounts: Any = SimpleNamespace(namespace="t", client=None)
    return TournamentHost(play, accounts, folder, 1, b"s" * 32)


async def test_a_stop_received_by_another_replica_stops_the_one_that_plays_it(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Replica A plays the tournament; the organiser's stop lands on replica B (the Ingress's
    choice): B answers with the summary (stopped) instead of 409, and A's loop sees the stop
    within a poll of the meta file and ends, leaving the tournament stopped; A's own summary
    and a restart of either replica do not play it again."""
    seen: list[asyncio.Event] = []

    async def fake_play(*args: Any, stop: asyncio.Event, **kw: Any) -> int:
        seen.append(stop)
        await stop.wait()  # the real loop: nothing new starts once stop is set
        return 0

    monkeypatch.setattr(runner, "play", fake_play)
    spec = Spec(ruleset="standard", players=5, games=4, policies=["random"])
    meta = files.Meta(key=spec.key(), spec=asdict(spec), name="Cup", host="web", concurrency=1)
    files.write_meta(tmp_path, meta)
    a, b = _host(tmp_path), _host(tmp_path)
    a.resume_all()  # A starts first and takes the lock
    for _ in range(100):
        if seen:
            break
        await asyncio.sleep(0.02)
    assert seen and files.running(tmp_path, meta.key) and files.holder(tmp_path, meta.key) == "web"
    b.resume_all()  # B's start: it is running, B leaves it
    assert not b.tasks
    summary = await b.stop(meta.key)
    assert summary.stopped and summary.running  # (A's games in flight still end)
    await asyncio.wait_for(a.tasks[meta.key], 10)  # A noticed
    assert seen[0].is_set() and not files.running(tmp_path, meta.key)
    after = files.read_meta(tmp_path, meta.key)
    assert after is not None and after.stopped and after.error == ""
    c = _host(tmp_path)
    c.resume_all()  # a restart does not resume a stopped tournament
    assert not c.tasks and len(seen) == 1
    with pytest.raises(Refused) as nobody:  # stopping it again: nobody plays it
        await b.stop(meta.key)
    assert nobody.value.code == "FAILED_PRECONDITION"


async def test_a_web_server_does_not_claim_to_stop_a_command_line_run(tmp_path: Path) -> None:
    """`arena tournament` holds the lock (no holder written): it reads no meta file, so a web
    server's stop would be a lie; 409 names the command instead, and the meta is unchanged."""
    spec = Spec(ruleset="standard", players=5, games=4, policies=["random"])
    meta = files.Meta(key=spec.key(), spec=asdict(spec), name="Cup", host="web", concurrency=1)
    files.write_meta(tmp_path, meta)
    with files.locked(tmp_path, meta.key), pytest.raises(Refused) as refused:
        await _host(tmp_path).stop(meta.key)
    assert refused.value.code == "FAILED_PRECONDITION" and "arena tournament" in str(refused.value)
    after = files.read_meta(tmp_path, meta.key)
    assert after is not None and not after.stopped
