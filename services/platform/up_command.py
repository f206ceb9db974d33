"""The `arena up` command: start the platform (up.py), print where everything listens, write
``VAR/up.json`` so other commands find it, keep demo games going, restart a service that dies
(supervise.py), and stop everything on Ctrl-C or SIGTERM (or when a service crash-loops).
"""

from __future__ import annotations

import asyncio
import contextlib
import os
import signal
import sys
import time
from types import FrameType

from ..redisinfra.server import redacted
from ..running import STATE_FILE, Running, find_running
from .procs import StopAsked
from .supervise import CrashLoop
from .up import Platform, UpConfig


def describe(run: Running, cfg: UpConfig, niced: list[str] | None = None) -> str:
    """What `arena up` prints once everything is up."""
    where = (
        "REDIS_URL"
        if not run.redis_started
        else f"data and AOF in {cfg.var_dir / 'redis'}"
        if cfg.persist
        else "throw-away"
    )
    if run.redis_cluster:
        where = f"a Redis Cluster of {cfg.redis_cluster} masters, 1 replica each; " + where.replace(
            str(cfg.var_dir / "redis"), str(cfg.var_dir / "redis-cluster")
        )
    lines = [f"arena up: Redis {redacted(run.redis_url)} ({where}; password in {STATE_FILE})"]
    if run.viewer_url:
        lines.append(f"  play and watch    {run.viewer_url}  (web page and play API)")
    lines.append(f"  engine gRPC       {', '.join(run.engines)}  (GameService, health)")
    if run.people_engines:
        lines.append(f"  people's engines  {', '.join(run.people_engines)}  (games with a person)")
    if niced:
        lines.append(
            f"  bot-only work     {', '.join(niced)} at nice +{cfg.bot_only_nice()} "
            "(--bot-nice: people's work has the CPU first)"
        )
    if run.matchmaker:
        lines.append(f"  matchmaker gRPC   {run.matchmaker}")
    if run.replay_grpc:
        lines.append(f"  replay gRPC       {run.replay_grpc}")
    if run.metrics:
        lines.append(f"  metrics           {', '.join(run.metrics)}")
    lines.append(
        f"  bot workers       {cfg.bots} (default policy {cfg.bot_policy}, "
        f"{cfg.think_ms} ms to think)"
    )
    lines.append(f"  logs              {cfg.var_dir / 'logs'}/   archive {run.archive_dir}")
    lines.append("A service that dies is restarted; Ctrl-C (or SIGTERM) stops everything.")
    return "\n".join(lines)


def run_up(cfg: UpConfig, as_json: bool = False) -> int:
    """The `arena up` command: returns the exit status."""
    other = find_running(cfg.var_dir)
    if other is not None and other.pid != os.getpid():
        print(
            f"arena up: already running (pid {other.pid}, {other.viewer_url}); "
            f"state in {cfg.var_dir / STATE_FILE}",
            file=sys.stderr,
        )
        return 1
    try:
        platform = Platform(cfg)
    except RuntimeError as exc:  # a short ARENA_SECRET: one line
        print(f"arena up: {exc}", file=sys.stderr)
        return 2
    try:
        platform.check_ports()  # one line, before anything starts
    except RuntimeError as exc:
        print(f"arena up: {exc}", file=sys.stderr)
        return 2

    # during start-up a signal is only noted (platform.stopping): start() stops at its next
    # safe point, a wait or the next service (procs.StopFlag says why not at once)
    def note(signum: int, frame: FrameType | None) -> None:
        platform.stopping.ask(signum)

    previous = signal.signal(signal.SIGTERM, note)
    previous_int = signal.signal(signal.SIGINT, note)
    state = cfg.var_dir / STATE_FILE
    began = time.monotonic()
    why = "start-up failed"  # what the last line says, whatever ends the run
    try:
        run = platform.start()
        state.write_text(run.to_json())
        state.chmod(0o600)  # it holds the Redis password
        niced = [c.name for c in platform.sup.children if c.nice]
        print(run.to_json() if as_json else describe(run, cfg, niced), flush=True)
        status, why = asyncio.run(_serve(platform, run, cfg))  # returns with both blocked
        return status
    except StopAsked as stop:
        name = "Ctrl-C" if stop.signum == signal.SIGINT else "SIGTERM"
        why = f"{name} during start-up, {time.monotonic() - began:.0f} s in"
        return 0
    except KeyboardInterrupt:
        why = f"Ctrl-C during start-up, {time.monotonic() - began:.0f} s in"
        return 0
    except RuntimeError as exc:
        print(f"arena up: {exc}", file=sys.stderr)
        return 2
    except BaseException as exc:  # a bug: its traceback follows; the last line names it too
        why = f"{type(exc).__name__}: {exc}"
        raise
    finally:
        signal.signal(signal.SIGTERM, signal.SIG_IGN)
        signal.signal(signal.SIGINT, signal.SIG_IGN)
        signal.pthread_sigmask(signal.SIG_UNBLOCK, _STOP_SIGNALS)  # (one held meanwhile: ignored)
        with contextlib.suppress(OSError):
            state.unlink()
        started = bool(platform.sup.children) or platform.redis is not None
        platform.stop()
        signal.signal(signal.SIGTERM, previous)
        signal.signal(signal.SIGINT, previous_int)
        # a refusal before anything started is its one line alone; a signal or a bug is said
        # even then (start() stops what it began before this finally sees it)
        if started or why != "start-up failed":
            print(f"arena up: stopped ({why})", file=sys.stderr, flush=True)


async def _serve(platform: Platform, run: Running, cfg: UpConfig) -> tuple[int, str]:
    """Keep the platform alive until a signal or a crash loop: (exit status, why it stopped)."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    why = ""
    for sig in (signal.SIGTERM, signal.SIGINT):

        def on(sig: signal.Signals = sig) -> None:
            nonlocal why
            why = why or ("Ctrl-C" if sig == signal.SIGINT else sig.name)
            stop.set()

        loop.add_signal_handler(sig, on)
    if platform.stopping.signum is not None:  # noted after start-up's last look
        on(signal.Signals(platform.stopping.signum))
    tasks: list[asyncio.Task[None]] = []
    if cfg.demo:
        from .demo import keep_playing

        tasks.append(asyncio.create_task(keep_playing(run, cfg.demo, stop)))
    status = 0
    while not stop.is_set():
        with contextlib.suppress(TimeoutError):
            await asyncio.wait_for(stop.wait(), 0.5)
        try:
            said = platform.keep_alive()
        except CrashLoop as exc:
            print(
                f"arena up: {exc}; stopping (logs in {cfg.var_dir / 'logs'})",
                file=sys.stderr,
                flush=True,
            )
            status, why = 1, str(exc).split(":", 1)[0]  # "bots-0 crash-looped"
            break
        for line in said:
            print(f"arena up: {line}", file=sys.stderr, flush=True)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    # Closing the loop puts back the default actions (asyncio's remove_signal_handler): a
    # SIGTERM between then and the caller's SIG_IGN killed `arena up` before it stopped its
    # children. Blocked from here, a signal waits and is ignored once the caller unblocks it.
    signal.pthread_sigmask(signal.SIG_BLOCK, _STOP_SIGNALS)
    return status, why or "stop asked"


_STOP_SIGNALS = {signal.SIGTERM, signal.SIGINT}
