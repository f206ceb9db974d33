"""TV: one live game featured at a time, for a page that follows it and moves to the next when it
ends (`GET /api/tv`, the page `#/tv`).

The rule, stated on the page: among the live games a spectator can watch now, the one with the
most seats alive; among those, the closest: the smallest lead of the likeliest camp over the
next on its public chart (readside/chart.py: what any spectator could compute, as of what the
spectators have been sent); then the one with more moves played; then its id. Everything is
read as a spectator: the table's spectator delay holds, and nothing hidden goes in.
"""

from __future__ import annotations

from typing import Any

from ..readside.access import NotFound
from ..readside.chart import Charts, folded
from .core import Replay

RULE = (
    "the live game with the most seats alive; among those, the closest (the smallest lead of "
    "the likeliest camp on its chart); then the one furthest along"
)
MAX_CANDIDATES = 200  # live games looked at (the lobby's live games)


async def featured(replay: Replay, charts: Charts) -> dict[str, Any]:
    """The game to show now, why, and the runners-up."""
    rows: list[dict[str, Any]] = []
    for game in sorted(await replay.live_ids())[:MAX_CANDIDATES]:
        try:
            feed = await replay.feed(game)
        except NotFound:
            continue  # just archived, or not started yet
        if feed.over:
            continue
        header = replay.header_of(feed)
        fold = folded(charts, feed, header)
        sent = feed.released(replay.spectator_delay_ms(header), replay.clock.now_ms())
        state = fold.state_at(sent)
        if state is None:
            continue  # still being dealt
        alive, p = state
        top = sorted(p, reverse=True)
        lead = round(top[0] - (top[1] if len(top) > 1 else 0.0), 3)
        rows.append(
            {
                "game": game,
                "ruleset": header.ruleset,
                "players": header.players,
                "alive": alive,
                "lead": lead,
                "moves": feed.positions.position(-1, sent),
                "camps": list(fold.t.camps),
                "chances": p,
            }
        )
    rows.sort(key=lambda r: (-r["alive"], r["lead"], -r["moves"], r["game"]))
    return {"game": rows[0]["game"] if rows else None, "rule": RULE, "candidates": rows[:8]}
