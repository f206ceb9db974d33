"""Watching in Chromium (the platform of tests/play/fixtures.py): a replay's chart says who is
ahead without the log, marks the deaths and jumps there on a click; TV shows a live game by its
stated rule with the public chart (never the whole log's while it is live); an organiser makes
a tournament in the page and watches it finish, with the standings by camp and each game's
replay. Screenshots go to artifacts/browser/."""

from __future__ import annotations

import json
import time
from typing import Any

from tests.botapi.helpers import arena_tool, http, nodebot
from tests.play.fixtures import PlayPlatform

from .conftest import ARTIFACTS, Tab


def _redis(p: PlayPlatform) -> list[str]:
    return ["--redis-url", p.redis_url, "--namespace", p.namespace]


def _tournament(
    p: PlayPlatform,
    entrants: list[str],
    games: int,
    seed: int,
    ruleset: str = "standard",
    players: int = 5,
) -> dict[str, Any]:
    """A tournament made through the API, waited for to the end."""
    org = arena_tool("organiser-token", "create", "Olga", *_redis(p))["token"]
    body = {"ruleset": ruleset, "players": players, "entrants": entrants, "games": games}
    body["seed"] = seed
    status, made = http("POST", p.base + "/api/tournaments", org, body)
    assert status == 201, made
    deadline = time.monotonic() + 180
    while time.monotonic() < deadline:
        got = http("GET", f"{p.base}/api/tournaments/{made['key']}")[1]
        if got["summary"]["done"] == games:
            return got  # type: ignore[no-any-return]
        time.sleep(0.1)
    raise AssertionError("the tournament did not finish")


async def test_a_replays_chart_tells_who_won_and_jumps_to_a_death(
    play_platform: PlayPlatform, browser: Tab
) -> None:
    t = _tournament(play_platform, ["heuristic", "random"], 1, 77)
    game = t["results"][0]["game"]
    await browser.goto(f"{play_platform.base}/#/replay/{game}")
    await browser.wait_for(
        "window.arenaChart && document.querySelectorAll('#chart .camp-line').length"
    )
    chart = await browser.js("window.arenaChart")
    assert chart["over"] and chart["model"] in ("full", "hand-set")
    lines = await browser.js(
        "[...document.querySelectorAll('#chart .camp-line')].map(x => x.dataset.camp)"
    )
    assert lines == [c["key"] for c in chart["camps"]]
    deaths = [m for m in chart["moments"] if m["kind"] == "death"]
    assert deaths and await browser.js(
        "document.querySelectorAll('#chart .moment.death').length"
    ) == len(deaths)
    assert await browser.js(MARKS_APART)  # no mark's click area lies over another's
    await browser.page.click("#chart .moment.death")
    at = await browser.wait_for("Number(document.querySelector('#at').value)")
    steps = await browser.js("window.arenaReplay.events.map(x => x.seq)")
    assert steps[at - 1] <= deaths[0]["seq"] and (at == len(steps) or steps[at] > deaths[0]["seq"])
    await browser.page.click("#chart .moment.end")  # the end: who won, in words, with 100%
    await browser.wait_for(
        "Number(document.querySelector('#at').value) === window.arenaReplay.length"
    )
    await browser.wait_for(
        "document.querySelector('#chart .chart-legend').textContent.includes('100%')"
    )
    ahead = await browser.js("document.querySelector('#chart .chart-ahead').textContent")
    won = [c for c, p in zip(chart["camps"], chart["points"][-1][1:], strict=True) if p >= 0.5]
    assert ahead and "100%" in ahead and won  # the winner, in words
    await browser.screenshot(ARTIFACTS / "chart-replay.png")
    assert not browser.errors, browser.errors


MARKS_APART = """(document.querySelector('#chart svg').scrollIntoView({ block: 'center' }),
[...document.querySelectorAll('#chart .moment')].every((g) => {
  const r = g.querySelector('.mhit').getBoundingClientRect();
  const hit = document.elementFromPoint(r.left + r.width / 2, r.top + r.height / 2);
  return hit && hit.closest('.moment') === g;
}))"""


async def test_a_table_without_a_fitted_model_is_charted_and_every_mark_takes_its_clicks(
    play_platform: PlayPlatform, browser: Tab
) -> None:
    """jinyu with 6 seats has no fitted model: its replay still draws each camp's chance (the
    hand-set score, said under the chart). A swing's click area at a death's seq once lay over
    the death's and took its clicks: here the chart is served with swings crowded onto and
    beside each death, and every mark's centre must be its own, a death's click must jump to
    the death, and the merged mark's words must say both."""
    t = _tournament(play_platform, ["heuristic"], 1, 31, "jinyu", 6)
    game = t["results"][0]["game"]
    real = http("GET", f"{play_platform.base}/api/games/{game}/chart")[1]
    assert real["model"] == "hand-set" and real["over"] and real["points"], real["model"]
    deaths = [m for m in real["moments"] if m["kind"] == "death"]
    assert deaths
    crowd = [
        {"seq": m["seq"] + d, "kind": "swing", "camp": real["camps"][0]["key"], "delta": 0.2}
        for m in deaths
        for d in (0, 1)
    ]
    crowded = dict(
        real, moments=sorted(real["moments"] + crowd, key=lambda m: (m["seq"], m["kind"]))
    )

    async def serve(route: Any) -> None:
        await route.fulfill(status=200, content_type="application/json", body=json.dumps(crowded))

    await browser.page.route(f"**/api/games/{game}/chart*", serve)
    await browser.goto(f"{play_platform.base}/#/replay/{game}")
    await browser.wait_for(
        "window.arenaChart && document.querySelectorAll('#chart .camp-line').length"
    )
    note = await browser.js("document.querySelector('#chart .chart-note').textContent")
    assert "no model fitted" in note, note
    assert await browser.js("document.querySelectorAll('#chart .moment.death').length") == len(
        deaths
    )
    assert await browser.js(MARKS_APART)
    title = await browser.js("document.querySelector('#chart .moment.death title').textContent")
    assert "·" in title and "swing" in title, title  # the death and its swing, in one mark
    await browser.page.click("#chart .moment.death")
    at = await browser.wait_for("Number(document.querySelector('#at').value)")
    steps = await browser.js("window.arenaReplay.events.map(x => x.seq)")
    assert steps[at - 1] <= deaths[0]["seq"] and (at == len(steps) or steps[at] > deaths[0]["seq"])
    assert not browser.errors, browser.errors


