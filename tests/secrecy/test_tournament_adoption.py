"""Leak 4 of issue 17, the tournament's side: a game created ahead of a tournament under its
predictable id (t<key>-<i>) was recorded as the tournament's own, with other seats and another
seed (the already-archived path checked neither). Now every adopted game's header and seed
reveal must be the tournament's: ruleset, players, options, seats, seed and its commitment."""

from __future__ import annotations

from pathlib import Path

import pytest
import redis.asyncio as aioredis

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.contracts.streams import NewMatch, Seat
from services.engine.service import Games
from services.engine.side import RedisSide
from services.eventlog.redis_store import RedisEventStore
from services.rules import api
from services.tournaments.journal import read_journal
from services.tournaments.matches import bot_match
from services.tournaments.runner import play
from services.tournaments.spec import Spec

SECRET = b"adoption"


async def _archived(client: aioredis.Redis, ns: str, folder: Path, match: NewMatch) -> None:
    """Play `match` to its end in-process and archive it, as an engine worker would."""
    games = Games(RedisEventStore(client, ns), RedisSide(client, ns), SECRET, archive_dir=folder)
    await games.create_game(match)
    policy = RandomPolicy(1)
    while (folder / f"{match.match_id}.arena").exists() is False:
        hot = await games.get(match.match_id)
        d = api.pending(hot.game)
        assert d is not None
        token = tokens.issue(SECRET, match.match_id, d.seat)
        await games.submit_action(
            match.match_id,
            token,
            (await games.get(match.match_id)).ids.opaque(d.id),
            list(policy.act(d).picks),
        )


@pytest.mark.parametrize("forged", ["seats", "seed", "none"])
async def test_a_game_made_ahead_is_not_adopted(
    redis_url: str, redis_namespace: str, redis_client: aioredis.Redis, tmp_path: Path, forged: str
) -> None:
    spec = Spec(ruleset="standard", players=4, games=1, policies=["random"], seed=11)
    gid, policies = spec.game_id(0), spec.seats(0)
    match = bot_match(gid, spec.ruleset, policies, spec.seed)
    if forged == "seats":  # the attacker's own seats, the right seed
        match = NewMatch(
            match_id=gid, ruleset="standard", seats=[Seat("mallory")] * 4, seed=spec.seed
        )
    elif forged == "seed":  # the right seats, a seed the attacker chose
        match = bot_match(gid, spec.ruleset, policies, 424242)
    archive = tmp_path / "archive"
    await _archived(redis_client, redis_namespace, archive, match)
    journal = tmp_path / "t.jsonl"
    if forged == "none":
        assert await play(spec, redis_url, redis_namespace, archive, [0], journal, 1) == 1
        assert read_journal(journal)[0].seed == spec.seed
        return
    with pytest.raises(RuntimeError, match=f"not this tournament's game.*{forged}"):
        await play(spec, redis_url, redis_namespace, archive, [0], journal, 1)
    assert read_journal(journal) == {}  # nothing recorded
