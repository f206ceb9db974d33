"""The play API on a real platform (engine, bots, matchmaker and web server as processes): the
OpenAPI document is valid, a client written only from it plays a whole game, and bad input is
refused with a reason and changes nothing."""

from __future__ import annotations

import asyncio
import json
import random
import urllib.request
from pathlib import Path
from typing import Any

import pytest
import redis.asyncio as aioredis
from openapi_spec_validator import validate

from services.eventlog.archive import unpack
from services.eventlog.entry import decode_entry
from services.eventlog.records import Header, decode_payload
from services.eventlog.redis_store import RedisEventStore
from services.play import routes

from .fixtures import PlayPlatform
from .openapi_client import ApiRefused, Client


def _doc(base: str) -> dict[str, Any]:
    with urllib.request.urlopen(base + "/api/openapi.json", timeout=10) as r:
        doc: dict[str, Any] = json.loads(r.read())
    return doc


def test_the_openapi_document_is_valid_and_names_every_route(play_platform: PlayPlatform) -> None:
    doc = _doc(play_platform.base)
    validate(doc)
    ids = {op["operationId"] for item in doc["paths"].values() for op in item.values()}
    assert ids == {r.name for r in routes.ROUTES}
    assert doc == routes.openapi()  # served as generated from the structs


ENTRY_SCHEMAS = {
    "header": "HeaderEntry",
    "event": "EventEntry",
    "answer": "AnswerEntry",
    "seed_reveal": "RevealEntry",
    "control": "ControlEntry",
    "abandon": "AbandonEntry",
    "other": "OtherEntry",
}


def pick(decision: dict[str, Any], rng: random.Random) -> list[str]:
    """A legal answer drawn from the decision as the API describes it."""
    keys = [o["key"] for o in decision["options"]]
    if decision["declinable"] and rng.random() < 0.2:
        return []
    n = rng.randint(decision["min"], min(decision["max"], len(keys)))
    return rng.sample(keys, n)


async def sit(client: Client, settings: dict[str, Any], name: str = "Ann") -> tuple[str, int]:
    """A guest at a new table with bots at once: (game, seat)."""
    guest = await client.call("new_guest", {"name": name})
    client.token = guest["token"]
    await client.call("create_table", {"bot_after_ms": 1, **settings})
    async for event, _, data in client.events("status"):
        client.validate("Status", data)
        if event == "status" and data["state"] == "seated":
            return data["seated"]["game"], data["seated"]["seat"]
        assert data["state"] == "waiting"
    raise AssertionError("never seated")


async def play_to_the_end(
    client: Client, game: str, seat: int, rng: random.Random, after: int = 0
) -> dict[str, Any]:
    """Answer every decision of the seat with a legal pick until the game ends; what was seen."""
    seen: dict[str, Any] = {
        "entries": 0,
        "decisions": 0,
        "ended": False,
        "hidden_ok": True,
        "shown": set(),  # the decision ids the seat was shown
        "answers": [],  # the decision ids its own answers in the log name
    }
    async for event, eid, data in client.events(
        "seat_stream", game=game, seat=seat, **{"from": after}
    ):
        if event == "message":
            seen["entries"] += 1
            assert int(eid) == data["seq"]
            client.validate(ENTRY_SCHEMAS[data["kind"]], data)  # each kind has its schema
            if data["kind"] == "answer":
                assert data["answer"]["seat"] == seat  # nobody else's answers
                seen["answers"].append(data["answer"]["decision"])
            e = data.get("event") or {}
            if e.get("type") == "game_ended":
                seen["ended"] = True
            if (
                e.get("type") == "cards_moved"
                and e["dst"] == "hand"
                and e["dst_seat"] != seat
                and e["src"] == "draw"
                and e["cards"]
            ):
                seen["hidden_ok"] = False  # another seat's draw must reach us face down
        elif event == "decision":
            d = data["decision"]
            if d is None:
                continue
            client.validate("Decision", d)
            assert d["seat"] == seat and d["options"]
            assert all(o["text"] and o["text"] != o["key"] for o in d["options"])
            seen["decisions"] += 1
            seen["shown"].add(d["id"])
            await answer(client, game, seat, d, pick(d, rng))
    return seen


