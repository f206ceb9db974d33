"""`arena tournament`: seeded bot games through the platform, resumable, with standings.

A tournament is named by its arguments (ruleset, players, policies, seed, assignment, options:
`Spec.key`); game i is dealt with seed SEED + i, its seats get policies by the assignment, and
its id is `t<KEY>-<i>`. Each finished game is appended to the journal
``VAR/tournaments/KEY.jsonl`` as it finishes, so a run that is interrupted and started again
with the same arguments plays only the games the journal lacks (and a larger --games extends
it). Games that finished while nobody listened are found in the archive; a game that was half
played is published again and the engine carries on from its log (create is idempotent).
"""

from __future__ import annotations

import asyncio
import contextlib
import hashlib
import json
import os
import signal
import sys
import time
from collections.abc import Callable
from dataclasses import asdict, dataclass, field
from pathlib import Path
from types import FrameType
from typing import Any

import msgspec

from ..bots.selfplay import camp_rotation, rotation
from ..contracts.streams import Seat
from ..eventlog.reconnect import OUTAGE, Outage, is_outage, until_reachable
from ..eventlog.records import reveal_matches
from ..eventlog.redis_client import connect
from ..rules import api
from .matches import BOT, Finished, Games, bot_match
from .standings import Played, standings, table
from .supervise import CrashLoop
from .up import STATE_FILE, Platform, Running, UpConfig, find_running

SERVABLE = ("heuristic", "random", "easy", "hard")  # what a bot worker plays (bots/levels.py)
STALL_S = 60.0  # no game finished this long: publish the games in flight again
GIVE_UP_S = 600.0
GAMES_PER_ENGINE = 100  # default games in flight per engine worker (their answers share batches)


class TournamentError(Exception):
    """Arguments or a platform the tournament cannot run with."""


