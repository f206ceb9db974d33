"""The play API over HTTP: a router for the replay server's HTTP server (same origin as the page).

Each route of routes.ROUTES is handled by the method of `PlayHttp` with its name. A handler
authenticates (the session cookie, or `Authorization: Bearer`), decodes the body into its struct
(a malformed body is a 400 naming the field), calls one `Play` method and encodes the result.

Credentials never travel in a query string (it ends up in logs). A POST with a body must be
`application/json`: with the SameSite=Strict cookie, that keeps other sites' pages from posting
for a signed-in person (a form cannot send that type without a CORS preflight, which this server
never grants).

Cross-site requests (CSRF): SameSite counts every port of a host as the same site, so a page on
another port of the same machine could still post a plain form with the person's cookie (it
made a person resign: `/resign` has no body). So every route that changes state (every method
but GET and HEAD), body or not, is refused with 403 when the browser says it comes from
elsewhere: an `Origin` header that is not this server's own (scheme aside: a TLS proxy in front
changes it; host and port must match the `Host` the request came to), `Origin: null`, or a
`Sec-Fetch-Site` other than `same-origin` or `none`. A client that is no browser sends neither
header and is not affected.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
from collections.abc import AsyncIterator
from typing import Any
from urllib.parse import urlsplit

import msgspec
import redis.asyncio as aioredis

from ..errors import Refused, unavailable
from ..eventlog.store import check_game_id
from ..replay.core import Replay
from ..replay.http import KEEPALIVE_S, HttpError, Request, Route, Router, head, send
from ..rules.api import keys
from . import identity, routes, schema
from .clients import Engine, Matchmaker
from .ratelimit import Limits
from .service import Play

_json = msgspec.json.Encoder()
LIMITED = ("create_table", "join", "quickplay")  # each asks the matchmaker for a ticket
PLAY_ROUTES = [r for r in routes.ROUTES if r.served == "play"]  # the rest are the replay's


class PlayHttp:
    """The router (call it with a request) and the handlers."""

    def __init__(self, play: Play, *, secure_cookie: bool = False) -> None:
        self.play = play
        self.secure_cookie = secure_cookie
        self.document = _json.encode(routes.openapi())

    def __call__(self, req: Request) -> tuple[str, Route] | None:
        """The named handler for `req`, if the path is one of the play API's."""
        known = False
        for r in PLAY_ROUTES:
            params = routes.match(r, req.path)
            if params is None:
                continue
            known = True
            if req.method == r.method or (req.method == "HEAD" and r.method == "GET"):
                return f"play.{r.name}", functools.partial(self._run, r, params)
        if known:
            return "play.other", self._wrong_method
        return None

    async def _wrong_method(self, req: Request, w: asyncio.StreamWriter) -> None:
        allowed = sorted({r.method for r in PLAY_ROUTES if routes.match(r, req.path) is not None})
        raise HttpError(405, f"{req.line}: use {', '.join(allowed)}")

    async def _run(
        self, route: routes.Route, params: dict[str, str], req: Request, w: asyncio.StreamWriter
    ) -> None:
        args: dict[str, Any] = {}
        if "game" in params:
            try:
                args["game"] = check_game_id(params["game"])
            except ValueError as exc:
                raise HttpError(400, str(exc)) from None
        if "seat" in params:
            if not keys.is_number(params["seat"]) or len(params["seat"]) > 3:
                raise HttpError(400, "seat must be a seat number")
            args["seat"] = int(params["seat"])
        if "table" in params:
            args["table"] = params["table"]
        if route.method not in ("GET", "HEAD"):
            # before anything is read or done: a cross-site request changes nothing
            same_origin(req)
        if route.auth:
            args["p"] = await self.play.who(self._credential(req))
        if route.body is not None:
            args["body"] = self._decode(req, route.body)
        if route.name == "new_guest":  # creation limits (ratelimit.py): 429 with Retry-After
            await self.play.limits.new_guest(req)
        elif route.name in LIMITED:
            await self.play.limits.seat(req, args["p"].player)
        handler = getattr(self, route.name)
        out = await handler(req, w, **args)
        if out is not None:
            await send(w, route.status, out, extra=self._cookie(out))

    # ---- plumbing -------------------------------------------------------------------------------

    @staticmethod
    def _credential(req: Request) -> str | None:
        auth = req.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            return auth[7:].strip()
        return req.cookie(routes.COOKIE)

    @staticmethod
    def _decode(req: Request, kind: type[msgspec.Struct]) -> Any:
        ctype = req.headers.get("content-type", "").split(";")[0].strip().lower()
        if ctype != "application/json":
            raise HttpError(415, "send the body as application/json")
        try:
            return msgspec.json.decode(req.body, type=kind)
        except msgspec.ValidationError as exc:
            raise HttpError(400, f"bad request body: {exc}") from None
        except msgspec.DecodeError as exc:
            raise HttpError(400, f"the body is not JSON: {exc}") from None
        except RecursionError:
            raise HttpError(400, "the body is nested too deeply") from None

    def _cookie(self, out: object) -> str:
        if isinstance(out, schema.Guest):
            return cookie_header(routes.COOKIE, out.token, secure=self.secure_cookie)
        return ""

    async def _sse(
        self, w: asyncio.StreamWriter, frames: AsyncIterator[bytes], closing: Any = None
    ) -> None:
        """Write a Server-Sent Events response from `frames`, with keep-alive comments.

        One task reads the frames and writes each as it comes; this coroutine only wakes when
        the stream has been silent for `KEEPALIVE_S` (a comment then, which also finds a
        client that left) or the frames end. (A task and an `asyncio.wait` a frame, as before,
        cost ~18 us of the web server's CPU a frame and a turn of its loop before each frame
        went out: a person's seat stream sends one or two frames a move of its table.)"""
        w.write(
            head(
                200,
                "text/event-stream; charset=utf-8",
                "Connection: keep-alive\r\nX-Accel-Buffering: no\r\n",
            )
        )
        w.write(b"retry: 2000\n\n")
        await w.drain()
        loop = asyncio.get_running_loop()
        last = [loop.time()]  # when something was last written

        async def pump() -> Exception | None:
            """Write every frame; the frames' own failure is returned (said below), a failed
            write raised (the client left)."""
            it = aiter(frames)
            while True:
                try:
                    frame = await anext(it)
                except StopAsyncIteration:
                    return None
                except Exception as exc:  # noqa: BLE001 - the response has begun: said below
                    return exc
                w.write(frame)
                await w.drain()
                last[0] = loop.time()

        task = asyncio.ensure_future(pump())
        try:
            while True:
                idle = loop.time() - last[0]
                if idle >= KEEPALIVE_S:
                    w.write(b": keep-alive\n\n")  # proxies and browsers drop silent streams
                    await w.drain()
                    last[0], idle = loop.time(), 0.0
                done, _ = await asyncio.wait({task}, timeout=KEEPALIVE_S - idle)
                if done:
                    break
            failed = task.result()  # (a failed write raises here, as it did)
            if failed is not None:
                exc: BaseException = failed
                if not isinstance(exc, (HttpError, Refused)):
                    exc = unavailable(exc) or exc  # Redis away: UNAVAILABLE, plainly
                    if not isinstance(exc, Refused):
                        raise exc
                w.write(b"event: refused\ndata: %s\n\n" % _json.encode({"error": exc.reason}))
                await w.drain()
                return
            w.write(b"event: end\ndata: {}\n\n")
            await w.drain()
        finally:
            if not task.done():
                task.cancel()
                with contextlib.suppress(asyncio.CancelledError):
                    await task
            if closing is not None:
                with contextlib.suppress(Exception):
                    await closing.aclose()

    # ---- handlers (one per route name) ----------------------------------------------------------

    async def new_guest(
        self, req: Request, w: asyncio.StreamWriter, body: schema.NewGuest
    ) -> schema.Guest:
        """See routes.ROUTES."""
        return await self.play.new_guest(body)

    async def me(self, req: Request, w: asyncio.StreamWriter, p: identity.Player) -> schema.Me:
        """See routes.ROUTES."""
        return await self.play.me(p)

    async def settings(
        self, req: Request, w: asyncio.StreamWriter, p: identity.Player
    ) -> schema.PersonSettings:
        """See routes.ROUTES."""
        return await self.play.settings(p)

    async def set_settings(
        self,
        req: Request,
        w: asyncio.StreamWriter,
        p: identity.Player,
        body: schema.PersonSettings,
    ) -> schema.PersonSettings:
        """See routes.ROUTES."""
        return await self.play.set_settings(p, body)

    async def status(self, req: Request, w: asyncio.StreamWriter, p: identity.Player) -> None:
        """See routes.ROUTES."""
        updates = self.play.status(p)

        async def frames() -> AsyncIterator[bytes]:
            async for st in updates:
                yield b"event: status\ndata: %s\n\n" % _json.encode(st)

        await self._sse(w, frames(), updates)

    async def modes(self, req: Request, w: asyncio.StreamWriter) -> schema.Modes:
        """See routes.ROUTES."""
        return await self.play.modes()

    async def tables(self, req: Request, w: asyncio.StreamWriter) -> schema.Tables:
        """See routes.ROUTES."""
        return await self.play.tables(req.int_arg("offset"), req.int_arg("limit", 50))

    async def create_table(
        self,
        req: Request,
        w: asyncio.StreamWriter,
        p: identity.Player,
        body: schema.TableSettings,
    ) -> schema.Joined:
        """See routes.ROUTES."""
        return await self.play.create_table(p, body)

    async def join(
        self, req: Request, w: asyncio.StreamWriter, p: identity.Player, table: str
    ) -> schema.Joined:
        """See routes.ROUTES."""
        return await self.play.join(p, table)

    async def quickplay(
        self, req: Request, w: asyncio.StreamWriter, p: identity.Player, body: schema.QuickPlay
    ) -> schema.Joined:
        """See routes.ROUTES."""
        return await self.play.quickplay(p, body)

    async def leave(self, req: Request, w: asyncio.StreamWriter, p: identity.Player) -> schema.Me:
        """See routes.ROUTES."""
        await self.play.leave(p)
        return await self.play.me(p)

    async def seat_view(
        self, req: Request, w: asyncio.StreamWriter, p: identity.Player, game: str, seat: int
    ) -> schema.SeatView:
        """See routes.ROUTES."""
        return await self.play.seats.view(p, game, seat, lang_of(req))

    async def seat_stream(
        self, req: Request, w: asyncio.StreamWriter, p: identity.Player, game: str, seat: int
    ) -> None:
        """See routes.ROUTES."""
        after = req.int_arg("from")
        last = req.headers.get("last-event-id", "")
        if keys.is_number(last):
            after = int(last)
        items = await self.play.seats.stream(p, game, seat, after, lang_of(req))
        metrics = self.play.replay.metrics
        metrics.open["sse"].inc()

        async def frames() -> AsyncIterator[bytes]:
            async for batch, decision in items:
                out = b"".join(b"id: %d\ndata: %s\n\n" % (q, e) for q, e in batch)
                if decision is not None:
                    out += b"event: decision\ndata: %s\n\n" % decision
                metrics.sent["sse"].inc(len(batch))
                yield out

        try:
            await self._sse(w, frames(), items)
        finally:
            metrics.open["sse"].dec()

    async def answer(
        self,
        req: Request,
        w: asyncio.StreamWriter,
        p: identity.Player,
        game: str,
        seat: int,
        body: schema.Answer,
    ) -> schema.Answered:
        """See routes.ROUTES."""
        return await self.play.seats.answer(p, game, seat, body)

    async def hosting(
        self,
        req: Request,
        w: asyncio.StreamWriter,
        p: identity.Player,
        game: str,
        seat: int,
        body: schema.Hosting,
    ) -> schema.Hosted:
        """See routes.ROUTES."""
        return await self.play.seats.hosting(p, game, seat, body)

    async def resign(
        self, req: Request, w: asyncio.StreamWriter, p: identity.Player, game: str, seat: int
    ) -> schema.Hosted:
        """See routes.ROUTES."""
        return await self.play.seats.resign(p, game, seat)

    async def catalogue(self, req: Request, w: asyncio.StreamWriter, game: str) -> schema.Catalogue:
        """See routes.ROUTES."""
        return await self.play.seats.catalogue(game)

    async def openapi(self, req: Request, w: asyncio.StreamWriter) -> None:
        """See routes.ROUTES."""
        await send(w, 200, self.document)


