"""Replay, verify and live spectating: the replay core (a read side, services/readside, plus the
lobby and verify), its HTTP/SSE and gRPC transports, the web viewer (``web/``). See README.md
beside this file.
"""

from ..readside.access import Forbidden, Grant, NotFound, TablePolicy, hmac_seat_check, parse_viewer
from ..readside.clock import Clock, ManualClock, SystemClock
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
