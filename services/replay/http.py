"""HTTP/1.1 and Server-Sent Events for browsers, on plain asyncio (no web framework).

    GET /                                   the web viewer (lobby, live table, replay)
    GET /static/NAME                        the viewer's files (services/replay/web/)
    GET /api/games?ruleset=&player=&status=live|finished&since=&until=&limit=
    GET /api/games/ID                       summary fields, header and card table
    GET /api/games/ID/events?viewer=&from=&to=&delay=
    GET /api/games/ID/stream?viewer=&from=&delay=     SSE; ``id:`` is the entry's position;
                                            ``event: decision`` the public pending decision
    GET /api/games/ID/verify
    GET /api/games/ID/chart?viewer=&delay=  each camp's chance to win, move by move (chart.py)
    GET /api/tv                             the featured live game, by a stated rule (tv.py)
    GET /api/platform-key                   the key archives are signed with (eventlog/signing.py)

``viewer`` is ``spectator`` (default), ``god`` or a seat number; a seat's view needs its seat
token as ``Authorization: Bearer TOKEN`` (a ``token`` in the query is refused: URLs end up in
logs). ``from`` is the last position already held (a viewer's
entries are numbered 1, 2, 3, … over what it receives: eventlog/positions.py); an SSE
reconnect's ``Last-Event-ID`` takes its place. A small server of our own instead of aiohttp: five GET routes
and one streaming response do not justify a framework dependency, and this keeps the one place
that writes SSE bytes short enough to audit for leaks.

Other packages add routes (``routers``: the play API of services/play, served from this origin):
a router maps a request to a named handler, which may read the body (``Content-Length``, at most
``MAX_BODY``) and cookies, and refuses with ``HttpError(status, reason)``.
"""

from __future__ import annotations

import asyncio
import contextlib
import functools
import json
import logging
import mimetypes
from collections.abc import Awaitable, Callable
from dataclasses import dataclass, field
from importlib import resources
from typing import Any, cast
from urllib.parse import parse_qs, unquote, urlsplit

import msgspec

from ..errors import BadRequest, NotFound, http_error
from ..readside.access import Grant, parse_viewer
from ..readside.catalogue import names_json
from ..readside.chart import Charts, render
from ..readside.entries import header_json
from ..readside.feed import GameFeed, Update
from ..rules.api import english_names, keys
from .core import GameFilter, Replay
from .fanout import END, Fanout, sse_chunk
from .tv import featured

log = logging.getLogger(__name__)
MAX_HEAD = 16 * 1024
MAX_BODY = 64 * 1024
MAX_DRAIN = 1024 * 1024  # a body too large is still read (and dropped) up to this size
KEEPALIVE_S = 15.0
HEAD_TIMEOUT_S = 10.0  # a request's head and body must arrive within this (no idle keep-alive:
# every response closes its connection), so a half-sent request holds a connection 10 s, not 60
WEB = resources.files(__package__).joinpath("web")
Route = Callable[["Request", asyncio.StreamWriter], Awaitable[None]]
Router = Callable[["Request"], "tuple[str, Route] | None"]
"""A request -> (the route's name, its handler), or None if the router has no such route."""
_STATUS = {
    200: "OK",
    201: "Created",
    400: "Bad Request",
    401: "Unauthorized",
    403: "Forbidden",
    404: "Not Found",
    405: "Method Not Allowed",
    408: "Request Timeout",
    409: "Conflict",
    411: "Length Required",
    413: "Content Too Large",
    415: "Unsupported Media Type",
    429: "Too Many Requests",
    431: "Request Header Fields Too Large",
    500: "Internal Server Error",
    502: "Bad Gateway",
    503: "Service Unavailable",
    504: "Gateway Timeout",
}


class _Watched:
    """A StreamWriter that notes whether anything was written (so an error raised after a
    response began is not answered with a second one)."""

    def __init__(self, w: asyncio.StreamWriter) -> None:
        self._w = w
        self.wrote = False

    def write(self, data: bytes) -> None:
        self.wrote = True
        self._w.write(data)

    def __getattr__(self, name: str) -> Any:
        return getattr(self._w, name)


