"""A person's session off the straight path, in Chromium on a real platform: resigning leaves the
seat (the lobby keeps the person, says what happened and offers the game to watch, and quick
play seats them again); a person whose seat dies is told so, watches on from the seat, and goes
back to the lobby from it; the lobby opens on standard identity for five; the page speaks one
language (the browser's, or the one switched to) on the lobby, the seat and the viewer; and the
lobby and the viewer fit a phone's screen."""

from __future__ import annotations

import re

from playwright.async_api import Browser

from tests.play.fixtures import PlayPlatform

from .conftest import ARTIFACTS, Tab
from .test_play import LAPTOP, PHONE, READY, new_tab, sit_down

LATIN = re.compile(r"[A-Za-z]{3,}")
PANEL_ID = "document.querySelector('#decision-panel') && document.querySelector('#decision-panel').dataset.id"

# Answer the worst way by clicking (decline; else the first options; end every play phase)
# until the seat dies ('dead: ' and the words it is told, read in the same tick: the game may
# end, and the words give way to the result, before another call could read them), the game
# ends ('over') or nothing comes.
DIE = """async () => {
  const sleep = (ms) => new Promise((r) => setTimeout(r, ms));
  let last = null;
  for (let i = 0; i < 40000; i++) {
    const dead = document.querySelector('#dead');
    if (dead) return 'dead: ' + dead.textContent;
    if (document.querySelector('#result')) return 'over';
    const p = document.querySelector('#decision-panel');
    if (p && p.dataset.id && p.dataset.id !== last && !p.classList.contains('busy')) {
      last = p.dataset.id;
      const decline = document.querySelector('#decline');
      if (decline) decline.click();
      else {
        const opts = [...p.querySelectorAll('button.opt')];
        const ok = document.querySelector('#ok');
        if (!ok) opts[0].click();
        else { opts.slice(0, Number(p.dataset.min) || 1).forEach((b) => b.click()); ok.click(); }
      }
    }
    await sleep(10);
  }
  return 'nothing';
}"""


def no_sideways(tab: Tab) -> str:
    return "document.documentElement.scrollWidth <= window.innerWidth"


