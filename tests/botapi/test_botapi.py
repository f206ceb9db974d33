"""The Bot API on a real platform (engine, bot worker, matchmaker and web server as processes):
accounts issued by the CLI and by an organiser, a bot written in Node.js from docs/botapi.md
plays a table against the built-in bots, the game verifies and the bot is rated; a bot sees only
its seats; a silent bot is answered by the server's default and put on 托管, like a person."""

from __future__ import annotations

import json
import subprocess
import time
import urllib.error
import urllib.request
from typing import Any

from tests.play.fixtures import PlayPlatform

from .helpers import arena_tool, http, nodebot


def _redis(p: PlayPlatform) -> list[str]:
    return ["--redis-url", p.redis_url, "--namespace", p.namespace]


def new_bot(p: PlayPlatform, name: str = "Nodey") -> dict[str, Any]:
    """A bot account issued by the operator's CLI."""
    out: dict[str, Any] = arena_tool("bot-account", "create", name, *_redis(p))
    return out


def test_accounts_from_the_cli_and_from_an_organiser(play_platform: PlayPlatform) -> None:
    base = play_platform.base
    bot = new_bot(play_platform)
    assert bot["player"].startswith("b-") and bot["token"].startswith("bot_")
    status, me = http("GET", base + "/api/bot/me", bot["token"])
    assert status == 200 and me["player"] == bot["player"] and me["name"] == "Nodey"
    assert me["seats"] == [] and me["waiting"] is None
    for token in (None, "bot_nonsense", "org_nonsense", bot["token"][:-2]):
        status, body = http("GET", base + "/api/bot/me", token)
        assert status == 401 and "token" in body["error"]

    org = arena_tool("organiser-token", "create", "Olga", *_redis(play_platform))
    status, who = http("GET", base + "/api/organiser", org["token"])
    assert (status, who) == (200, {"name": "Olga"})
    assert http("POST", base + "/api/bot-accounts", bot["token"], {"name": "x"})[0] == 401
    status, body = http("POST", base + "/api/bot-accounts", org["token"], {"name": "\x07"})
    assert status == 400 and "control" in body["error"]
    status, issued = http("POST", base + "/api/bot-accounts", org["token"], {"name": "Webby"})
    assert status == 201 and issued["player"].startswith("b-")
    assert http("GET", base + "/api/bot/me", issued["token"])[1]["name"] == "Webby"
    status, listing = http("GET", base + "/api/bot-accounts")
    owners = {b["player"]: b["owner"] for b in listing["bots"]}
    assert owners[issued["player"]] == "Olga" and owners[bot["player"]] == "operator"
    assert "token" not in json.dumps(listing)

    revoked = arena_revoke(play_platform, issued["player"])
    assert "revoked" in revoked
    assert http("GET", base + "/api/bot/me", issued["token"])[0] == 401


