"""Refusals of the engine and the matchmaker, as the play API passes them on: the same reason,
and the status that says the same thing over HTTP (services/errors.py maps every refusal); a
service that cannot be reached, or fails, is a 503 naming it, never a 500."""

from __future__ import annotations

import grpc

from ..errors import HTTP_STATUS, Refused


def from_grpc(err: grpc.aio.AioRpcError, what: str) -> Refused:
    """The refusal for a gRPC error from the service named `what`."""
    code = err.code().name
    reason = err.details() or code.lower()
    if code not in HTTP_STATUS or HTTP_STATUS[code] >= 500:
        return Refused("UNAVAILABLE", f"{what} unavailable: {reason}")
    return Refused(code, reason)
