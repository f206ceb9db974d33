"""Tournaments in the browser's API, on a real platform (engine, bot worker, matchmaker and web
server as processes): an organiser creates one with a Node.js bot among the entrants, the web
server plays it, its page's JSON has the standings by camp with intervals and every game with
its replay, the CSV export lists them, every game verifies; `arena tournament` and the web
server are one service over one journal: the command prints the page, the page shows the
command's run, and the browser continues it; bad requests change nothing."""

from __future__ import annotations

import csv
import io
import json
import subprocess
import time
import urllib.request
from pathlib import Path
from typing import Any

from tests.botapi.helpers import ROOT, arena_tool, http, nodebot
from tests.play.fixtures import PlayPlatform


def _redis(p: PlayPlatform) -> list[str]:
    return ["--redis-url", p.redis_url, "--namespace", p.namespace]


def organiser(p: PlayPlatform) -> str:
    """A new organiser token (the operator's CLI)."""
    token: str = arena_tool("organiser-token", "create", "Olga", *_redis(p))["token"]
    return token


def wait_done(base: str, key: str, games: int, timeout: float = 240) -> dict[str, Any]:
    """The tournament's page JSON once ``games`` games are recorded and it stopped running."""
    deadline = time.monotonic() + timeout
    t: dict[str, Any] = {}
    while time.monotonic() < deadline:
        status, t = http("GET", f"{base}/api/tournaments/{key}")
        assert status == 200, t
        if t["summary"]["done"] >= games and not t["summary"]["running"]:
            return t
        time.sleep(0.1)  # (a GET: polled often, the test waits less past the end)
    raise AssertionError(f"tournament {key} not done in {timeout} s: {t.get('summary')}")


def test_an_organiser_runs_a_tournament_with_a_node_bot(play_platform: PlayPlatform) -> None:
    base = play_platform.base
    org = organiser(play_platform)
    bot = arena_tool("bot-account", "create", "Nodey cup", *_redis(play_platform))
    proc = nodebot(base, bot["token"], "--games", "2", "--seed", "5")
    try:
        body = {
            "name": "Cup",
            "ruleset": "standard",
            "players": 4,
            "entrants": [bot["player"], "heuristic", "random"],
            "games": 2,
            "seed": 21,
        }
        status, made = http("POST", base + "/api/tournaments", org, body)
        assert status == 201, made
        key = made["key"]
        assert made["page"] == f"/#/tournament/{key}" and made["host"] == "web"
        names = {e["id"]: (e["kind"], e["name"]) for e in made["entrants"]}
        assert names[bot["player"]] == ("bot", "Nodey cup")
        assert names["heuristic"] == ("policy", "heuristic")
        t = wait_done(base, key, 2)
        out, err = proc.communicate(timeout=60)
    finally:
        proc.kill()
    assert json.loads(out.splitlines()[-1])["done"]["games"] == 2, err
    st = t["standings"]
    assert set(st["per_policy"]) == {bot["player"], "heuristic", "random"}
    camps = st["per_camp"]
    assert (
        sum(c["wins"] for k, c in camps.items() if k != "draw")
        + camps.get("draw", {}).get("wins", 0)
        >= 2
    )
    for c in camps.values():
        lo, hi = c["ci95"]
        assert 0 <= lo <= c["win_rate"] <= hi <= 1
    assert [r["i"] for r in t["results"]] == [0, 1]
    for r in t["results"]:
        assert r["seats"].count(bot["player"]) == 1  # one seat of every game
        status, report = http("GET", f"{base}/api/games/{r['game']}/verify")
        assert status == 200 and report["ok"], report
    with urllib.request.urlopen(f"{base}/api/tournaments/{key}/games.csv", timeout=30) as resp:
        assert resp.headers["Content-Type"].startswith("text/csv")
        rows = list(csv.reader(io.StringIO(resp.read().decode())))
    assert rows[0][:3] == ["i", "game", "seat0"] and len(rows) == 3
    assert "Nodey cup" in rows[1]  # the entrants by their names
    status, listing = http("GET", base + "/api/tournaments")
    assert key in [x["key"] for x in listing["tournaments"]]