class HttpError(Exception):
    """A request refused with an HTTP status and a reason (sent as ``{"error": reason}``);
    `extra`: more header lines (``Retry-After: N\r\n`` with a 429)."""

    def __init__(self, status: int, reason: str, extra: str = "") -> None:
        super().__init__(reason)
        self.status = status
        self.reason = reason
        self.extra = extra


@dataclass
class Request:
    """A parsed request: head, and the body when it had one."""

    method: str
    path: str
    query: dict[str, str]
    headers: dict[str, str] = field(default_factory=dict)
    body: bytes = b""
    peer: str = ""  # the client's address (what per-address limits count)

    @property
    def line(self) -> str:
        """The method and path as an error may quote them: cut short (both are the client's)."""
        return f"{shown(self.method, 10)} {shown(self.path)}"

    def cookie(self, name: str) -> str | None:
        """The value of cookie ``name``, if sent."""
        for part in self.headers.get("cookie", "").split(";"):
            k, sep, v = part.strip().partition("=")
            if sep and k == name:
                return v
        return None

    def int_arg(self, name: str, default: int = 0) -> int:
        """An integer query parameter."""
        raw = self.query.get(name, "")
        try:
            return int(raw) if raw else default
        except ValueError:
            raise BadRequest(f"{name} must be an integer") from None


def shown(text: str, limit: int = 80) -> str:
    """Text the client sent, as an error quotes it: at most `limit` characters (an error's one
    line never grows with what an attacker sends)."""
    return text if len(text) <= limit else text[: limit - 1] + "…"


def head(status: int, ctype: str, extra: str = "", length: int | None = None) -> bytes:
    """A response head; ``extra`` is more header lines, each ending in CRLF."""
    return _head(status, ctype, extra, length)


async def send(
    w: asyncio.StreamWriter,
    status: int,
    body: object,
    ctype: str = "application/json; charset=utf-8",
    extra: str = "",
) -> None:
    """Write a whole response: ``body`` as is if bytes, else as JSON."""
    data = body if isinstance(body, bytes) else msgspec.json.encode(body)
    w.write(_head(status, ctype, extra, length=len(data)) + data)
    await w.drain()


def _head(status: int, ctype: str, extra: str = "", length: int | None = None) -> bytes:
    lines = [
        f"HTTP/1.1 {status} {_STATUS.get(status, 'OK')}",
        f"Content-Type: {ctype}",
        "Cache-Control: no-store",
        "X-Content-Type-Options: nosniff",
    ]
    if length is not None:
        lines += [f"Content-Length: {length}", "Connection: close"]
    return ("\r\n".join(lines) + "\r\n" + extra + "\r\n").encode()


async def _read_request(reader: asyncio.StreamReader) -> Request | int | None:
    """The request (None: nothing readable; a status, 400 or 431, for a malformed head). A body
    is read only up to MAX_BODY: a request announcing more, or a body of unknown length, is
    answered with HttpError."""
    try:
        raw = await reader.readuntil(b"\r\n\r\n")
    except (asyncio.IncompleteReadError, ConnectionError):
        return None
    except asyncio.LimitOverrunError:
        return 431
    lines = raw.decode("latin-1").split("\r\n")
    parts = lines[0].split(" ")
    if len(parts) != 3 or not parts[1].startswith("/"):
        return 400
    try:
        url = urlsplit(parts[1])
        query = {k: v[-1] for k, v in parse_qs(url.query, keep_blank_values=True).items()}
        path = unquote(url.path, errors="strict")
    except (ValueError, UnicodeError):
        return 400
    headers = {}
    for line in lines[1:]:
        if ":" in line:
            k, v = line.split(":", 1)
            headers[k.strip().lower()] = v.strip()
    req = Request(parts[0], path, query, headers)
    if "transfer-encoding" in headers:
        req.body = b"\0chunked"  # refused by _dispatch: bodies need a Content-Length
    elif "content-length" in headers:
        size = headers["content-length"]
        length = int(size) if keys.is_number(size) else None
        if length is None or length > MAX_BODY:
            req.body = b"\0too-large"
            if length is not None and length <= MAX_DRAIN:  # read it, so the client reads the
                with contextlib.suppress(asyncio.IncompleteReadError, ConnectionError):  # 413
                    await reader.readexactly(length)
        else:
            try:
                req.body = await reader.readexactly(length)
            except (asyncio.IncompleteReadError, ConnectionError):
                return None
    return req


