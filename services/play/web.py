"""The web server's HTTP API beside the replay server's own routes: the play API (people at
tables) and the Bot API (botapi.py), over one `Play` (the same Redis, matchmaker and engines).
`arena replay-server` mounts this when it has a matchmaker and engines to talk to."""

from __future__ import annotations

import argparse
from collections.abc import Awaitable, Callable

import redis.asyncio as aioredis

from ..replay.core import Replay
from ..replay.http import Router
from . import botapi
from .http import mount as mount_play
from .service import Play


def mount(
    replay: Replay, client: aioredis.Redis, args: argparse.Namespace, engines: list[str]
) -> tuple[Play, list[Router], Callable[[], Awaitable[None]]]:
    """The routers to serve, and what closes them (`args`: the replay server's flags)."""
    play, router = mount_play(replay, client, args, engines)
    secret = replay.secret
    assert secret is not None  # mount_play refuses a server without one
    bots = botapi.mount(play, args.namespace, secret)
    return play, [router, bots], play.close
