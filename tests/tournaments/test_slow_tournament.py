"""The goal of issue 45, as a slow test: a tournament of 200 games with an external Node.js bot
among the entrants, started from the browser (Chromium, an organiser signed in with a token from
the CLI), watched live (the page's progress moving game by game; a live game of it on TV with its
public chart), and every game verified (arena verify on each archive, with the platform's key).

    python3 -m pytest tests/tournaments/test_slow_tournament.py -m slow -s
"""

from __future__ import annotations

import json
import os
import time
import uuid
from pathlib import Path

import pytest

from services.eventlog.signing import keep_in
from services.platform.up import Platform
from services.verify import verify
from tests.botapi.helpers import arena_tool, nodebot
from tests.browser.conftest import ARTIFACTS, CHROMIUM, Tab
from tests.process_helpers import up_config

GAMES = int(os.environ.get("ARENA_SLOW_TOURNAMENT_GAMES", "200"))


@pytest.mark.slow
async def test_two_hundred_games_with_a_node_bot_from_the_browser(
    redis_url: str, tmp_path: Path
) -> None:
    from playwright.async_api import async_playwright

    ns = f"slowtn-{uuid.uuid4().hex[:8]}"
    var = tmp_path / "var"
    cfg = up_config(var, engines=2, bots=2, namespace=ns, redis_url=redis_url)
    redis = ["--redis-url", redis_url, "--namespace", ns]
    with Platform(cfg) as platform:
        run = platform.start()
        base = (run.viewer_url or "").rstrip("/")
        org = arena_tool("organiser-token", "create", "Slow cup organiser", *redis)["token"]
        bot = arena_tool("bot-account", "create", "Node (slow cup)", *redis)
        proc = nodebot(base, bot["token"], "--games", str(GAMES), "--seed", "45")
        t0 = time.monotonic()
        load0 = os.getloadavg()
        seen: list[int] = []
        async with async_playwright() as p:
            browser = await p.chromium.launch(executable_path=CHROMIUM, args=["--no-sandbox"])
            tab = Tab(
                await (
                    await browser.new_context(viewport={"width": 1400, "height": 900})
                ).new_page()
            )
            await tab.goto(f"{base}/#/tournaments")
            await tab.page.fill("#tn-token", org)
            await tab.page.click("#tn-signin button")
            await tab.wait_for("!document.querySelector('#tn-form').hidden")
            await tab.wait_for(
                f"document.querySelector('input[name=bot][value=\"{bot['player']}\"]')"
            )
            await tab.page.fill("#tn-n", "Slow cup")
            await tab.page.fill("#tn-games", str(GAMES))
            await tab.page.fill("#tn-seed", "450")
            await tab.page.check(f'input[name=bot][value="{bot["player"]}"]')
            await tab.page.click("#tn-go")
            await tab.wait_for("location.hash.startsWith('#/tournament/')")
            key = (await tab.js("location.hash")).split("/")[-1]
            watched_live = False
            deadline = time.monotonic() + 3600
            while time.monotonic() < deadline:
                t = await tab.js("window.arenaTournament && window.arenaTournament.summary")
                if t:
                    if not seen or seen[-1] != t["done"]:
                        seen.append(t["done"])
                    if t["done"] >= GAMES:
                        break
                if not watched_live and t and t["done"] < GAMES - 10:  # live on TV, charted
                    tv = Tab(await (await browser.new_context()).new_page())
                    await tv.goto(f"{base}/#/tv")
                    try:
                        await tv.wait_for(
                            "window.arenaChart && window.arenaChart.points.length", 60
                        )
                        chart = await tv.js("window.arenaChart")
                        game = await tv.js("document.querySelector('#tv-banner').dataset.game")
                        assert game.startswith(f"t{key[:12]}-")
                        assert chart["model"] in ("public", "hand-set") and not chart["over"]
                        await tv.screenshot(ARTIFACTS / "slow-tv.png")
                        watched_live = True
                    finally:
                        await tv.page.context.close()
                assert proc.poll() in (None, 0), proc.communicate()  # 0: it played its games
                await tab.page.wait_for_timeout(2000)
            took = time.monotonic() - t0
            await tab.screenshot(ARTIFACTS / "slow-tournament.png")
            final = await tab.js("window.arenaTournament")
            assert not tab.errors, tab.errors
            await browser.close()
        if proc.poll() is None:  # every game is recorded: the bot has seen its last end
            time.sleep(5)
            proc.terminate()  # (it prints its summary on SIGTERM)
        out, err = proc.communicate(timeout=120)
        summary = json.loads(out.splitlines()[-1])["done"]
        results = final["results"]
        assert final["summary"]["done"] == GAMES and len(results) == GAMES
        assert len(seen) > min(5, GAMES // 2), seen  # watched as it went, not only at the end
        assert watched_live or GAMES < 50
        assert summary["games"] == GAMES and summary["errors"] == 0, (summary, err[-2000:])
        assert all(r["seats"].count(bot["player"]) == 1 for r in results)
        # every game verified as `arena verify FILE` does: chain, seed, a re-run, and the
        # platform's signature (its key in VAR/keys)
        _, public = keep_in(var)
        archive = Path(run.archive_dir)
        bad = {}
        for r in results:
            report = verify(archive / f"{r['game']}.arena", key=public)
            if not report.ok:
                bad[r["game"]] = report.summary()
        assert not bad, bad
        verified = len(results)
        st = final["standings"]
        print(
            f"\nslow cup: {GAMES} games in {took:.0f} s ({GAMES / took:.2f} games/s), load "
            f"{load0[0]:.1f} -> {os.getloadavg()[0]:.1f}; node bot {summary}; "
            f"verified {verified}; per camp "
            + ", ".join(
                f"{c} {r['win_rate']:.3f} [{r['ci95'][0]:.3f}, {r['ci95'][1]:.3f}]"
                for c, r in st["per_camp"].items()
            )
            + f"; node bot win rate {st['per_policy'][bot['player']]['win_rate']:.3f}"
        )
