"""Seed 002 谋攻 events (both secret: their redaction is declared in ``mougong.py``)."""

from __future__ import annotations

from ...core.events import Event


class InsightRevealed(Event, frozen=True, tag="insight_revealed"):
    """洞察: what ``seat`` learned of ``target`` — ``friend``, ``enemy`` or,
    for a renegade's insight, the exact role; ``result`` is secret."""

    seat: int
    target: int
    result: str
    seen_by: list[int] | None = None


class RebelDisguised(Event, frozen=True, tag="rebel_disguised"):
    """The renegade ``seat`` learns that ``rebel`` is a rebel (now disguised)."""

    seat: int
    rebel: int
    seen_by: list[int] | None = None
