"""What every gRPC server of Arena installs before any servicer runs: malformed requests are
INVALID_ARGUMENT, and (where a service takes no seat's credential) unsigned callers are
UNAUTHENTICATED. One interceptor each, shared by the engine, the matchmaker and the replay
server (``interceptors()``), instead of a copy in every servicer.

- **Malformed bytes** (`InputGuard`): grpc.aio parses a request before the servicer sees it, and
  a parse error (bytes that are no protobuf message, a message nested past the parser's depth)
  escapes as UNKNOWN with a traceback in the server's log for every call. The guard wraps each
  method's deserializer: a request that does not parse becomes INVALID_ARGUMENT with one line
  ("malformed arena.v1.X: ..."), logged as one line without a traceback (at most one line a
  second per server, with a count of the calls left unsaid: a flood of junk is no log flood).
  A request stream (BotSession) ends at its first malformed message, with the same status.
- **Service calls** (`ServiceAuth`): every method under the protected services needs the
  ``arena-service-auth`` metadata signed with the deployment's secret and bound to the
  request's bytes (contracts/tokens.py: `sign_call`, `check_call`); `signing_interceptors`
  are the client side, which every caller (the web server, the benches) puts on its channel.
  Health checks stay open.
"""

from __future__ import annotations

import inspect
import logging
import time
from collections.abc import AsyncIterator, Callable, Sequence
from typing import Any

import grpc

from .contracts import tokens

log = logging.getLogger("arena.rpc")
OPEN_SERVICES = ("/grpc.health.v1.Health/",)


class Malformed:
    """What the guarded deserializer returns for bytes that are no valid request."""

    def __init__(self, reason: str) -> None:
        self.reason = reason


class Unsigned(Malformed):
    """A request of a protected method whose signature does not hold (UNAUTHENTICATED)."""


class _OneLine:
    """Log one line at most every `every_s` seconds, saying how many were left unsaid."""

    def __init__(self, every_s: float = 1.0) -> None:
        self.every_s = every_s
        self.last = 0.0
        self.quiet = 0

    def say(self, text: str) -> None:
        now = time.monotonic()
        if now - self.last < self.every_s:
            self.quiet += 1
            return
        more = f" (and {self.quiet} more refused since)" if self.quiet else ""
        log.warning("%s%s", text, more)
        self.last, self.quiet = now, 0


def _first_line(exc: BaseException) -> str:
    if isinstance(exc, RecursionError):
        return "nested too deeply"
    text = " ".join(str(exc).split()) or type(exc).__name__
    return text[:200]


Check = Callable[[bytes], "Malformed | None"]


def _guarded(handler: Any, method: str, check: Check | None) -> Any:
    """`handler` with its deserializer and behaviour wrapped (see the module docstring)."""
    parse = handler.request_deserializer

    def deserialize(raw: bytes) -> Any:
        if check is not None and (refused := check(raw)) is not None:
            return refused
        try:
            return parse(raw) if parse is not None else raw
        except Exception as exc:  # noqa: BLE001 - any parse failure (RecursionError too) is
            return Malformed(f"malformed request to {method}: {_first_line(exc)}")  # the caller's

    return _rebuild(handler, deserialize)


_said = _OneLine()


async def _refuse(context: Any, bad: Malformed) -> None:
    code = (
        grpc.StatusCode.UNAUTHENTICATED
        if isinstance(bad, Unsigned)
        else grpc.StatusCode.INVALID_ARGUMENT
    )
    _said.say(f"refused ({code.name}): {bad.reason}")
    await context.abort(code, bad.reason)


