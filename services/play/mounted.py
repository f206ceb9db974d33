"""A router of routes served beside the play API's, on its plumbing (http.PlayHttp): path
parameters checked, the cross-site check of every state-changing request, bodies decoded into
their structs, SSE with keep-alives. The Bot API (botapi.py) and the tournaments (tournaments.py)
are two; each handler is the subclass's method named as its route, and authenticates the
bearer credential its route names (a bot's, an organiser's) itself before it does anything."""

from __future__ import annotations

import asyncio
import dataclasses
import functools

from ..replay.http import HttpError, Request
from ..replay.http import Route as HttpRoute
from .apiroute import ApiRoute
from .http import PlayHttp
from .routes import match
from .service import Play


class Mounted(PlayHttp):
    """The routes ``routes``, handled by this object's methods by name."""

    prefix = "extra"  # the metrics label's prefix: `PREFIX.ROUTE`

    def __init__(self, play: Play, routes: list[ApiRoute]) -> None:
        super().__init__(play)
        # PlayHttp._run authenticates a person's session for a route with `auth`: these are
        # authenticated by their handlers, with the bearer credential `auth` names
        self.mine = [dataclasses.replace(r, auth="") for r in routes]

    def __call__(self, req: Request) -> tuple[str, HttpRoute] | None:
        """The named handler for ``req``, if it is one of these routes."""
        known = False
        for r in self.mine:
            params = match(r, req.path)  # type: ignore[arg-type]  # (reads its .path)
            if params is None:
                continue
            known = True
            if req.method == r.method or (req.method == "HEAD" and r.method == "GET"):
                return f"{self.prefix}.{r.name}", functools.partial(self._run, r, params)  # type: ignore[arg-type]
        if not known:
            return None
        allowed = sorted({r.method for r in self.mine if match(r, req.path) is not None})  # type: ignore[arg-type]

        async def wrong(req: Request, w: asyncio.StreamWriter) -> None:
            raise HttpError(405, f"{req.line}: use {', '.join(allowed)}")

        return f"{self.prefix}.other", wrong


def bearer(req: Request) -> str | None:
    """The request's `Authorization: Bearer` credential (never a cookie, never the URL)."""
    auth = req.headers.get("authorization", "")
    return auth[7:].strip() if auth.lower().startswith("bearer ") else None
