"""Seat tokens: who may answer for which seat of which game, signed with HMAC-SHA256.

    token = base64url(claims JSON) "." base64url(HMAC-SHA256(secret, b"arena-seat-v1." + claims))

The claims name the game (`g`), the seat (`s`) and the expiry (`exp`, ms since the epoch). The
issuer (matchmaking) and every engine worker share the secret (env `ARENA_SECRET`); a token
carries no other authority. A spectator holds no token and so can never act.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import time
from collections import OrderedDict

import msgspec

DEV_SECRET = b"arena-dev-secret: set ARENA_SECRET in production"
DOMAIN = b"arena-seat-v1."
MAX_TOKEN = 1024


class SeatClaims(msgspec.Struct, frozen=True):
    """What a valid token grants: acting for `seat` in `g` until `exp`."""

    g: str
    s: int
    exp: int


class BadToken(Exception):
    """A token that is malformed, forged or expired (the caller is not authenticated)."""


def secret_from_env() -> bytes:
    """The signing secret: ARENA_SECRET, or the development default for local runs."""
    value = os.environ.get("ARENA_SECRET")
    return value.encode() if value else DEV_SECRET


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, claims: bytes) -> bytes:
    return hmac.new(secret, DOMAIN + claims, hashlib.sha256).digest()


def issue(
    secret: bytes, game: str, seat: int, ttl_ms: int = 24 * 3600 * 1000, now_ms: int | None = None
) -> str:
    """A token for `seat` of `game`, valid for `ttl_ms`."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    claims = msgspec.json.encode(SeatClaims(game, seat, now + ttl_ms))
    return f"{_b64(claims)}.{_b64(_sign(secret, claims))}"


def verify(secret: bytes, token: str, now_ms: int | None = None) -> SeatClaims:
    """The claims of a genuine, unexpired token; raises BadToken otherwise."""
    if not token or len(token) > MAX_TOKEN or token.count(".") != 1:
        raise BadToken("malformed seat token")
    body, sig = token.split(".")
    try:
        claims, mac = _unb64(body), _unb64(sig)
    except (ValueError, UnicodeError):
        raise BadToken("malformed seat token") from None
    if not hmac.compare_digest(mac, _sign(secret, claims)):
        raise BadToken("seat token signature does not match")
    try:
        out = msgspec.json.decode(claims, type=SeatClaims)
    except msgspec.MsgspecError:
        raise BadToken("malformed seat token claims") from None
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if out.exp <= now:
        raise BadToken("seat token expired")
    return out


class Verifier:
    """`verify` with the signature check done once per distinct token (bots and players send
    the same token with every answer): a bounded LRU of tokens already found genuine. The
    expiry is still checked on every call; forged or malformed tokens are never cached."""

    def __init__(self, secret: bytes, capacity: int = 16_384) -> None:
        self.secret = secret
        self.capacity = capacity
        self._known: OrderedDict[str, SeatClaims] = OrderedDict()

    def verify(self, token: str, now_ms: int | None = None) -> SeatClaims:
        """See `verify`."""
        claims = self._known.get(token)
        if claims is None:
            claims = verify(self.secret, token, now_ms)
            self._known[token] = claims
            if len(self._known) > self.capacity:
                self._known.popitem(last=False)
            return claims
        now = int(time.time() * 1000) if now_ms is None else now_ms
        if claims.exp <= now:
            del self._known[token]
            raise BadToken("seat token expired")
        return claims
