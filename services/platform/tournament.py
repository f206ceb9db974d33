"""`arena tournament`: seeded games through the platform, resumable, with standings.

A tournament is named by its arguments (ruleset, players, entrants, seed, assignment, options:
`Spec.key`, services/tournaments/spec.py); game i is dealt with seed SEED + i, its seats get
entrants by the assignment, and its id is `t<KEY>-<i>`. Each finished game is appended to the
journal ``VAR/tournaments/KEY.jsonl`` as it finishes (services/tournaments/runner.py, the same
loop the web server runs for a tournament made in the browser), so a run that is interrupted and
started again with the same arguments plays only the games the journal lacks (and a larger
--games extends it). Games that finished while nobody listened are found in the archive; a game
that was half played is published again and the engine carries on from its log (create is
idempotent). With a web server running (`arena up`), the tournament's page follows the run live:
its URL is printed.
"""

from __future__ import annotations

import asyncio
import json
import os
import signal
import sys
import time
from dataclasses import asdict
from pathlib import Path
from types import FrameType
from typing import Any

from ..redisinfra.reconnect import RedisGone
from ..redisinfra.redis_client import connect
from ..running import STATE_FILE, Running, find_running
from ..tournaments import journal as files
from ..tournaments import runner, seating
from ..tournaments.spec import Spec, SpecError, kind_of
from ..tournaments.standings import standings, table
from .supervise import CrashLoop
from .up import Platform, UpConfig

OUTAGE_GIVE_UP_S = 120.0  # a Redis outage this long ends the run (one line; resumable)
GAMES_PER_ENGINE = 100  # default games in flight per engine worker (their answers share batches)
EXTERNAL_GAMES = 20  # default games in flight with bot accounts among the entrants


class TournamentError(Exception):
    """Arguments or a platform the tournament cannot run with."""


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
    give_up_s: float = 0.0,
) -> int:
    """Play what the journal lacks, then write and print the results; exit status. With
    ``archive_dir``, through the deployment of :func:`deployed` instead of `arena up`'s.

    The journal is the tournament's file in ``VAR/tournaments``, which the web server of the
    running `arena up` reads too: the tournament's page (printed) follows this run live, and a
    tournament made in the browser with the same spec is the same tournament (one of the two
    plays it at a time: the journal's lock)."""
    try:
        spec.check()
    except SpecError as exc:
        raise TournamentError(str(exc)) from None
    if any(k == "person" for k in map(kind_of, spec.policies)):
        raise TournamentError(
            "people are seated by the web server: enter them in a tournament made in the "
            "browser (the tournament page of `arena up`)"
        )
    folder = cfg.var_dir / "tournaments"
    folder.mkdir(parents=True, exist_ok=True)
    key = spec.key()
    journal = folder / f"{key}.jsonl"
    out = out or folder / f"{key}.json"
    done = files.read_journal(journal)
    todo = [i for i in range(spec.games) if i not in done]
    previous = signal.signal(signal.SIGTERM, _sigterm)
    platform: Platform | None = None
    seconds, played = 0.0, 0
    info: dict[str, Any] = {"resumed_with": len(done)}
    try:
        with files.locked(folder, key):
            if todo:
                run: Running | None
                if archive_dir is not None:
                    run = deployed(cfg, archive_dir)
                    info["platform"] = f"deployed (archive {archive_dir})"
                    _say(f"playing through the deployment's workers (archive {archive_dir})")
                else:
                    run = None if cfg.redis_url else find_running(cfg.var_dir)
                    if run is None:
                        if spec.external:  # their bots play through this run's Bot API
                            cfg.replay = cfg.matchmaker = True
                        redis = cfg.redis_url or "a throw-away redis-server"
                        info["platform"] = (
                            f"started ({cfg.engines} engines, {cfg.bots} bot workers)"
                        )
                        _say(
                            f"starting a platform for this run: {cfg.engines} engine and "
                            f"{cfg.bots} bot workers on {redis} (no `arena up` in "
                            f"{cfg.var_dir / STATE_FILE})"
                        )
                        platform = Platform(cfg)
                        run = platform.start()
                    else:
                        info["platform"] = f"arena up (pid {run.pid}, {len(run.engines)} engines)"
                        _say(
                            f"using the running arena up (pid {run.pid}, {len(run.engines)} "
                            f"engines, {run.redis_url}) of {cfg.var_dir / STATE_FILE}"
                        )
                names = asyncio.run(_names(spec, run))
                _register(folder, spec, names, concurrency)
                if run.viewer_url:
                    url = f"{run.viewer_url.rstrip('/')}/#/tournament/{key}"
                    info["page"] = url
                    _say(f"watch it: {url}")
                n = concurrency or (
                    EXTERNAL_GAMES if spec.external else GAMES_PER_ENGINE * max(1, len(run.engines))
                )
                t0 = time.perf_counter()
                keep = platform.keep_alive if platform is not None else None
                with _Bar(spec.games, len(done), as_json) as bar:

                    def advance(p: Any) -> None:
                        done[p.i] = p
                        bar.advance()

                    played = asyncio.run(
                        runner.play(
                            spec,
                            run.redis_url,
                            run.namespace,
                            Path(run.archive_dir),
                            todo,
                            journal,
                            n,
                            names=names,
                            keep_alive=keep,
                            on_record=advance,
                            say=_say,
                            give_up_s=give_up_s or OUTAGE_GIVE_UP_S,
                        )
                    )
                seconds = time.perf_counter() - t0
    except files.Busy as exc:
        raise TournamentError(f"{exc} (the web server, or another `arena tournament`)") from None
    except (KeyboardInterrupt, _Interrupted):
        print(
            f"\narena tournament: interrupted; {len(files.read_journal(journal))} of "
            f"{spec.games} games recorded — run the same command again to continue",
            file=sys.stderr,
        )
        return 130
    except RedisGone as exc:
        raise TournamentError(
            f"{exc}; {len(files.read_journal(journal))} of {spec.games} games recorded — run "
            "the same command again to continue"
        ) from None
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
        "key": key,
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


async def _names(spec: Spec, run: Running) -> dict[str, str]:
    """The names of the bot accounts among the entrants (TournamentError for an unknown one)."""
    bots = [e for e in spec.external if kind_of(e) == "bot"]
    if not bots:
        return {}
    client = connect(run.redis_url)
    try:
        out = {}
        for b in bots:
            name = await seating.bot_name(client, run.namespace, b)
            if name is None:
                raise TournamentError(f"no bot account {b} on this platform (arena bot-account)")
            out[b] = name
        return out
    finally:
        await client.aclose()


def _register(folder: Path, spec: Spec, names: dict[str, str], concurrency: int) -> None:
    """Write the tournament's meta file (what its page shows), keeping one made before."""
    key = spec.key()
    meta = files.read_meta(folder, key)
    if meta is None:
        meta = files.Meta(
            key=key,
            spec=asdict(spec),
            name=f"{spec.ruleset} {spec.players} · {', '.join(spec.policies)}",
            created_ms=int(time.time() * 1000),
            host="cli",
            names=names,
            concurrency=concurrency,
        )
    else:
        meta.spec, meta.names = asdict(spec), {**meta.names, **names}  # (--games may grow)
    files.write_meta(folder, meta)


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