async def test_resigning_leaves_for_the_lobby_and_quick_play_seats_again(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    tab = await new_tab(chromium)
    tab.page.on("dialog", lambda d: d.accept())
    game, _ = await sit_down(tab, play_platform.base, "Quitter", "standard", 5, "draft")
    await tab.page.wait_for_function(READY, arg=None, timeout=60_000)
    await tab.page.click("#resign")
    await tab.wait_for(
        "location.hash === '#/' && document.querySelector('#notice') && !document.querySelector('#notice').hidden"
    )
    notice = await tab.js("document.querySelector('#notice').innerText")
    assert f"You left game {game}" in notice and "watch" in notice, notice
    assert (
        await tab.js("document.querySelector('#notice a').getAttribute('href')") == f"#/live/{game}"
    )
    # the lobby keeps the person (before, it sent them back to the seat), and the form is there
    await tab.page.wait_for_selector("#table-form")
    assert await tab.js("location.hash") == "#/"
    await tab.page.fill("#botwait", "0.2")
    await tab.page.click("#quick")
    await tab.wait_for("location.hash.startsWith('#/play/')", 60)
    assert not (await tab.js("location.hash")).startswith(f"#/play/{game}/")
    assert not tab.errors, tab.errors


async def test_a_dead_person_is_told_watches_on_and_goes_back_to_the_lobby(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    tab = await new_tab(chromium)
    for _attempt in range(6):
        game, seat = await sit_down(tab, play_platform.base, "Doomed", "standard", 5, "vanilla")
        outcome = await tab.page.evaluate(DIE)
        if outcome.startswith("dead: "):
            break
        assert outcome == "over", outcome
    else:
        raise AssertionError("the person never died before the game ended in six games")
    text = outcome.removeprefix("dead: ")
    assert text.startswith("You died") and "watch the rest" in text, text
    assert await tab.js(
        f"document.querySelector('.seat[data-seat=\"{seat}\"]').classList.contains('dead')"
    )
    # the seat's view goes on while the others play (unless the game ends first)
    lines = await tab.js("document.querySelectorAll('#log li').length")
    await tab.wait_for(
        f"document.querySelectorAll('#log li').length > {lines} || document.querySelector('#result')",
        60,
    )
    await tab.page.set_viewport_size(PHONE)
    await tab.wait_for(no_sideways(tab))
    await tab.screenshot(ARTIFACTS / "screens/dead-phone.png")
    await tab.page.set_viewport_size(LAPTOP)
    if await tab.js("!!document.querySelector('#to-lobby')"):
        await tab.page.click("#to-lobby")
        await tab.wait_for("location.hash === '#/' && !!document.querySelector('#table-form')")
        assert await tab.js("location.hash") == "#/"  # not sent back to the dead seat
    assert not tab.errors, tab.errors


async def test_one_language_per_page_and_a_switch(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    """A browser speaking Chinese gets a Chinese page: the lobby, the form (standard identity
    for five with a draft by default), the seat's prompt and options (labelled by the server in
    Chinese) and the log; the switch turns the same page English and is kept."""
    tab = await new_tab(chromium, locale="zh-CN")
    await tab.goto(play_platform.base + "/")
    await tab.page.fill("#name", "小安")
    await tab.page.click("#guest button")
    await tab.page.wait_for_selector("#table-form")
    form = await tab.js(
        "[q('#ruleset').value, q('#players').selectedOptions[0].textContent, q('#preset').value]"
    )
    assert form == ["standard", "5", "draft"], form
    # the page's own words (game ids and people's names are what they are)
    lobby = await tab.js(
        "[q('#playbox').innerText, ...[...document.querySelectorAll('.lobby h2')].map(h => h.innerText)].join('\\n')"
    )
    assert "快速开始" in lobby and not LATIN.search(lobby), lobby
    for width in (360, PHONE["width"]):  # from 360 px up
        await tab.page.set_viewport_size({"width": width, "height": PHONE["height"]})
        assert await tab.js(no_sideways(tab)), width
    await tab.screenshot(ARTIFACTS / "screens/lobby-zh-phone.png")
    await tab.page.fill("#botwait", "0.2")
    await tab.page.click("#open-table")
    await tab.wait_for("location.hash.startsWith('#/play/')", 60)
    await tab.wait_for(PANEL_ID, 60)
    words = await tab.js(
        "[document.querySelector('#decision-panel').innerText, document.querySelector('#log').innerText, document.querySelector('#centre').innerText]"
    )
    text = re.sub(r"[0-9a-f]{12}…", "", "\n".join(words))  # (the seed's commitment is hex)
    assert not LATIN.search(text), text[:500]
    kind = await tab.js("document.querySelector('#decision-panel').dataset.kind")
    if kind == "draft":  # a general is chosen with its skills' text beside it
        about = await tab.js(
            "[...document.querySelectorAll('#decision-panel .about')].map(a => a.textContent)"
        )
        assert about and all("：" in a for a in about), about
    await tab.screenshot(ARTIFACTS / "screens/seat-zh-phone.png")
    # the switch: the same seat, in English, and kept after a reload
    await tab.page.click("#lang")
    await tab.wait_for(PANEL_ID, 60)
    await tab.wait_for(
        "document.querySelector('#decision-panel .prompt') && /[A-Za-z]{3,}/.test(document.querySelector('#decision-panel .prompt').textContent)"
    )
    await tab.page.reload()
    await tab.wait_for(PANEL_ID, 60)
    assert await tab.js("document.documentElement.lang") == "en"
    assert await tab.js("document.querySelector('#lang').textContent") == "中文"
    # a spectator of the same game on a phone: one column, nothing sideways
    game = (await tab.js("location.hash")).split("/")[2]
    await tab.goto(f"{play_platform.base}/#/live/{game}")
    await tab.wait_for("document.querySelectorAll('.seat').length === 5")
    assert await tab.js(no_sideways(tab))
    await tab.screenshot(ARTIFACTS / "screens/live-phone.png")
    await tab.page.set_viewport_size({"width": 360, "height": 740})
    assert await tab.js(no_sideways(tab))
    assert not tab.errors, tab.errors