async def answer(
    client: Client, game: str, seat: int, d: dict[str, Any], picks: list[str]
) -> dict[str, Any]:
    """Send an answer as a polite client: after a 429 wait and send it again; an illegal
    combination (a discard of the wrong suit …) falls back to declining or the first options."""
    for _ in range(50):
        try:
            out: dict[str, Any] = await client.call(
                "answer", {"decision": d["id"], "picks": picks}, game=game, seat=seat
            )
            return out
        except ApiRefused as exc:
            if exc.status == 429:
                await asyncio.sleep(0.2)
                continue
            if exc.status == 409:  # not pending any more (the clock, the end): say so
                raise
            assert exc.status == 400, exc
            picks = [] if d["declinable"] else [o["key"] for o in d["options"][: d["min"]]]
    raise AssertionError("the answer was never taken")


async def test_a_client_from_the_document_plays_a_whole_game(play_platform: PlayPlatform) -> None:
    client = await Client.fetch(play_platform.base)
    modes = await client.call("modes")
    assert {(t["ruleset"], t["players"]) for t in modes["tables"]} >= {("standard", 5)}
    assert modes["bot_levels"] == ["normal", "easy", "hard"]  # levels.py
    # the options a table may set, with their defaults: every game ends (A-STD-05)
    for ruleset in {t["ruleset"] for t in modes["tables"]}:
        limit = modes["options"][ruleset]["max_reshuffles"]
        assert limit == {"default": 19, "allowed": "an integer in 0..10000"}, ruleset
    assert modes["options"]["jinyu"]["mougong"] == {"default": False, "allowed": "false, true"}
    game, seat = await sit(client, {"ruleset": "chengtian", "players": 2, "bot_level": "normal"})
    me = await client.call("me")
    seated = {"game": game, "seat": seat, "over": False, "alive": True}
    assert me["seated"] == seated and me["waiting"] is None
    seen = await play_to_the_end(client, game, seat, random.Random(4))
    assert seen["ended"] and seen["decisions"] > 0 and seen["hidden_ok"]
    # its answers come back naming the ids it answered, not the engine's decision counter
    assert seen["answers"] and set(seen["answers"]) <= seen["shown"]
    view = await client.call("seat_view", game=game, seat=seat)
    assert view["over"] and view["decision"] is None and view["view"]["over"]
    assert (await client.call("me"))["seated"]["over"]


RULESETS = [  # (table, what the person does on the way: play, 托管 and back, resign)
    ({"ruleset": "standard", "players": 5, "options": {"generals": "draft"}}, "hosting"),
    ({"ruleset": "honglou", "players": 5}, "resign"),
    ({"ruleset": "jinyu", "players": 5, "options": {"mougong": True}}, "play"),
    ({"ruleset": "extended", "players": 8}, "hosting"),
    ({"ruleset": "chengtian", "players": 2}, "resign"),
]


@pytest.mark.parametrize(("table", "how"), RULESETS, ids=[t["ruleset"] for t, _ in RULESETS])
async def test_a_client_from_the_document_plays_every_ruleset(
    play_platform: PlayPlatform, table: dict[str, Any], how: str
) -> None:
    """A client that knows only the document plays a game of each ruleset: it names the
    cards of its decisions from the game's catalogue, answers what is asked, and on the way
    hands its seat to 托管 and takes it back, or resigns and follows the rest as a
    spectator; every response and every streamed message is checked against its schema, and
    the game ends and verifies."""
    client = await Client.fetch(play_platform.base)
    game, seat = await sit(client, {**table, "bot_level": "normal"}, f"{table['ruleset']} client")
    d, _ = await answer_one(client, game, seat)  # (the game has started: its catalogue is)
    catalogue = await client.call("catalogue", game=game)
    assert catalogue["ruleset"] == table["ruleset"]
    cards = {c["id"]: c for c in catalogue["cards"]}
    for o in d["options"]:  # an option naming a card names one of the catalogue's
        assert o.get("card", -1) < 0 or o["card"] in cards, o
    if how == "hosting":
        assert (await client.call("hosting", {"hosted": True}, game=game, seat=seat))["hosted"]
        await asyncio.sleep(0.5)  # the bot plays a few of the seat's decisions
        try:
            back = await client.call("hosting", {"hosted": False}, game=game, seat=seat)
            assert back["hosted"] is False
        except ApiRefused as exc:  # the bots finished the game meanwhile: 409, as documented
            assert exc.status == 409 and "over" in exc.body["error"], exc
    if how == "resign":
        await client.call("resign", game=game, seat=seat)
        assert (await client.call("me"))["seated"] is None
        async for event, _, data in client.events("stream", game=game):
            if event == "message":
                client.validate(ENTRY_SCHEMAS[data["kind"]], data)
        info = await client.call("game", game=game)
        assert info["over"]
    else:
        seen = await play_to_the_end(client, game, seat, random.Random(5))
        assert seen["ended"] and seen["hidden_ok"]
    report = await client.call("verify", game=game)
    assert report["ok"], report
    page = await client.call("events", game=game)
    for x in page["entries"]:
        client.validate(ENTRY_SCHEMAS[x["kind"]], x)
    assert page["over"] and page["entries"][-1]["kind"] == "seed_reveal"


