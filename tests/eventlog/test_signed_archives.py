"""Archives that prove their origin (issue 40 item 6): the platform signs each archive with its
Ed25519 key; `verify` with the platform key fails every edited or forged file, and the catalog
never lists one.

Before signatures `arena verify` passed 15 of 68 edited archives: a moved end time or start
time, changed seat player ids / names / bot flags, another rules version, a flipped `auto` flag,
an inserted 托管 entry, a whole game forged with its own seed. Here a forger does what they
did, and more, re-chaining every entry after an edit (anyone can) and keeping the genuine
index's signature (or making their own): 68 edited files of 25 kinds, all caught.
"""

from __future__ import annotations

import asyncio
import json
import sys
from collections.abc import Callable
from pathlib import Path

import msgspec
import pytest

from services.eventlog import InMemoryEventStore, archive
from services.eventlog.catalog import archive_game, load_catalog, rebuild_catalog
from services.eventlog.entry import (
    ANSWER,
    CONTROL,
    HEADER,
    SEED_REVEAL,
    decode_entry,
    encode_entry,
    seal,
)
from services.eventlog.records import (
    AnswerRecord,
    Header,
    SeatControl,
    SeedReveal,
    decode_payload,
    encode_payload,
)
from services.eventlog.signing import PublicKey, Signer, keep_in
from services.verify import Engine, record_game, verify

from . import fake_engine

ENGINE: Engine = fake_engine  # type: ignore[assignment]
PLATFORM = Signer.generate()
KEY = PLATFORM.public


async def _game(game: str = "g1", seed: int = 5, players: int = 4) -> list[bytes]:
    store = InMemoryEventStore()
    await record_game(store, game, ENGINE, "fake", players, seed)
    return [d for _, d in await store.read(game)]


def _rechain(items: list[tuple[str, bytes]]) -> list[bytes]:
    """The entries chained from the start, as a forger re-chains an edited log."""
    return [encode_entry(e) for e in seal(bytes(32), 1, items)]


def _items(records: list[bytes]) -> list[tuple[str, bytes]]:
    return [(e.kind, e.payload) for e in map(decode_entry, records)]


def _with_index(data: bytes, **changes: object) -> bytes:
    """`data` re-packed with its index fields changed (a valid CRC: anyone can compute one)."""
    index, offset = archive.read_index(data)
    fields = {f: getattr(index, f) for f in index.__struct_fields__} | changes
    return archive.header(archive.Index(**fields)) + data[offset:]  # type: ignore[arg-type]


def _forged(genuine: bytes, records: list[bytes], game: str = "g1") -> bytes:
    """An archive of `records` that keeps the genuine file's key id and signature."""
    index, _ = archive.read_index(genuine)
    return _with_index(archive.pack(game, records), key=index.key, sig=index.sig)


def _edit_payload(
    records: list[bytes], kind: str, n: int, change: Callable[[bytes], bytes]
) -> list[bytes]:
    """Change the n-th entry of `kind` (payload -> payload) and re-chain."""
    items = _items(records)
    at = [i for i, (k, _) in enumerate(items) if k == kind][n]
    items[at] = (kind, change(items[at][1]))
    return _rechain(items)


def _header(records: list[bytes], **changes: object) -> list[bytes]:
    def change(p: bytes) -> bytes:
        h = decode_payload(p, Header)
        return encode_payload(msgspec.structs.replace(h, **changes))

    return _edit_payload(records, HEADER, 0, change)


def _seat(records: list[bytes], seat: int, **changes: object) -> list[bytes]:
    h = decode_payload(decode_entry(records[0]).payload, Header)
    seats = list(h.seats)
    seats[seat] = msgspec.structs.replace(seats[seat], **changes)
    return _header(records, seats=seats)


def _reveal(records: list[bytes], **changes: object) -> list[bytes]:
    def change(p: bytes) -> bytes:
        return encode_payload(msgspec.structs.replace(decode_payload(p, SeedReveal), **changes))

    return _edit_payload(records, SEED_REVEAL, 0, change)


def _answer(records: list[bytes], n: int, **changes: object) -> list[bytes]:
    def change(p: bytes) -> bytes:
        return encode_payload(msgspec.structs.replace(decode_payload(p, AnswerRecord), **changes))

    return _edit_payload(records, ANSWER, n, change)


def _insert(records: list[bytes], at: int, kind: str, payload: bytes) -> list[bytes]:
    items = _items(records)
    items.insert(at, (kind, payload))
    return _rechain(items)


