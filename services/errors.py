"""Refusals, and how every transport reports them: one place maps a refusal to its gRPC status
and its HTTP status, so no endpoint answers bad input with UNKNOWN, INTERNAL or a 500.

A service raises :class:`Refused` (or one of its named kinds) for anything the caller did wrong
or may not do; the transport turns it into the status and a plain one-line message, and logs
nothing. Anything else that escapes a handler is a bug: it is logged once with its traceback
and reported as INTERNAL / 500 with a generic message (never the exception's text, which could
carry state the caller may not see).

A store that is away (Redis unreachable, restarting or loading its AOF, or refusing writes it
cannot make durable: its disk is full) is neither the caller's fault nor a bug: it is
UNAVAILABLE / 503 with one plain line (never the store's own text, such as "Error 111
connecting to …"). The caller may try again. It is logged once per change of state, without a
traceback (`OutageLog`): while a disk is full every write is refused, and a line per refused
request flooded the log.

For gRPC, :func:`grpc_unary` and :func:`grpc_stream` wrap servicer methods; for HTTP,
:func:`http_error` gives (status, JSON body) for an exception. New endpoints (the seat API)
use the same helpers.
"""

from __future__ import annotations

import functools
import logging
import time
from collections.abc import AsyncIterator, Awaitable, Callable
from typing import Any, TypeVar

from .contracts.streams import check_game_id

log = logging.getLogger("arena.errors")

HTTP_STATUS = {
    "INVALID_ARGUMENT": 400,
    "OUT_OF_RANGE": 400,
    "UNAUTHENTICATED": 401,
    "PERMISSION_DENIED": 403,
    "NOT_FOUND": 404,
    "ALREADY_EXISTS": 409,
    "FAILED_PRECONDITION": 409,
    "ABORTED": 409,
    "RESOURCE_EXHAUSTED": 429,
    "UNAVAILABLE": 503,
    "DEADLINE_EXCEEDED": 504,
    "INTERNAL": 500,  # a fault on the server's side, never bad input
}
MAX_REASON = 300  # a refusal's message is one short line
UNAVAILABLE_MESSAGE = "storage unavailable (Redis is restarting or unreachable); try again"
DISK_MESSAGE = "storage cannot write to its disk (full or unwritable): nothing was kept; try again"


class Refused(Exception):
    """A request the service will not carry out; ``code`` is a grpc.StatusCode name."""

    def __init__(self, code: str, reason: str) -> None:
        super().__init__(reason)
        self.code = code
        self.reason = reason

    @property
    def message(self) -> str:
        """The reason on one line, cut to a sane length."""
        text = " ".join(self.reason.split())
        return text if len(text) <= MAX_REASON else text[: MAX_REASON - 1] + "…"

    @property
    def http_status(self) -> int:
        """The HTTP status of this refusal."""
        return HTTP_STATUS.get(self.code, 400)


class _Kind(Refused):
    """A refusal whose code is fixed by its class: raised with just a message."""

    CODE = "INVALID_ARGUMENT"

    def __init__(self, reason: str) -> None:
        super().__init__(self.CODE, reason)


class BadRequest(_Kind, ValueError):
    """Malformed input: HTTP 400, gRPC INVALID_ARGUMENT."""

    CODE = "INVALID_ARGUMENT"


class NotFound(_Kind):
    """No such thing: HTTP 404, gRPC NOT_FOUND."""

    CODE = "NOT_FOUND"


class Forbidden(_Kind):
    """The caller may not see or do this: HTTP 403, gRPC PERMISSION_DENIED."""

    CODE = "PERMISSION_DENIED"


class Unauthenticated(_Kind):
    """No valid credential: HTTP 401, gRPC UNAUTHENTICATED."""

    CODE = "UNAUTHENTICATED"


def checked_game_id(game: str) -> str:
    """``game`` if it is a valid game id, else BadRequest (contracts/streams.py: check_game_id)."""
    try:
        return check_game_id(game)
    except ValueError as exc:
        raise BadRequest(str(exc)) from None