def _rebuild(handler: Any, deserialize: Callable[[bytes], Any]) -> Any:
    ser = handler.response_serializer
    if handler.unary_unary is not None:
        inner_uu = handler.unary_unary

        async def unary_unary(request: Any, context: Any) -> Any:
            if isinstance(request, Malformed):
                await _refuse(context, request)
            return await inner_uu(request, context)

        return grpc.unary_unary_rpc_method_handler(unary_unary, deserialize, ser)
    if handler.unary_stream is not None:
        inner_us = handler.unary_stream

        async def unary_stream(request: Any, context: Any) -> AsyncIterator[Any]:
            if isinstance(request, Malformed):
                await _refuse(context, request)
            if inspect.isasyncgenfunction(inner_us):
                async for item in inner_us(request, context):
                    yield item
            else:  # a coroutine that writes with context.write
                await inner_us(request, context)

        return grpc.unary_stream_rpc_method_handler(unary_stream, deserialize, ser)

    async def checked(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
        async for request in requests:
            if isinstance(request, Malformed):
                code = grpc.StatusCode.INVALID_ARGUMENT
                if isinstance(request, Unsigned):
                    code = grpc.StatusCode.UNAUTHENTICATED
                _said.say(f"refused ({code.name}): {request.reason}")
                context.set_code(code)
                context.set_details(request.reason)
                return  # the stream ends here: the servicer finishes what came before
            yield request

    if handler.stream_unary is not None:
        inner_su = handler.stream_unary

        async def stream_unary(requests: AsyncIterator[Any], context: Any) -> Any:
            return await inner_su(checked(requests, context), context)

        return grpc.stream_unary_rpc_method_handler(stream_unary, deserialize, ser)
    inner_ss = handler.stream_stream

    async def stream_stream(requests: AsyncIterator[Any], context: Any) -> AsyncIterator[Any]:
        async for item in inner_ss(checked(requests, context), context):
            yield item

    return grpc.stream_stream_rpc_method_handler(stream_stream, deserialize, ser)


class InputGuard(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Malformed request bytes -> INVALID_ARGUMENT, one line in the log (module docstring)."""

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = await continuation(details)
        if handler is None:
            return None
        return _guarded(handler, details.method, None)


class ServiceAuth(grpc.aio.ServerInterceptor):  # type: ignore[misc]
    """Calls of the `services` (names such as ``arena.v1.Matchmaker``) must be signed with the
    deployment's secret; anything else passes (and is still guarded against bad bytes)."""

    def __init__(self, secret: bytes, services: Sequence[str]) -> None:
        self.key = tokens.call_key(secret)
        self.prefixes = tuple(f"/{s}/" for s in services)

    async def intercept_service(self, continuation: Any, details: Any) -> Any:
        handler = await continuation(details)
        method: str = details.method
        if handler is None or not method.startswith(self.prefixes):
            return handler if handler is None else _guarded(handler, method, None)
        value = ""
        for name, v in details.invocation_metadata or ():
            if name == tokens.CALL_HEADER:
                value = v.decode() if isinstance(v, bytes) else str(v)

        def check(raw: bytes) -> Malformed | None:
            try:
                tokens.check_call(self.key, method, value, raw)
            except tokens.BadCall as exc:
                return Unsigned(f"{method}: {exc}")
            return None

        return _guarded(handler, method, check)


def interceptors(secret: bytes | None = None, protect: Sequence[str] = ()) -> list[Any]:
    """The interceptors a server is made with: the input guard, and with `protect` the service
    authentication of those services under `secret` (which then guards every method)."""
    if protect:
        if secret is None:
            raise ValueError("protected services need the deployment's secret")
        return [ServiceAuth(secret, protect)]
    return [InputGuard()]


# ---- the client side -------------------------------------------------------------------------


def _signed_details(key: bytes, details: Any, request: Any) -> Any:
    body = request.SerializeToString() if hasattr(request, "SerializeToString") else b""
    method = details.method.decode() if isinstance(details.method, bytes) else details.method
    value = tokens.sign_call(key, method, body)
    metadata = grpc.aio.Metadata(*(tuple(details.metadata or ())), (tokens.CALL_HEADER, value))
    return grpc.aio.ClientCallDetails(
        details.method, details.timeout, metadata, details.credentials, details.wait_for_ready
    )


class _SignUnary(grpc.aio.UnaryUnaryClientInterceptor):  # type: ignore[misc]
    def __init__(self, key: bytes) -> None:
        self.key = key

    async def intercept_unary_unary(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_signed_details(self.key, details, request), request)


class _SignStream(grpc.aio.UnaryStreamClientInterceptor):  # type: ignore[misc]
    def __init__(self, key: bytes) -> None:
        self.key = key

    async def intercept_unary_stream(self, continuation: Any, details: Any, request: Any) -> Any:
        return await continuation(_signed_details(self.key, details, request), request)


def call_metadata(secret: bytes, method: str, request: Any) -> list[tuple[str, str]]:
    """The metadata that signs one call of `method` (``/arena.v1.Matchmaker/Enqueue``) with
    `request`, for a synchronous channel (grpc.aio channels use `signed_channel`)."""
    key = tokens.call_key(secret)
    return [(tokens.CALL_HEADER, tokens.sign_call(key, method, request.SerializeToString()))]


def signing_interceptors(secret: bytes) -> list[Any]:
    """Client interceptors that sign every unary and server-streaming call (the Matchmaker's
    kinds) with the deployment's secret."""
    key = tokens.call_key(secret)
    return [_SignUnary(key), _SignStream(key)]


def signed_channel(address: str, secret: bytes) -> grpc.aio.Channel:
    """An insecure grpc.aio channel to `address` whose calls are signed (create it inside the
    running event loop)."""
    return grpc.aio.insecure_channel(address, interceptors=signing_interceptors(secret))