def arena_revoke(p: PlayPlatform, player: str) -> str:
    out = subprocess.run(
        ["python3", "-m", "services.cli", "bot-account", "revoke", player, *_redis(p)],
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return out.stdout


def _entries(base: str, game: str, viewer: str = "god") -> list[dict[str, Any]]:
    url = f"{base}/api/games/{game}/events?viewer={viewer}"
    with urllib.request.urlopen(url, timeout=30) as r:
        entries: list[dict[str, Any]] = json.loads(r.read())["entries"]
    return entries


def test_a_node_bot_plays_a_table_against_built_in_bots(play_platform: PlayPlatform) -> None:
    """The bot of tests/botapi/nodebot.mjs (Node's standard library only) opens a table by
    quick play, plays its seat to the end; its answers are the engine's checked ones, the game
    verifies, and the bot is rated in the mode."""
    base = play_platform.base
    bot = new_bot(play_platform, "Nodey table")
    proc = nodebot(base, bot["token"], "--quickplay", "standard:5", "--games", "1", "--seed", "3")
    try:
        out, err = proc.communicate(timeout=240)
    finally:
        proc.kill()
    assert proc.returncode == 0, err
    lines = [json.loads(x) for x in out.splitlines() if x.strip()]
    summary = lines[-1]["done"]
    game = lines[0]["game"]
    assert summary["games"] == 1 and summary["errors"] == 0, (summary, err)
    assert lines[0]["answers"] > 0

    entries = _entries(base, game)
    header = entries[0]["header"]
    seat = lines[0]["seat"]
    assert header["seats"][seat] == {"player": bot["player"], "bot": False, "name": "Nodey table"}
    assert sum(s["bot"] for s in header["seats"]) == 4  # the built-in bots took the rest
    mine = [e["answer"] for e in entries if e["kind"] == "answer" and e["answer"]["seat"] == seat]
    assert len([a for a in mine if not a["auto"]]) == lines[0]["answers"]  # each one logged
    status, report = http("GET", f"{base}/api/games/{game}/verify")
    assert status == 200 and report["ok"], report

    deadline = time.monotonic() + 30  # the matchmaker's ratings consumer rates the game
    ratings: dict[str, Any] = {}
    while time.monotonic() < deadline and "standard-5" not in ratings:
        ratings = http("GET", base + "/api/bot/me", bot["token"])[1]["ratings"]
        time.sleep(0.1)
    assert ratings["standard-5"]["games"] == 1


def test_a_bot_gets_only_its_seats(play_platform: PlayPlatform) -> None:
    """Another seat of the bot's own game, a seat of a game it does not sit in, and a game that
    does not exist: refused before anything is read."""
    base = play_platform.base
    bot, other = new_bot(play_platform, "Solo"), new_bot(play_platform, "Other")
    status, _ = http(
        "POST",
        base + "/api/bot/quickplay",
        bot["token"],
        {"settings": {"ruleset": "standard", "players": 4, "bot_after_ms": 1}},
    )
    assert status == 200
    seat = _seated(base, bot["token"])
    game, mine = seat["game"], seat["seat"]
    view = http("GET", f"{base}/api/bot/games/{game}/seats/{mine}", bot["token"])[1]
    assert view["seat"] == mine and view["view"]["seats"][mine]["role"]
    others = [view["view"]["seats"][s] for s in range(4) if s != mine]
    for s in range(4):
        if s != mine:
            status, body = http("GET", f"{base}/api/bot/games/{game}/seats/{s}", bot["token"])
            assert status == 403 and "not this bot's" in body["error"]
    # the bot's own view tells it no other seat's role (but the lord's, or a dead seat's) and no
    # hand it has not seen: the game runs on while the test reads, so a face it saw go into
    # another hand (a card it gave, 五谷丰登's pick) may be listed, never a whole hand
    for seen in others:
        assert seen["role"] in ("", "lord") or not seen["alive"], seen
        assert len(seen["hand"]) <= seen["hand_count"], seen
    assert sum(len(o["hand"]) for o in others) < sum(o["hand_count"] for o in others), others
    status, _ = http("GET", f"{base}/api/bot/games/{game}/seats/{mine}", other["token"])
    assert status == 403
    status, _ = http(
        "POST",
        f"{base}/api/bot/games/{game}/seats/{mine}/answer",
        other["token"],
        {"decision": 1, "picks": []},
    )
    assert status == 403
    assert http("GET", f"{base}/api/bot/games/nope/seats/0", bot["token"])[0] == 404
    assert http("GET", f"{base}/api/bot/games/../seats/0", bot["token"])[0] in (400, 404)


def _seated(base: str, token: str, timeout: float = 60) -> dict[str, Any]:
    """The bot's first seat, from its events stream (which also keeps its ticket alive)."""
    req = urllib.request.Request(base + "/api/bot/events")
    req.add_header("Authorization", f"Bearer {token}")
    with urllib.request.urlopen(req, timeout=timeout) as r:
        event = ""
        for raw in r:
            line = raw.decode().rstrip("\n")
            if line.startswith("event: "):
                event = line[7:]
            elif line.startswith("data: ") and event == "seated":
                seat: dict[str, Any] = json.loads(line[6:])
                return seat
    raise AssertionError("the events stream ended")


def test_a_silent_bot_is_answered_by_default_then_hosted(play_platform: PlayPlatform) -> None:
    """A bot that never answers holds the table no longer than a person would: at its deadline
    the server answers for it (an `auto` answer in the log), after `hosted_after` time-outs its
    seat goes on 托管 (a control entry) and the game goes on to its end."""
    base = play_platform.base
    bot = new_bot(play_platform, "Sleepy")
    settings = {
        "ruleset": "standard",
        "players": 4,
        "bot_after_ms": 1,
        "time_limit_ms": 2000,
        "hosted_after": 1,
    }
    assert http("POST", base + "/api/bot/quickplay", bot["token"], {"settings": settings})[0] == 200
    seat = _seated(base, bot["token"])
    game, mine = seat["game"], seat["seat"]
    deadline = time.monotonic() + 120
    entries: list[dict[str, Any]] = []
    while time.monotonic() < deadline:
        try:
            entries = _entries(base, game, "spectator")
        except urllib.error.HTTPError as err:  # matched, not started by an engine yet
            assert err.code == 404, err
            entries = [{"kind": "none"}]
        if entries[-1]["kind"] == "seed_reveal":
            break
        time.sleep(0.2)  # (a GET: polled often, the test waits less past the end)
    assert entries[-1]["kind"] == "seed_reveal", "the game did not end"
    entries = _entries(base, game)  # over: the whole log
    controls = [e["control"] for e in entries if e["kind"] == "control"]
    assert controls and controls[0] == {"seat": mine, "hosted": True, "reason": "timeouts"}
    answers = [
        e["answer"] for e in entries if e["kind"] == "answer" and e["answer"]["seat"] == mine
    ]
    assert answers and answers[0]["auto"]  # the server's default, not the bot's


def test_the_inbox_wait_is_well_under_the_redis_socket_timeout() -> None:
    """A blocking XREAD as long as redis-py's socket timeout races it: the Bot API's inbox
    waited 5 s against a 5 s timeout, and under load the TimeoutError was taken for a Redis
    outage (503 to the bots). Every blocking wait of the web server stays at half of it."""
    import inspect

    import redis.asyncio.connection as redis_connection

    from services.play import botapi
    from services.readside import feed, watch

    timeout_s = (
        inspect.signature(redis_connection.AbstractConnection.__init__)
        .parameters["socket_timeout"]
        .default
    )
    for block_ms in (botapi.INBOX_BLOCK_MS, feed.TAIL_BLOCK_MS, watch.TAIL_BLOCK_MS):
        assert block_ms <= timeout_s * 1000 / 2, (block_ms, timeout_s)
