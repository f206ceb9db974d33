"""Leak 6 of issue 17: `arena verify` trusted the reveal. A file whose reveal winners, end time
or header seats were changed and re-chained verified with exit 0 (and the lobby showed those
winners). Now the reveal and the header are checked against the re-run, naming the field."""

from __future__ import annotations

import subprocess
import sys
from pathlib import Path

import msgspec

from services.eventlog import InMemoryEventStore, archive
from services.eventlog.entry import GENESIS, HEADER, SEED_REVEAL, decode_entry, encode_entry, seal
from services.eventlog.records import Header, Seat, SeedReveal, decode_payload, encode_payload
from services.rules import api
from services.verify import record_game, verify
from services.verify.commands import verify_game


def reseal(records: list[bytes], index: int, kind: str, payload: bytes) -> list[bytes]:
    """Replace entry `index` (0-based) and re-chain everything from it, as a forger would."""
    entries = [decode_entry(r) for r in records]
    items = [(e.kind, e.payload) for e in entries]
    items[index] = (kind, payload)
    prev = entries[index - 1].hash if index else GENESIS
    return records[:index] + [encode_entry(e) for e in seal(prev, index + 1, items[index:])]


async def _game(store: InMemoryEventStore | None = None) -> list[bytes]:
    store = store or InMemoryEventStore()
    await record_game(store, "v1", api, "standard", 5, 3)  # type: ignore[arg-type]
    return [d for _, d in await store.read("v1")]


def _reveal(records: list[bytes]) -> SeedReveal:
    return decode_payload(decode_entry(records[-1]).payload, SeedReveal)


def _header(records: list[bytes]) -> Header:
    return decode_payload(decode_entry(records[0]).payload, Header)


def _forge_reveal(records: list[bytes], **changes: object) -> list[bytes]:
    fake = msgspec.structs.replace(_reveal(records), **changes)
    return reseal(records, len(records) - 1, SEED_REVEAL, encode_payload(fake))


def _forge_header(records: list[bytes], **changes: object) -> list[bytes]:
    fake = msgspec.structs.replace(_header(records), **changes)
    return reseal(records, 0, HEADER, encode_payload(fake))


async def test_changed_winners_are_named() -> None:
    records = await _game()
    assert verify(records).ok
    real = _reveal(records).winners
    others = [s for s in range(5) if s not in real][:1] or [0]
    report = verify(_forge_reveal(records, winners=others))
    assert not report.ok and report.divergence is not None
    assert "winners" in report.divergence.reason and report.divergence.kind == SEED_REVEAL
    assert report.chain_ok and report.seed_ok and report.replay_ok  # a clean re-chain


async def test_changed_sides_are_named() -> None:
    """The lobby names the side that won from the reveal's `sides`: a forged one (re-chained)
    verified; now it must be the roles of the re-run's winners ([] claims no side)."""
    records = await _game()
    real = _reveal(records).winners
    roles = {
        e.seat: e.role
        for e in (
            api.decode_event(x.payload) for x in map(decode_entry, records) if x.kind == "event"
        )
        if isinstance(e, api.events.RoleAssigned)
    }
    honest = sorted({roles[s] for s in real} - {""})
    assert honest and verify(_forge_reveal(records, sides=honest)).ok
    liar = [r for r in ("lord", "rebel", "renegade", "loyalist") if [r] != honest][:1]
    report = verify(_forge_reveal(records, sides=liar))
    assert not report.ok and report.divergence is not None
    assert "sides" in report.divergence.reason and report.divergence.kind == SEED_REVEAL


async def test_an_end_before_the_start_is_named() -> None:
    records = await _game()
    start = _header(records).started_at_ms
    report = verify(_forge_reveal(records, ended_at_ms=start - 1))
    assert not report.ok and report.divergence is not None
    assert "ended_at_ms" in report.divergence.reason


async def test_header_seats_must_seat_the_players_dealt() -> None:
    records = await _game()
    seats = _header(records).seats
    for fake in ([*seats, Seat("mallory")], seats[:-1]):
        report = verify(_forge_header(records, seats=fake))
        assert not report.ok and report.divergence is not None
        assert "seats" in report.divergence.reason, report.summary()


async def test_times_from_the_live_log_are_checked() -> None:
    """From Redis (append times known), a reveal dated an hour off its entry is named."""
    store = InMemoryEventStore()
    records = await _game(store)
    assert (await verify_game(store, "v1")).ok
    forged = _forge_reveal(records, ended_at_ms=_reveal(records).ended_at_ms + 3_600_000)
    bad = InMemoryEventStore()
    await bad.append("v1", 0, forged)
    report = await verify_game(bad, "v1")
    assert not report.ok and report.divergence is not None
    assert "ended_at_ms" in report.divergence.reason


async def test_arena_verify_exits_non_zero_naming_the_field(tmp_path: Path) -> None:
    records = await _game()
    path = tmp_path / "v1.arena"
    path.write_bytes(archive.pack("v1", _forge_reveal(records, winners=[4, 3, 2, 1, 0])))
    p = subprocess.run(
        # an unsigned file: the consistency check alone, which must name the forged field
        [sys.executable, "-m", "services.cli", "verify", str(path), "--consistency-only"],
        capture_output=True,
        text=True,
        timeout=120,
    )
    assert p.returncode != 0 and "winners" in p.stdout + p.stderr, p.stdout + p.stderr
