"""A person plays in a real browser, as a person would: reading the page and clicking the legal
options it offers (never calling the API behind the page's back), on a real platform with
heuristic bots answering at once: a reload and a second device mid game; a time-out that turns
托管 on, and taking the seat back; a spectator of the same game who never sees the person's
hand. The helpers here (sitting down, deciding by clicking) serve the other browser tests too;
the whole games, one per ruleset, are in test_whole_game_*.py (whole_game.py), a file each so
that the two processes of the default suite share them out. Screenshots go to
artifacts/browser/."""

from __future__ import annotations

import asyncio
import json
import random
from typing import Any

from playwright.async_api import Browser

from tests.play.fixtures import PlayPlatform

from .conftest import ARTIFACTS, Tab

PANEL = """() => {
  const p = document.querySelector('#decision-panel');
  if (!p) return null;
  return {
    id: p.dataset.id || null, kind: p.dataset.kind || null,
    min: Number(p.dataset.min || 0), max: Number(p.dataset.max || 0),
    busy: p.classList.contains('busy'),
    options: [...p.querySelectorAll('button.opt')].map((b) => ({ key: b.dataset.key, type: b.dataset.type, text: b.textContent })),
    ok: !!document.querySelector('#ok'), decline: !!document.querySelector('#decline'),
    error: (document.querySelector('#answer-error') || {}).textContent || '',
    over: document.querySelector('#conn').textContent === 'game over',
    clock: (document.querySelector('#clock') || {}).textContent || '',
  };
}"""
READY = """(last) => {
  const p = document.querySelector('#decision-panel');
  const over = document.querySelector('#conn') && document.querySelector('#conn').textContent === 'game over';
  return over || (p && p.dataset.id && p.dataset.id !== last && !p.classList.contains('busy'));
}"""


async def new_tab(chromium: Browser, locale: str = "en-US") -> Tab:
    """A page of its own (cookies included), its browser speaking `locale`."""
    context = await chromium.new_context(viewport={"width": 1400, "height": 900}, locale=locale)
    return Tab(await context.new_page())


async def sit_down(
    tab: Tab,
    base: str,
    name: str,
    ruleset: str,
    players: int,
    preset: str | None = None,
    *,
    time_limit_s: float = 60,
    hosted_after: int = 2,
) -> tuple[str, int]:
    """From the lobby: a guest name, a table of these settings with heuristic bots at once;
    (game, seat) once the page shows the seat."""
    page = tab.page
    await tab.goto(base + "/")
    await page.wait_for_selector("#name, #table-form")
    if await tab.js("!!document.querySelector('#name')"):  # (not signed in yet)
        await page.fill("#name", name)
        await page.click("#guest button")
    await page.wait_for_selector("#table-form")
    await page.select_option("#ruleset", ruleset)
    await page.select_option("#players", label=str(players))
    if preset is not None:
        await page.select_option("#preset", preset)
    await page.select_option("#level", "normal")
    await page.fill("#botwait", "0.2")
    await page.fill("#timelimit", str(time_limit_s))
    await page.fill("#hostedafter", str(hosted_after))
    await page.click("#open-table")
    await tab.wait_for("location.hash.startsWith('#/play/')")
    _, game, seat = (await tab.js("location.hash")).rsplit("/", 2)
    return game, int(seat)


def raw_key(text: str) -> bool:
    """Whether a label is an option key shown as it is (ascii, one word: card:12, end …)."""
    return text.isascii() and " " not in text.strip()


