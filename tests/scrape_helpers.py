"""Reading a service's /metrics in tests (the matchmaker's and the replay server's, an
engine's)."""

from __future__ import annotations

import asyncio
import time
import urllib.request

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int, names: set[str]) -> Samples:
    """GET /metrics: {(sample name, sorted labels): value}; also checks every family in `names`
    is served."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    families = list(text_string_to_metric_families(text))
    missing = names - {f.name for f in families}
    assert not missing, missing
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}


async def until_sessions_open(metrics_ports: list[int], n: int, timeout: float = 30.0) -> None:
    """Until each engine whose /metrics is on `metrics_ports` has `n` bot sessions open
    (`arena_engine_bot_sessions`): from then on it pushes its bot decisions on them, not to the
    decisions stream."""
    deadline = time.monotonic() + timeout
    key = ("arena_engine_bot_sessions", ())
    while True:
        open_now = [scrape(p, {"arena_engine_bot_sessions"})[key] for p in metrics_ports]
        if min(open_now) >= n:
            return
        assert time.monotonic() < deadline, f"bot sessions open {open_now}, not {n} each"
        await asyncio.sleep(0.05)
