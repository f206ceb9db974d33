"""Credentials derived from the deployment's secret (env ``ARENA_SECRET``).

Seat tokens — who may answer for which seat of which game:

    token = base64url(claims JSON) "." base64url(HMAC-SHA256(secret, b"arena-seat-v1." + claims))

The claims name the game (`g`), the seat (`s`) and the expiry (`exp`, ms since the epoch). The
matchmaker issues them to people, the engine mints short-lived ones for bot seats (in each bot
decision's message), and the engine and the replay server verify them; a token carries no other
authority. A spectator holds no token and so can never act. Bot workers never hold the secret.

Create requests — who may start a game through ``GameService.CreateGame``: the request's fields,
its ``issued_at_ms`` and a random ``nonce`` are signed with HMAC-SHA256 under a key of their own,

    create_key = HMAC-SHA256(secret, b"arena-create-key-v1")

so a seat token can never pass for a create request or the other way round. The engine refuses
an unsigned or forged request, one issued more than ``CREATE_SKEW_MS`` from its clock, and a
nonce it has seen (a replay).

Bot sessions — who may open ``GameService.BotSession`` and be pushed bot seats' decisions (with
their seat tokens): the call's metadata ``arena-bot-key`` carries

    bot_key = hex HMAC-SHA256(secret, b"arena-bot-session-v1." + namespace)

which the engines keep in Redis at ``{ns}:bot-session-key``. Bot workers read it there, so
exactly who may read ``arena:decisions`` (which carries the same tokens) may open a session.

Service calls — who may call a service that takes no seat's credential (the Matchmaker): each
call carries the metadata ``arena-service-auth`` = ``ISSUED_MS.NONCE.MAC`` with

    call_key = HMAC-SHA256(secret, b"arena-service-call-key-v1")
    MAC      = hex HMAC-SHA256(call_key, b"arena-call-v1." + method + "." + ISSUED_MS + "." + NONCE
                                + "." + SHA-256(the request's bytes))

so a call proves its caller holds the secret, names the method and is bound to that request's
bytes; one seen more than ``CREATE_SKEW_MS`` from the server's clock is refused
(services/rpc_guard.py signs on the client side and checks on the server's).

There is no default secret: a service that needs one and finds none, or one shorter than
``MIN_SECRET`` bytes, refuses to start (``require_secret``). ``arena up`` generates a fresh one
per run for its children.
"""

from __future__ import annotations

import base64
import hashlib
import hmac
import os
import secrets
import sys
import time
from collections import OrderedDict
from collections.abc import Iterable
from typing import TYPE_CHECKING

import msgspec

if TYPE_CHECKING:  # the gRPC messages, imported where a request is built or read
    from ..proto_gen.arena.v1 import game_pb2

DOMAIN = b"arena-seat-v1."
CREATE_KEY_DOMAIN = b"arena-create-key-v1"
CREATE_DOMAIN = b"arena-create-v1."
CREATE_SKEW_MS = 5 * 60 * 1000
NONCE_BYTES = 16
MAX_TOKEN = 1024
ENV = "ARENA_SECRET"
MIN_SECRET = 32  # bytes: an HMAC key shorter than this is guessable offline from one token
CALL_KEY_DOMAIN = b"arena-service-call-key-v1"
CALL_DOMAIN = b"arena-call-v1."
CALL_HEADER = "arena-service-auth"


BOT_KEY_DOMAIN = b"arena-bot-session-v1."
BOT_KEY_HEADER = "arena-bot-key"
BOT_WORKER_HEADER = "arena-bot-worker"  # a session's bot worker names itself (for log lines)


def bot_key(secret: bytes, namespace: str) -> str:
    """The bot-session key of a deployment's namespace (hex; see the module docstring)."""
    return hmac.new(secret, BOT_KEY_DOMAIN + namespace.encode(), hashlib.sha256).hexdigest()


def bot_key_name(namespace: str) -> str:
    """The Redis key the engines keep the bot-session key at."""
    return f"{namespace}:bot-session-key"


def bot_key_ok(expected: str, metadata: Iterable[tuple[str, str | bytes]]) -> bool:
    """Whether a call's metadata carries the bot-session key `expected`."""
    for name, value in metadata:
        if name == BOT_KEY_HEADER:
            got = value.encode() if isinstance(value, str) else value
            return hmac.compare_digest(got, expected.encode())
    return False