def test_bad_tournaments_are_refused(play_platform: PlayPlatform) -> None:
    base = play_platform.base
    org = organiser(play_platform)
    good = {"ruleset": "standard", "players": 4, "entrants": ["random"], "games": 1}
    assert http("POST", base + "/api/tournaments", None, good)[0] == 401
    assert http("POST", base + "/api/tournaments", "org_forged", good)[0] == 401
    for bad, words in (
        ({**good, "entrants": ["oracle"]}, "oracle"),
        ({**good, "entrants": ["b-0123456789abcdef", "random"]}, "no bot account"),
        ({**good, "players": 99999999999}, "players"),
        ({**good, "ruleset": "nope"}, "nope"),
        ({**good, "games": 0}, "games"),
        ({**good, "options": {"x": {"deep": 1}}}, "options"),
        ({**good, "surprise": 1}, "surprise"),
    ):
        status, body = http("POST", base + "/api/tournaments", org, bad)
        assert status == 400 and words in body["error"], (bad, body)
        assert "\n" not in body["error"]
    assert http("GET", base + "/api/tournaments/0123456789abcdef")[0] == 404
    assert http("GET", base + "/api/tournaments/..%2f..%2fetc")[0] == 404
    assert http("POST", base + "/api/tournaments/0123456789abcdef/stop", org)[0] == 404


def test_the_command_line_and_the_browser_share_a_tournament(
    play_platform: PlayPlatform,
) -> None:
    """`arena tournament` next to the platform's web server: it prints the tournament's page,
    whose JSON shows the run; the browser then extends the same tournament (same spec, more
    games) and the web server plays only what the journal lacks."""
    base = play_platform.base
    var = Path(play_platform.run.archive_dir).parent
    (var / "up.json").write_text(play_platform.run.to_json())  # what `arena up` leaves there
    try:
        args = ["--players", "4", "--games", "2", "--policies", "heuristic,random", "--seed", "9"]
        p = subprocess.run(
            ["python3", "-m", "services.cli", "tournament", "--var", str(var), *args, "--json"],
            cwd=ROOT,
            capture_output=True,
            text=True,
            timeout=240,
        )
    finally:
        (var / "up.json").unlink()
    assert p.returncode == 0, p.stderr
    result = json.loads(p.stdout)
    key = result["key"]
    page = f"{base}/#/tournament/{key}"
    assert f"watch it: {page}" in p.stderr and result["page"] == page
    status, t = http("GET", f"{base}/api/tournaments/{key}")
    assert status == 200 and t["summary"]["host"] == "cli" and t["summary"]["done"] == 2
    assert t["standings"]["ratings"] == result["standings"]["ratings"]

    org = organiser(play_platform)
    more = {
        "ruleset": "standard",
        "players": 4,
        "entrants": ["heuristic", "random"],
        "games": 3,
        "seed": 9,
    }
    status, made = http("POST", base + "/api/tournaments", org, more)
    assert status == 201 and made["key"] == key  # the same tournament
    t = wait_done(base, key, 3)
    assert t["summary"]["host"] == "web"
    journal = [
        json.loads(x) for x in (var / "tournaments" / f"{key}.jsonl").read_text().splitlines()
    ]
    assert sorted(g["i"] for g in journal) == [0, 1, 2]  # games 0 and 1 not played again


def test_a_person_plays_their_game_of_a_tournament(play_platform: PlayPlatform) -> None:
    """A guest entered by their player id is seated through their session (GET /api/me names
    the game and seat), answers at their seat like at any table, and may resign: the seat's bot
    plays on and the game is recorded, with the person in their seat."""
    base = play_platform.base
    status, guest = http("POST", base + "/api/guests", None, {"name": "Ann"})
    assert status == 201
    org = organiser(play_platform)
    body = {
        "ruleset": "standard",
        "players": 4,
        "entrants": [guest["player"], "heuristic"],
        "games": 1,
        "seed": 12,
        "time_limit_ms": 5000,
    }
    status, made = http("POST", base + "/api/tournaments", org, body)
    assert status == 201, made
    game = f"t{made['key'][:12]}-0"
    deadline = time.monotonic() + 60
    seated = None
    while time.monotonic() < deadline and seated is None:
        seated = http("GET", base + "/api/me", guest["token"])[1]["seated"]
        time.sleep(0.3)
    assert seated is not None and seated["game"] == game
    seat = seated["seat"]
    answered = False
    while time.monotonic() < deadline and not answered:  # one answer of the person's own
        view = http("GET", f"{base}/api/games/{game}/seats/{seat}", guest["token"])[1]
        d = view.get("decision")
        if d:
            picks = [] if d["declinable"] else [o["key"] for o in d["options"][: d["min"]]]
            status, got = http(
                "POST",
                f"{base}/api/games/{game}/seats/{seat}/answer",
                guest["token"],
                {"decision": d["id"], "picks": picks},
            )
            answered = status == 200
        time.sleep(0.2)
    assert answered
    status, _ = http("POST", f"{base}/api/games/{game}/seats/{seat}/resign", guest["token"])
    assert status == 200
    t = wait_done(base, made["key"], 1)
    row = t["results"][0]
    assert row["seats"][seat] == guest["player"]
    names = {e["id"]: e["name"] for e in t["summary"]["entrants"]}
    assert names[guest["player"]] == "Ann"
    assert http("GET", f"{base}/api/games/{game}/verify")[1]["ok"]
