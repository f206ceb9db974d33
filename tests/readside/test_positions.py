"""Per-viewer positions (services/readside/positions.py) against a plain count over the log."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.readside.positions import GOD, Positions
from services.rules import api


def test_viewers_are_numbered_as_the_rules_number_them() -> None:
    assert GOD == api.GOD


@given(st.lists(st.one_of(st.none(), st.integers(0, 3)), max_size=60))
def test_positions_count_the_entries_each_viewer_receives(answers: list[int | None]) -> None:
    """Entry i + 1 is an answer of seat answers[i] (None: an entry everyone receives)."""
    p = Positions()
    for i, seat in enumerate(answers):
        p.add(i + 1, seat)
    p.add(len(answers) + 5, None)  # a gap is ignored
    assert p.head == len(answers)
    for viewer in (0, 1, 3, api.SPECTATOR, api.GOD):
        got = [i + 1 for i, seat in enumerate(answers) if seat is None or viewer in (seat, api.GOD)]
        for seq in range(len(answers) + 1):
            assert p.position(viewer, seq) == sum(1 for g in got if g <= seq)
        assert p.seq(viewer, 0) == 0
        for position, seq in enumerate(got, 1):
            assert p.seq(viewer, position) == seq
        assert p.seq(viewer, len(got) + 1) == len(answers)  # past the last: the head