async def test_a_person_plays_against_hard_bots(play_platform: PlayPlatform) -> None:
    """A standard 5-seat table at level hard: its four bots look ahead on worlds the engine
    deals them (services/engine/worlds.py), and the person's game runs to its end."""
    client = await Client.fetch(play_platform.base)
    game, seat = await sit(client, {"ruleset": "standard", "players": 5, "bot_level": "hard"})
    seen = await play_to_the_end(client, game, seat, random.Random(9))
    assert seen["ended"] and seen["decisions"] > 0 and seen["hidden_ok"]
    # a finished game's live log is dropped once archived: its header is read from the archive
    archive = Path(play_platform.run.archive_dir) / f"{game}.arena"
    for _ in range(100):
        if archive.exists():
            break
        await asyncio.sleep(0.1)
    unpacked = unpack(archive.read_bytes())
    assert unpacked.damage is None
    header = decode_payload(decode_entry(unpacked.records[0]).payload, Header)
    assert [s.player for s in header.seats if s.bot] == ["bot:hard"] * 4


async def answer_one(client: Client, game: str, seat: int) -> tuple[dict[str, Any], int]:
    """Wait for the seat's first decision; (the decision, the log version it was asked at)."""
    async for event, _, data in client.events("seat_stream", game=game, seat=seat):
        if event == "decision" and data["decision"] is not None:
            return data["decision"], data["version"]
    raise AssertionError("no decision")


async def test_bad_input_is_refused_with_a_reason_and_changes_nothing(
    play_platform: PlayPlatform,
) -> None:
    client = await Client.fetch(play_platform.base)
    game, seat = await sit(
        client, {"ruleset": "chengtian", "players": 2, "bot_level": "random"}, "<b>bold</b>"
    )
    store = RedisEventStore(
        aioredis.Redis.from_url(play_platform.redis_url), play_platform.namespace
    )
    logs = Path(play_platform.run.archive_dir).parent / "logs"
    assert list(logs.glob("*.log"))
    tracebacks = _tracebacks(logs)
    try:
        d, _ = await answer_one(client, game, seat)
        before = await store.head(game)

        async def refused(status: int, op: str, body: Any = None, **params: Any) -> str:
            with pytest.raises(ApiRefused) as err:
                await client.call(op, body, **params)
            assert err.value.status == status, err.value
            return str(err.value.body["error"])

        # an option that is not offered, too many picks, a stale decision
        reason = await refused(
            400, "answer", {"decision": d["id"], "picks": ["card:9999"]}, game=game, seat=seat
        )
        assert "illegal" in reason
        too_many = [o["key"] for o in d["options"]] * 2
        await refused(400, "answer", {"decision": d["id"], "picks": too_many}, game=game, seat=seat)
        await refused(409, "answer", {"decision": d["id"] + 5, "picks": []}, game=game, seat=seat)
        # malformed bodies
        await refused(400, "answer", {"picks": []}, game=game, seat=seat)
        await refused(400, "answer", {"decision": "one"}, game=game, seat=seat)
        await refused(400, "answer", {"decision": d["id"], "extra": 1}, game=game, seat=seat)
        # someone else's seat or game (a real one, another person's), no credential
        await refused(403, "answer", {"decision": d["id"]}, game=game, seat=1 - seat)
        await refused(403, "seat_view", game="m-" + "0" * 32, seat=seat)
        bob = await Client.fetch(play_platform.base)
        bobs_game, bobs_seat = await sit(bob, {"ruleset": "chengtian", "players": 2}, "Bob")
        bobs_before = await store.head(bobs_game)
        for op, body in (("seat_view", None), ("answer", {"decision": d["id"]})):
            await refused(403, op, body, game=bobs_game, seat=bobs_seat)
        await refused(403, "hosting", {"hosted": True}, game=bobs_game, seat=bobs_seat)
        await refused(403, "resign", game=bobs_game, seat=bobs_seat)
        await refused(403, "answer", {"decision": d["id"]}, game=bobs_game, seat=seat)
        await refused(400, "seat_view", game="bad!id", seat=seat)
        token, client.token = client.token, "forged"
        await refused(401, "answer", {"decision": d["id"]}, game=game, seat=seat)
        client.token = token
        assert await store.head(game) == before  # nothing reached the log
        assert await store.head(bobs_game) >= bobs_before  # (Bob's own game goes on)

        # raw HTTP: wrong content type, no JSON, an oversized body, an unknown route
        raw = await _raw(
            play_platform,
            "POST",
            f"/api/games/{game}/seats/{seat}/answer",
            b"x",
            "text/plain",
            token,
        )
        assert raw[0] == 415
        raw = await _raw(
            play_platform,
            "POST",
            f"/api/games/{game}/seats/{seat}/answer",
            b"{",
            "application/json",
            token,
        )
        assert raw[0] == 400 and "JSON" in raw[1]["error"]
        raw = await _raw(
            play_platform, "POST", "/api/guests", b"x" * 70_000, "application/json", ""
        )
        assert raw[0] == 413
        raw = await _raw(play_platform, "PUT", "/api/guests", b"{}", "application/json", "")
        assert raw[0] == 405
        # a credential in the URL opens nothing (URLs end up in logs): header or cookie only
        for q in (f"?token={token}", f"?session={token}", f"?arena_session={token}"):
            raw = await _raw(
                play_platform, "GET", f"/api/games/{game}/seats/{seat}{q}", b"", "", ""
            )
            assert raw[0] == 401, (q, raw)
        assert await store.head(game) == before

        # the same answer twice is applied once
        first = await client.call(
            "answer",
            {"decision": d["id"], "picks": []}
            if d["declinable"]
            else {"decision": d["id"], "picks": [d["options"][0]["key"]]},
            game=game,
            seat=seat,
        )
        again = await client.call(
            "answer",
            {"decision": d["id"], "picks": []}
            if d["declinable"]
            else {"decision": d["id"], "picks": [d["options"][0]["key"]]},
            game=game,
            seat=seat,
        )
        assert (
            not first["duplicate"] and again["duplicate"] and again["version"] == first["version"]
        )

        # a flood of answers is refused per seat
        statuses = await asyncio.gather(
            *(
                _raw(
                    play_platform,
                    "POST",
                    f"/api/games/{game}/seats/{seat}/answer",
                    b'{"decision": 0}',
                    "application/json",
                    token,
                )
                for _ in range(30)
            )
        )
        assert 429 in [s for s, _ in statuses]

        # the name is kept as given (the page shows it as text)
        header = json.loads(
            urllib.request.urlopen(f"{play_platform.base}/api/games/{game}", timeout=5).read()
        )["header"]
        assert header["seats"][seat]["name"] == "<b>bold</b>"
        assert _tracebacks(logs) == tracebacks  # nothing was logged for any of it
    finally:
        await store.client.aclose()


