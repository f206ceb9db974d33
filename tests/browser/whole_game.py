"""A person plays one whole game in a real browser (test_whole_game_*.py, one file a ruleset so
that the default suite's two processes share the long games out): every decision of it (in the
default suite its first DECISIONS, then 托管 plays the seat to the end; all of them under -m
slow) laid out and checked on a phone (390x844) and on a laptop (1280x800) and answered on one of
them in turn, on the platform of tests/play/fixtures.py with heuristic bots answering at once.
Then the end of the game as the page tells it, and the finished game in the lobby. Screenshots
go to artifacts/browser/ (one per decision kind and screen)."""

from __future__ import annotations

import json
import random
import re

from playwright.async_api import Browser

from tests.play.fixtures import PlayPlatform

from .conftest import ARTIFACTS, Tab
from .test_play import LAPTOP, PHONE, READY, decide, new_tab, sit_down

# what a decision must be, laid out on a screen: nothing wider than the screen (no sideways
# scrolling), the prompt and every option, OK and decline inside its width, the panel on
# screen without scrolling (the dock keeps it at the bottom of a phone's screen)
LAYOUT = """() => {
  const p = document.querySelector('#decision-panel');
  const W = window.innerWidth, H = window.innerHeight;
  const out = [];
  if (document.documentElement.scrollWidth > W) out.push(`page ${document.documentElement.scrollWidth} px wide`);
  const parts = [p.querySelector('.prompt'), ...p.querySelectorAll('button.opt'), document.querySelector('#ok'), document.querySelector('#decline')];
  for (const el of parts) {
    if (!el) continue;
    const r = el.getBoundingClientRect();
    if (r.left < 0 || r.right > W + 0.5 || r.width === 0) out.push(`${el.id || el.className} at ${Math.round(r.left)}..${Math.round(r.right)}`);
  }
  const r = p.getBoundingClientRect();
  if (r.top >= H || r.bottom <= 0) out.push(`panel off screen at ${Math.round(r.top)}..${Math.round(r.bottom)}`);
  return out;
}"""
# the pending decision's kind, or null when no decision is shown (the game is over)
KIND = """(() => {
  const p = document.querySelector('#decision-panel');
  return p && p.dataset.id ? p.dataset.kind : null;
})()"""
SCREENS = {"laptop": LAPTOP, "phone": PHONE}
# the default suite's games: this many decisions by clicking, then 托管 to the end (a whole
# game by clicking, 20 to 100 decisions, is the slow runs'): the page's mechanics are the same
# at every decision, and the end of the game is still told by the page and the lobby
DECISIONS = 25


async def play_on_two_screens(
    tab: Tab, rng: random.Random, name: str, decisions: int = 1500
) -> dict[str, set[str]]:
    """Play the game by clicking, to its end or for `decisions` decisions; each decision is
    laid out (LAYOUT) on the screen the page is on, then on the other screen, and answered
    there: every decision is checked on a phone and on a laptop, and answered on each in turn
    (one resize a decision, not three). The decision kinds checked, by screen; one screenshot
    per kind and screen."""
    kinds: dict[str, set[str]] = {"phone": set(), "laptop": set()}
    last: str | None = None
    now = "laptop"
    await tab.page.set_viewport_size(LAPTOP)
    for _ in range(decisions):
        ready = await tab.page.wait_for_function(READY, arg=last, timeout=120_000)
        kind = await tab.js(KIND) if await ready.json_value() else None
        if kind is None:
            return kinds
        other = "phone" if now == "laptop" else "laptop"
        for screen in (now, other):
            if screen != now:
                await tab.page.set_viewport_size(SCREENS[screen])
            bad = await tab.js(LAYOUT)
            assert not bad, f"{name}: a {kind} decision on the {screen}: {bad}"
            if kind not in kinds[screen]:
                await tab.screenshot(ARTIFACTS / f"screens/{name}-{kind}-{screen}.png")
            kinds[screen].add(kind)
        now = other
        d = await decide(tab, rng, last)
        if d is None:
            return kinds
        last = d["id"]
    if decisions < 1500:
        return kinds  # the rest of the game: the caller hands the seat to its bot
    raise AssertionError("the game did not end")


