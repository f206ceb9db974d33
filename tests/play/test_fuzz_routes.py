"""Every route of the web server, walked with what an attacker sends (issue 40 item 5).

The routes come from routes.ROUTES (the play API's table, which also lists the Bot API's, the
tournaments', the chart's and TV's, and the replay server's own), plus the viewer's page and
static files, so a route added later is walked too. Each gets: path parameters that are
negative, fractional, huge, empty, overlong, bad UTF-8 or traversals; a path part missing or one
too many; every other method; wrong credentials (none, junk, empty, another kind's, a broken
cookie); and, for a route with a body, every field of its body of the wrong JSON type, numbers
past any bound, unknown fields, bad UTF-8, a body that is not JSON or nested without end,
another content type and one over the size limit; for a route with query parameters, each of
them malformed.

The server is the web server's own stack in this process (HttpServer with the play, Bot API and
tournament routers; a real matchmaker over signed gRPC; a real engine's GameService; Redis),
with a person seated at a live game, a bot account seated at it too and an organiser, so that
the malformed requests are made with credentials that pass, and reach as far as they can.

Every answer must be: a 2xx for a read (GET), or a 4xx whose body is one line of JSON
``{"error": "..."}`` (never a 5xx, never a traceback); nothing logged at ERROR or with a
traceback; and a refused request changes nothing: every key of the namespace in Redis (its
value, not its expiry) and the game's log are as they were.
"""

from __future__ import annotations

import asyncio
import json
import logging
import urllib.parse
from collections import Counter
from collections.abc import AsyncIterator
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any

import msgspec
import pytest
import redis.asyncio as aioredis
from hypothesis import HealthCheck, given, settings
from hypothesis import strategies as st

from services.contracts.streams import NewMatch, Seat
from services.engine.grpc_server import make_server as make_engine_server
from services.engine.grpc_server import set_serving
from services.engine.service import Games
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore
from services.play import routes
from services.play.accounts import Accounts
from services.replay.http import MAX_BODY

from .fixtures import matchmaker_server, web_server

SECRET = b"route-fuzz-secret-" + b"x" * 32
GAME = "fz1"
METHODS = ("GET", "POST", "PUT", "DELETE", "PATCH", "OPTIONS", "HEAD")


@dataclass
class Env:
    port: int
    client: aioredis.Redis
    namespace: str
    store: InMemoryEventStore
    creds: dict[str, str] = field(default_factory=dict)  # kind -> Authorization value
    tournament: str = ""


@pytest.fixture
async def env(
    redis_client: aioredis.Redis, redis_namespace: str, tmp_path: Path
) -> AsyncIterator[Env]:
    ns = redis_namespace
    store = InMemoryEventStore()
    games = Games(store, MemorySide(), SECRET)
    engine_server, engine_port, checker = make_engine_server(games)
    await engine_server.start()
    await set_serving(checker)
    try:
        async with (
            matchmaker_server(redis_client, ns, SECRET) as mm,
            web_server(
                store,
                redis_client,
                ns,
                SECRET,
                [f"127.0.0.1:{engine_port}"],
                mm,
                tournaments_dir=tmp_path / "tournaments",
            ) as web,
        ):
            port = web.port
            e = Env(port, redis_client, ns, store)
            # a person (seat 0) and a bot account (seat 1) at a live game; an organiser
            status, _, guest = await call(port, "POST", "/api/guests", {"name": "Ann"})
            assert status == 201, guest
            accounts = Accounts(redis_client, ns)
            bot, bot_token = await accounts.create_bot("fuzzbot", "fuzz")
            seats = [Seat(guest["player"], name="Ann"), Seat(bot.player, name="fuzzbot")]
            seats += [Seat(f"bot:{i}", bot=True) for i in range(3)]
            match = NewMatch(match_id=GAME, ruleset="standard", seats=seats, seed=7)
            await games.create_game(match)
            await web.play.sessions.seat_at(guest["player"], GAME, 0, 3_600_000)
            _, _, other = await call(port, "POST", "/api/guests", {"name": "Bob"})  # no seat
            e.creds = {
                "guest": f"Bearer {guest['token']}",
                "other": f"Bearer {other['token']}",
                "bot": f"Bearer {bot_token}",
                "organiser": f"Bearer {await accounts.create_organiser('fuzz')}",
            }
            yield e
    finally:
        await engine_server.stop(None)


