"""Access rules: who may see which view of a live or finished game, and how far behind."""

from __future__ import annotations

import pytest

from services.contracts import tokens
from services.readside.access import (
    BadRequest,
    Forbidden,
    Grant,
    TablePolicy,
    authorize,
    delay_for,
    hmac_seat_check,
    parse_viewer,
    released,
)
from services.rules.api import GOD, SPECTATOR


def never(game: str, seat: int, token: str) -> bool:
    return False


def only_ok(game: str, seat: int, token: str) -> bool:
    return token == f"ok-{game}-{seat}"


@pytest.mark.parametrize(
    ("policy", "over", "viewer", "token", "delay", "want"),
    [
        (TablePolicy(), True, GOD, None, 0, Grant(GOD, 0)),
        (TablePolicy(), True, 3, None, 0, Grant(3, 0)),
        (TablePolicy(60_000), True, SPECTATOR, None, 0, Grant(SPECTATOR, 0)),
        (TablePolicy(), False, SPECTATOR, None, 0, Grant(SPECTATOR, 0)),
        (TablePolicy(60_000), False, SPECTATOR, None, 0, Grant(SPECTATOR, 60_000)),
        (TablePolicy(60_000), False, SPECTATOR, None, 90_000, Grant(SPECTATOR, 90_000)),
        (TablePolicy(1000, 300_000), False, GOD, None, 0, Grant(GOD, 300_000)),
        (TablePolicy(), False, 2, "ok-g-2", 0, Grant(2, 0)),
    ],
)
def test_grants(
    policy: TablePolicy, over: bool, viewer: int, token: str | None, delay: int, want: Grant
) -> None:
    assert authorize("g", policy, over, 5, viewer, token, delay, only_ok) == want


@pytest.mark.parametrize(
    ("policy", "viewer", "token"),
    [
        (TablePolicy(), GOD, None),  # live, and the table does not open the god view
        (TablePolicy(60_000), GOD, "ok-g-0"),  # a seat token is no god ticket
        (TablePolicy(), 2, None),
        (TablePolicy(), 2, "ok-g-3"),  # another seat's token
        (TablePolicy(), 2, "ok-h-2"),  # another game's token
    ],
)
def test_refusals(policy: TablePolicy, viewer: int, token: str | None) -> None:
    with pytest.raises(Forbidden):
        authorize("g", policy, False, 5, viewer, token, 0, only_ok)


def test_bad_requests() -> None:
    with pytest.raises(BadRequest):
        authorize("g", TablePolicy(), True, 5, 5, None, 0, never)  # no seat 5 at 5 players
    with pytest.raises(BadRequest):
        authorize("g", TablePolicy(), True, 5, SPECTATOR, None, -1, never)
    for text in ("x", "-3", "1.5"):
        with pytest.raises(BadRequest):
            parse_viewer(text)
    assert [parse_viewer(t) for t in (None, "", "spectator", "god", "4", "-1")] == [
        SPECTATOR,
        SPECTATOR,
        SPECTATOR,
        GOD,
        4,
        SPECTATOR,
    ]


def test_hmac_seat_tokens() -> None:
    secret = b"s" * 32
    check = hmac_seat_check(secret)
    token = tokens.issue(secret, "g1", 2)
    assert check("g1", 2, token)
    assert not check("g1", 3, token)
    assert not check("g2", 2, token)
    assert not check("g1", 2, tokens.issue(b"other", "g1", 2))
    assert not check("g1", 2, tokens.issue(secret, "g1", 2, ttl_ms=-1))
    assert not check("g1", 2, "junk")


def test_released_counts_the_entries_old_enough() -> None:
    at = [100, 100, 250, 400]
    assert released(at, 0, 0) == 4  # live: everything held
    assert [released(at, 100, now) for now in (150, 200, 349, 350, 499, 500)] == [0, 2, 2, 3, 3, 4]


def test_every_channel_holds_the_same_delays() -> None:
    """`delay_for` is what GameService applies to a viewer whose token it has checked."""
    policy = TablePolicy(60_000, 300_000)
    assert delay_for(policy, SPECTATOR, False) == 60_000
    assert delay_for(policy, SPECTATOR, True) == 0
    assert delay_for(policy, 3, False) == 0
    assert delay_for(policy, GOD, False) == 300_000
    with pytest.raises(Forbidden):
        delay_for(TablePolicy(60_000), GOD, False)
