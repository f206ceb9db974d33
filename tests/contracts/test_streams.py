"""The shared streams' messages: one Struct per stream, round trips, and one place for the keys."""

from __future__ import annotations

import re
from pathlib import Path

import msgspec
import pytest

from services.contracts.streams import (
    DECISIONS,
    FIELD,
    FINISHED,
    MATCHES,
    SHARED,
    VIEWLESS_PLAYERS,
    BadMessage,
    BotDecision,
    GameFinished,
    NewMatch,
    Seat,
    decode,
    encode,
    stream_key,
    stream_of,
)

SERVICES = Path(__file__).resolve().parents[2] / "services"
MESSAGES = [
    NewMatch(
        match_id="m1",
        ruleset="standard",
        seats=[Seat("alice"), Seat("bot:random", True)],
        options={"x": 1},
        seed=5,
        mode="standard-2",
        tokens={0: "tok"},
    ),
    BotDecision(game="g", decision=3, seat=1, player="bot:random", version=9, body=b'{"id":3}'),
    GameFinished(game="g", winners=[0, 2]),
]


@pytest.mark.parametrize("message", MESSAGES, ids=lambda m: type(m).__name__)
def test_round_trip_through_one_field(message: NewMatch | BotDecision | GameFinished) -> None:
    fields = encode(message)
    assert list(fields) == [FIELD]
    assert decode(fields, type(message)) == message
    assert stream_of(message).message is type(message)


def test_each_stream_carries_one_message_and_names_its_groups() -> None:
    assert [(s.name, s.message, s.groups) for s in SHARED] == [
        ("matches", NewMatch, ("engine",)),
        ("decisions", BotDecision, ("bots",)),
        ("finished", GameFinished, ("ratings",)),
    ]
    assert stream_key("arena", MATCHES.name) == "arena:matches"


def test_a_hand_written_json_match_still_reads() -> None:
    legacy = {b"match": b'{"match_id":"m","ruleset":"standard","seats":[{"player":"p"}]}'}
    assert decode(legacy, NewMatch) == NewMatch(match_id="m", ruleset="standard", seats=[Seat("p")])


@pytest.mark.parametrize(
    "fields",
    [{}, {b"x": b"1"}, {FIELD: b"\xc1"}, encode(GameFinished(game="g")), {b"match": b"{"}],
)
def test_anything_else_is_a_bad_message(fields: dict[bytes, bytes]) -> None:
    with pytest.raises(BadMessage):
        decode(fields, BotDecision if b"match" not in fields else NewMatch)


def test_an_older_message_without_a_new_field_decodes() -> None:
    old = msgspec.msgpack.encode(
        {"game": "g", "decision": 1, "seat": 0, "player": "p", "version": 2, "body": b"{}"}
    )
    assert decode({FIELD: old}, BotDecision).view is None


def test_no_service_names_a_shared_stream_key_by_hand() -> None:
    """Every key goes through stream_key (so partitioning the streams later is one change)."""
    names = "|".join(s.name for s in (MATCHES, DECISIONS, FINISHED)) + "|dead"
    by_hand = re.compile(rf"""f?["'][^"'\n]*\}}:({names})["']""")
    found = [
        f"{p.relative_to(SERVICES)}:{n}"
        for p in SERVICES.rglob("*.py")
        for n, line in enumerate(p.read_text().splitlines(), 1)
        if by_hand.search(line)
    ]
    assert found == []


def test_viewless_players_are_the_bots_viewless_policies() -> None:
    """The engine keeps no feed for exactly the seats whose policy the bot service folds no
    view for (a policy that reads one must never be starved of it)."""
    from services.bots.seats import BOT_PREFIX, VIEWLESS

    assert {BOT_PREFIX + name for name in VIEWLESS} == VIEWLESS_PLAYERS


def test_a_layout_names_the_keys_game_key_does(monkeypatch: pytest.MonkeyPatch) -> None:
    from services.contracts.streams import Layout, game_key, game_stream_key

    monkeypatch.setenv("ARENA_PARTITIONS", "16")
    layout = Layout("ns")
    for game in ("g-1", "a.b_c", "x" * 100):
        assert layout.game_key(game, "log") == game_key("ns", game, "log")
        assert layout.game_stream_key("deadlines", game) == game_stream_key("ns", "deadlines", game)
    monkeypatch.setenv("ARENA_PARTITIONS", "4")
    assert Layout("ns").game_key("g-1", "log") == game_key("ns", "g-1", "log")
