"""Verify a game log: decode, hash chain, seed commitment, and a full re-run through the engine.

The log records inputs (answers) and outputs (events). Verification re-creates the game from the
header and the revealed seed, feeds it every logged answer in order, and requires the engine to
produce exactly the logged event bytes in between. The first disagreement is reported with the
entry's sequence number and both sides.
"""

from __future__ import annotations

import importlib
from collections import deque
from collections.abc import Callable, Sequence
from dataclasses import dataclass, field
from pathlib import Path
from typing import Any, Protocol, cast

import msgspec

from . import archive
from .entry import ANSWER, EVENT, GENESIS, HEADER, SEED_REVEAL, Entry, chain_hash, decode_entry
from .entry import upgrade as upgrade_entry
from .records import AnswerRecord, Header, SeedReveal, decode_payload, reveal_matches


class Engine(Protocol):
    """The slice of `services.rules.api` that verification re-runs games through."""

    RULES_VERSION: str
    IllegalAnswer: type[Exception]
    Answer: Callable[..., Any]

    def new_game(
        self, ruleset: str, players: int, seed: int, options: dict[str, Any] | None = None
    ) -> Any: ...
    def advance(self, game: Any) -> Sequence[Any]: ...
    def submit(self, game: Any, answer: Any) -> Sequence[Any]: ...
    def is_over(self, game: Any) -> bool: ...
    def encode_event(self, event: Any) -> bytes: ...
    def decode_event(self, data: bytes) -> Any: ...


def default_engine() -> Engine:
    """The real rules engine (imported lazily so the log has no hard dependency on it)."""
    return cast(Engine, importlib.import_module("services.rules.api"))


@dataclass
class Divergence:
    """The first thing wrong: entry sequence number (1 = header), its kind, what and why."""

    entry: int
    kind: str
    reason: str
    expected: str | None = None
    actual: str | None = None


@dataclass
class VerifyReport:
    """Outcome of `verify`: ok only if every check held."""

    ok: bool
    game_id: str = ""
    entries: int = 0
    chain_ok: bool = False
    seed_ok: bool = False
    replay_ok: bool = False
    divergence: Divergence | None = None
    notes: list[str] = field(default_factory=list)

    def summary(self) -> str:
        """A few human-readable lines."""
        head = f"game {self.game_id or '?'}: {self.entries} entries"
        if self.ok:
            return f"{head}: OK (chain, seed commitment, replay)"
        d = self.divergence
        lines = [f"{head}: FAILED"]
        if d:
            lines.append(f"  entry {d.entry} ({d.kind}): {d.reason}")
            if d.expected is not None:
                lines.append(f"    expected: {d.expected}")
            if d.actual is not None:
                lines.append(f"    actual:   {d.actual}")
        lines += [f"  note: {n}" for n in self.notes]
        return "\n".join(lines)


Source = str | Path | bytes | Sequence[bytes]


def verify(source: Source, engine: Engine | None = None) -> VerifyReport:
    """Verify an archive file (path), archive bytes, or the stored entries of a game in order."""
    if isinstance(source, str | Path):
        source = Path(source).read_bytes()
    if isinstance(source, bytes):
        unpacked = archive.unpack(source)
        if unpacked.damage is None:
            return verify_records(unpacked.records, engine, game_id=unpacked.game_id)
        # Damage ends the readable part; a chain break before it is still the first fault.
        report = VerifyReport(ok=False, game_id=unpacked.game_id, entries=len(unpacked.records))
        if check_chain(unpacked.records, report) is not None:
            report.chain_ok = False
            report.divergence = Divergence(unpacked.damage.entry, "?", unpacked.damage.reason)
        return report
    return verify_records(list(source), engine)


def check_chain(records: Sequence[bytes], report: VerifyReport) -> list[Entry] | None:
    """Decode and chain-check entries (seq 1..n); on failure set the divergence, return None."""
    entries: list[Entry] = []
    prev = GENESIS
    for seq, data in enumerate(records, 1):
        try:
            e = decode_entry(data)
        except msgspec.MsgspecError as exc:
            _fail(report, seq, "?", f"entry does not decode: {exc}")
            return None
        try:
            recomputed = chain_hash(prev, seq, e.v, e.kind, e.payload)
        except (ValueError, OverflowError) as exc:
            _fail(report, seq, "?", f"entry malformed: {exc}")
            return None
        if recomputed != e.hash:
            _fail(report, seq, e.kind, "hash chain broken", recomputed.hex(), e.hash.hex())
            return None
        prev = e.hash
        try:
            entries.append(upgrade_entry(e))
        except ValueError as exc:
            _fail(report, seq, e.kind, str(exc))
            return None
    report.chain_ok = True
    return entries


