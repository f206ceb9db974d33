"""A person plays a 10-seat `honglou` (红楼梦) game to its end in Chromium,
every decision checked on a phone and a laptop screen (whole_game.py says what is checked)."""

from __future__ import annotations

from playwright.async_api import Browser

from tests.play.fixtures import PlayPlatform

from .whole_game import plays_a_whole_game


async def test_a_person_plays_a_whole_game(chromium: Browser, play_platform: PlayPlatform) -> None:
    await plays_a_whole_game(chromium, play_platform, "honglou", 10, None)
