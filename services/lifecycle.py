"""A worker process's life, written once for the three workers (arena engine, arena bots,
arena matchmaker): how it starts, what stops it, how it ends, and how its refusals read.

- `started`: SIGTERM and SIGINT set the returned stop event; the worker waits for Redis (a
  worker restarted while Redis restarts waits and says so once, rather than crash-looping) and
  refuses a key layout it cannot use (`OldLayout`: a partition count other than the
  deployment's, or the layout from before partitions);
- `finished`: its background tasks cancelled and awaited, its Redis client closed;
- `run_main`: the command's body: run the worker; a refusal at start (`OldLayout`, and the
  worker's own, e.g. the engine's `NotDurable`) is one line on stderr and exit status 2.
"""

from __future__ import annotations

import asyncio
import signal
import sys
from collections.abc import Coroutine, Iterable
from typing import Any

from .redisinfra.migrate import OldLayout, check_layout
from .redisinfra.reconnect import until_reachable


async def started(client: Any, namespace: str, who: str) -> asyncio.Event:
    """The stop event (set by SIGTERM/SIGINT), once Redis answers and its layout is ours."""
    stop = asyncio.Event()
    loop = asyncio.get_running_loop()
    for sig in (signal.SIGTERM, signal.SIGINT):
        loop.add_signal_handler(sig, stop.set)
    await until_reachable(client, who, stop)  # restarted while Redis restarts: wait for it
    await check_layout(client, namespace)  # one partition count; no old layout
    return stop


async def finished(tasks: Iterable[asyncio.Task[Any]], client: Any) -> None:
    """Cancel the worker's background tasks, wait for them, close its Redis client."""
    tasks = list(tasks)
    for t in tasks:
        t.cancel()
    await asyncio.gather(*tasks, return_exceptions=True)
    await client.aclose()


def run_main(
    who: str,
    work: Coroutine[Any, Any, None],
    refusals: tuple[type[Exception], ...] = (),
) -> int:
    """Run ``work`` to its end (exit status 0); `OldLayout` or one of ``refusals``: one line
    ``who: reason`` on stderr, exit status 2."""
    caught: tuple[type[Exception], ...] = (OldLayout, *refusals)
    try:
        asyncio.run(work)
    except caught as exc:
        print(f"{who}: {exc}", file=sys.stderr)
        return 2
    return 0
