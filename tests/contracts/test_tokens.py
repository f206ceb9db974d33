"""Seat tokens: genuine ones verify; forged, tampered, expired and junk ones do not."""

from __future__ import annotations

import msgspec
import pytest
from hypothesis import given
from hypothesis import strategies as st

from services.contracts import tokens

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


def test_no_secret_no_default(
    monkeypatch: pytest.MonkeyPatch, capsys: pytest.CaptureFixture[str]
) -> None:
    """Secrets fail closed: unset or empty ARENA_SECRET is an error, never a known default;
    a service's start prints one line and exits 2."""
    monkeypatch.setenv("ARENA_SECRET", "a" * 32)
    assert tokens.secret_from_env() == b"a" * 32
    for short in ("a", "x" * 31):  # issue 40: a one-character secret was accepted
        monkeypatch.setenv("ARENA_SECRET", short)
        with pytest.raises(tokens.MissingSecret, match="at least 32"):
            tokens.secret_from_env()
        with pytest.raises(SystemExit):
            tokens.require_secret("arena engine")
        assert capsys.readouterr().err.count("\n") == 1
    for unset in (None, ""):
        if unset is None:
            monkeypatch.delenv("ARENA_SECRET")
        else:
            monkeypatch.setenv("ARENA_SECRET", unset)
        with pytest.raises(tokens.MissingSecret):
            tokens.secret_from_env()
        with pytest.raises(SystemExit) as stop:
            tokens.require_secret("arena engine")
        assert stop.value.code == 2
        err = capsys.readouterr().err
        assert err.count("\n") == 1 and err.startswith("arena engine: ARENA_SECRET is not set")
    assert not hasattr(tokens, "DEV_SECRET")


def test_create_signature() -> None:
    """A signed create request checks; a changed field, another key, a seat token's key, a
    stale time or a short nonce does not."""
    fields, sig = tokens.sign_create(SECRET, "m1", "standard", [("p0", False), ("bot:x", True)])
    tokens.check_create(SECRET, fields, sig)
    for bad in (
        msgspec.structs.replace(fields, match_id="m2"),
        msgspec.structs.replace(fields, seats=[("p0", True), ("bot:x", True)]),
        msgspec.structs.replace(fields, options_json='{"x":1}'),
        msgspec.structs.replace(fields, issued_at_ms=fields.issued_at_ms + 1),
    ):
        with pytest.raises(tokens.BadCreate, match="signature"):
            tokens.check_create(SECRET, bad, sig)
    with pytest.raises(tokens.BadCreate, match="signature"):
        tokens.check_create(b"other", fields, sig)
    with pytest.raises(tokens.BadCreate, match="signed"):
        tokens.check_create(SECRET, fields, b"")
    seat_mac = tokens._sign(SECRET, msgspec.json.encode(fields))  # a seat token's key
    with pytest.raises(tokens.BadCreate):
        tokens.check_create(SECRET, fields, seat_mac)
    old, sig_old = tokens.sign_create(SECRET, "m1", "standard", [], now_ms=1_000)
    with pytest.raises(tokens.BadCreate, match="too long ago"):
        tokens.check_create(SECRET, old, sig_old)
    short = msgspec.structs.replace(fields, nonce="00")
    with pytest.raises(tokens.BadCreate, match="nonce"):
        tokens.check_create(SECRET, short, tokens.create_signature(SECRET, short))
    assert tokens.create_key(SECRET) != SECRET