def tampered(genuine: bytes, records: list[bytes], other_game: list[bytes]) -> dict[str, bytes]:
    """Edited and forged files, by what was done to them (68 of 25 kinds)."""
    h = decode_payload(decode_entry(records[0]).payload, Header)
    r = decode_payload(decode_entry(records[-1]).payload, SeedReveal)
    answers = sum(decode_entry(x).kind == ANSWER for x in records)
    out: dict[str, bytes] = {}
    for d in (-3_600_000, -1, 1, 60_000, 86_400_000):
        out[f"ended_at moved {d:+}"] = _forged(
            genuine, _reveal(records, ended_at_ms=r.ended_at_ms + d)
        )
        out[f"started_at moved {d:+}"] = _forged(
            genuine, _header(records, started_at_ms=h.started_at_ms + d)
        )
    for s in range(len(h.seats)):
        out[f"seat {s} player id"] = _forged(genuine, _seat(records, s, player=f"mallory{s}"))
        out[f"seat {s} name"] = _forged(genuine, _seat(records, s, name="Mallory"))
        out[f"seat {s} bot flag"] = _forged(genuine, _seat(records, s, bot=not h.seats[s].bot))
    for v in ("0", h.rules_version + "x", "rules-2099"):
        out[f"rules_version {v}"] = _forged(genuine, _header(records, rules_version=v))
    for n in (0, answers // 2, answers - 1, 1, 2):
        a = decode_payload(
            decode_entry([x for x in records if decode_entry(x).kind == ANSWER][n]).payload,
            AnswerRecord,
        )
        out[f"answer {n} auto flipped"] = _forged(genuine, _answer(records, n, auto=not a.auto))
        out[f"answer {n} picks changed"] = _forged(genuine, _answer(records, n, picks=["0"]))
    for at in (2, len(records) // 3, len(records) // 2, len(records) - 2, len(records) - 1):
        for hosted in (True, False):
            ctl = encode_payload(
                SeatControl(seat=at % len(h.seats), hosted=hosted, reason="timeouts")
            )
            out[f"托管 entry at {at} hosted={hosted}"] = _forged(
                genuine, _insert(records, at, CONTROL, ctl)
            )
    for winners in ([], [0], [1, 2], list(range(len(h.seats)))):
        out[f"winners {winners}"] = _forged(genuine, _reveal(records, winners=winners))
    out["sides claimed"] = _forged(genuine, _reveal(records, sides=["lord"]))
    out["options changed"] = _forged(genuine, _header(records, options={"house": 1}))
    out["ruleset renamed"] = _forged(genuine, _header(records, ruleset="standard"))
    out["game id in header"] = _forged(genuine, _header(records, game_id="g2"))
    out["whole game forged, genuine signature"] = _forged(genuine, other_game)
    out["whole game forged, unsigned"] = archive.pack("g1", other_game)
    out["whole game forged, own key"] = archive.pack("g1", other_game, Signer.generate())
    out["own key, genuine game"] = archive.pack("g1", records, Signer.generate())
    out["genuine game, signature removed"] = _with_index(genuine, key="", sig=b"")
    sig = archive.read_index(genuine)[0].sig
    for i in (0, 31, 63):
        flipped = bytes(b ^ 1 if j == i else b for j, b in enumerate(sig))
        out[f"signature byte {i} flipped"] = _with_index(genuine, sig=flipped)
    out["signature of another key id"] = _with_index(genuine, key="0" * 16)
    out["index game id renamed"] = _with_index(genuine, game_id="g2")
    for keep in (len(records) - 1, len(records) - 5):
        out[f"cut to {keep} entries"] = _forged(genuine, _rechain(_items(records)[:keep]))
    out["an entry dropped"] = _forged(genuine, _rechain(_items(records)[:3] + _items(records)[4:]))
    for i in (len(genuine) // 2, len(genuine) - 3):
        damaged = bytearray(genuine)
        damaged[i] ^= 0x10
        out[f"byte {i} flipped"] = bytes(damaged)
    return out


@pytest.fixture(scope="module")
def files() -> tuple[bytes, dict[str, bytes]]:
    records = asyncio.run(_game())
    other = asyncio.run(_game(seed=99))
    genuine = archive.pack("g1", records, PLATFORM)
    return genuine, tampered(genuine, records, other)


def test_the_genuine_file_verifies_and_says_by_whom(files: tuple[bytes, dict[str, bytes]]) -> None:
    genuine, _ = files
    report = verify(genuine, ENGINE, key=KEY)
    assert report.ok and report.signature == "valid", report.summary()
    assert report.signed_by == KEY.key_id and KEY.key_id in report.summary()


def test_every_edited_or_forged_file_fails(files: tuple[bytes, dict[str, bytes]]) -> None:
    genuine, forged = files
    assert len(forged) >= 68 and len({f for f in forged.values()}) == len(forged)
    passed = [what for what, data in forged.items() if verify(data, ENGINE, key=KEY).ok]
    assert passed == []
    # without the platform key, most of them are self-consistent: the chain alone proves nothing
    consistent = [w for w, d in forged.items() if verify(d, ENGINE, key=None).ok]
    assert len(consistent) >= 15, consistent


def test_the_catalog_lists_only_what_the_platform_signed(
    files: tuple[bytes, dict[str, bytes]], tmp_path: Path
) -> None:
    """The lobby's source: a rebuild with the platform key lists the genuine game alone, and
    says why each other file was skipped."""
    genuine, forged = files
    (tmp_path / "g1.arena").write_bytes(genuine)
    for i, data in enumerate(forged.values()):
        (tmp_path / f"f{i}.arena").write_bytes(data)
    records, skipped = rebuild_catalog(tmp_path, key=KEY)
    assert [r.file for r in records] == ["g1.arena"]
    assert len(skipped) == len(forged)
    assert all(why for why in skipped.values())


async def test_archive_game_signs_with_the_key_the_environment_names(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    key_path, public = keep_in(tmp_path / "var")
    assert (key_path.stat().st_mode & 0o777) == 0o600
    assert keep_in(tmp_path / "var") == (key_path, public)  # kept, not made again
    monkeypatch.setenv("ARENA_ARCHIVE_KEY", str(key_path))
    store = InMemoryEventStore()
    await record_game(store, "g7", ENGINE, "fake", 3, 7)
    folder = tmp_path / "archive"
    await archive_game(store, "g7", folder)
    report = verify(folder / "g7.arena", ENGINE)  # the key from the environment, too
    assert report.ok and report.signature == "valid", report.summary()
    monkeypatch.delenv("ARENA_ARCHIVE_KEY")
    monkeypatch.setenv("ARENA_ARCHIVE_PUBKEY", Signer.generate().public.hex)
    assert verify(folder / "g7.arena", ENGINE).signature == "invalid"  # another platform's
    (folder / "catalog.jsonl").unlink()
    assert load_catalog(folder) == []  # rebuilt: another platform's file is not listed


def test_old_unsigned_archives_are_refused_by_default(
    files: tuple[bytes, dict[str, bytes]],
) -> None:
    genuine, _ = files
    unsigned = _with_index(genuine, key="", sig=b"")
    report = verify(unsigned, ENGINE, key=KEY)
    assert not report.ok and report.signature == "unsigned"
    assert "unsigned" in report.summary()
    assert verify(unsigned, ENGINE, key=None).ok  # --consistency-only still checks the rest


def test_arena_verify_command(
    files: tuple[bytes, dict[str, bytes]],
    tmp_path: Path,
    capsys: pytest.CaptureFixture[str],
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    """`arena verify FILE --key HEX` (the key `arena platform-key` prints); without any key it
    refuses to say a file is genuine."""
    from services.cli import main

    monkeypatch.delenv("ARENA_ARCHIVE_KEY", raising=False)
    monkeypatch.delenv("ARENA_ARCHIVE_PUBKEY", raising=False)
    monkeypatch.setattr(sys.modules["services.verify.rerun"], "default_engine", lambda: ENGINE)
    genuine, forged = files
    good, bad = tmp_path / "g1.arena", tmp_path / "bad.arena"
    good.write_bytes(genuine)
    bad.write_bytes(forged["ended_at moved +60000"])
    var = tmp_path / "var"
    assert main(["verify", str(good), "--key", KEY.hex, "--var", str(var)]) == 0
    assert main(["verify", str(bad), "--key", KEY.hex, "--var", str(var), "--json"]) == 1
    out = capsys.readouterr().out
    report = json.loads(out[out.index("{") :])
    assert report["signature"] == "invalid" and report["divergence"]["kind"] == "signature"
    assert main(["verify", str(good), "--var", str(var)]) == 2
    assert "no platform key" in capsys.readouterr().err
    assert main(["verify", str(bad), "--consistency-only", "--var", str(var)]) == 0
    assert "origin NOT checked" in capsys.readouterr().out
    _, public = keep_in(var)  # what arena up keeps: found through --var
    assert main(["platform-key", "--var", str(var)]) == 0
    assert capsys.readouterr().out.strip() == public.hex
    assert main(["verify", str(good), "--var", str(var)]) == 1  # another platform's key
    assert PublicKey.from_hex(public.hex).key_id == public.key_id