def _tracebacks(logs: Path) -> tuple[int, int]:
    """(tracebacks in the platform's service logs, lines in the web server's: the play API's
    process, which logs nothing for a refused request)."""
    text = "".join(p.read_text(errors="replace") for p in logs.glob("*.log"))
    web = (logs / "replay-server.log").read_text(errors="replace")
    return text.count("Traceback"), web.count("\n")


async def _raw(
    p: PlayPlatform, method: str, path: str, body: bytes, ctype: str, token: str
) -> tuple[int, Any]:
    host, port = p.base.split("//")[1].split(":")
    reader, writer = await asyncio.open_connection(host, int(port))
    head = f"{method} {path} HTTP/1.1\r\nHost: x\r\nContent-Type: {ctype}\r\nContent-Length: {len(body)}\r\n"
    if token:
        head += f"Authorization: Bearer {token}\r\n"
    writer.write(head.encode() + b"\r\n" + body)
    await writer.drain()
    data = await reader.read()
    writer.close()
    status = int(data.split(b" ", 2)[1])
    payload = data.split(b"\r\n\r\n", 1)[1]
    return status, json.loads(payload) if payload else None


async def controls(client: Client, game: str, seat: int, want: int) -> list[dict[str, Any]]:
    """Follow the seat's stream (without answering) until `want` control entries arrived."""
    got: list[dict[str, Any]] = []
    async for event, _, data in client.events("seat_stream", game=game, seat=seat):
        if event == "message" and data["kind"] == "control":
            got.append(data["control"])
            if len(got) == want:
                return got
    raise AssertionError(f"the game ended with {got}")