def verify_records(
    records: Sequence[bytes], engine: Engine | None = None, game_id: str = ""
) -> VerifyReport:
    """Verify stored entries (seq 1..n): decode, chain, header, seed, then replay."""
    report = VerifyReport(ok=False, game_id=game_id, entries=len(records))
    entries = check_chain(records, report)
    if entries is None:
        return report
    if not entries or entries[0].kind != HEADER:
        return _fail(report, 1, entries[0].kind if entries else "?", "first entry is not a header")
    try:
        header = decode_payload(entries[0].payload, Header)
    except msgspec.MsgspecError as exc:
        return _fail(report, 1, HEADER, f"header does not decode: {exc}")
    report.game_id = report.game_id or header.game_id
    if header.game_id != report.game_id:
        report.notes.append(f"file names game {report.game_id}, header says {header.game_id}")
        return _fail(report, 1, HEADER, "game id does not match the archive")
    last = entries[-1]
    if last.kind != SEED_REVEAL:
        report.notes.append("the game has not finished: the seed is not revealed yet")
        return _fail(report, len(entries), last.kind, "no seed reveal at the end of the log")
    try:
        reveal = decode_payload(last.payload, SeedReveal)
    except msgspec.MsgspecError as exc:
        return _fail(report, len(entries), SEED_REVEAL, f"seed reveal does not decode: {exc}")
    if not reveal_matches(header, reveal):
        return _fail(report, len(entries), SEED_REVEAL, "revealed seed does not match commitment")
    report.seed_ok = True
    try:
        engine = engine or default_engine()
    except ImportError as exc:
        return _fail(report, 1, HEADER, f"rules engine unavailable: {exc}")
    if header.rules_version != engine.RULES_VERSION:
        report.notes.append(
            f"log written by rules {header.rules_version}, re-run with {engine.RULES_VERSION}"
        )
    divergence = replay(entries, header, reveal.seed, engine)
    if divergence:
        report.divergence = divergence
        return report
    report.replay_ok = report.ok = True
    return report


def _fail(
    report: VerifyReport,
    seq: int,
    kind: str,
    reason: str,
    expected: str | None = None,
    actual: str | None = None,
) -> VerifyReport:
    report.divergence = Divergence(seq, kind, reason, expected, actual)
    return report


def _show(engine: Engine, data: bytes) -> str:
    try:
        return repr(engine.decode_event(data))
    except Exception:
        return data.hex()


def replay(
    entries: Sequence[Entry], header: Header, seed: int, engine: Engine
) -> Divergence | None:
    """Re-run the game; the first entry where the log and the engine disagree, or None."""
    try:
        game = engine.new_game(header.ruleset, header.players, seed, header.options or None)
        produced = deque(engine.encode_event(e) for e in engine.advance(game))
    except Exception as exc:
        return Divergence(1, HEADER, f"engine failed to start the game: {exc!r}")
    for seq, e in enumerate(entries[1:], 2):
        if e.kind == EVENT:
            if not produced:
                return Divergence(
                    seq,
                    EVENT,
                    "log has an event the engine did not produce",
                    None,
                    _show(engine, e.payload),
                )
            want = produced.popleft()
            if want != e.payload:
                return Divergence(
                    seq,
                    EVENT,
                    "event differs from the engine's",
                    _show(engine, want),
                    _show(engine, e.payload),
                )
        elif e.kind == ANSWER:
            if produced:
                return Divergence(
                    seq,
                    ANSWER,
                    "engine produced an event the log lacks",
                    _show(engine, produced[0]),
                    "answer",
                )
            try:
                a = decode_payload(e.payload, AnswerRecord)
                events = engine.submit(
                    game, engine.Answer(decision=a.decision, seat=a.seat, picks=list(a.picks))
                )
            except engine.IllegalAnswer as exc:
                return Divergence(seq, ANSWER, f"engine rejects the logged answer: {exc}")
            except Exception as exc:
                return Divergence(seq, ANSWER, f"replaying the answer failed: {exc!r}")
            produced.extend(engine.encode_event(ev) for ev in events)
        elif e.kind == SEED_REVEAL:
            if produced:
                return Divergence(
                    seq,
                    SEED_REVEAL,
                    "engine produced an event the log lacks",
                    _show(engine, produced[0]),
                    "seed_reveal",
                )
            if seq != len(entries) or not engine.is_over(game):
                return Divergence(seq, SEED_REVEAL, "seed revealed before the game ended")
        elif e.kind == HEADER:
            return Divergence(seq, HEADER, "a second header")
        # Unknown kinds (annotations added by later versions) carry no engine input or output.
    return None