@dataclass(frozen=True)
class Spec:
    """What defines a tournament's games (all but `games` name it)."""

    ruleset: str
    players: int
    games: int
    policies: list[str]
    seed: int = 1
    assign: str = "seat"
    options: dict[str, Any] = field(default_factory=dict)

    def key(self) -> str:
        """16 hex digits naming the tournament: the same arguments give the same key."""
        ident = {k: v for k, v in asdict(self).items() if k != "games"}
        text = json.dumps(ident, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def game_id(self, i: int) -> str:
        """The id of game number i."""
        return f"t{self.key()[:12]}-{i}"

    def seats(self, i: int) -> list[str]:
        """Policies by seat of game i."""
        if self.assign == "camp":
            g = api.new_game(self.ruleset, self.players, self.seed + i, dict(self.options))
            return camp_rotation(self.policies, [p.role for p in g.players], i)
        return rotation(self.policies, self.players, i)

    def check(self) -> None:
        """Refuse what cannot be played, before any game is published."""
        bad = [p for p in self.policies if p not in SERVABLE]
        if not self.policies or bad:
            raise TournamentError(
                f"policies must be among {', '.join(SERVABLE)} (a live bot "
                f"sees only its seat, so oracle cannot play); got {bad}"
            )
        if self.games < 0 or self.assign not in ("seat", "camp"):
            raise TournamentError("--games must be >= 0 and --assign seat or camp")
        try:
            api.new_game(self.ruleset, self.players, self.seed, dict(self.options))
        except (api.UnknownOption, ValueError, TypeError, KeyError) as exc:
            raise TournamentError(str(exc)) from None


def read_journal(path: Path) -> dict[int, Played]:
    """Finished games by number; a torn last line (killed mid-write) is ignored."""
    out: dict[int, Played] = {}
    if not path.exists():
        return out
    for line in path.read_bytes().splitlines():
        with contextlib.suppress(msgspec.MsgspecError):
            p = msgspec.json.decode(line, type=Played)
            out[p.i] = p
    return out


def _say(line: str) -> None:
    print(f"arena tournament: {line}", file=sys.stderr, flush=True)


class _Interrupted(Exception):
    """SIGTERM."""


def _sigterm(signum: int, frame: FrameType | None) -> None:
    raise _Interrupted


def deployed(cfg: UpConfig, archive_dir: Path) -> Running:
    """A deployment's running workers (compose, Kubernetes) as a platform to play through: its
    Redis (--redis-url, else $REDIS_URL) and the archive folder its engines write; nothing is
    started, and the deployment's own engine and bot workers play the games."""
    url = cfg.redis_url or os.environ.get("REDIS_URL")
    if not url:
        raise TournamentError("--deployed needs the deployment's Redis: --redis-url or $REDIS_URL")
    if not archive_dir.is_dir():
        raise TournamentError(f"--deployed {archive_dir}: no such folder (the engines' archive)")
    return Running(
        pid=os.getpid(), redis_url=url, namespace=cfg.namespace, archive_dir=str(archive_dir)
    )


def run_tournament(
    spec: Spec,
    cfg: UpConfig,
    out: Path | None,
    concurrency: int,
    as_json: bool,
    archive_dir: Path | None = None,
) -> int:
    """Play what the journal lacks, then write and print the results; exit status. With
    ``archive_dir``, through the deployment of :func:`deployed` instead of `arena up`'s."""
    spec.check()
    folder = cfg.var_dir / "tournaments"
    folder.mkdir(parents=True, exist_ok=True)
    journal = folder / f"{spec.key()}.jsonl"
    out = out or folder / f"{spec.key()}.json"
    done = read_journal(journal)
    todo = [i for i in range(spec.games) if i not in done]
    previous = signal.signal(signal.SIGTERM, _sigterm)
    platform: Platform | None = None
    seconds, played = 0.0, 0
    info: dict[str, Any] = {"resumed_with": len(done)}
    try:
        if todo:
            run: Running | None
            if archive_dir is not None:
                run = deployed(cfg, archive_dir)
                info["platform"] = f"deployed (archive {archive_dir})"
                _say(f"playing through the deployment's workers (archive {archive_dir})")
            else:
                run = None if cfg.redis_url else find_running(cfg.var_dir)
                if run is None:
                    redis = cfg.redis_url or "a throw-away redis-server"
                    info["platform"] = f"started ({cfg.engines} engines, {cfg.bots} bot workers)"
                    _say(
                        f"starting a platform for this run: {cfg.engines} engine and {cfg.bots} "
                        f"bot workers on {redis} (no `arena up` in {cfg.var_dir / STATE_FILE})"
                    )
                    platform = Platform(cfg)
                    run = platform.start()
                else:
                    info["platform"] = f"arena up (pid {run.pid}, {len(run.engines)} engines)"
                    _say(
                        f"using the running arena up (pid {run.pid}, {len(run.engines)} engines, "
                        f"{run.redis_url}) of {cfg.var_dir / STATE_FILE}"
                    )
            n = concurrency or GAMES_PER_ENGINE * max(1, len(run.engines))
            t0 = time.perf_counter()
            keep = platform.keep_alive if platform is not None else None
            played = asyncio.run(_play(spec, run, todo, done, journal, n, as_json, keep))
            seconds = time.perf_counter() - t0
    except (KeyboardInterrupt, _Interrupted):
        print(
            f"\narena tournament: interrupted; {len(read_journal(journal))} of {spec.games} "
            "games recorded — run the same command again to continue",
            file=sys.stderr,
        )
        return 130
    except (RuntimeError, CrashLoop) as exc:
        raise TournamentError(str(exc)) from None
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        if platform is not None:
            platform.stop()
        signal.signal(signal.SIGTERM, previous)
    games = [done[i] for i in sorted(done) if i < spec.games]
    result = {
        "spec": asdict(spec),
        "key": spec.key(),
        "games_done": len(games),
        "games_played_now": played,
        "seconds_now": round(seconds, 3),
        "games_per_s_now": round(played / seconds, 3) if seconds else None,
        "journal": str(journal),
        **info,
        "standings": standings(games),
    }
    out.write_text(json.dumps(result, indent=2, ensure_ascii=False))
    if as_json:
        print(json.dumps(result, ensure_ascii=False))
    else:
        from rich.console import Console

        console = Console()
        console.print(table(result))
        console.print(f"results: {out}")
    return 0


async def _play(
    spec: Spec,
    run: Running,
    todo: list[int],
    done: dict[int, Played],
    journal: Path,
    concurrency: int,
    quiet: bool,
    keep_alive: Callable[[], list[str]] | None = None,
) -> int:
    """Publish the games, record each as it finishes. A Redis outage is waited out (one line
    when it starts, one when it ends); the platform this run started is kept alive (dead
    workers restarted). A game whose end was seen but not yet read is read again later."""
    client = connect(run.redis_url)
    games = Games(client, run.namespace, Path(run.archive_dir))
    by_id = {spec.game_id(i): i for i in todo}
    seats = {i: spec.seats(i) for i in todo}
    queue = list(todo)
    inflight: set[str] = set()
    ended: set[str] = set()  # announced finished, result not read yet (Redis was away)
    played = 0
    bar = _Bar(spec.games, len(done), quiet)
    outage = Outage("arena tournament")
    try:
        await until_reachable(client, "arena tournament")
        await games.mark()
        with journal.open("ab") as jf, bar:
            last = nudged = time.monotonic()

            def record(i: int, res: Any) -> None:
                nonlocal played, last
                p = Played(
                    i=i,
                    game=res.game_id,
                    seed=spec.seed + i,
                    seats=seats[i],
                    ruleset=spec.ruleset,
                    roles=list(res.roles),
                    winners=list(res.winners),
                    draw=res.draw,
                )
                jf.write(msgspec.json.encode(p) + b"\n")
                jf.flush()
                done[i] = p
                played += 1
                last = time.monotonic()
                bar.advance()

            async def step() -> None:
                while queue and len(inflight) < concurrency:
                    i = queue[0]
                    gid = spec.game_id(i)
                    res = (
                        await games.result(gid, tries=1)
                        if (Path(run.archive_dir) / f"{gid}.arena").exists()
                        else None
                    )
                    if res is None:
                        await games.publish(
                            bot_match(gid, spec.ruleset, seats[i], spec.seed + i, spec.options)
                        )
                    queue.pop(0)  # only once published (or found finished)
                    if res is not None:  # finished while nobody listened: if it is ours
                        check_adoption(spec, i, seats[i], res)
                        record(i, res.result)
                        continue
                    inflight.add(gid)
                fresh = [g for g in await games.finished(block_ms=500) if g in inflight]
                for gid in dict.fromkeys(fresh + sorted(ended)):
                    if gid not in inflight:
                        continue
                    # just announced: its log may be being archived, so a few tries
                    res = await games.result(gid, tries=1 if gid in ended else 20)
                    if res is None:
                        ended.add(gid)  # not readable now (Redis away?): again next round
                        continue
                    check_adoption(spec, by_id[gid], seats[by_id[gid]], res)
                    ended.discard(gid)
                    inflight.discard(gid)
                    record(by_id[gid], res.result)

            while queue or inflight:
                for line in keep_alive() if keep_alive is not None else []:
                    _say(line)
                try:
                    await step()
                except Exception as exc:
                    if not is_outage(exc):
                        raise
                    await outage.failed(exc)
                    continue
                outage.ok()
                idle = time.monotonic() - last
                if inflight and idle > GIVE_UP_S:
                    raise RuntimeError(
                        f"no game finished in {GIVE_UP_S:.0f} s; is a bot worker running?"
                    )
                if inflight and idle > STALL_S and time.monotonic() - nudged > STALL_S:
                    nudged = time.monotonic()
                    for gid in sorted(inflight):  # an end we missed: from the log or archive
                        res = await games.result(gid, tries=1)
                        if res is not None:
                            check_adoption(spec, by_id[gid], seats[by_id[gid]], res)
                            inflight.discard(gid)
                            record(by_id[gid], res.result)
                    for gid in inflight:  # idempotent: makes sure each game is moving
                        i = by_id[gid]
                        with contextlib.suppress(*OUTAGE):
                            await games.publish(
                                bot_match(gid, spec.ruleset, seats[i], spec.seed + i, spec.options)
                            )
    finally:
        await client.aclose()
    return played


def check_adoption(spec: Spec, i: int, policies: list[str], got: Finished) -> None:
    """Refuse to record game i unless it is the game this tournament asked for: its header's
    ruleset, players, options and seats (bot seats playing ``policies``), and a seed reveal that
    opens the header's commitment to seed SEED + i. A game under the same id that somebody else
    created first (ids are predictable) fails here, already-archived ones included."""
    h, r = got.header, got.reveal
    expected = [Seat(f"{BOT}{p}", True) for p in policies]
    checks = (
        ("ruleset", h.ruleset, spec.ruleset),
        ("players", h.players, spec.players),
        ("options", dict(h.options), dict(spec.options)),
        ("seats", [Seat(s.player, s.bot) for s in h.seats], expected),
        ("seed", r.seed, spec.seed + i),
        ("seed commitment", reveal_matches(h, r), True),
    )
    for name, have, want in checks:
        if have != want:
            raise RuntimeError(
                f"game {h.game_id} is not this tournament's game {i}: its {name} is {have!r}, "
                f"expected {want!r} (created by someone else under the same id?)"
            )


class _Bar:
    """The live progress bar (rich): games done of all, games/s, ETA; silent if ``quiet``."""

    def __init__(self, total: int, done: int, quiet: bool) -> None:
        self.quiet = quiet
        self.total, self.done = total, done
        self.progress: Any = None

    def __enter__(self) -> _Bar:
        if not self.quiet:
            from rich.progress import (
                BarColumn,
                MofNCompleteColumn,
                Progress,
                TextColumn,
                TimeElapsedColumn,
                TimeRemainingColumn,
            )

            self.progress = Progress(
                TextColumn("games"),
                BarColumn(),
                MofNCompleteColumn(),
                TextColumn("{task.fields[rate]} games/s"),
                TextColumn("ETA"),
                TimeRemainingColumn(),
                TimeElapsedColumn(),
                transient=False,
            )
            self.progress.__enter__()
            self.task = self.progress.add_task(
                "games", total=self.total, completed=self.done, rate="–"
            )
            self.t0 = time.perf_counter()
            self.start_done = self.done
        return self

    def advance(self) -> None:
        """One more game finished."""
        self.done += 1
        if self.progress is not None:
            rate = (self.done - self.start_done) / max(1e-9, time.perf_counter() - self.t0)
            self.progress.update(self.task, advance=1, rate=f"{rate:.2f}")

    def __exit__(self, *exc: object) -> None:
        if self.progress is not None:
            self.progress.__exit__(None, None, None)