class MissingSecret(RuntimeError):
    """ARENA_SECRET is unset, empty or too short: nothing can be signed or verified."""


class SeatClaims(msgspec.Struct, frozen=True, omit_defaults=True):
    """What a valid token grants: acting for `seat` in `g` until `exp`. `b`: minted for a bot
    (a bot seat's, or a person's seat on 托管): it answers only while a bot plays the seat and
    never changes who plays it (a bot worker keeps it after the person takes the seat back)."""

    g: str
    s: int
    exp: int
    b: bool = False


class BadToken(Exception):
    """A token that is malformed, forged or expired (the caller is not authenticated)."""


def secret_from_env() -> bytes:
    """The deployment's secret, ARENA_SECRET; raises MissingSecret when it is unset or empty
    (there is no default: a known secret would let anyone mint any seat's token)."""
    value = os.environ.get("ARENA_SECRET", "")
    if not value:
        raise MissingSecret(
            f"{ENV} is not set: every engine, matchmaker and replay server of a deployment "
            "must share one secret (arena up makes one per run)"
        )
    return checked_secret(value.encode())


def checked_secret(secret: bytes) -> bytes:
    """`secret` if it is at least MIN_SECRET bytes long, else MissingSecret (a short secret
    is one a stranger can find by trying keys against a single token)."""
    if len(secret) < MIN_SECRET:
        raise MissingSecret(
            f"{ENV} is {len(secret)} bytes: at least {MIN_SECRET} are needed (make one with "
            "python3 -c 'import secrets; print(secrets.token_hex(32))')"
        )
    return secret


def require_secret(prog: str) -> bytes:
    """`secret_from_env` for a service's start: without a secret, print one clear line and
    exit with status 2 (the service must not start signing or verifying anything)."""
    try:
        return secret_from_env()
    except MissingSecret as exc:
        print(f"{prog}: {exc}", file=sys.stderr, flush=True)
        raise SystemExit(2) from None


def new_secret() -> str:
    """A fresh random secret (what `arena up` gives its children for one run)."""
    return secrets.token_hex(32)


def _b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def _unb64(text: str) -> bytes:
    return base64.urlsafe_b64decode(text + "=" * (-len(text) % 4))


def _sign(secret: bytes, claims: bytes) -> bytes:
    return hmac.new(secret, DOMAIN + claims, hashlib.sha256).digest()


