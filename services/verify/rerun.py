"""Verify a game log: decode, hash chain, seed commitment, a full re-run through the engine, and
the reveal and header against that re-run.

The log records inputs (answers) and outputs (events). Verification re-creates the game from the
header and the revealed seed, feeds it every logged answer in order, and requires the engine to
produce exactly the logged event bytes in between. The first disagreement is reported with the
entry's sequence number and both sides.

The chain only proves the entries were not edited after the fact by someone who could not
re-chain them; anyone can re-chain a file. So the fields the re-run does not check by itself are
re-derived and compared (`check_reveal`), each mismatch naming its field: the reveal's `winners`
must be the winners the re-run ends with, its `sides` (the side a lobby names; [] claims none)
the roles of those winners; its `ended_at_ms` may not precede the header's
`started_at_ms`, and when the entries' append times are known (a log read from Redis) both must
be within `TIME_SKEW_MS` of the times their entries were appended; the header's `seats` must
seat exactly the players the re-run deals. What a re-run cannot know (which player id sat in a
seat), and that this platform played the game at all, is what the archive's signature proves
(signing.py). `verify` of an archive checks the signature against the platform key (`key`; by
default the one the environment gives, `signing.platform_key`): `signature` in the report is
``valid``, ``unsigned``, ``invalid`` (a forged or edited file, or another platform's) or
``unchecked`` (no key known, or a live log, which has no signature).
"""

from __future__ import annotations

from collections import deque
from collections.abc import Callable, Sequence
from pathlib import Path
from typing import Any, Literal, Protocol, cast

import msgspec

from ..eventlog import archive
from ..eventlog.checks import Divergence, VerifyReport, check_chain, check_origin, fail
from ..eventlog.entry import (
    ABANDON,
    ANSWER,
    EVENT,
    HEADER,
    SEED_REVEAL,
    Entry,
)
from ..eventlog.records import (
    Abandon,
    AnswerRecord,
    Header,
    SeedReveal,
    decode_payload,
    reveal_matches,
)
from ..eventlog.signing import PublicKey, platform_key


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
    def abandon(self, game: Any, reason: str) -> Sequence[Any]: ...
    def is_over(self, game: Any) -> bool: ...
    def encode_event(self, event: Any) -> bytes: ...
    def decode_event(self, data: bytes) -> Any: ...


def default_engine() -> Engine:
    """The real rules engine (imported when first needed: reading a report needs no rules)."""
    from ..rules import api

    return cast(Engine, api)


Source = str | Path | bytes | Sequence[bytes]
TIME_SKEW_MS = 10 * 60 * 1000  # the engine's clock against Redis TIME, and a slow append
FROM_ENV: Literal["env"] = "env"


def verify(
    source: Source,
    engine: Engine | None = None,
    key: PublicKey | None | Literal["env"] = FROM_ENV,
) -> VerifyReport:
    """Verify an archive file (path), archive bytes, or the stored entries of a game in order;
    an archive's signature against `key` (default: the environment's platform key; None:
    consistency only)."""
    if isinstance(source, str | Path):
        source = Path(source).read_bytes()
    if isinstance(source, bytes):
        unpacked = archive.unpack(source)
        if unpacked.damage is None:
            report = verify_records(unpacked.records, engine, game_id=unpacked.game_id)
            return check_origin(report, unpacked, platform_key() if key == FROM_ENV else key)
        # Damage ends the readable part; a chain break before it is still the first fault.
        report = VerifyReport(ok=False, game_id=unpacked.game_id, entries=len(unpacked.records))
        if check_chain(unpacked.records, report) is not None:
            report.chain_ok = False
            report.divergence = Divergence(unpacked.damage.entry, "?", unpacked.damage.reason)
        return report
    return verify_records(list(source), engine)


def verify_records(
    records: Sequence[bytes],
    engine: Engine | None = None,
    game_id: str = "",
    times: Sequence[int | None] | None = None,
) -> VerifyReport:
    """Verify stored entries (seq 1..n): decode, chain, header, seed, replay, then the reveal
    and header against the re-run (`times`: each entry's append time, when known)."""
    report = VerifyReport(ok=False, game_id=game_id, entries=len(records))
    entries = check_chain(records, report)
    if entries is None:
        return report
    if not entries or entries[0].kind != HEADER:
        return fail(report, 1, entries[0].kind if entries else "?", "first entry is not a header")
    try:
        header = decode_payload(entries[0].payload, Header)
    except msgspec.MsgspecError as exc:
        return fail(report, 1, HEADER, f"header does not decode: {exc}")
    report.game_id = report.game_id or header.game_id
    if header.game_id != report.game_id:
        report.notes.append(f"file names game {report.game_id}, header says {header.game_id}")
        return fail(report, 1, HEADER, "game id does not match the archive")
    last = entries[-1]
    if last.kind != SEED_REVEAL:
        report.notes.append("the game has not finished: the seed is not revealed yet")
        return fail(report, len(entries), last.kind, "no seed reveal at the end of the log")
    try:
        reveal = decode_payload(last.payload, SeedReveal)
    except msgspec.MsgspecError as exc:
        return fail(report, len(entries), SEED_REVEAL, f"seed reveal does not decode: {exc}")
    if not reveal_matches(header, reveal):
        return fail(report, len(entries), SEED_REVEAL, "revealed seed does not match commitment")
    report.seed_ok = True
    try:
        engine = engine or default_engine()
    except ImportError as exc:
        return fail(report, 1, HEADER, f"rules engine unavailable: {exc}")
    if header.rules_version != engine.RULES_VERSION:
        report.notes.append(
            f"log written by rules {header.rules_version}, re-run with {engine.RULES_VERSION}"
        )
    divergence = replay(entries, header, reveal.seed, engine)
    if divergence:
        report.divergence = divergence
        return report
    report.replay_ok = True
    divergence = check_reveal(entries, header, reveal, engine, times)
    if divergence:
        report.divergence = divergence
        return report
    report.ok = True
    return report


