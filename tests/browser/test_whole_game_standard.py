"""A person plays a 5-seat `standard` game, generals drafted (the `draft` preset), to its end in
Chromium: the first 25 decisions by clicking, each checked on a phone and a laptop screen,
then 托管 plays the seat to the end; under `-m slow` every decision of the game by clicking
(whole_game.py says what is checked)."""

from __future__ import annotations

import pytest
from playwright.async_api import Browser

from tests.play.fixtures import PlayPlatform

from .whole_game import plays_a_whole_game


async def test_a_person_plays_a_whole_game(chromium: Browser, play_platform: PlayPlatform) -> None:
    await plays_a_whole_game(chromium, play_platform, "standard", 5, "draft")


@pytest.mark.slow
async def test_a_person_plays_a_whole_game_by_clicking(
    chromium: Browser, play_platform: PlayPlatform
) -> None:
    """The whole game by clicking, every decision of it on both screens."""
    await plays_a_whole_game(chromium, play_platform, "standard", 5, "draft", decisions=None)
