"""Refusals of the play API: an HTTP status and the reason, in words. A gRPC refusal from the
engine or the matchmaker keeps its reason and takes the status that says the same thing over
HTTP; a service that cannot be reached is a 503, never a 500."""

from __future__ import annotations

import grpc

from ..replay.http import HttpError

# gRPC status -> HTTP status (what the caller should do differs: fix the request, authenticate,
# look elsewhere, wait and retry)
GRPC_TO_HTTP = {
    grpc.StatusCode.INVALID_ARGUMENT: 400,
    grpc.StatusCode.OUT_OF_RANGE: 400,
    grpc.StatusCode.UNAUTHENTICATED: 401,
    grpc.StatusCode.PERMISSION_DENIED: 403,
    grpc.StatusCode.NOT_FOUND: 404,
    grpc.StatusCode.ALREADY_EXISTS: 409,
    grpc.StatusCode.FAILED_PRECONDITION: 409,
    grpc.StatusCode.ABORTED: 409,
    grpc.StatusCode.RESOURCE_EXHAUSTED: 429,
    grpc.StatusCode.UNAVAILABLE: 503,
    grpc.StatusCode.DEADLINE_EXCEEDED: 503,
}


class ApiError(HttpError):
    """A request refused with `status` and `reason`; nothing was changed."""


def from_grpc(err: grpc.aio.AioRpcError, what: str) -> ApiError:
    """The ApiError for a refusal by the service named `what`."""
    status = GRPC_TO_HTTP.get(err.code(), 502)
    reason = err.details() or err.code().name.lower()
    if status >= 500:
        reason = f"{what} unavailable: {reason}"
    return ApiError(status, reason)
