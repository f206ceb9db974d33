"""The win-chance chart as a channel of the non-interference harness (noninterference.py
CHANNELS): what `GET /api/games/{game}/chart` sends a viewer (a seat with its token, or a
spectator) of a live game, from the side's own web server, and the featured game of
`GET /api/tv`. A live game's chart is computed from the spectator's view alone, so two games
that differ only in a secret must chart the same for every viewer."""

from __future__ import annotations


async def chart(side: object, viewer: int, last: int) -> list[bytes]:
    """The chart's bytes for ``viewer``, and TV's (which charts every live game)."""
    from .noninterference import GAME, Side, _get, _tok

    assert isinstance(side, Side)
    q = "viewer=" + ("spectator" if viewer < 0 else str(viewer))
    auth = f"Authorization: Bearer {_tok(viewer)}\r\n" if viewer >= 0 else ""
    body = await _get(side.http_port, f"/api/games/{GAME}/chart?{q}", auth)
    assert body.startswith(b'{"game":'), body[:300]  # a chart, not a refusal
    tv = await _get(side.http_port, "/api/tv", "")
    return [body, tv]
