"""What a game's log proves on its own, without the rules: every entry decodes and the hash
chain holds (`check_chain`), and an archive's signature is the platform's (`check_origin`); the
report both fill in (`VerifyReport`, `Divergence`).

The catalog checks an archive with these before listing it; a full verification (the seed
reveal, a re-run through the rules, the reveal against the re-run) is services/verify, which
adds the rules to these checks.
"""

from __future__ import annotations

import struct
from collections.abc import Sequence
from dataclasses import dataclass, field

import msgspec

from . import archive
from .entry import GENESIS, Entry, chain_hash, chained, decode_entry
from .entry import upgrade as upgrade_entry
from .signing import PublicKey, statement


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
    signature: str = "unchecked"  # valid | unsigned | invalid | unchecked (module docstring)
    signed_by: str = ""  # the id of the key the file names

    def summary(self) -> str:
        """A few human-readable lines."""
        head = f"game {self.game_id or '?'}: {self.entries} entries"
        if self.ok:
            origin = {
                "valid": f", signed by the platform key {self.signed_by}",
                "unchecked": "; origin NOT checked (no platform key)",
            }.get(self.signature, f"; signature {self.signature}")
            return f"{head}: OK (chain, seed commitment, replay{origin})"
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


def check_origin(
    report: VerifyReport, unpacked: archive.Unpacked, key: PublicKey | None | str
) -> VerifyReport:
    """The archive's signature against the platform `key` (see the module docstring): a file
    that is not signed by it is not ok, whatever else holds."""
    report.signed_by = unpacked.key
    if not isinstance(key, PublicKey):
        return report
    if not unpacked.sig:
        report.signature = "unsigned"
        reason = "unsigned: no platform signature (archived before signatures, or not here)"
    elif unpacked.key != key.key_id:
        report.signature = "invalid"
        reason = f"signed by another key ({unpacked.key or '?'}, not {key.key_id})"
    else:
        try:
            last = archive.head(unpacked.records)
        except (msgspec.MsgspecError, ValueError):
            last = b""
        message = statement(unpacked.game_id, len(unpacked.records), last)
        if last and key.verifies(unpacked.sig, message):
            report.signature = "valid"
            return report
        report.signature = "invalid"
        reason = "signature does not verify: the file was edited or forged"
    report.ok = False
    if report.divergence is None:
        report.divergence = Divergence(len(unpacked.records), "signature", reason)
    else:
        report.notes.append(reason)
    return report


def check_chain(records: Sequence[bytes], report: VerifyReport) -> list[Entry] | None:
    """Decode and chain-check entries (seq 1..n); on failure set the divergence, return None."""
    entries = chained(records)  # the usual case, a whole log that holds, in one pass
    if entries is None:  # something is off (or an older schema): entry by entry, to name it
        entries = _check_each(records, report)
    if entries is not None:
        report.chain_ok = True
    return entries


def _check_each(records: Sequence[bytes], report: VerifyReport) -> list[Entry] | None:
    entries: list[Entry] = []
    prev = GENESIS
    for seq, data in enumerate(records, 1):
        try:
            e = decode_entry(data)
        except msgspec.MsgspecError as exc:
            fail(report, seq, "?", f"entry does not decode: {exc}")
            return None
        try:
            recomputed = chain_hash(prev, seq, e.v, e.kind, e.payload)
        except (ValueError, OverflowError, struct.error) as exc:  # struct: v not a u16
            fail(report, seq, "?", f"entry malformed: {exc}")
            return None
        if recomputed != e.hash:
            fail(report, seq, e.kind, "hash chain broken", recomputed.hex(), e.hash.hex())
            return None
        prev = e.hash
        try:
            entries.append(upgrade_entry(e))
        except ValueError as exc:
            fail(report, seq, e.kind, str(exc))
            return None
    return entries


def fail(
    report: VerifyReport,
    seq: int,
    kind: str,
    reason: str,
    expected: str | None = None,
    actual: str | None = None,
) -> VerifyReport:
    report.divergence = Divergence(seq, kind, reason, expected, actual)
    return report
