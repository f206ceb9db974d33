"""The partitioned key layout: every key a game's append script writes shares one cluster slot,
partitions spread evenly over the slot space, and the partition count is checked."""

from __future__ import annotations

import pytest
from redis.crc import key_slot

from services.contracts.streams import (
    DECISIONS,
    FINISHED,
    MATCHES,
    BadLayout,
    game_key,
    game_stream_key,
    partition_of,
    partition_tag,
    partitions,
    stream_key,
    stream_keys,
)


@pytest.mark.parametrize("count", [1, 3, 16, 100])
def test_tags_fall_in_their_slice(count: int) -> None:
    for p in range(count):
        slot = key_slot(f"x:{{{partition_tag(p, count)}}}:y".encode())
        assert p * 16384 // count <= slot < (p + 1) * 16384 // count


@pytest.mark.parametrize("count", ["1", "16"])
def test_a_games_keys_and_streams_share_a_slot(count: str, monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_PARTITIONS", count)
    seen = set()
    for i in range(200):
        game = f"m-{i:04x}"
        keys = [game_key("arena", game, k) for k in ("log", "snap", "secret")]
        keys += [game_stream_key("arena", s.name, game) for s in (DECISIONS, FINISHED, MATCHES)]
        keys.append(game_stream_key("arena", "deadlines", game))
        assert len({key_slot(k.encode()) for k in keys}) == 1, keys
        seen.add(partition_of(game))
    assert seen == set(range(int(count)))  # 200 ids reach every partition
    assert len(stream_keys("arena", DECISIONS.name)) == int(count)
    assert stream_keys("arena", MATCHES.name)[-1] == "arena:{mm}:matches"


def test_partition_count_setting(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.delenv("ARENA_PARTITIONS", raising=False)
    assert partitions() == 16
    for bad in ("0", "x", "-3", "100000"):
        monkeypatch.setenv("ARENA_PARTITIONS", bad)
        with pytest.raises(BadLayout, match="want"):
            partitions()
    assert stream_key("arena", "dead") == "arena:dead"