def _derived_winners(entries: Sequence[Entry], engine: Engine) -> list[int] | None:
    """The winners the (already re-run and matched) events end with: the last event that
    names ``winner_seats``; None if no event does."""
    for e in reversed(entries):
        if e.kind != EVENT:
            continue
        try:
            seats = getattr(engine.decode_event(e.payload), "winner_seats", None)
        except Exception:  # noqa: BLE001 - an event of a kind this engine cannot read
            continue
        if seats is not None:
            return [int(x) for x in seats]
    return None


def _derived_sides(entries: Sequence[Entry], engine: Engine, winners: list[int]) -> list[str]:
    """The side a lobby names, as the engine records it: the roles of the winner seats (each
    seat's last ``role_assigned`` in the re-run), sorted, without the empty role."""
    roles: dict[int, str] = {}
    for e in entries:
        if e.kind != EVENT or b"role_assigned" not in e.payload:
            continue
        try:
            event = engine.decode_event(e.payload)
        except Exception:  # noqa: BLE001 - an event of a kind this engine cannot read
            continue
        if type(event).__struct_config__.tag == "role_assigned":
            roles[int(event.seat)] = str(event.role)
    return sorted({roles.get(s, "") for s in winners} - {""})


def check_reveal(
    entries: Sequence[Entry],
    header: Header,
    reveal: SeedReveal,
    engine: Engine,
    times: Sequence[int | None] | None = None,
) -> Divergence | None:
    """The first field of the reveal or the header that disagrees with the re-run (see the
    module docstring), or None."""
    last = len(entries)
    if len(header.seats) != header.players:
        return Divergence(
            1,
            HEADER,
            "header field seats: not one seat per player the game dealt",
            str(header.players),
            str(len(header.seats)),
        )
    winners = _derived_winners(entries, engine)
    if winners is not None and list(reveal.winners) != winners:
        return Divergence(
            last,
            SEED_REVEAL,
            "reveal field winners differs from the winners of the re-run",
            str(winners),
            str(list(reveal.winners)),
        )
    if winners is not None and reveal.sides:  # [] claims no side (logs from before sides)
        sides = _derived_sides(entries, engine, winners)
        if list(reveal.sides) != sides:
            return Divergence(
                last,
                SEED_REVEAL,
                "reveal field sides differs from the roles of the re-run's winners",
                str(sides),
                str(list(reveal.sides)),
            )
    if reveal.ended_at_ms < header.started_at_ms:
        return Divergence(
            last,
            SEED_REVEAL,
            "reveal field ended_at_ms is before the header's started_at_ms",
            f">= {header.started_at_ms}",
            str(reveal.ended_at_ms),
        )
    if times is not None and len(times) == last:
        for seq, field, claimed in (
            (1, "started_at_ms", header.started_at_ms),
            (last, "ended_at_ms", reveal.ended_at_ms),
        ):
            at = times[seq - 1]
            if at is not None and abs(claimed - at) > TIME_SKEW_MS:
                kind = HEADER if seq == 1 else SEED_REVEAL
                where = "header" if seq == 1 else "reveal"
                return Divergence(
                    seq,
                    kind,
                    f"{where} field {field} is not when its entry was appended",
                    f"{at} ± {TIME_SKEW_MS}",
                    str(claimed),
                )
    return None


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
        elif e.kind == ABANDON:  # the platform ended the game (a cap, a stalled game)
            if produced:
                return Divergence(
                    seq,
                    ABANDON,
                    "engine produced an event the log lacks",
                    _show(engine, produced[0]),
                    "abandon",
                )
            try:
                reason = decode_payload(e.payload, Abandon).reason
                events = engine.abandon(game, reason)
            except engine.IllegalAnswer as exc:
                return Divergence(seq, ABANDON, f"engine refuses to end the game: {exc}")
            except Exception as exc:
                return Divergence(seq, ABANDON, f"ending the game failed: {exc!r}")
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
