"""The session soak (soak.py) on the session's platform: a short one in the default suite, a
hundred sessions under -m slow. Every game ends, leaves the live games and verifies with the
platform's key; the bot worker is killed and restarted mid-way."""

from __future__ import annotations

import pytest

from .fixtures import PlayPlatform
from .soak import soak


async def test_a_short_session_soak(play_platform: PlayPlatform) -> None:
    """Five people (one a bot game): a timeout into 托管 and back, 托管 asked and taken back,
    two reconnects, a resignation and a new table; the bot worker restarted after 4 s."""
    seen = await soak(
        play_platform.base,
        play_platform.platform,
        5,
        seed=1,
        at_once=5,
        restart_after_s=4,
        end_within_s=120,
    )
    assert not seen.errors, seen.errors
    for behaviour in ("answer", "timeout", "hosting", "take_back", "reconnect", "resign"):
        assert seen.did[behaviour], (behaviour, seen.did)
    assert seen.did["new_table"] and seen.did["bot_game"] and seen.did["bot_worker_restarted"]
    assert seen.did["bots_played_after_restart"]
    assert len(seen.games) >= 6


@pytest.mark.slow
async def test_a_hundred_sessions(play_platform: PlayPlatform) -> None:
    """A hundred people, twelve at a time, one in five a bot game, each with a few percent
    chance of every behaviour at each decision; the bot worker restarted a minute in."""
    seen = await soak(
        play_platform.base,
        play_platform.platform,
        100,
        seed=7,
        at_once=12,
        restart_after_s=60,
        end_within_s=600,
    )
    print(f"\nsoak: {len(seen.games)} games, {dict(seen.did)}, refused {dict(seen.refused)}")
    assert not seen.errors, seen.errors[:10]
    for behaviour in ("answer", "timeout", "hosting", "take_back", "reconnect", "resign", "died"):
        assert seen.did[behaviour], (behaviour, seen.did)
