"""The web viewer in a real browser: a live table that follows a running game, and a replay that
seeks to an event and shows the HP the server-side view fold says. Screenshots go to artifacts/."""

from __future__ import annotations

import asyncio
import json

import redis.asyncio as aioredis

from services.bots.demo import play_live, sleeper
from services.eventlog import RedisEventStore
from services.eventlog.entry import EVENT, decode_entry
from services.rules import api
from services.rules.api import GOD, fold

from .conftest import ARTIFACTS, Tab

SEATS = "[...document.querySelectorAll('.seat')]"


async def test_live_table_follows_the_game_and_replay_seeks(
    browser: Tab, replay_server: str, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    store = RedisEventStore(redis_client, redis_namespace)
    sampled = asyncio.Event()
    slow = sleeper(60)

    async def pace(version: int) -> None:
        """60 ms between answers while the page is sampled (the table must move while it
        is watched), then at full speed: the rest of the game is only followed to its end."""
        if not sampled.is_set():
            await slow(version)
        else:
            await asyncio.sleep(0)

    game = asyncio.create_task(play_live(store, "browser-live", players=6, seed=7, pace=pace))
    while not await store.head("browser-live"):
        await asyncio.sleep(0.05)
    b = browser
    await b.goto(f"{replay_server}/#/")
    await b.wait_for("!!document.querySelector('tr[data-game=\"browser-live\"]')")
    await b.goto(f"{replay_server}/#/live/browser-live")
    await b.wait_for(f"{SEATS}.length === 6")
    seen = []
    for _ in range(6):  # the table moves while the game runs
        seen.append(await b.js("Number(document.querySelector('#seq').dataset.seq)"))
        await asyncio.sleep(0.4)
    assert not game.done(), "the game ended before the page was sampled; slow the pace"
    assert seen == sorted(seen) and seen[-1] > seen[0], seen
    assert await b.js("document.querySelector('#log').children.length") > 10
    await b.screenshot(ARTIFACTS / "live.png")
    # a spectator's table shows no other seat's hand faces, only counts
    hands = await b.js(f"{SEATS}.map(s => s.querySelectorAll('.hand .card').length)")
    counts = await b.js(f"{SEATS}.map(s => Number(s.dataset.hand))")
    assert sum(counts) > 0 and hands == [0] * 6, (hands, counts)
    assert not game.done(), "the game ended before the page was sampled; slow the pace"
    sampled.set()
    await game
    await b.wait_for("document.querySelector('#conn').textContent === 'game over'")

    records = [d for _, d in await store.read("browser-live")]
    events = [api.decode_event(e.payload) for e in map(decode_entry, records) if e.kind == EVENT]
    final = fold(events, GOD)
    live_hp = await b.js(f"{SEATS}.map(s => Number(s.dataset.hp))")
    assert live_hp == [s.hp for s in final.seats]

    # replay: seek to an event where HP differs from the start, compare with the server's fold
    at = next(
        i
        for i in range(len(events), 0, -1)
        if [s.hp for s in fold(events[:i], GOD).seats]
        != [s.max_hp for s in fold(events[:i], GOD).seats]
        and i < len(events) * 2 // 3
    )
    await b.goto(f"{replay_server}/#/replay/browser-live?at={at}")
    await b.wait_for(
        f"document.querySelector('#seq') && Number(document.querySelector('#seq').dataset.index) === {at}",
    )
    want = [s.hp for s in fold(events[:at], GOD).seats]
    assert await b.js(f"{SEATS}.map(s => Number(s.dataset.hp))") == want
    # a finished game's replay opens as a spectator sees it: no hand faces; the switch to
    # every hand shows them, at the same event
    assert not await b.js(f"{SEATS}.some(s => s.querySelectorAll('.hand .card').length)")
    await b.page.select_option("#viewer", "god")
    await b.wait_for(f"{SEATS}.some(s => s.querySelectorAll('.hand .card').length)")
    assert await b.js("Number(document.querySelector('#seq').dataset.index)") == at
    assert await b.js(f"{SEATS}.map(s => Number(s.dataset.hp))") == want
    await b.screenshot(ARTIFACTS / "replay.png")
    # seek with the control, then step forward once
    k = at // 2
    await b.js(
        f"(() => {{ const el = document.querySelector('#at'); el.value = {k}; el.dispatchEvent(new Event('change')); return 1; }})()",
    )
    assert await b.js(f"{SEATS}.map(s => Number(s.dataset.hp))") == [
        s.hp for s in fold(events[:k], GOD).seats
    ]
    await b.js("document.querySelector('#fwd').click()")
    assert await b.js("Number(document.querySelector('#seq').dataset.index)") == k + 1
    assert await b.js(f"{SEATS}.map(s => Number(s.dataset.hp))") == [
        s.hp for s in fold(events[: k + 1], GOD).seats
    ]


async def test_honglou_names(
    browser: Tab, replay_server: str, redis_client: aioredis.Redis, redis_namespace: str
) -> None:
    store = RedisEventStore(redis_client, redis_namespace)
    await play_live(store, "hl", ruleset="honglou", players=5, seed=3)
    records = [d for _, d in await store.read("hl")]
    n = sum(1 for d in records if decode_entry(d).kind == EVENT)
    await browser.page.add_init_script("localStorage.setItem('arena.lang', 'zh')")
    await browser.goto(f"{replay_server}/#/replay/hl?at={n}")
    await browser.wait_for(
        f"document.querySelector('#seq') && Number(document.querySelector('#seq').dataset.index) === {n}",
    )
    roles = await browser.js("[...document.querySelectorAll('.role')].map(r => r.textContent)")
    assert "主人" in roles and "主公" not in roles, roles
    text = await browser.js("document.body.innerText")
    assert "桃" not in text and "八卦阵" not in text, json.dumps(text[:500], ensure_ascii=False)
    await browser.screenshot(ARTIFACTS / "honglou.png")
    # in English the roles are the ones 红楼梦 prints, translated: a master, not a lord
    await browser.page.click("#lang")  # the switch: the same replay, in English
    await browser.wait_for("document.documentElement.lang === 'en'")
    await browser.wait_for(
        f"document.querySelector('#seq') && Number(document.querySelector('#seq').dataset.index) === {n}",
    )
    # the seats are drawn again in the new language: wait until no role is worded in Chinese
    # (the replay was already at seq n, so the wait above passes before the redraw)
    await browser.wait_for(
        "(() => { const r = [...document.querySelectorAll('.role')];"
        " return r.length > 0 && r.every(e => !/[\\u4e00-\\u9fff]/.test(e.textContent)); })()"
    )
    roles = await browser.js("[...document.querySelectorAll('.role')].map(r => r.textContent)")
    assert "master" in roles and "lord" not in roles, roles