async def test_timeouts_host_the_seat_another_device_takes_it_back(
    play_platform: PlayPlatform,
) -> None:
    client = await Client.fetch(play_platform.base)
    settings = {"ruleset": "chengtian", "players": 2, "time_limit_ms": 2000, "hosted_after": 1}
    game, seat = await sit(client, settings)
    d, _ = await answer_one(client, game, seat)
    assert d["deadline_ms"] > 0  # the person's clock runs
    # the person stays silent: the time-out answers for them and puts the seat on 托管
    (control,) = await controls(client, game, seat, 1)
    assert control == {"seat": seat, "hosted": True, "reason": "timeouts"}

    # another device with the same credential finds the same seat, on 托管, and takes it back
    other = await Client.fetch(play_platform.base)
    other.token = client.token
    me = await other.call("me")
    assert (me["seated"]["game"], me["seated"]["seat"]) == (game, seat)
    view = await other.call("seat_view", game=game, seat=seat)
    assert view["hosted"] and view["view"]["viewer"] == seat
    mine = view["view"]["seats"][seat]
    assert mine["hand_count"] == len(mine["hand"])  # the seat sees its own hand
    back = await other.call("hosting", {"hosted": False}, game=game, seat=seat)
    assert back["hosted"] is False
    again = await other.call("hosting", {"hosted": False}, game=game, seat=seat)
    # a repeat changes nothing (the bots' seats play on meanwhile: the version may move)
    assert again["hosted"] is False and again["version"] >= back["version"]
    d, _ = await answer_one(other, game, seat)
    assert d["deadline_ms"] > 0  # the person's own decision again, with a clock
    done = await other.call("resign", game=game, seat=seat)
    assert done["hosted"]
    with pytest.raises(ApiRefused) as err:
        await other.call("hosting", {"hosted": False}, game=game, seat=seat)
    assert err.value.status == 409 and "resigned" in err.value.body["error"]


async def test_a_persons_default_level_plays_their_time_outs_at_a_new_table(
    play_platform: PlayPlatform,
) -> None:
    """The person's default 托管 level, kept on the server (PUT /api/me/settings), set before
    they sit down: the server records it for the seat it opens for them, so the time-out that
    puts the seat on 托管 hands it to that level's bot, not the table's."""
    client = await Client.fetch(play_platform.base)
    client.token = (await client.call("new_guest", {"name": "Dee"}))["token"]
    assert await client.call("set_settings", {"hosted_level": "hard"}) == {"hosted_level": "hard"}
    other = await Client.fetch(play_platform.base)  # another device, the same credential
    other.token = client.token
    assert await other.call("settings") == {"hosted_level": "hard"}
    settings = {"ruleset": "chengtian", "players": 2, "time_limit_ms": 2000, "hosted_after": 1}
    await client.call("create_table", {"bot_after_ms": 1, **settings})
    game, seat = await seated(client)
    # the person stays silent: the level entry (hosting nothing), then the time-out's 托管
    assert await controls(client, game, seat, 2) == [
        {"seat": seat, "hosted": False, "reason": "level", "level": "hard"},
        {"seat": seat, "hosted": True, "reason": "timeouts"},
    ]
    view = await other.call("seat_view", game=game, seat=seat)
    assert view["hosted"]
    await client.call("resign", game=game, seat=seat)


async def seated(client: Client) -> tuple[str, int]:
    """Follow the person's status until seated: (game, seat)."""
    async for event, _, data in client.events("status"):
        if event == "status" and data["state"] == "seated":
            return data["seated"]["game"], data["seated"]["seat"]
    raise AssertionError("never seated")


async def test_quick_play_sits_people_at_the_same_open_table(play_platform: PlayPlatform) -> None:
    """Quick play joins the oldest open table with the same ruleset, size and options (the
    second person sits at the first's), and opens a table when none matches."""
    settings = {"ruleset": "chengtian", "players": 2, "bot_after_ms": 120_000}
    ann, bob, cy = [await Client.fetch(play_platform.base) for _ in range(3)]
    for client, name in ((ann, "Ann"), (bob, "Bob"), (cy, "Cy")):
        client.token = (await client.call("new_guest", {"name": name}))["token"]
    first = await ann.call("quickplay", {"settings": settings})
    other = await cy.call("quickplay", {"settings": {**settings, "options": {"camp_size": 4}}})
    assert other["table"] != first["table"]  # other options: a table of its own
    second = await bob.call("quickplay", {"settings": settings})
    assert second["table"] == first["table"]
    (a_game, a_seat), (b_game, b_seat) = await seated(ann), await seated(bob)
    assert a_game == b_game and {a_seat, b_seat} == {0, 1}
    assert (await cy.call("me"))["waiting"]["table"] == other["table"]  # still waits
    await cy.call("leave")
    for client, seat in ((ann, a_seat), (bob, b_seat)):  # the bots play it out
        await client.call("resign", game=a_game, seat=seat)
