"""Tournaments in the browser: an organiser creates one, the web server plays it, everyone
watches its page. The same tournament as `arena tournament`'s: the spec, the journal and the
loop are services/tournaments' (one key for one spec, one journal file per tournament in the
folder both share, `VAR/tournaments`, whose lock lets one process play it at a time), so a
tournament started from the command line shows here live, and one made here is continued by
the same command line.

The web server plays the tournaments made here (`host: web`) as tasks of its own, and resumes
the unfinished ones when it starts (unless an organiser stopped them). Several web servers
(replicas) may share the folder: the one holding a tournament's lock plays it, and an
organiser's stop, received by any of them, is the meta file's `stopped`, which the playing one
reads every STOP_POLL_S. Everything a page shows
is read from the folder: the meta file (spec, name, entrants' names), the journal (finished
games: standings, results, CSV) and the lock (is it running); the games in flight are the live
games whose ids are the tournament's.
"""

from __future__ import annotations

import asyncio
import contextlib
import csv
import io
import logging
import time
from collections.abc import AsyncIterator
from dataclasses import asdict
from pathlib import Path
from typing import Any

import msgspec

from ..errors import Refused
from ..readside.access import NotFound
from ..replay.http import Request, send
from ..tournaments import journal as files
from ..tournaments import runner
from ..tournaments.spec import Spec, SpecError, kind_of
from ..tournaments.standings import standings
from . import tournamentschema as ts
from .accounts import Accounts
from .apiroute import ApiRoute
from .mounted import Mounted, bearer
from .service import Play

log = logging.getLogger(__name__)
GAMES_PER_ENGINE = 100  # in flight per engine worker (all-bot tournaments)
EXTERNAL_PER_ENGINE = 20  # with bot accounts or people among the entrants
POLL_S = 1.0  # a page's stream looks at the journal this often
LIVE_CACHE_S = 2.0
STOP_POLL_S = 1.0  # the replica playing a tournament reads its meta file this often (a stop)
WEB = "web"  # the lock's holder while a web server plays the tournament
PERSON_SEAT_TTL_MS = 24 * 3600 * 1000
_json = msgspec.json.Encoder()