def issue(
    secret: bytes,
    game: str,
    seat: int,
    ttl_ms: int = 24 * 3600 * 1000,
    now_ms: int | None = None,
    *,
    bot: bool = False,
) -> str:
    """A token for `seat` of `game`, valid for `ttl_ms` (`bot`: a bot's, see SeatClaims)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    claims = msgspec.json.encode(SeatClaims(game, seat, now + ttl_ms, bot))
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


# ---- create requests -------------------------------------------------------------------------


class CreateFields(msgspec.Struct, frozen=True, array_like=True):
    """What a create signature covers, in a fixed order (msgspec JSON of an array)."""

    match_id: str
    ruleset: str
    seats: list[tuple[str, bool, str]]  # player id, bot, display name
    options_json: str
    time_limit_ms: int
    hosted_after: int
    issued_at_ms: int
    nonce: str  # hex


class BadCreate(Exception):
    """A create request that is unsigned, forged, stale or replayed."""


def create_key(secret: bytes) -> bytes:
    """The key create requests are signed with (its own domain: never a seat token's key)."""
    return hmac.new(secret, CREATE_KEY_DOMAIN, hashlib.sha256).digest()


def create_signature(secret: bytes, fields: CreateFields) -> bytes:
    """HMAC-SHA256 of the create request's fields under `create_key`."""
    data = CREATE_DOMAIN + msgspec.json.encode(fields)
    return hmac.new(create_key(secret), data, hashlib.sha256).digest()


def sign_create(
    secret: bytes,
    match_id: str,
    ruleset: str,
    seats: list[tuple[str, bool]] | list[tuple[str, bool, str]],
    options_json: str = "",
    time_limit_ms: int = 0,
    now_ms: int | None = None,
    hosted_after: int = 0,
) -> tuple[CreateFields, bytes]:
    """Fields (with a fresh nonce and the time) and signature of a create request; a retry
    signs again (a nonce is accepted once). Seats are (player, bot) or (player, bot, name)."""
    now = int(time.time() * 1000) if now_ms is None else now_ms
    fields = CreateFields(
        match_id,
        ruleset,
        [(s[0], bool(s[1]), str(s[2]) if len(s) > 2 else "") for s in seats],
        options_json,
        time_limit_ms,
        hosted_after,
        now,
        secrets.token_hex(NONCE_BYTES),
    )
    return fields, create_signature(secret, fields)


def create_request(fields: CreateFields, signature: bytes) -> game_pb2.CreateGameRequest:
    """The signed create request as GameService.CreateGame takes it: ``create_request(
    *sign_create(secret, ...))`` (the one way a create request is signed)."""
    from ..proto_gen.arena.v1 import common_pb2, game_pb2

    return game_pb2.CreateGameRequest(
        match_id=fields.match_id,
        ruleset=fields.ruleset,
        seats=[
            common_pb2.Seat(seat=i, player=p, bot=b, name=n)
            for i, (p, b, n) in enumerate(fields.seats)
        ],
        options_json=fields.options_json,
        time_limit_ms=fields.time_limit_ms,
        hosted_after=fields.hosted_after,
        issued_at_ms=fields.issued_at_ms,
        nonce=fields.nonce,
        signature=signature,
    )


def create_fields(request: game_pb2.CreateGameRequest) -> CreateFields:
    """The fields a CreateGame request signs (what `check_create` checks)."""
    return CreateFields(
        match_id=request.match_id,
        ruleset=request.ruleset,
        seats=[(s.player, s.bot, s.name) for s in request.seats],
        options_json=request.options_json,
        time_limit_ms=request.time_limit_ms,
        hosted_after=request.hosted_after,
        issued_at_ms=request.issued_at_ms,
        nonce=request.nonce,
    )


def check_create(
    secret: bytes, fields: CreateFields, signature: bytes, now_ms: int | None = None
) -> None:
    """Raise BadCreate unless `signature` signs `fields` and the request is fresh (the
    caller still has to claim the nonce once)."""
    if not signature:
        raise BadCreate("CreateGame needs a signed request (see services/contracts/tokens.py)")
    if not hmac.compare_digest(signature, create_signature(secret, fields)):
        raise BadCreate("create request signature does not match")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if abs(now - fields.issued_at_ms) > CREATE_SKEW_MS:
        raise BadCreate("create request issued too long ago (or in the future)")
    if len(fields.nonce) != 2 * NONCE_BYTES:
        raise BadCreate("create request nonce must be 16 random bytes")


# ---- service calls ---------------------------------------------------------------------------


class BadCall(Exception):
    """A service call without a valid signature (the caller is not authenticated)."""


def call_key(secret: bytes) -> bytes:
    """The key service calls are signed with (a domain of its own)."""
    return hmac.new(secret, CALL_KEY_DOMAIN, hashlib.sha256).digest()


def _call_mac(key: bytes, method: str, issued: str, nonce: str, body: bytes) -> str:
    data = b".".join(
        [
            CALL_DOMAIN + method.encode(),
            issued.encode(),
            nonce.encode(),
            hashlib.sha256(body).digest(),
        ]
    )
    return hmac.new(key, data, hashlib.sha256).hexdigest()


def sign_call(key: bytes, method: str, body: bytes, now_ms: int | None = None) -> str:
    """The ``arena-service-auth`` value of a call of `method` (``/pkg.Service/Method``) with
    request bytes `body`, under `call_key(secret)`."""
    now = str(int(time.time() * 1000) if now_ms is None else now_ms)
    nonce = secrets.token_hex(8)
    return f"{now}.{nonce}.{_call_mac(key, method, now, nonce, body)}"


def check_call(key: bytes, method: str, value: str, body: bytes, now_ms: int | None = None) -> None:
    """Raise BadCall unless `value` signs a call of `method` with `body`, issued within
    CREATE_SKEW_MS of now."""
    parts = value.split(".") if value and len(value) <= 200 else []
    if len(parts) != 3 or not parts[0].isdigit():
        raise BadCall("this service takes only calls signed with the deployment's secret")
    issued, nonce, mac = parts
    if not hmac.compare_digest(mac.encode(), _call_mac(key, method, issued, nonce, body).encode()):
        raise BadCall("service call signature does not match")
    now = int(time.time() * 1000) if now_ms is None else now_ms
    if abs(now - int(issued)) > CREATE_SKEW_MS:
        raise BadCall("service call signed too long ago (or in the future)")
