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
from ..targets import Targets
from . import botapi, tournamentschema
from .accounts import Accounts
from .http import mount as mount_play
from .service import Play
from .tournamentroutes import TOURNAMENT_ROUTES
from .tournaments import TournamentHost, TournamentRouter


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
    accounts = Accounts(play.sessions.client, args.namespace)
    host = CountingHost(play, accounts, tournaments_folder(args), Targets(engines), secret)
    host.resume_all()  # (tournaments.mount, with the engines counted)

    async def close() -> None:
        await host.close()
        await play.close()

    return play, [router, bots, TournamentRouter(play, host, TOURNAMENT_ROUTES)], close


class CountingHost(TournamentHost):
    """The tournaments, their games in flight sized by the engine workers there are when one is
    created or resumed: ``--engine`` with its names resolved (services/targets.py). A deployment
    names every engine by one DNS name (compose's ``engine:50051``), which counted as one: a
    tournament on four engines kept one engine's games in flight."""

    def __init__(
        self, play: Play, accounts: Accounts, folder: Path, engines: Targets, secret: bytes
    ) -> None:
        super().__init__(play, accounts, folder, len(engines.current()), secret)
        self.workers = engines

    async def count(self) -> int:
        """The engine workers now (a name that does not resolve counts as one)."""
        if self.workers.due():
            await self.workers.refresh()
        self.engines = max(1, len(self.workers.current()))
        return self.engines

    async def create(
        self, organiser: str, body: tournamentschema.NewTournament
    ) -> tournamentschema.TournamentSummary:
        """See TournamentHost.create."""
        await self.count()
        return await super().create(organiser, body)

    async def resume(self, key: str) -> tournamentschema.TournamentSummary:
        """See TournamentHost.resume."""
        await self.count()
        return await super().resume(key)
