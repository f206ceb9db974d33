"""Replay, verify and live spectating: the replay core, its HTTP/SSE and gRPC transports, the web
viewer (``web/``). See README.md beside this file.
"""

from ..readside.clock import Clock, ManualClock, SystemClock
from .access import Forbidden, Grant, NotFound, TablePolicy, hmac_seat_check, parse_viewer
from .core import GameFilter, Replay

__all__ = [
    "Clock",
    "Forbidden",
    "GameFilter",
    "Grant",
    "ManualClock",
    "NotFound",
    "Replay",
    "SystemClock",
    "TablePolicy",
    "hmac_seat_check",
    "parse_viewer",
]