# One decision, as a person takes it: wait until the page shows a new decision (or the game's
# end), read its options off the page, and click: one option; or several and OK; or the decline
# button. A refused combination (its reason shown) is unpicked and another one tried. In the
# page, so that a whole game costs one round trip per decision.
DECIDE = """async ([last, seed]) => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let x = seed >>> 0;
  const rand = () => { x = (x + 0x6d2b79f5) >>> 0; let t = x; t = Math.imul(t ^ (t >>> 15), t | 1); t ^= t + Math.imul(t ^ (t >>> 7), t | 61); return ((t ^ (t >>> 14)) >>> 0) / 4294967296; };
  const panel = () => document.querySelector('#decision-panel');
  const over = () => document.querySelector('#conn').textContent === 'game over';
  for (let i = 0; ; i++) {
    const p = panel();
    if (p && p.dataset.id && p.dataset.id !== last && !p.classList.contains('busy')) break;
    if (over() && !(p && p.dataset.id)) return null;
    if (i > 12000) throw new Error('no decision came');
    await sleep(5);
  }
  const p = panel();
  const d = { id: p.dataset.id, kind: p.dataset.kind, min: Number(p.dataset.min), max: Number(p.dataset.max),
    options: [...p.querySelectorAll('button.opt')].map((b) => ({ key: b.dataset.key, type: b.dataset.type, text: b.textContent })),
    ok: !!document.querySelector('#ok'), decline: !!document.querySelector('#decline'), tries: 0 };
  for (let attempt = 0, waits = 0; attempt < 6 && waits < 20; attempt++) {
    d.tries = attempt + 1;
    const buttons = [...p.querySelectorAll('button.opt')];
    if (d.decline && (attempt >= 3 || rand() < 0.15)) document.querySelector('#decline').click();
    else if (!d.ok) buttons[Math.floor(rand() * buttons.length)].click();
    else {
      const order = buttons.map((b) => [rand(), b]).sort((a, b) => a[0] - b[0]).map((a) => a[1]);
      const hi = Math.max(d.min, Math.min(d.max, buttons.length));
      const want = d.min + Math.floor(rand() * (hi - d.min + 1));
      order.slice(0, want).forEach((b) => b.click());
      const ok = document.querySelector('#ok');
      if (ok.disabled) { if (!d.decline) throw new Error('OK stays disabled'); document.querySelector('#decline').click(); }
      else ok.click();
    }
    for (let i = 0; ; i++) {
      const e = document.querySelector('#answer-error');
      if (p.dataset.answered === d.id || p.dataset.id !== d.id || !p.isConnected) return d;
      if (e && e.textContent) break;
      if (i > 6000) throw new Error('the answer was neither taken nor refused');
      await sleep(5);
    }
    const reason = document.querySelector('#answer-error').textContent;
    document.querySelector('#answer-error').textContent = '';
    p.querySelectorAll('button.opt.picked').forEach((b) => b.click());
    if (/too many/.test(reason)) { attempt -= 1; waits += 1; await sleep(600); } // slow down, as asked
  }
  throw new Error('no answer was taken');
}"""


async def decide(tab: Tab, rng: random.Random, last: str | None) -> dict[str, Any] | None:
    """Answer the next decision by clicking (DECIDE); the decision as the page showed it, or
    None at the end of the game."""
    d: dict[str, Any] | None = await tab.page.evaluate(DECIDE, [last, rng.getrandbits(31)])
    if d is not None:
        assert d["options"], d
        bad = [o["text"] for o in d["options"] if raw_key(o["text"])]
        assert not bad, f"{d['kind']}: options shown as raw keys: {bad}"
    return d


async def play_out(tab: Tab, rng: random.Random, limit: int = 1500) -> list[dict[str, Any]]:
    """Answer every decision of the seat by clicking until the game is over."""
    answered: list[dict[str, Any]] = []
    last: str | None = None
    for _ in range(limit):
        d = await decide(tab, rng, last)
        if d is None:
            return answered
        answered.append(d)
        last = d["id"]
    raise AssertionError("the game did not end")


PHONE = {"width": 390, "height": 844}
LAPTOP = {"width": 1280, "height": 800}


