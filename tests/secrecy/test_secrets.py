"""Leak 5 of issue 17: secrets fail closed.

No ARENA_SECRET, no start (engine, matchmaker, replay server: one line on stderr, exit 2); no
known default anywhere; `arena up` makes a fresh one per run and gives it only to the services
that sign or check tokens; /metrics listens on the service's --host only.
"""

from __future__ import annotations

import os
import socket
import subprocess
import sys
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry

from services.contracts import tokens
from services.observability import serve, stop_serving
from services.platform.up import Platform, UpConfig, run_secret


@pytest.mark.parametrize(
    "argv",
    [
        ["engine", "--port", "0", "--redis-url", "redis://127.0.0.1:1/0"],
        ["matchmaker", "--port", "0", "--redis-url", "redis://127.0.0.1:1/0"],
        ["replay-server", "--http-port", "0", "--redis-url", "redis://127.0.0.1:1/0"],
    ],
    ids=lambda a: a[0],
)
def test_services_refuse_to_start_without_a_secret(argv: list[str]) -> None:
    """(An empty ARENA_SECRET is refused the same way: tests/contracts/test_tokens.py.)"""
    env = {k: v for k, v in os.environ.items() if k != "ARENA_SECRET"}
    p = subprocess.run(
        [sys.executable, "-m", "services.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, (p.returncode, p.stderr[-500:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "ARENA_SECRET is not set" in lines[0], p.stderr[-500:]
    assert p.stdout == ""  # never announced itself as serving


def test_arena_up_makes_a_secret_per_run_for_the_signing_services_only(
    tmp_path: object, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.delenv("ARENA_SECRET", raising=False)
    a, b = run_secret(), run_secret()
    assert a != b and len(bytes.fromhex(a)) == 32
    cfg = UpConfig(var_dir=tmp_path)  # type: ignore[arg-type]
    one, two = Platform(cfg), Platform(cfg)
    assert one.secret["ARENA_SECRET"] != two.secret["ARENA_SECRET"]
    assert "ARENA_SECRET" not in one.sup.env  # what every child (bot workers too) inherits
    assert not list(tmp_path.rglob("*"))  # type: ignore[attr-defined]  # nothing kept on disk
    shared = "shared-by-several-hosts-" + "x" * 16
    monkeypatch.setenv("ARENA_SECRET", shared)
    assert Platform(cfg).secret["ARENA_SECRET"] == shared
    assert "ARENA_SECRET" not in Platform(cfg).sup.env


@pytest.mark.parametrize(
    "argv",
    [
        ["engine", "--port", "0", "--redis-url", "redis://127.0.0.1:1/0"],
        ["matchmaker", "--port", "0", "--redis-url", "redis://127.0.0.1:1/0"],
        ["replay-server", "--http-port", "0", "--redis-url", "redis://127.0.0.1:1/0"],
    ],
    ids=lambda a: a[0],
)
def test_services_refuse_a_short_secret(argv: list[str]) -> None:
    """Issue 40: a one-character ARENA_SECRET was accepted (and one token is enough to search
    a short key offline). Under 32 bytes: one line, exit 2, nothing served."""
    env = {**os.environ, "ARENA_SECRET": "x" * 31}
    p = subprocess.run(
        [sys.executable, "-m", "services.cli", *argv],
        env=env,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert p.returncode == 2, (p.returncode, p.stderr[-500:])
    lines = p.stderr.strip().splitlines()
    assert len(lines) == 1 and "at least 32" in lines[0], p.stderr[-500:]
    assert p.stdout == ""


def test_arena_up_refuses_a_short_shared_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    from services.contracts.tokens import MissingSecret

    monkeypatch.setenv("ARENA_SECRET", "a")
    with pytest.raises(MissingSecret, match="at least 32"):
        run_secret()


def _other_address() -> str | None:
    """An address of this machine that is not loopback (None if it has none)."""
    with socket.socket(socket.AF_INET, socket.SOCK_DGRAM) as s:
        try:
            s.connect(("192.0.2.1", 9))  # no packet is sent: this only picks a route
        except OSError:
            return None
        addr = str(s.getsockname()[0])
    return None if addr.startswith("127.") or addr == "0.0.0.0" else addr


def test_metrics_bind_the_service_host() -> None:
    server = serve(0, CollectorRegistry(), "127.0.0.1")
    try:
        assert server.server_address[0] == "127.0.0.1"
        with socket.create_connection(("127.0.0.1", server.server_port), timeout=5):
            pass
        other = _other_address()
        if other is not None:  # from the machine's other address nothing answers
            with pytest.raises(OSError):
                socket.create_connection((other, server.server_port), timeout=2).close()
    finally:
        stop_serving(server)
    assert not hasattr(tokens, "DEV_SECRET")


async def test_bot_decisions_carry_a_token_for_their_seat_only() -> None:
    """Bot workers hold no secret: each decisions message carries a short-lived token for the
    decision's seat, which acts for that seat and no other."""
    from services.contracts.streams import BotDecision, NewMatch, Seat
    from services.engine.service import Games, Refused
    from services.engine.side import MemorySide
    from services.eventlog import InMemoryEventStore
    from services.rules import api

    secret = b"bot-tokens"
    games = Games(InMemoryEventStore(), MemorySide(), secret, bot_token_ttl_ms=60_000)
    seats = [Seat("bot:random", True), Seat("ann"), Seat("bot:random", True), Seat("bob")]
    await games.create_game(NewMatch(match_id="g", ruleset="standard", seats=seats, seed=2))
    side = games.side
    assert isinstance(side, MemorySide)
    msgs = [m for m in side.published if isinstance(m, BotDecision)]
    assert msgs and all(m.token for m in msgs)
    m = msgs[-1]
    claims = tokens.verify(secret, m.token)
    assert (claims.g, claims.s) == ("g", m.seat) and seats[m.seat].bot
    hot = await games.get("g")
    d = api.pending(hot.game)
    assert d is not None and d.seat == m.seat
    r = await games.submit_action(
        "g", m.token, (await games.get("g")).ids.opaque(d.id), list(api.default_answer(d).picks)
    )
    assert r.answer.seat == m.seat
    for _ in range(200):  # move on to a decision of another seat: the bot's token is refused
        d = api.pending((await games.get("g")).game)
        assert d is not None
        if d.seat != m.seat:
            with pytest.raises(Refused) as err:
                await games.submit_action(
                    "g",
                    m.token,
                    (await games.get("g")).ids.opaque(d.id),
                    list(api.default_answer(d).picks),
                )
            assert err.value.code == "PERMISSION_DENIED"
            return
        token = tokens.issue(secret, "g", d.seat)
        await games.submit_action(
            "g", token, (await games.get("g")).ids.opaque(d.id), list(api.default_answer(d).picks)
        )
    raise AssertionError("no other seat was asked anything")


async def test_a_bot_token_for_a_person_s_seat_ends_with_its_hosting() -> None:
    """While a person's seat is on 托管 the bot worker gets tokens for it (10 minutes); once the
    person takes the seat back, such a token resigned the person, put the seat on 托管 again
    and answered for them. A bot's token now answers and reads only while a bot plays the
    seat, and never changes who plays it; the person's own token still does."""
    from services.contracts.streams import BotDecision, NewMatch, Seat
    from services.engine.service import Games, Refused
    from services.engine.side import MemorySide
    from services.eventlog import InMemoryEventStore
    from services.rules import api

    secret = b"bot-token-scope"
    games = Games(InMemoryEventStore(), MemorySide(), secret)
    seats = [Seat("ann"), Seat("bot:random", True)]
    await games.create_game(NewMatch(match_id="g", ruleset="chengtian", seats=seats, seed=3))
    ann = tokens.issue(secret, "g", 0)
    await games.set_hosted("g", ann, True)
    side = games.side
    assert isinstance(side, MemorySide)
    for _ in range(100):  # play on until the bots are asked one of ann's decisions
        mine = [m for m in side.published if isinstance(m, BotDecision) and m.seat == 0]
        if mine:
            break
        hot = await games.get("g")
        d = api.pending(hot.game)
        assert d is not None
        await games.submit_action(
            "g",
            tokens.issue(secret, "g", d.seat),
            hot.ids.opaque(d.id),
            api.default_answer(d).picks,
        )
    else:
        raise AssertionError("ann's seat was never played by its bot")
    bot = mine[-1].token
    assert tokens.verify(secret, bot).b and not tokens.verify(secret, ann).b
    with pytest.raises(Refused) as err:
        await games.set_hosted("g", bot, False)  # a bot cannot hand the seat back either
    assert err.value.code == "PERMISSION_DENIED"
    assert await games.viewer_of("g", bot) == 0  # while on 托管 the bot reads ann's view
    await games.set_hosted("g", ann, False)  # ann takes her seat back
    with pytest.raises(Refused) as err:  # ... and no longer: GetView/StreamView/GetDecision
        await games.viewer_of("g", bot)
    assert err.value.code == "PERMISSION_DENIED"
    assert await games.viewer_of("g", ann) == 0 and await games.viewer_of("g", "") < 0
    head = await games.store.head("g")
    for resign in (True, False):
        with pytest.raises(Refused) as err:
            await games.set_hosted("g", bot, True, resign)
        assert err.value.code == "PERMISSION_DENIED"
    for _ in range(100):  # ann's next decision: the bot's token may not answer it
        hot = await games.get("g")
        d = api.pending(hot.game)
        assert d is not None
        if d.seat == 0:
            break
        await games.submit_action(
            "g",
            tokens.issue(secret, "g", d.seat),
            hot.ids.opaque(d.id),
            api.default_answer(d).picks,
        )
        head = await games.store.head("g")
    with pytest.raises(Refused) as err:
        await games.submit_action("g", bot, hot.ids.opaque(d.id), api.default_answer(d).picks)
    assert err.value.code == "PERMISSION_DENIED"
    assert await games.store.head("g") == head  # nothing changed
    r = await games.submit_action("g", ann, hot.ids.opaque(d.id), api.default_answer(d).picks)
    assert r.answer.seat == 0


def test_arena_ups_redis_has_a_password(tmp_path: Path) -> None:
    """Issue 40: Redis had no password. The server `arena up` starts requires one (kept off the
    command line), and the URL it hands out carries it."""
    import redis
    from redis.backoff import NoBackoff
    from redis.retry import Retry

    from services.redisinfra.server import RedisServer, ping, redacted

    server = RedisServer(tmp_path / "redis", persist=False, password="p" * 48)
    try:
        assert ping(server.url) and ":" + "p" * 48 + "@" in server.url
        # (no retries: redis-py retries a refused AUTH with backoff, 4.6 s for nothing)
        bare = redis.Redis(host="127.0.0.1", port=server.port, retry=Retry(NoBackoff(), 0))
        with pytest.raises(redis.AuthenticationError):
            bare.ping()
        bare.close()
        cmdline = Path(f"/proc/{server.pid}/cmdline").read_bytes()
        assert b"p" * 48 not in cmdline
        assert "p" * 48 not in redacted(server.url)
    finally:
        server.stop()
