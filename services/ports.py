"""Listening ports are exclusive, and a busy one is one line that names it and its flag.

grpcio sets SO_REUSEPORT on its listening sockets by default, so a second server on a port
another one holds starts without error and the kernel splits the connections between them
(two `arena up` on the same ports shared each other's traffic). Every gRPC server here is made
with :data:`GRPC_OPTIONS` (``grpc.so_reuseport`` 0) and binds through :func:`bind_grpc`; HTTP
listeners check with :func:`check_free` first. A port in use is :class:`PortBusy`, whose text
is the one line a command prints before it exits with status 2.
"""

from __future__ import annotations

import errno
import socket
from typing import Any

GRPC_OPTIONS: list[tuple[str, Any]] = [("grpc.so_reuseport", 0)]


class PortBusy(Exception):
    """A port this process should listen on is taken (or cannot be bound)."""

    def __init__(self, host: str, port: int, flag: str, why: str = "") -> None:
        what = why or "is in use (another arena up?)"
        super().__init__(f"port {port} on {host} {what}; choose another with {flag}")
        self.port, self.flag = port, flag


def check_free(host: str, port: int, flag: str) -> None:
    """Raise PortBusy unless ``host``:``port`` can be listened on now (port 0 always can).

    SO_REUSEADDR as the servers set it: a port whose old connections linger in TIME_WAIT is
    free, one that something listens on is not."""
    if not port:
        return
    family = socket.AF_INET6 if ":" in host else socket.AF_INET
    with socket.socket(family, socket.SOCK_STREAM) as s:
        s.setsockopt(socket.SOL_SOCKET, socket.SO_REUSEADDR, 1)
        try:
            s.bind((host, port))
            s.listen(1)
        except OSError as exc:
            if exc.errno == errno.EADDRINUSE:
                raise PortBusy(host, port, flag) from None
            raise PortBusy(host, port, flag, f"cannot be bound ({exc.strerror})") from None


def is_free(port: int, host: str = "127.0.0.1") -> bool:
    """Whether ``host``:``port`` can be listened on now, as `check_free` judges it: for a tool
    picking ports for the servers it starts (a cluster's nodes, the workers' /metrics)."""
    try:
        check_free(host, port, "")
    except PortBusy:
        return False
    return True


def bind_grpc(server: Any, host: str, port: int, flag: str) -> int:
    """``server.add_insecure_port`` (a server made with GRPC_OPTIONS); the bound port, or
    PortBusy naming ``flag``."""
    check_free(host, port, flag)
    try:
        return int(server.add_insecure_port(f"{host}:{port}"))
    except RuntimeError:  # grpcio's "Failed to bind to address": taken since the check
        raise PortBusy(host, port, flag) from None
