"""The web server's HTTP API beside the replay server's own routes: the play API (people at
tables), the Bot API (botapi.py) and the tournaments (tournaments.py), all over one `Play`
(the same Redis, matchmaker and engines). `arena replay-server` mounts this when it has a
matchmaker and engines to talk to."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable
from pathlib import Path

import redis.asyncio as aioredis

from ..replay.core import Replay
from ..replay.http import Router
from . import botapi, tournaments
from .http import mount as mount_play
from .service import Play


def tournaments_folder(args: argparse.Namespace) -> Path:
    """Where the tournaments' files are: ``--tournaments``, else beside the archive folder
    (`arena up`: VAR/tournaments, the folder `arena tournament` writes)."""
    given = getattr(args, "tournaments", None)
    return Path(given) if given else Path(args.archive).resolve().parent / "tournaments"


def mount(
    replay: Replay, client: aioredis.Redis, args: argparse.Namespace, engines: list[str]
) -> tuple[Play, list[Router], Callable[[], Awaitable[None]]]:
    """The routers to serve, and what closes them (`args`: the replay server's flags)."""
    play, router = mount_play(replay, client, args, engines)
    secret = replay.secret
    assert secret is not None  # mount_play refuses a server without one
    bots = botapi.mount(play, args.namespace, secret)
    host = tournaments.mount(play, args.namespace, tournaments_folder(args), len(engines), secret)

    async def close() -> None:
        await host.host.close()
        await play.close()

    return play, [router, bots, host], close
