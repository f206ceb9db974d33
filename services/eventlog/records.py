"""Payloads of the non-event entries: the header, answers, seat control, the platform's end of a
game and the seed reveal.

Payloads are msgpack maps (not arrays) so that a field added later with a default still decodes
old entries; keys are sorted on encode so a payload's bytes depend only on its values.

Seed commitment (the header pins it, the final entry opens it):

    commitment = SHA-256(b"arena-seed-v1\\x00" || salt || seed as u64 big-endian)

The salt is 16 random bytes chosen when the game starts. Without it a small seed could be found
from the commitment by trying seeds; with it the commitment reveals nothing until the salt is
published, and the domain prefix keeps this hash from being confused with any other SHA-256 use.
"""

from __future__ import annotations

import hashlib
import hmac
import secrets
from collections.abc import Callable
from typing import Any, TypeVar

import msgspec

from ..contracts.streams import Seat as Seat  # the header names seats as matches do

SEED_DOMAIN = b"arena-seed-v1\x00"
COMMITMENT_SCHEME = "sha256(arena-seed-v1\\0 || salt || seed_u64be)"


class Header(msgspec.Struct, frozen=True, kw_only=True):
    """The first entry: everything needed to re-run the game, except the (committed) seed."""

    game_id: str
    ruleset: str
    players: int
    rules_version: str
    seats: list[Seat]
    seed_commitment: bytes
    options: dict[str, Any] = {}
    started_at_ms: int = 0
    commitment_scheme: str = COMMITMENT_SCHEME


class AnswerRecord(msgspec.Struct, frozen=True):
    """An accepted answer: decision id, the seat that gave it, its picks.

    `auto` marks an answer the server gave for a silent seat (time-out default).
    """

    decision: int
    seat: int
    picks: list[str]
    auto: bool = False


class SeatControl(msgspec.Struct, frozen=True, omit_defaults=True):
    """Who plays a person's seat from here on (entry kind ``control``): ``hosted`` True = the
    seat's bot (托管), False = the person again.

    ``reason``: ``timeouts`` (the table's number of time-outs in a row), ``asked`` (the person
    asked for 托管), ``resigned`` (the person left: the bot plays to the end), ``taken_back``,
    or ``level`` (only the seat's 托管 level is set: the person's default level, recorded when
    the web server opens their seat; ``hosted`` then says who plays the seat as it was, so a
    reader that folds only ``hosted`` folds it as no change).
    ``level``: the bot level the person chose for their seat's 托管 ("": none chosen, the
    table's; left out when empty, so entries without it encode as before).
    It carries no engine input: re-running a game skips it (verify.py)."""

    seat: int
    hosted: bool
    reason: str
    level: str = ""


class Abandon(msgspec.Struct, frozen=True):
    """The platform ended the game before its rules did (entry kind ``abandon``): ``reason``
    is what ``game_ended`` says (``decision_limit``, ``log_limit``: the platform's caps on a
    game; ``stalled``: nobody could move it), ``detail`` the same in words. An engine input:
    re-running a game calls ``api.abandon(game, reason)`` here, whose ``game_ended`` (a draw,
    no winners) follows in the log (verify.py)."""

    reason: str
    detail: str = ""


class SeedReveal(msgspec.Struct, frozen=True, kw_only=True):
    """The last entry of a finished game: opens the commitment, records the outcome."""

    seed: int
    salt: bytes
    ended_at_ms: int = 0
    winners: list[int] = []
    sides: list[str] = []  # the winning roles (a lobby names the side that won); [] = none


_encoder = msgspec.msgpack.Encoder(order="sorted")
T = TypeVar("T")


encode_payload: Callable[[msgspec.Struct], bytes] = _encoder.encode
"""Struct -> payload bytes (sorted keys). (The encoder's own method: the engine encodes an
answer with every decision.)"""


def decode_payload(data: bytes, kind: type[T]) -> T:
    """Payload bytes -> struct of type `kind`. Raises msgspec.DecodeError/ValidationError."""
    return msgspec.msgpack.decode(data, type=kind)


def new_salt() -> bytes:
    """A fresh random salt for a seed commitment."""
    return secrets.token_bytes(16)


def commit_seed(seed: int, salt: bytes) -> bytes:
    """The commitment to `seed` under `salt` (see the module docstring)."""
    if not 0 <= seed < 2**64:
        raise ValueError(f"seed must fit in 64 unsigned bits, got {seed}")
    return hashlib.sha256(SEED_DOMAIN + salt + seed.to_bytes(8, "big")).digest()


def reveal_matches(header: Header, reveal: SeedReveal) -> bool:
    """Whether the revealed seed and salt open the header's commitment."""
    try:
        opened = commit_seed(reveal.seed, reveal.salt)
    except ValueError:
        return False
    return hmac.compare_digest(opened, header.seed_commitment)
