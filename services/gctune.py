"""The cyclic garbage collector's settings for the long-running workers (engine and bot).

A worker's heap is mostly long-lived state (hot games in an engine; seat minds, with their
views and beliefs, in a bot worker), and what one decision allocates is nearly all freed by
reference counting. With CPython's default thresholds (700, 10, 10) the collector still runs
every few hundred allocations and, now and then, scans the whole heap: measured with
gc.callbacks under `arena bench e2e` (200 games in flight, random bots), ~32 us of GC per
decision in the engine worker (`arena bench service --store redis --gc default`) and ~10 us in
the bot worker (12% of its CPU), against ~1 us with the thresholds below. Cycles are still
collected, about 70 times less often.
"""

from __future__ import annotations

import gc

GC_THRESHOLDS = (50_000, 10, 10)


def tune_gc(thresholds: tuple[int, int, int] = GC_THRESHOLDS) -> None:
    """Set the worker's collector thresholds, and move what exists now (modules, classes, the
    worker's set-up) out of the collector's reach (gc.freeze): a full collection then scans
    what the worker made since (games, minds) only."""
    gc.collect()
    gc.freeze()
    gc.set_threshold(*thresholds)