class OutageLog:
    """Says the store's outages once per change of state: a line when requests start being
    refused for one reason (Redis away, refusing writes to a full disk, busy), and again only
    when the reason changes, or when the same one comes back after `quiet_s` with no refusal
    (taken as over in between: a refusal is all this sees, never a success; a read that
    succeeds while the disk is full does not end that state). The next line counts the
    requests refused silently under the one before."""

    def __init__(self, quiet_s: float = 60.0, clock: Callable[[], float] = time.monotonic) -> None:
        self.quiet_s, self.clock = quiet_s, clock
        self.state: str | None = None  # the reason said last
        self.last = -float("inf")  # when a request was last refused
        self.unsaid = 0  # refused since the last line

    def refused(self, exc: BaseException) -> None:
        """One request refused for `exc` (an outage)."""
        from .redisinfra.reconnect import outage_words, refuses_writes

        now = self.clock()
        state = "disk" if refuses_writes(exc) else type(exc).__name__
        if state == self.state and now - self.last <= self.quiet_s:
            self.unsaid += 1
        else:
            before = f" ({self.unsaid} more refused under the last line)" if self.unsaid else ""
            log.warning(
                "store unavailable: %s; refusing requests that need it until it is back "
                "(said once)%s",
                outage_words(exc),
                before,
            )
            self.state, self.unsaid = state, 0
        self.last = now


outages = OutageLog()  # this process's


def unavailable(exc: BaseException) -> Refused | None:
    """An UNAVAILABLE refusal if ``exc`` is the store being away (or refusing writes it cannot
    make durable: its disk is full), else None; said by `outages`."""
    from .redisinfra.reconnect import is_outage, refuses_writes

    if not is_outage(exc):
        return None
    outages.refused(exc)
    if refuses_writes(exc):  # nothing written: an answer taken now would not be kept
        return Refused("UNAVAILABLE", DISK_MESSAGE)
    return Refused("UNAVAILABLE", UNAVAILABLE_MESSAGE)


def http_error(exc: BaseException) -> tuple[int, dict[str, str]]:
    """(HTTP status, JSON body) for an exception a handler raised: its own status for a
    refusal, 503 for the store being away; 500 with a generic message (logged once, with the
    traceback) for anything else."""
    exc = unavailable(exc) or exc
    if isinstance(exc, Refused):
        return exc.http_status, {"error": exc.message}
    log.error("unexpected error serving a request", exc_info=exc)
    return 500, {"error": "internal error"}


async def abort(context: Any, exc: BaseException) -> None:
    """Abort a grpc.aio call with `exc`'s status: UNAVAILABLE for the store being away,
    INTERNAL (logged once) for anything else that is not a refusal."""
    import grpc

    exc = unavailable(exc) or exc
    if isinstance(exc, Refused):
        await context.abort(grpc.StatusCode[exc.code], exc.message)
    log.error("unexpected error serving an RPC", exc_info=exc)
    await context.abort(grpc.StatusCode.INTERNAL, "internal error")


R = TypeVar("R")
Unary = Callable[[Any, Any, Any], Awaitable[R]]
Streaming = Callable[[Any, Any, Any], AsyncIterator[R]]


def grpc_unary(method: Unary[R]) -> Unary[R]:
    """Wrap a grpc.aio unary servicer method: a refusal becomes its status, a bug INTERNAL."""

    @functools.wraps(method)
    async def wrapped(self: Any, request: Any, context: Any) -> R:
        try:
            return await method(self, request, context)
        except Exception as exc:  # noqa: BLE001 - every exception maps to a status
            if _is_abort(exc):
                raise
            await abort(context, exc)
            raise AssertionError("unreachable: abort raises") from exc

    return wrapped


def grpc_stream(method: Streaming[R]) -> Streaming[R]:
    """`grpc_unary` for a server-streaming method (an error after the first message ends the
    stream with the status)."""

    @functools.wraps(method)
    async def wrapped(self: Any, request: Any, context: Any) -> AsyncIterator[R]:
        try:
            async for item in method(self, request, context):
                yield item
        except Exception as exc:  # noqa: BLE001
            if _is_abort(exc):
                raise
            await abort(context, exc)
            raise AssertionError("unreachable: abort raises") from exc

    return wrapped


def _is_abort(exc: BaseException) -> bool:
    """Whether ``exc`` is grpc.aio's own abort signal (already a status: pass it on)."""
    import grpc

    return isinstance(exc, grpc.aio.AbortError)