@functools.lru_cache(maxsize=16)
def _english_json(ruleset: str) -> bytes:
    """Every card name of ``ruleset`` -> its English name (the rules' registry), as JSON."""
    return msgspec.json.encode(english_names(ruleset))


class HttpServer:
    """Routes HTTP requests to a Replay."""

    def __init__(self, replay: Replay, routers: list[Router] | None = None) -> None:
        self.replay = replay
        self.routers = list(routers or [])
        self.server: asyncio.Server | None = None
        self._writers: set[asyncio.StreamWriter] = set()
        self.fanout = Fanout(replay, self._count_sent)
        self.charts = Charts()  # the win-chance charts, folded on as games go

    def _count_sent(self, entries: int, decisions: int) -> None:
        metrics = self.replay.metrics
        metrics.sent["sse"].inc(entries)
        if decisions:
            metrics.decisions.inc(decisions)

    async def start(self, host: str = "127.0.0.1", port: int = 0) -> int:
        """Listen; returns the bound port."""
        self.server = await asyncio.start_server(
            self._serve, host, port, limit=MAX_HEAD, backlog=2048
        )
        return int(self.server.sockets[0].getsockname()[1])

    async def close(self) -> None:
        """Stop listening and drop open connections."""
        await self.fanout.close()
        if self.server is not None:
            self.server.close()
            for w in list(self._writers):  # open SSE streams would keep wait_closed waiting
                w.close()
            with contextlib.suppress(Exception):
                await self.server.wait_closed()

    async def _serve(self, reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        self._writers.add(writer)
        try:
            try:
                req = await asyncio.wait_for(_read_request(reader), HEAD_TIMEOUT_S)
            except TimeoutError:
                req = 408
            if isinstance(req, int):
                self.replay.metrics.request("other", req)
                why = "request not sent in time" if req == 408 else "malformed request"
                await self._send(writer, req, {"error": why})
            elif req is not None:
                peer = writer.get_extra_info("peername")
                req.peer = str(peer[0]) if isinstance(peer, tuple) and peer else ""
                await self._dispatch(req, writer)
        except (ConnectionError, asyncio.CancelledError):
            pass
        except Exception:  # a failure while answering: the response has begun, nothing to send
            log.exception("serving a request")
        finally:
            self._writers.discard(writer)
            writer.close()
            with contextlib.suppress(Exception):
                await writer.wait_closed()

    async def _dispatch(self, req: Request, w: asyncio.StreamWriter) -> None:
        name, status = "other", 500  # 500 unless set: an unexpected error (logged)
        out = _Watched(w)
        try:
            found = next((r for router in self.routers if (r := router(req)) is not None), None)
            if found is None and req.method not in ("GET", "HEAD"):
                status = 405
                return await self._send(w, 405, {"error": f"{req.line}: no such route"})
            found = found or self._route(req)
            if found is None:
                status = 404
                return await self._send(w, 404, {"error": f"no route {shown(req.path)}"})
            name, route = found
            if req.body.startswith(b"\0"):
                raise HttpError(
                    411 if req.body == b"\0chunked" else 413,
                    f"a request body needs a Content-Length of at most {MAX_BODY} bytes",
                )
            await route(req, cast(asyncio.StreamWriter, out))
            status = 200
        except (ConnectionError, asyncio.CancelledError):
            status = 200  # the response had begun: the viewer left (a closed tab), or shutdown
            raise
        except Exception as exc:  # noqa: BLE001 - every error gets a status (services/errors.py)
            if out.wrote:  # the response has begun: it cannot be turned into an error now
                raise
            extra = ""
            if isinstance(exc, HttpError):
                status, body, extra = exc.status, {"error": exc.reason}, exc.extra
            else:
                status, body = http_error(exc)
            await send(w, status, body, extra=extra)
        finally:
            self.replay.metrics.request(name, status)

    def _route(self, req: Request) -> tuple[str, Route] | None:
        """The route's name (a metrics label, see metrics.ROUTES) and handler."""
        p = req.path.strip("/").split("/")
        if req.path == "/":
            return "viewer", lambda r, w: self._static("index.html", w)
        if len(p) == 2 and p[0] == "static":
            return "static", lambda r, w: self._static(p[1], w)
        if req.path == "/api/platform-key":
            return "platform_key", lambda r, w: self._platform_key(w)
        if req.path == "/api/tv":  # the featured live game (tv.py)
            return "tv", lambda r, w: self._tv(w)
        if p[:2] == ["api", "games"]:
            if len(p) == 2:
                return "games", self._games
            if len(p) == 3:
                return "game", lambda r, w: self._game(p[2], w)
            if len(p) == 4 and p[3] == "events":
                return "events", lambda r, w: self._events(p[2], r, w)
            if len(p) == 4 and p[3] == "stream":
                return "stream", lambda r, w: self._stream(p[2], r, w)
            if len(p) == 4 and p[3] == "verify":
                return "verify", lambda r, w: self._verify(p[2], w)
            if len(p) == 4 and p[3] == "chart":  # who is winning (readside/chart.py)
                return "chart", lambda r, w: self._chart(p[2], r, w)
        return None

    async def _send(
        self,
        w: asyncio.StreamWriter,
        status: int,
        body: object,
        ctype: str = "application/json; charset=utf-8",
    ) -> None:
        await send(w, status, body, ctype)

    async def _static(self, name: str, w: asyncio.StreamWriter) -> None:
        bad = len(name) > 200 or name.startswith(".") or "/" in name or "\\" in name or "\0" in name
        f = WEB.joinpath(name)
        try:
            found = not bad and f.is_file()
        except OSError:  # a name the file system refuses (too long, …): not an outage of Redis
            found = False
        if not found:
            raise NotFound(f"no file {name[:60]}")
        ctype = mimetypes.guess_type(name)[0] or "application/octet-stream"
        if ctype.startswith("text/") or ctype.endswith("javascript"):
            ctype += "; charset=utf-8"
        await self._send(w, 200, f.read_bytes(), ctype)

    async def _games(self, req: Request, w: asyncio.StreamWriter) -> None:
        f = GameFilter(
            ruleset=req.query.get("ruleset", ""),
            player=req.query.get("player", ""),
            status=req.query.get("status", ""),
            since_ms=req.int_arg("since"),
            until_ms=req.int_arg("until"),
            limit=req.int_arg("limit", 100),
        )
        if f.status not in ("", "live", "finished"):
            raise BadRequest("status must be live or finished")
        games = await self.replay.list_games(f)
        self.replay.metrics.listed_games("http", len(games))
        await self._send(w, 200, {"games": games})

    async def _game(self, game: str, w: asyncio.StreamWriter) -> None:
        feed = await self.replay.feed(game)
        header = await self.replay.header(game)
        body = b'{"header":%s,"over":%s,"version":%d,"cards":%s,"names":%s,"english":%s}' % (
            msgspec.json.encode(header_json(header)),
            b"true" if feed.over else b"false",
            await self.replay.spectator_version(game),  # never ahead of the spectator delay
            await self.replay.cards(game),
            names_json(header.ruleset),
            _english_json(header.ruleset),
        )
        await self._send(w, 200, body)

    def _viewer_args(self, req: Request) -> tuple[int, str | None, int]:
        if "token" in req.query:  # a URL ends up in logs, proxies' and browsers' histories
            raise BadRequest("send a seat token as 'Authorization: Bearer TOKEN', not in the URL")
        token = None
        auth = req.headers.get("authorization", "")
        if auth.lower().startswith("bearer "):
            token = auth[7:].strip() or None
        return parse_viewer(req.query.get("viewer")), token, req.int_arg("delay")

    async def _events(self, game: str, req: Request, w: asyncio.StreamWriter) -> None:
        viewer, token, delay = self._viewer_args(req)
        page = await self.replay.get_events(
            game, viewer, token, req.int_arg("from"), req.int_arg("to") or None, delay
        )
        body = b'{"game":%s,"viewer":%d,"delay_ms":%d,"upto":%d,"over":%s,"entries":[%s]}' % (
            json.dumps(game).encode(),
            page.grant.viewer,
            page.grant.delay_ms,
            page.upto,
            b"true" if page.over else b"false",
            b",".join(page.entries),
        )
        await self._send(w, 200, body)

    async def _stream(self, game: str, req: Request, w: asyncio.StreamWriter) -> None:
        viewer, token, delay = self._viewer_args(req)
        after = max(0, req.int_arg("from"))
        last_id = req.headers.get("last-event-id", "")
        if keys.is_number(last_id):
            after = int(last_id)
        feed, grant = await self.replay.grant(game, viewer, token, delay)
        after = feed.positions.seq(grant.viewer, after)  # the client's position: a log seq here
        metrics = self.replay.metrics
        spectators = metrics.open["sse"]
        spectators.inc()
        sub = None
        try:
            w.write(
                _head(
                    200,
                    "text/event-stream; charset=utf-8",
                    "Connection: keep-alive\r\nX-Accel-Buffering: no\r\n",
                )
            )
            w.write(b"retry: 2000\n\n")
            await w.drain()
            # the fan-out writes to the raw writer (the head is out: nothing can turn into an
            # error response any more)
            raw = cast(_Watched, w)._w if isinstance(w, _Watched) else w
            sub = self.fanout.subscribe(feed, grant, after, raw)
            if sub is not None:
                await sub.done.wait()
                if sub.reason != "slow":
                    return  # "end" was written, or the connection or the server closed
                after = sub.after  # fell behind: drain, then carry on alone
                await w.drain()
            await self._stream_alone(feed, grant, after, w)
        finally:
            spectators.dec()
            if sub is not None:
                sub.leave("closed")

    async def _stream_alone(
        self, feed: GameFeed, grant: Grant, after: int, w: asyncio.StreamWriter
    ) -> None:
        """One connection's own stream (a subscriber that fell behind the fan-out, or one that
        holds entries its channel has not reached yet)."""
        batches = self.replay.stream_feed(feed, grant, after)
        metrics = self.replay.metrics
        sent = metrics.sent["sse"]
        pending: asyncio.Task[Update] | None = None
        try:
            it = aiter(batches)
            while True:
                if pending is None:
                    pending = asyncio.ensure_future(anext(it))
                done, _ = await asyncio.wait({pending}, timeout=KEEPALIVE_S)
                if not done:
                    w.write(b": keep-alive\n\n")  # proxies and browsers drop silent streams
                    await w.drain()
                    continue
                try:
                    update = pending.result()
                except StopAsyncIteration:
                    break
                pending = None
                if update[1] is not None:
                    metrics.decisions.inc()
                w.write(sse_chunk(update))
                sent.inc(len(update[0]))
                await w.drain()
            w.write(END)
            await w.drain()
        finally:
            if pending is not None:
                pending.cancel()
            with contextlib.suppress(Exception):
                await batches.aclose()

    async def _chart(self, game: str, req: Request, w: asyncio.StreamWriter) -> None:
        viewer, token, delay = self._viewer_args(req)
        feed, grant = await self.replay.grant(game, viewer, token, delay)
        header = self.replay.header_of(feed)
        now = self.replay.clock.now_ms()
        body = render(self.charts, feed, header, grant.viewer, grant.delay_ms, now)
        await self._send(w, 200, body)

    async def _tv(self, w: asyncio.StreamWriter) -> None:
        await self._send(w, 200, await featured(self.replay, self.charts))

    async def _platform_key(self, w: asyncio.StreamWriter) -> None:
        from ..eventlog.signing import platform_key

        key = platform_key()
        if key is None:
            raise NotFound("this server has no platform key (ARENA_ARCHIVE_PUBKEY is not set)")
        body = {"algorithm": "Ed25519", "public_key": key.hex, "key_id": key.key_id}
        await self._send(w, 200, body)

    async def _verify(self, game: str, w: asyncio.StreamWriter) -> None:
        report = await self.replay.verify(game)
        await self._send(w, 200, msgspec.to_builtins(report))