# By seat, the card ids a spectator was told went into that seat's hand and were not moved out
# since (the spectator's own events, fetched from the same origin as its page).
PUBLIC_IN_HAND = """async (url) => {
  const r = await (await fetch(url + '/events')).json();
  const where = new Map();
  for (const raw of r.entries) {
    const ev = raw.event || {};
    if (ev.type !== 'cards_moved') continue;
    for (const c of ev.cards || []) {
      if (ev.dst === 'hand') where.set(c, ev.dst_seat); else where.delete(c);
    }
  }
  return [...where.entries()];
}"""


async def test_reload_another_device_and_a_spectator(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    rng = random.Random(3)
    for _table in range(3):
        tab = await new_tab(chromium)
        game, seat = await sit_down(
            tab, play_platform.base, "<img src=x onerror=alert(1)>", "standard", 5
        )
        last = None
        for _ in range(3):
            d = await decide(tab, rng, last)
            if d is None:  # the game ended first (a short game: the person was asked little)
                break  # a reload needs a game that goes on: sit at a new table
            last = d["id"]
        else:
            break
    else:
        raise AssertionError("three games in a row ended before the person answered three times")
    # the game now waits for this person: the state is still while they reload
    await tab.page.wait_for_function(READY, arg=last, timeout=60_000)
    before = await tab.js(PANEL)
    hand = await tab.js("[...document.querySelectorAll('#myhand .card')].map(c => c.textContent)")
    await tab.page.reload()
    await tab.page.wait_for_function(
        f"document.querySelector('#decision-panel') && document.querySelector('#decision-panel').dataset.id === '{before['id']}'"
    )
    assert (
        await tab.js("[...document.querySelectorAll('#myhand .card')].map(c => c.textContent)")
        == hand
    )
    assert (await tab.js(PANEL))["options"] == before["options"]

    # the same person on another device: the lobby takes them back to their seat
    other = await new_tab(chromium)
    await other.page.context.add_cookies(await tab.page.context.cookies())
    await other.goto(play_platform.base + "/")
    await other.wait_for(f"location.hash === '#/play/{game}/{seat}'")
    await other.page.wait_for_function(
        f"document.querySelector('#decision-panel') && document.querySelector('#decision-panel').dataset.id === '{before['id']}'"
    )

    # a spectator of the same game sees the table, never the person's hand
    spectator = await new_tab(chromium)
    await spectator.goto(f"{play_platform.base}/#/live/{game}")
    await spectator.wait_for("document.querySelectorAll('.seat').length === 5")
    await spectator.wait_for(
        f"Number(document.querySelector('.seat[data-seat=\"{seat}\"]').dataset.hand) === {len(hand)}"
    )
    shown = await spectator.js("document.body.innerText")
    # a card moved into a hand in the open (借刀杀人's weapon, 五谷丰登) is known to all; no
    # other card of any hand, the person's included, is shown to the spectator
    public = dict(
        await spectator.page.evaluate(PUBLIC_IN_HAND, f"{play_platform.base}/api/games/{game}")
    )
    faces = await spectator.js(
        "[...document.querySelectorAll('.hand .card')]"
        ".map(c => [Number(c.closest('.seat').dataset.seat), Number(c.dataset.card), c.textContent])"
    )
    assert all(public.get(card) == at for at, card, _ in faces), (faces, public)
    mine = await spectator.js(f"document.querySelector('.seat[data-seat=\"{seat}\"]').innerText")
    known = {text for at, _, text in faces if at == seat}
    assert not [c for c in hand if c in mine and c not in known], (hand, mine)
    assert "<img src=x onerror=alert(1)>" in shown  # the name, as text
    assert await spectator.js("document.querySelectorAll('img').length") == 0
    await spectator.screenshot(ARTIFACTS / "spectator.png")
    await tab.screenshot(ARTIFACTS / "seat.png")
    await decide(tab, rng, last)  # the person answers from the first page; the game goes on
    for t in (tab, other, spectator):
        assert not t.errors, t.errors


KEEP_LOG_LINES = """
window.loggedLines = [];
new MutationObserver((changes) => {
  for (const c of changes)
    for (const n of c.addedNodes)
      if (n.nodeName === "LI" && n.parentElement && n.parentElement.id === "log")
        window.loggedLines.push(n.textContent);
}).observe(document, { childList: true, subtree: true });
"""


TAKE_BACK = """(() => {
  const b = document.querySelector("#hosting");
  if (b.textContent !== "take back" || b.disabled) return false;
  b.click();
  return true;
})()"""


async def test_time_outs_turn_hosting_on_and_the_person_takes_the_seat_back(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    tab = await new_tab(chromium)
    # the log keeps its newest 300 lines, and once the bot holds the seat the game runs on at
    # bot speed: every line the log ever shows is kept here, to read what it said
    await tab.page.add_init_script(KEEP_LOG_LINES)
    d = None
    for _ in range(3):  # (a table where the game ends before the person's next decision: again)
        await sit_down(
            tab, play_platform.base, "slow", "standard", 5, time_limit_s=2, hosted_after=1
        )
        await tab.page.wait_for_function(READY, arg=None, timeout=60_000)
        await tab.wait_for("document.querySelector('#clock').textContent.endsWith(' s')")
        # nobody clicks: the clock runs out, the server answers, and the bot takes the seat
        # (and plays it at bot speed: a table of bots is over in seconds, so the person takes
        # the seat back as soon as the button offers it, and reads the page after)
        await tab.wait_for(TAKE_BACK, 30)
        log = await tab.js("window.loggedLines.join('\\n')")
        assert "托管" in log and "ran out of time" in log
        await tab.wait_for("document.querySelector('#hosting').textContent === '托管'")
        await tab.wait_for(
            "window.loggedLines.some((l) => l.includes('played by its person again'))"
        )
        # the person's own decisions come back, with their clock; unless the bot's play ended
        # the game (or the seat's life) first, which a loaded machine allows
        d = await decide(tab, random.Random(1), None)
        if d is not None:
            break
    assert d is not None, "in three games the person never got a decision after taking back"
    assert not tab.errors, tab.errors


async def test_the_person_picks_the_level_their_seat_is_hosted_at(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    """托管 at the person's own level (issue 39): the seat's level list offers the table's and
    every bot level. The level picked is the person's default, kept on the server (PUT
    /api/me/settings): it is recorded for this seat at once (a `level` control entry that hosts
    nothing), 托管 then plays at it, and the page opened again (or on another device) shows it."""
    tab = await new_tab(chromium)
    game, seat = await sit_down(tab, play_platform.base, "picky", "standard", 5)
    await tab.page.wait_for_function(READY, arg=None, timeout=60_000)
    await tab.wait_for("document.querySelectorAll('#hostlevel option').length === 4")
    labels = await tab.js("[...document.querySelectorAll('#hostlevel option')].map((o) => o.value)")
    assert labels == ["", "normal", "easy", "hard"]
    assert await tab.js("document.querySelector('#hostlevel').value") == ""  # none set yet
    await tab.page.select_option("#hostlevel", "hard")
    saved = "fetch('/api/me/settings').then((r) => r.json()).then((s) => s.hosted_level)"
    for _ in range(300):  # (evaluate awaits the fetch; wait_for would not)
        if await tab.js(saved) == "hard":
            break
        await asyncio.sleep(0.1)
    assert await tab.js(saved) == "hard"
    await tab.page.click("#hosting")
    controls = f"""fetch('/api/games/{game}/events').then((r) => r.json()).then((p) =>
      p.entries.filter((e) => e.kind === 'control').map((e) => e.control))"""
    for _ in range(300):
        got = await tab.js(controls)
        if len(got) >= 2:
            break
        await asyncio.sleep(0.1)
    assert got[:2] == [
        {"seat": seat, "hosted": False, "reason": "level", "level": "hard"},
        {"seat": seat, "hosted": True, "reason": "asked", "level": "hard"},
    ], got
    await tab.page.evaluate("localStorage.clear()")  # the server remembers it, not the browser
    await tab.page.reload()
    await tab.wait_for("(document.querySelector('#hostlevel') || {}).value === 'hard'", 60)
    assert not tab.errors, tab.errors


async def test_the_english_page_names_the_cards_in_english(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    """On an English page the cards have their English names (杀 Slash, 闪 Dodge, 桃 Peach …,
    from the rules' card registry: the hand and the decisions' options), and on a Chinese page
    their Chinese ones; generals and skills keep their Chinese names."""
    from services.rules import api

    english = api.english_names("standard")
    for locale, lang in (("en-US", "en"), ("zh-CN", "zh")):
        tab = await new_tab(chromium, locale)
        game, _ = await sit_down(tab, play_platform.base, "reader", "standard", 5)
        info: dict[str, Any] = {}
        for _ in range(100):  # (the game's info may lag its seat's first view by a moment)
            info = json.loads(await tab.js(f"fetch('/api/games/{game}').then((r) => r.text())"))
            if "cards" in info:
                break
            await asyncio.sleep(0.1)
        assert "cards" in info, info
        cards = info["cards"]
        rng, last, shown = random.Random(3), None, []
        for _ in range(40):  # play on until the hand holds cards and some were options
            await tab.page.wait_for_function(READY, arg=last, timeout=60_000)
            hand = await tab.js(
                "[...document.querySelectorAll('#myhand .card')].map((c) => [Number(c.dataset.card), c.textContent])"
            )
            if hand and shown:
                break
            d = await decide(tab, rng, last)
            assert d is not None
            last = d["id"]
            shown += [
                (int(o["key"][5:]), o["text"]) for o in d["options"] if o["key"].startswith("card:")
            ]
        assert hand and shown, (hand, shown)
        for cid, text in hand + shown:
            name = cards[cid][0]
            want = english[name] if lang == "en" else name
            assert text.startswith(want), (lang, name, text)
        assert not tab.errors, tab.errors


async def test_a_second_person_joins_an_open_table_from_the_lobby(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    ann, bob = await new_tab(chromium), await new_tab(chromium)
    page = ann.page
    await ann.goto(play_platform.base + "/")
    await page.fill("#name", "Ann")
    await page.click("#guest button")
    await page.wait_for_selector("#table-form")
    await page.select_option("#ruleset", "chengtian")
    await page.fill("#botwait", "120")  # no bots: the table waits for a second person
    await page.click("#open-table")
    await ann.wait_for("document.querySelector('#waiting') !== null")
    await bob.goto(play_platform.base + "/")
    await bob.page.fill("#name", "Bob")
    await bob.page.click("#guest button")
    # Bob sees Ann's table among the open ones, with her name, and joins it
    row = "[...document.querySelectorAll('#open tr')].find(r => r.querySelector('.names') && r.querySelector('.names').textContent === 'Ann')"
    await bob.wait_for(f"{row} && {row}.querySelector('button.join')")
    await bob.js(f"{row}.querySelector('button.join').click()")
    for tab in (ann, bob):
        await tab.wait_for("location.hash.startsWith('#/play/')")
    a_game, a_seat = (await ann.js("location.hash")).rsplit("/", 2)[1:]
    b_game, b_seat = (await bob.js("location.hash")).rsplit("/", 2)[1:]
    assert a_game == b_game and {a_seat, b_seat} == {"0", "1"}
    for tab, name in ((ann, "Ann"), (bob, "Bob")):
        await tab.wait_for(
            f"document.querySelector('.seat.me .name') && document.querySelector('.seat.me .name').textContent.endsWith('{name}')"
        )
    assert not ann.errors and not bob.errors, (ann.errors, bob.errors)