async def plays_a_whole_game(
    chromium: Browser,
    play_platform: PlayPlatform,
    ruleset: str,
    players: int,
    preset: str | None,
    decisions: int | None = DECISIONS,
) -> None:
    """A person sits at a table of `players` (`preset`: an option preset of /api/modes) and
    plays it by clicking, to its end (`decisions` None: the slow runs) or for `decisions`
    decisions and then hands the seat to its bot (托管, the button) which plays it to its end;
    what the page and the lobby show of it afterwards."""
    tab = await new_tab(chromium)
    name = f"{ruleset} player"
    game, seat = await sit_down(tab, play_platform.base, name, ruleset, players, preset)
    kinds = await play_on_two_screens(tab, random.Random(players), ruleset, decisions or 1500)
    if decisions is not None and await tab.js(
        "document.querySelector('#conn').textContent !== 'game over'"
    ):
        # the seat's bot plays on (托管), unless the seat is dead or the game over already: the
        # button is off then (seat.js), and the bots at the table end the game without it
        enabled = (
            "document.querySelector('#hosting') && !document.querySelector('#hosting').disabled"
        )
        view = "arenaSeat.view()"
        await tab.wait_for(
            f"{view}.over || !({view}.seats[{seat}] || {{alive: true}}).alive || ({enabled})"
        )
        if await tab.js(f"!!({enabled})"):
            await tab.page.click("#hosting")
        await tab.wait_for("document.querySelector('#conn').textContent === 'game over'", 120)
    assert kinds["phone"] == kinds["laptop"] and {"play", "respond"} & kinds["phone"], kinds
    (ARTIFACTS / "screens").mkdir(parents=True, exist_ok=True)
    (ARTIFACTS / f"screens/{ruleset}-kinds.json").write_text(json.dumps(sorted(kinds["phone"])))
    await tab.page.set_viewport_size(LAPTOP)
    await tab.wait_for("document.querySelector('#conn').textContent === 'game over'")
    await tab.screenshot(ARTIFACTS / f"play-{ruleset}.png")
    text = await tab.js("document.querySelector('#log').innerText")
    assert "the game ends" in text
    assert " answered" not in text  # no chatter: a seat's own answers are not news to it
    # the centre's number is the log's: the position of the last entry
    centre, top = await tab.js("[q('#seq').textContent, q('#log li').value]")
    assert int(centre) == top, (centre, top)
    won = await tab.js(f"arenaSeat.view().winners.includes({seat})")
    result = await tab.js("document.querySelector('#result').textContent")
    assert ("you won" if won else "you lost") in result, result
    for word in ("processing", "judge_phase", "discard_phase", "undefined", "[object", "NaN"):
        assert word not in text, word
    assert not re.search(r"\b[a-z]+_[a-z_]+\b", text), re.findall(r"\b[a-z]+_[a-z_]+\b", text)
    if ruleset == "honglou":
        assert "主公" not in await tab.js("document.body.innerText")  # 主人 in 红楼梦
    assert not tab.errors, tab.errors
    # the seat's own hand is drawn below the felt, every card of it
    mine = await tab.js(f"arenaSeat.view().seats[{seat}].hand.length")
    assert await tab.js("document.querySelectorAll('#myhand .card').length") == mine
    # the lobby lists the finished game with the side that won and the players, by name
    winners = await tab.js("arenaSeat.view().winners")
    await tab.goto(play_platform.base + "/#/")
    row = f"document.querySelector('#recent tr[data-game=\"{game}\"]')"
    await tab.wait_for(row, 60)
    cells = await tab.js(f"[...{row}.querySelectorAll('td')].map(td => td.textContent)")
    seated = cells[2].split(", ")
    assert len(seated) == players and seated[seat] == name, cells
    side = next(c for c in cells if c.startswith("winners: "))
    assert (side != "winners: —") == bool(winners), (side, winners)
    assert cells[-1] == ", ".join(seated[s] for s in winners), (cells, winners)
    assert not tab.errors, tab.errors
