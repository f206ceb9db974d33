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
        for seq in range(len(answers) + 3):  # past the head too: where the viewer is now
            assert p.position(viewer, seq) == sum(1 for g in got if g <= seq)
        assert p.seq(viewer, 0) == 0
        for position, seq in enumerate(got, 1):
            assert p.seq(viewer, position) == seq
        assert p.seq(viewer, len(got) + 1) == len(answers)  # past the last: the head


@given(st.lists(st.tuples(st.integers(0, 3), st.integers(0, 4)), max_size=30))
def test_add_many_is_add_of_each(runs: list[tuple[int, int]]) -> None:
    """An answer of a seat followed by n entries that are no answer, added one by one or as a
    run (what the engine does for every answer it appends)."""
    one, many = Positions(), Positions()
    seq = 0
    for seat, n in runs:
        for p in (one, many):
            p.add(seq + 1, seat)
        for k in range(n):
            one.add(seq + 2 + k, None)
        many.add_many(seq + 2, n)
        many.add_many(seq + 9, 3)  # not after the head: ignored, as `add` ignores a gap
        seq += 1 + n
    assert one.head == many.head == seq
    for viewer in (0, 1, 3, api.SPECTATOR, api.GOD):
        for at in range(seq + 2):
            assert one.position(viewer, at) == many.position(viewer, at)