async def test_tv_features_a_live_game_with_its_public_chart_then_the_next(
    play_platform: PlayPlatform, browser: Tab
) -> None:
    """A slow bot account keeps a game of 8 going (the most seats alive: the rule picks it over
    the 5-seat games other tests play); TV shows it, names the rule, draws its chart from what a
    spectator sees (the public model: never the whole log's while it is live), and when that
    game ends it says so and moves on."""
    p = play_platform
    bot = arena_tool("bot-account", "create", "Slowpoke", *_redis(p))
    proc = nodebot(p.base, bot["token"], "--games", "1", "--slow-ms", "40")
    try:
        org = arena_tool("organiser-token", "create", "Olga", *_redis(p))["token"]
        body = {
            "ruleset": "standard",
            "players": 8,
            "entrants": [bot["player"], "heuristic"],
            "games": 1,
            "seed": 5,
        }
        status, made = http("POST", p.base + "/api/tournaments", org, body)
        assert status == 201
        prefix = f"t{made['key'][:12]}-"
        await browser.goto(f"{p.base}/#/tv")
        first = await browser.wait_for(
            f"document.querySelector('#tv-banner') && document.querySelector('#tv-banner').dataset.game.startsWith('{prefix}') && document.querySelector('#tv-banner').dataset.game",
            60,
        )
        await browser.wait_for("window.arenaChart && window.arenaChart.points.length > 0", 60)
        chart = await browser.js("window.arenaChart")
        assert chart["game"] == first and chart["model"] in ("public", "hand-set")
        assert not chart["over"]
        rule = await browser.js("document.querySelector('#tv-banner .tv-rule').textContent")
        assert "seats alive" in rule or "存活" in rule, rule
        await browser.screenshot(ARTIFACTS / "tv.png")
        await browser.wait_for(  # the game ends: TV says so, then shows the next (or none)
            "document.querySelector('#tv-banner .tv-next') && document.querySelector('#tv-banner .tv-next').textContent",
            120,
        )
        await browser.wait_for(
            f"!document.querySelector('#tv-banner') || document.querySelector('#tv-banner').dataset.game !== '{first}'",
            30,
        )
        assert not browser.errors, browser.errors
    finally:
        proc.kill()


async def test_an_organiser_makes_a_tournament_in_the_page(
    play_platform: PlayPlatform, browser: Tab
) -> None:
    p = play_platform
    org = arena_tool("organiser-token", "create", "Page organiser", *_redis(p))["token"]
    await browser.goto(f"{p.base}/#/tournaments")
    await browser.page.fill("#tn-token", org)
    await browser.page.click("#tn-signin button")
    await browser.wait_for(
        "document.querySelector('#tn-form') && !document.querySelector('#tn-form').hidden"
    )
    await browser.page.fill("#tn-n", "Page cup")
    await browser.page.fill("#tn-games", "2")
    await browser.page.fill("#tn-seed", "31")
    await browser.page.select_option("#tn-players", "4")
    await browser.page.click("#tn-go")
    await browser.wait_for("location.hash.startsWith('#/tournament/')")
    await browser.wait_for(
        "window.arenaTournament && window.arenaTournament.summary.done === 2", 120
    )
    t = await browser.js("window.arenaTournament")
    assert t["summary"]["name"] == "Page cup" and t["summary"]["host"] == "web"
    camps = await browser.js(
        "[...document.querySelectorAll('#tn-camps tr[data-camp]')].map(x => x.dataset.camp)"
    )
    assert set(camps) == set(t["standings"]["per_camp"])
    links = await browser.js(
        "[...document.querySelectorAll('#tn-results a')].map(a => a.getAttribute('href'))"
    )
    assert sorted(links) == sorted(f"#/replay/{r['game']}" for r in t["results"])
    rows = await browser.js("document.querySelectorAll('#tn-entrants tr[data-entrant]').length")
    assert rows == 2  # heuristic and random
    await browser.screenshot(ARTIFACTS / "tournament.png")
    await browser.page.click("#tn-results a")
    await browser.wait_for("window.arenaChart && window.arenaChart.over")
    assert not browser.errors, browser.errors
    assert json.dumps(t)  # (the page's JSON is the API's)
