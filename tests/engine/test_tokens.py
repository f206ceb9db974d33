"""Seat tokens: genuine ones verify; forged, tampered, expired and junk ones do not."""

from __future__ import annotations

import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.engine import tokens

SECRET = b"test-secret"


def test_round_trip_names_game_seat_expiry() -> None:
    t = tokens.issue(SECRET, "g1", 2, ttl_ms=1000, now_ms=5_000)
    assert tokens.verify(SECRET, t, now_ms=5_500) == tokens.SeatClaims("g1", 2, 6_000)


def test_expired() -> None:
    t = tokens.issue(SECRET, "g1", 2, ttl_ms=1000, now_ms=5_000)
    with pytest.raises(tokens.BadToken, match="expired"):
        tokens.verify(SECRET, t, now_ms=6_000)


def test_other_secret_is_forged() -> None:
    t = tokens.issue(b"someone else", "g1", 2)
    with pytest.raises(tokens.BadToken, match="signature"):
        tokens.verify(SECRET, t)


def test_tampered_claims_are_forged() -> None:
    t = tokens.issue(SECRET, "g1", 2)
    other = tokens.issue(SECRET, "g1", 3)
    # seat 3's claims with seat 2's signature
    swapped = other.split(".")[0] + "." + t.split(".")[1]
    with pytest.raises(tokens.BadToken):
        tokens.verify(SECRET, swapped)


@given(st.text(max_size=300))
def test_junk_is_refused(junk: str) -> None:
    with pytest.raises(tokens.BadToken):
        tokens.verify(SECRET, junk)


def test_secret_from_env(monkeypatch: pytest.MonkeyPatch) -> None:
    monkeypatch.setenv("ARENA_SECRET", "abc")
    assert tokens.secret_from_env() == b"abc"
    monkeypatch.delenv("ARENA_SECRET")
    assert tokens.secret_from_env() == tokens.DEV_SECRET