# ---- one request over a socket ---------------------------------------------------------------


async def raw_call(port: int, raw: bytes) -> tuple[int, bytes]:
    """(status, body) of the answer to `raw`; for a stream (200, b"") once its head is in."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    try:
        writer.write(raw)
        await writer.drain()
        head = await asyncio.wait_for(reader.readuntil(b"\r\n\r\n"), 10)
        first, *lines = head.decode("latin-1").split("\r\n")
        status = int(first.split(" ")[1])
        length = next(
            (
                int(v)
                for k, _, v in (x.partition(":") for x in lines)
                if k.lower() == "content-length"
            ),
            None,
        )
        body = b""
        if length is not None and not raw.startswith(b"HEAD "):
            body = await asyncio.wait_for(reader.readexactly(length), 10)
        return status, body
    finally:
        writer.close()


def build(
    method: str,
    target: str,
    body: bytes | None = None,
    headers: dict[str, str] | None = None,
    ctype: str = "application/json",
) -> bytes:
    head = {"Host": "127.0.0.1"}
    if body is not None:
        head |= {"Content-Type": ctype, "Content-Length": str(len(body))}
    head |= headers or {}
    lines = [f"{method} {target} HTTP/1.1", *(f"{k}: {v}" for k, v in head.items() if v != "")]
    return ("\r\n".join(lines) + "\r\n\r\n").encode("utf-8", "surrogateescape") + (body or b"")


async def call(
    port: int, method: str, path: str, doc: Any = None, auth: str = ""
) -> tuple[int, bytes, Any]:
    """A well-formed JSON request: (status, raw body, decoded body)."""
    body = None if doc is None else json.dumps(doc).encode()
    status, raw = await raw_call(port, build(method, path, body, {"Authorization": auth}))
    return status, raw, json.loads(raw) if raw else None


# ---- the cases -------------------------------------------------------------------------------


@dataclass(frozen=True)
class Case:
    route: str  # the route walked (its name), for the failure message
    what: str
    raw: bytes
    write: bool  # a request that would change state (any method but GET/HEAD): it must be refused


BAD_PARTS = [
    "-1",
    "1.5",
    "99999999999999999999999",
    "1e9",
    "%20",
    "x" * 300,
    "%ff%fe",  # not UTF-8
    "%00",
    "..%2F..%2Fetc",
    "é",
    "0x10",
]
BAD_VALUES = ["-1", "1.5", str(10**30), "x", "%ff", "", "1e3", "%00", "NaN", "9" * 5000]
WRONG_TYPES: list[Any] = ["x", 1.5, -1, 10**30, -(10**30), True, None, [], {}, [1, "a"], {"a": 1}]
CONTENT = {
    "guest": "the person's session (seat 0 of the game)",
}


def _fill(path: str, env: Env, **over: str) -> str:
    values = {"game": GAME, "seat": "0", "table": "t-nosuch", "key": "0123456789abcdef"}
    if path.startswith("/api/bot/"):
        values["seat"] = "1"  # the bot account's seat
    values |= over
    for name, value in values.items():
        path = path.replace("{" + name + "}", value)
    return path


def _auth(route: routes.Route, env: Env) -> str:
    """The credential that passes for `route` (its own kind)."""
    if route.auth is True:
        return env.creds["guest"]
    if isinstance(route.auth, str) and route.auth:
        return env.creds[route.auth]
    return ""


def _fields(kind: type[msgspec.Struct]) -> list[str]:
    return list(kind.__struct_fields__)


def _required(kind: type[msgspec.Struct]) -> list[str]:
    fields = _fields(kind)
    return fields[: len(fields) - len(kind.__struct_defaults__)]


def _example(kind: type[msgspec.Struct]) -> dict[str, Any]:
    """A body of the route's type whose fields hold plausible values (each case then spoils
    one)."""
    plausible: dict[str, Any] = {
        "name": "Zed",
        "ruleset": "standard",
        "players": 5,
        "decision": 1,
        "picks": [],
        "hosted": True,
        "level": "",
        "hosted_level": "hard",
        "settings": {"ruleset": "standard", "players": 5},
        "entrants": ["random"],
        "games": 1,
    }
    return {f: plausible.get(f, 1) for f in _fields(kind)}


def cases(env: Env) -> list[Case]:
    out: list[Case] = []
    for r in routes.ROUTES:
        write = r.method not in ("GET", "HEAD")
        auth = _auth(r, env)
        good_path = _fill(r.path, env)
        body_ok = json.dumps(_example(r.body)).encode() if r.body is not None else None

        def add(what: str, raw: bytes, write: bool = write, name: str = r.name) -> None:
            out.append(Case(name, what, raw, write))

        # path parameters
        for param in ("game", "seat", "table", "key"):
            if "{" + param + "}" not in r.path:
                continue
            for bad in BAD_PARTS:
                add(
                    f"{param}={bad[:20]}",
                    build(
                        r.method,
                        _fill(r.path, env, **{param: bad}),
                        body_ok,
                        {"Authorization": auth},
                    ),
                )
        # a part missing, one too many, an overlong path
        add("extra part", build(r.method, good_path + "/x", body_ok, {"Authorization": auth}))
        add("extra parts", build(r.method, good_path + "/x/y/z", body_ok, {"Authorization": auth}))
        if good_path.count("/") > 2:
            short = good_path.rsplit("/", 1)[0] + "/"
            add("missing part", build(r.method, short, body_ok, {"Authorization": auth}))
        add("overlong path", build(r.method, good_path + "/" + "a" * 20_000, body_ok))
        add("double slash", build(r.method, good_path.replace("/api/", "/api//"), body_ok))
        # every other method (a write that it becomes must still be refused: no valid body)
        for m in METHODS:
            if m != r.method and not (m == "HEAD" and r.method == "GET"):
                add(
                    f"method {m}",
                    build(m, good_path, None, {"Authorization": auth}),
                    m not in ("GET", "HEAD"),
                )
        # credentials
        if r.auth:
            others = [
                ("no credential", {}),
                ("junk bearer", {"Authorization": "Bearer x"}),
                ("empty bearer", {"Authorization": "Bearer "}),
                ("basic", {"Authorization": "Basic YTpi"}),
                ("huge bearer", {"Authorization": "Bearer " + "A" * 10_000}),
                ("non-ascii bearer", {"Authorization": "Bearer \udcff\udcfe"}),
                ("broken cookie", {"Cookie": f"{routes.COOKIE}=;;;{routes.COOKIE}"}),
                ("junk cookie", {"Cookie": f"{routes.COOKIE}=%ff%00\udcff"}),
                ("other kind", {"Authorization": env.creds["bot" if r.auth is True else "guest"]}),
            ]
            if r.auth is True and "{seat}" in r.path:
                others.append(("another person", {"Authorization": env.creds["other"]}))
            for what, headers in others:
                add(what, build(r.method, good_path, body_ok, headers))
        # query parameters
        for q in r.query:
            for bad in BAD_VALUES:
                target = f"{good_path}?{q.name}={bad}"
                add(
                    f"{q.name}={bad[:12]}",
                    build(r.method, target, body_ok, {"Authorization": auth}),
                )
        if r.method == "GET":
            add("token in query", build("GET", good_path + "?token=x&viewer=0", None))
        # bodies
        if r.body is not None:
            example = _example(r.body)
            bodies: list[tuple[str, bytes]] = []
            for f in _fields(r.body):
                for wrong in WRONG_TYPES:
                    if type(wrong) is type(example[f]) and (
                        isinstance(wrong, str | bool) or wrong == example[f]
                    ):
                        continue  # perhaps a valid value (a name, a flag)
                    bodies.append(
                        (f"{f}={wrong!r}"[:40], json.dumps({**example, f: wrong}).encode())
                    )
                if f in _required(r.body):
                    rest = {k: v for k, v in example.items() if k != f}
                    bodies.append((f"without {f}", json.dumps(rest).encode()))
            bodies += [
                ("unknown field", json.dumps({**example, "admin": True}).encode()),
                ("bad utf-8", b'{"name": "\xff\xfe", "decision": "\xc3"}'),
                ("not json", b"hello"),
                ("empty", b""),
                ("a list", b"[1,2,3]"),
                ("a number", str(10**400).encode()),
                ("deep", b'{"a":' * 20_000 + b"1" + b"}" * 20_000),
                ("NaN", b'{"players": NaN}'),
                ("duplicate keys", b'{"name": "a", "name": 5}'),
            ]
            for what, body in bodies:
                add(what, build(r.method, good_path, body, {"Authorization": auth}))
            add(
                "text/plain",
                build(r.method, good_path, body_ok, {"Authorization": auth}, "text/plain"),
            )
            add(
                "form",
                build(
                    r.method,
                    good_path,
                    b"a=1",
                    {"Authorization": auth},
                    "application/x-www-form-urlencoded",
                ),
            )
            over = b'{"name": "' + b"a" * (MAX_BODY + 10) + b'"}'
            add("over the size limit", build(r.method, good_path, over, {"Authorization": auth}))
            lying = build(
                r.method,
                good_path,
                body_ok,
                {"Authorization": auth, "Content-Length": "99999999999999999999"},
            )
            add("a huge Content-Length", lying)
            add(
                "chunked",
                build(
                    r.method,
                    good_path,
                    None,
                    {"Authorization": auth, "Transfer-Encoding": "chunked"},
                ),
            )
        elif write:
            # a body where none is taken, with a credential that may not act (a person at no
            # seat, a junk one): refused for the credential, the body never mistaken for one
            add(
                "a body, junk credential",
                build(r.method, good_path, b'{"x": 1}', {"Authorization": "Bearer x"}),
            )
    # the viewer's page and files
    for target in (
        "/static/..%2F..%2Fpyproject.toml",
        "/static/%ff",
        "/static/.hidden",
        "/%00",
        "/static/" + "a" * 5000,
    ):
        out.append(Case("static", target[:30], build("GET", target), False))
    out.append(Case("static", "POST /", build("POST", "/", b"{}"), True))
    out.append(
        Case("raw", "not HTTP", b"\x16\x03\x01\x00\xa5\x01\x00\x00\xa1\x03\x03\r\n\r\n", False)
    )
    out.append(Case("raw", "no version", b"GET /api/modes\r\n\r\n", False))
    out.append(
        Case("raw", "header without colon", b"GET /api/modes HTTP/1.1\r\nHost x\r\n\r\n", False)
    )
    return out


# ---- what every answer must be -----------------------------------------------------------------


# every key matching ARGV[1] but the rate-limit counters, each followed by its DUMP: one round
# trip for a snapshot (a SCAN and a pipeline of DUMPs, parsed in this process, took a third of
# the test's time: it is taken after every refused request, a thousand of them)
SNAPSHOT_LUA = """
local out = {}
for _, k in ipairs(redis.call('KEYS', ARGV[1])) do
  if not string.find(k, ':lim:', 1, true) and not string.find(k, ':play:rl:', 1, true) then
    out[#out + 1] = k
    out[#out + 1] = redis.call('DUMP', k)
  end
end
return out
"""


async def snapshot(env: Env) -> dict[bytes, Any]:
    """Every key of the namespace with its value (DUMP: the value, not its expiry), and the
    game's log head. Rate-limit counters (`:lim:`, answers' `:play:rl:`) are left out: an attempt
    counts, refused or not."""
    flat = await env.client.eval(SNAPSHOT_LUA, 0, f"{env.namespace}:*")  # type: ignore[misc]
    out: dict[bytes, Any] = dict(zip(flat[::2], flat[1::2], strict=True))
    out[b"<log head>"] = await env.store.head(GAME)
    return out


def check(case: Case, status: int, body: bytes) -> None:
    where = f"{case.route}: {case.what}: {status} {body[:200]!r}"
    assert status < 500, where
    if status >= 400 or case.write:
        assert 400 <= status < 500, where
        if case.raw.startswith(b"HEAD "):
            return
        text = body.decode()
        assert "\n" not in text and "Traceback" not in text, where
        doc = json.loads(text)
        assert isinstance(doc, dict) and isinstance(doc.get("error"), str), where
        assert 0 < len(doc["error"]) < 500, where


async def walk(env: Env, todo: list[Case], caplog: pytest.LogCaptureFixture) -> Counter[int]:
    """Send every case; the statuses they met."""
    caplog.set_level(logging.WARNING)
    seen: Counter[int] = Counter()
    before = await snapshot(env)
    for case in todo:
        status, body = await raw_call(env.port, case.raw)
        seen[status] += 1
        check(case, status, body)
        if status >= 400:
            after = await snapshot(env)
            changed = {k for k in before.keys() | after.keys() if before.get(k) != after.get(k)}
            assert not changed, f"{case.route}: {case.what}: {status} changed {sorted(changed)[:5]}"
        else:
            before = await snapshot(env)  # a read may have refreshed something (a ticket)
    bad = [r for r in caplog.records if r.levelno >= logging.ERROR or r.exc_info]
    assert not bad, [r.getMessage()[:200] for r in bad[:3]]
    return seen


async def test_every_route_refuses_malformed_input_cleanly(
    env: Env, caplog: pytest.LogCaptureFixture
) -> None:
    todo = cases(env)
    walked = {c.route for c in todo}
    assert walked >= {r.name for r in routes.ROUTES}, {r.name for r in routes.ROUTES} - walked
    assert len(todo) > 1000
    seen = await walk(env, todo, caplog)
    print(f"{len(todo)} requests: {dict(sorted(seen.items()))}")
    # the requests went past the first check: every kind of refusal was met
    assert set(seen) >= {400, 401, 403, 404, 405, 409, 411, 413, 415, 431}, seen
    # the person and the bot still hold their seats, and can still act: nothing was spoiled
    status, _, me = await call(env.port, "GET", "/api/me", auth=env.creds["guest"])
    assert status == 200 and me["seated"]["game"] == GAME, me


# ---- random bodies, paths and queries (hypothesis) ---------------------------------------------

json_doc = st.recursive(
    st.none()
    | st.booleans()
    | st.integers(-(2**80), 2**80)
    | st.floats(allow_nan=False)
    | st.text(max_size=10),
    lambda inner: (
        st.lists(inner, max_size=4) | st.dictionaries(st.text(max_size=8), inner, max_size=4)
    ),
    max_leaves=16,
)
part = st.one_of(
    st.sampled_from(BAD_PARTS + [GAME, "0", "1", "4", "5"]),
    st.text(max_size=30).map(lambda s: urllib.parse.quote(s, safe="")),
    st.integers(-(2**70), 2**70).map(str),
)


@st.composite
def random_requests(draw: st.DrawFn) -> tuple[str, str, bytes | None, str]:
    r = draw(st.sampled_from(routes.ROUTES))
    path = r.path
    for param in ("game", "seat", "table", "key"):
        path = path.replace("{" + param + "}", draw(part))
    query = "&".join(
        f"{q.name}={urllib.parse.quote(draw(st.text(max_size=12) | st.integers(-(2**70), 2**70).map(str)))}"
        for q in r.query
        if draw(st.booleans())
    )
    body = None
    if r.body is not None or draw(st.booleans()):
        fields = {
            f: draw(json_doc) for f in (_fields(r.body) if r.body else []) if draw(st.booleans())
        }
        extra = draw(st.dictionaries(st.text(max_size=6), json_doc, max_size=2))
        body = json.dumps(fields | extra).encode()
    method = draw(st.sampled_from([r.method, r.method, r.method, *METHODS]))
    auth = draw(st.sampled_from(["guest", "other", "bot", "organiser", "", "junk"]))
    return method, path + ("?" + query if query else ""), body, auth


async def _random(env: Env, caplog: pytest.LogCaptureFixture, req: Any) -> None:
    method, target, body, auth = req
    header = env.creds.get(auth, "Bearer junk" if auth == "junk" else "")
    raw = build(method, target, body, {"Authorization": header})
    # a random request may be valid (a guest sits down, a bot joins a table): it may succeed,
    # and only the refused ones must change nothing
    case = Case("random", f"{method} {target[:80]}", raw, False)
    await walk(env, [case], caplog)


@settings(max_examples=150, deadline=None, suppress_health_check=list(HealthCheck))
@given(req=random_requests())
async def test_random_requests_to_every_route(
    env: Env, caplog: pytest.LogCaptureFixture, req: Any
) -> None:
    await _random(env, caplog, req)


@pytest.mark.slow
@settings(max_examples=3000, deadline=None, suppress_health_check=list(HealthCheck))
@given(req=random_requests())
async def test_random_requests_to_every_route_long(
    env: Env, caplog: pytest.LogCaptureFixture, req: Any
) -> None:
    await _random(env, caplog, req)
