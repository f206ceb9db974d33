"""Ground truth for byte searches of what a viewer received over a transport.

The unredacted log (GOD view) is folded into every card's location (tests/rules CardTracker);
a card id found in the bytes a viewer received for an entry is a leak unless, just before
or just after that entry, the card lay face up or in the viewer's own hand, or the entry is a
public reveal (using or playing a card, showing it, a judgement). Entries are named by the
number the viewer received them under: its own position (services/eventlog/positions.py).
"""

from __future__ import annotations

import msgspec

from services.eventlog.entry import EVENT, decode_entry
from services.readside.positions import positions_of
from services.rules import api
from services.rules.api import events as ev
from tests.rules.invariants import CardTracker
from tests.rules.test_redaction import HIDDEN_ROLES, REVEALS, ROLE_PAIR_RE, card_ids


class Truth:
    """Per sequence number: which card ids and hidden roles each viewer may see."""

    def __init__(self, records: list[bytes], n_cards: int) -> None:
        tracker = CardTracker(n_cards)
        self.visible: dict[int, tuple[dict[int, tuple[str, int]], dict[int, tuple[str, int]]]] = {}
        self.reveal: set[int] = set()
        self.roles: dict[int, str] = {}
        self.revealed_at: dict[int, int] = {}  # seat -> seq from which its role is public
        self.over_at = 10**9
        self.positions = positions_of(enumerate(records, 1))
        for seq, data in enumerate(records, 1):
            entry = decode_entry(data)
            if entry.kind != EVENT:
                continue
            e = api.decode_event(entry.payload)
            before = dict(tracker.loc)
            tracker.apply(e)
            self.visible[seq] = (before, dict(tracker.loc))
            if isinstance(e, REVEALS):
                self.reveal.add(seq)
            if isinstance(e, ev.RoleAssigned):
                self.roles[e.seat] = e.role
                if e.role == "lord":
                    self.revealed_at[e.seat] = seq
            if isinstance(e, ev.Died):
                self.revealed_at.setdefault(e.seat, seq)
            if isinstance(e, ev.GameEnded):
                self.over_at = min(self.over_at, seq)

    @staticmethod
    def _sees(where: tuple[str, int], viewer: int) -> bool:
        zone, seat = where
        return zone in ("discard", "processing", "equip", "judge") or (
            zone == "hand" and seat == viewer and viewer >= 0
        )

    def leaks(
        self, position: int, data: bytes, viewer: int, numbered_for: int | None = None
    ) -> list[str]:
        """What in ``data`` (received as ``viewer``'s entry ``position``; with
        ``numbered_for``, as that viewer's) ``viewer`` should not have."""
        seq = self.positions.seq(viewer if numbered_for is None else numbered_for, position)
        out: list[str] = []
        if b'"picks"' in data and viewer < 0:
            out.append(f"entry {seq}: an answer reached viewer {viewer}")
        if seq in self.visible and seq not in self.reveal:
            before, after = self.visible[seq]
            for c in card_ids(data):
                if not (self._sees(before[c], viewer) or self._sees(after[c], viewer)):
                    out.append(f"entry {seq}: viewer {viewer} sees card {c} ({after[c]})")
        if seq < self.over_at:
            hidden = {
                self.roles[s]
                for s in self.roles
                if s != viewer and self.revealed_at.get(s, 10**9) > seq
            }
            mine = {
                self.roles.get(s, "")
                for s in self.roles
                if s == viewer or self.revealed_at.get(s, 10**9) <= seq
            }
            for role in HIDDEN_ROLES:
                if role in hidden and role not in mine and f'"{role}"'.encode() in data:
                    out.append(f"entry {seq}: viewer {viewer} sees hidden role {role}")
            for s, role in ROLE_PAIR_RE.findall(data):
                if role and int(s) != viewer and self.revealed_at.get(int(s), 10**9) > seq:
                    out.append(f"entry {seq}: viewer {viewer} sees seat {int(s)}'s role")
        return out


def seq_of(envelope: bytes) -> int:
    """The ``seq`` of one entry envelope."""
    return int(msgspec.json.decode(envelope)["seq"])


def n_cards(records: list[bytes]) -> int:
    """Cards in the game (the deck size of game_started)."""
    for data in records:
        entry = decode_entry(data)
        if entry.kind == EVENT:
            e = api.decode_event(entry.payload)
            if isinstance(e, ev.GameStarted):
                return e.deck
    raise AssertionError("no game_started")