class TournamentHost:
    """The tournaments of ``folder``: the ones made here are played by this process."""

    def __init__(
        self, play: Play, accounts: Accounts, folder: Path, engines: int, secret: bytes
    ) -> None:
        self.play = play
        self.accounts = accounts
        self.folder = folder
        self.engines = max(1, engines)
        self.secret = secret
        self.tasks: dict[str, asyncio.Task[None]] = {}
        self.stops: dict[str, asyncio.Event] = {}
        self._live: tuple[float, list[str]] = (0.0, [])

    # ---- playing ------------------------------------------------------------------------------

    def resume_all(self) -> None:
        """Resume every tournament made here that is neither finished nor stopped (a restart)."""
        for meta in files.all_meta(self.folder):
            if meta.host == "web" and not meta.stopped and not self._complete(meta):
                self._start(meta)

    def _complete(self, meta: files.Meta) -> bool:
        return len(self._journal(meta.key)) >= int(meta.spec.get("games", 0))

    def _journal(self, key: str) -> dict[int, Any]:
        return files.read_journal(self.folder / f"{key}.jsonl")

    def _running(self, key: str) -> bool:
        task = self.tasks.get(key)
        return (task is not None and not task.done()) or files.running(self.folder, key)

    def _start(self, meta: files.Meta) -> None:
        if self._running(meta.key):
            return
        stop = self.stops[meta.key] = asyncio.Event()
        self.tasks[meta.key] = asyncio.create_task(self._play(meta, stop))

    async def _play(self, meta: files.Meta, stop: asyncio.Event) -> None:
        spec = Spec(**meta.spec)
        journal = self.folder / f"{meta.key}.jsonl"
        watch: asyncio.Task[None] | None = None
        try:
            with files.locked(self.folder, meta.key, WEB):
                watch = asyncio.create_task(self._watch_stop(meta.key, stop))
                _, todo = runner.todo_of(spec, journal)
                await runner.play(
                    spec,
                    "",
                    self.accounts.namespace,
                    self.play.replay.archive_dir or Path("var/archive"),
                    todo,
                    journal,
                    meta.concurrency or self.concurrency(spec, 0),
                    names=meta.names,
                    seat_person=self.seat_person,
                    stop=stop,
                    client=self.accounts.client,
                )
            error = ""
        except files.Busy as exc:  # another web server replica (or `arena tournament`) won
            log.info("%s", exc)  # the race to play it: it is running, and no error of its own
            return
        except asyncio.CancelledError:
            raise
        except Exception as exc:  # noqa: BLE001 - said on the page, and logged once
            log.exception("tournament %s", meta.key)
            error = str(exc) or type(exc).__name__
        finally:
            if watch is not None:
                watch.cancel()
        fresh = files.read_meta(self.folder, meta.key) or meta
        if fresh.error != error:
            fresh.error = error
            files.write_meta(self.folder, fresh)

    async def _watch_stop(self, key: str, stop: asyncio.Event) -> None:
        """Set ``stop`` once the meta file says stopped (an organiser's stop that another
        replica received)."""
        while not stop.is_set():
            await asyncio.sleep(STOP_POLL_S)
            meta = files.read_meta(self.folder, key)
            if meta is not None and meta.stopped:
                log.info("tournament %s stopped (through another web server)", key)
                stop.set()

    def concurrency(self, spec: Spec, engines: int) -> int:
        """Games in flight for ``engines`` of the platform's engine workers (0: all)."""
        n = min(engines or self.engines, self.engines)
        return (EXTERNAL_PER_ENGINE if spec.external else GAMES_PER_ENGINE) * n

    async def seat_person(self, player: str, game: str, seat: int) -> bool:
        """Seat a person (a guest) at ``seat`` of ``game``: their session's seat, as the
        matchmaker's would be (a seat token the server mints again when it needs it). False while
        they wait at a table or play a game that is not over."""
        sessions = self.play.sessions
        now = await sessions.seat(player)
        if now is not None and now.game != game:
            try:
                if not (await self.play.replay.feed(now.game)).over:
                    return False
            except NotFound:
                return False  # matched elsewhere, about to start
        if await sessions.ticket(player) is not None:
            return False
        await sessions.seat_at(player, game, seat, PERSON_SEAT_TTL_MS)
        return True

    async def close(self) -> None:
        """Stop playing (the journal keeps what finished; the next start resumes)."""
        for task in self.tasks.values():
            task.cancel()
        for task in self.tasks.values():
            with contextlib.suppress(asyncio.CancelledError, Exception):
                await task

    # ---- organisers ---------------------------------------------------------------------------

    async def _names(self, spec: Spec) -> dict[str, str]:
        """The names of the external entrants; 400 naming an unknown one."""
        out = {}
        for e in spec.external:
            if kind_of(e) == "bot":
                bot = await self.accounts.bot(e)
                if bot is None:
                    raise Refused("INVALID_ARGUMENT", f"no bot account {e}")
                out[e] = bot.name
            else:
                name = (await self.play.sessions.record(e)).get("name")
                if not name:
                    raise Refused("INVALID_ARGUMENT", f"no person {e} (a guest's player id)")
                out[e] = name
        return out

    async def create(self, organiser: str, body: ts.NewTournament) -> ts.TournamentSummary:
        """Create the tournament (or continue the one with the same spec) and play it here."""
        spec = Spec(
            ruleset=body.ruleset,
            players=body.players,
            games=body.games,
            policies=list(body.entrants),
            seed=body.seed,
            assign=body.assign,
            options=dict(body.options),
            time_limit_ms=body.time_limit_ms,
            hosted_after=body.hosted_after,
        )
        try:
            spec.check()
        except SpecError as exc:
            raise Refused("INVALID_ARGUMENT", str(exc)) from None
        names = await self._names(spec)
        key = spec.key()
        if self._running(key):
            raise Refused("FAILED_PRECONDITION", f"tournament {key} is being played already")
        meta = files.read_meta(self.folder, key)
        if meta is None:
            meta = files.Meta(
                key=key,
                spec=asdict(spec),
                name=body.name.strip() or f"{spec.ruleset} {spec.players}",
                organiser=organiser,
                created_ms=int(time.time() * 1000),
            )
        meta.spec, meta.host, meta.stopped, meta.error = asdict(spec), "web", False, ""
        meta.names = {**meta.names, **names}
        meta.concurrency = self.concurrency(spec, body.engines)
        files.write_meta(self.folder, meta)
        self._start(meta)
        return self.summary(meta)

    def _meta(self, key: str) -> files.Meta:
        meta = files.read_meta(self.folder, key)
        if meta is None:
            raise Refused("NOT_FOUND", f"no tournament {key!r}")
        return meta

    async def stop(self, key: str) -> ts.TournamentSummary:
        """Stop playing it: nothing new starts (the games in flight finish on the platform).
        Played by another web server (replica), it stops within STOP_POLL_S of the meta file
        saying so; 409 if nobody plays it, or `arena tournament` does (stop that command)."""
        meta = self._meta(key)
        task = self.tasks.get(key)
        if task is not None and not task.done():
            self.stops[key].set()
        elif not files.running(self.folder, key):
            raise Refused("FAILED_PRECONDITION", "that tournament is not being played")
        elif files.holder(self.folder, key) != WEB:
            raise Refused(
                "FAILED_PRECONDITION",
                "that tournament is being played by `arena tournament`: stop that command",
            )
        meta.stopped = True
        files.write_meta(self.folder, meta)
        return self.summary(meta)

    async def resume(self, key: str) -> ts.TournamentSummary:
        """Play what the journal lacks, here."""
        meta = self._meta(key)
        if self._running(key):
            raise Refused("FAILED_PRECONDITION", "that tournament is being played already")
        meta.host, meta.stopped, meta.error = "web", False, ""
        meta.concurrency = meta.concurrency or self.concurrency(Spec(**meta.spec), 0)
        files.write_meta(self.folder, meta)
        self._start(meta)
        return self.summary(meta)

    # ---- everyone -----------------------------------------------------------------------------

    def summary(self, meta: files.Meta, done: int | None = None) -> ts.TournamentSummary:
        """What a list shows of a tournament."""
        spec = meta.spec
        entrants = [
            ts.Entrant(id=e, kind=kind_of(e) or "?", name=meta.names.get(e, e))
            for e in dict.fromkeys(spec.get("policies", []))
        ]
        return ts.TournamentSummary(
            key=meta.key,
            name=meta.name,
            organiser=meta.organiser,
            created_ms=meta.created_ms,
            host=meta.host,
            ruleset=str(spec.get("ruleset", "")),
            players=int(spec.get("players", 0)),
            games=int(spec.get("games", 0)),
            done=len(self._journal(meta.key)) if done is None else done,
            running=self._running(meta.key),
            stopped=meta.stopped,
            entrants=entrants,
            page=f"/#/tournament/{meta.key}",
        )

    def listing(self) -> ts.Tournaments:
        """Every tournament, newest first."""
        return ts.Tournaments([self.summary(m) for m in files.all_meta(self.folder)])

    async def _live_ids(self) -> list[str]:
        at, ids = self._live
        if time.monotonic() - at > LIVE_CACHE_S:
            ids = await self.play.replay.live_ids()
            self._live = (time.monotonic(), ids)
        return ids

    async def get(self, key: str) -> ts.Tournament:
        """A tournament in full."""
        meta = self._meta(key)
        games = self._journal(key)
        spec = Spec(**meta.spec)
        played = [games[i] for i in sorted(games)]
        prefix = spec.game_id(0)[:-1]
        live = sorted(g for g in await self._live_ids() if g.startswith(prefix))
        finished = {p.game for p in played}
        return ts.Tournament(
            summary=self.summary(meta, len(played)),
            spec=meta.spec | {"error": meta.error} if meta.error else meta.spec,
            standings=standings(played),
            results=[
                ts.GameRow(
                    i=p.i, game=p.game, seats=p.seats, roles=p.roles, winners=p.winners, draw=p.draw
                )
                for p in played
            ],
            live=[g for g in live if g not in finished],
        )

    def csv(self, key: str) -> bytes:
        """Every finished game as CSV."""
        meta = self._meta(key)
        players = int(meta.spec.get("players", 0))
        out = io.StringIO()
        w = csv.writer(out)
        w.writerow(
            ["i", "game", *(f"seat{s}" for s in range(players))]
            + [f"role{s}" for s in range(players)]
            + ["winners", "draw"]
        )
        games = self._journal(key)
        for i in sorted(games):
            p = games[i]
            names = [meta.names.get(e, e) for e in p.seats]
            w.writerow([p.i, p.game, *names, *p.roles, " ".join(map(str, p.winners)), int(p.draw)])
        return out.getvalue().encode()

    async def watch(self, key: str) -> AsyncIterator[bytes]:
        """SSE frames: the tournament now, then again whenever a game finishes or starts."""
        self._meta(key)
        last: tuple[int, tuple[str, ...], bool] | None = None
        while True:
            t = await self.get(key)
            now = (t.summary.done, tuple(t.live), t.summary.running)
            if now != last:
                last = now
                yield b"event: tournament\ndata: %s\n\n" % _json.encode(t)
            await asyncio.sleep(POLL_S)