def mount(
    replay: Replay, client: aioredis.Redis, args: Any, engines: list[str]
) -> tuple[Play, Router]:
    """The play API over `replay` (same process, same Redis), as a router for its HTTP server;
    `args` has namespace, matchmaker, answers_per_s and secure_cookie (replay-server flags),
    and may have trusted_proxy (ratelimit.py) and people_engine."""
    if replay.secret is None:
        raise ValueError("the play API needs the deployment's secret (the replay's)")
    secret = replay.secret
    sessions = identity.Sessions(client, args.namespace, secret)
    proxies = getattr(args, "trusted_proxy", None)
    # the people's engines (--people-engine): the play API's calls go there first (clients.py)
    people = [a.strip() for a in (getattr(args, "people_engine", "") or "").split(",") if a.strip()]
    play = Play(
        replay,
        sessions,
        Matchmaker(args.matchmaker, secret),
        Engine(engines, people=people),
        answers_per_s=args.answers_per_s,
        limits=Limits(client, f"{sessions.prefix}:lim", proxies=proxies),
    )
    return play, PlayHttp(play, secure_cookie=args.secure_cookie)


def same_origin(req: Request) -> None:
    """HttpError 403 unless a state-changing request comes from this server's own pages (or
    from a client that is no browser: no Origin, no Sec-Fetch-Site). See the module docstring."""
    site = req.headers.get("sec-fetch-site", "").lower()
    if site and site not in ("same-origin", "none"):
        raise HttpError(403, f"cross-site request refused (Sec-Fetch-Site: {site[:20]})")
    origin = req.headers.get("origin")
    if origin is None:
        return
    host = req.headers.get("host", "").lower()
    try:
        netloc = urlsplit(origin).netloc.lower() if origin != "null" else ""
    except ValueError:
        netloc = ""
    if not netloc or netloc != host:
        raise HttpError(
            403, "cross-origin request refused: this API takes no request from another site's pages"
        )


def lang_of(req: Request) -> schema.Lang:
    """The language a player reads: `lang` (zh or en; 400 for another), else the first of the
    request's Accept-Language that is one of them, else English."""
    asked = req.query.get("lang")
    if asked is not None:
        if asked not in ("zh", "en"):
            raise HttpError(400, "lang must be zh or en")
        return "zh" if asked == "zh" else "en"
    for part in req.headers.get("accept-language", "").split(","):
        tag = part.split(";")[0].strip().lower()
        if tag.startswith("zh"):
            return "zh"
        if tag.startswith("en"):
            return "en"
    return "en"


def cookie_header(name: str, value: str, *, secure: bool) -> str:
    """The Set-Cookie line of a session: not readable by scripts (HttpOnly), never sent with
    another site's requests (SameSite=Strict), for the whole origin, for the session's life."""
    flags = f"Path=/; HttpOnly; SameSite=Strict; Max-Age={identity.SESSION_TTL_S}"
    return f"Set-Cookie: {name}={value}; {flags}{'; Secure' if secure else ''}\r\n"