class TournamentRouter(Mounted):
    """The tournaments' routes (tournamentroutes.py)."""

    prefix = "tournaments"

    def __init__(self, play: Play, host: TournamentHost, routes: list[ApiRoute]) -> None:
        super().__init__(play, routes)
        self.host = host

    async def _organiser(self, req: Request) -> str:
        return await self.host.accounts.require_organiser(bearer(req))

    @staticmethod
    def _key(key: str) -> str:
        if not files.is_key(key):
            raise Refused("NOT_FOUND", f"no tournament {key!r}")
        return key

    async def tournaments(self, req: Request, w: asyncio.StreamWriter) -> ts.Tournaments:
        """See tournamentroutes.py."""
        return self.host.listing()

    async def create_tournament(
        self, req: Request, w: asyncio.StreamWriter, body: ts.NewTournament
    ) -> ts.TournamentSummary:
        """See tournamentroutes.py."""
        return await self.host.create(await self._organiser(req), body)

    async def tournament(self, req: Request, w: asyncio.StreamWriter) -> ts.Tournament:
        """See tournamentroutes.py."""
        return await self.host.get(self._key(_param(req, 2)))

    async def tournament_stream(self, req: Request, w: asyncio.StreamWriter) -> None:
        """See tournamentroutes.py."""
        frames = self.host.watch(self._key(_param(req, 2)))
        first = await anext(frames)  # an unknown key is a 404 before the stream begins

        async def all_frames() -> AsyncIterator[bytes]:
            yield first
            async for f in frames:
                yield f

        await self._sse(w, all_frames(), frames)

    async def tournament_csv(self, req: Request, w: asyncio.StreamWriter) -> None:
        """See tournamentroutes.py."""
        key = self._key(_param(req, 2))
        body = self.host.csv(key)
        await send(
            w,
            200,
            body,
            "text/csv; charset=utf-8",
            extra=f'Content-Disposition: attachment; filename="tournament-{key}.csv"\r\n',
        )

    async def stop_tournament(self, req: Request, w: asyncio.StreamWriter) -> ts.TournamentSummary:
        """See tournamentroutes.py."""
        await self._organiser(req)
        return await self.host.stop(self._key(_param(req, 2)))

    async def resume_tournament(
        self, req: Request, w: asyncio.StreamWriter
    ) -> ts.TournamentSummary:
        """See tournamentroutes.py."""
        await self._organiser(req)
        return await self.host.resume(self._key(_param(req, 2)))


def _param(req: Request, index: int) -> str:
    """The path's ``index``-th part (/api/tournaments/KEY/...: 2 is the key)."""
    parts = req.path.strip("/").split("/")
    return parts[index] if len(parts) > index else ""


def mount(
    play: Play, namespace: str, folder: Path, engines: int, secret: bytes
) -> TournamentRouter:
    """The tournaments' router over the play API's ``play``; resumes the unfinished ones."""
    from .tournamentroutes import TOURNAMENT_ROUTES

    host = TournamentHost(play, Accounts(play.sessions.client, namespace), folder, engines, secret)
    host.resume_all()
    return TournamentRouter(play, host, TOURNAMENT_ROUTES)
