"""Opaque decision ids: the engine's per-game fast path gives the ids of the definition."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st

from services.contracts.decision_ids import DecisionIds, game_key, opaque


@given(st.binary(min_size=1, max_size=80), st.lists(st.integers(-(2**62), 2**62), max_size=20))
def test_ids_are_the_keyed_hash_of_the_number(secret: bytes, numbers: list[int]) -> None:
    ids = DecisionIds(secret, "g-1")
    assert ids.key == game_key(secret, "g-1")
    for n in numbers:
        assert ids.opaque(n) == opaque(ids.key, n)
        assert ids.number(ids.opaque(n)) == n
        assert 1 <= ids.opaque(n) < 2**53


def test_games_have_their_own_ids() -> None:
    a, b = DecisionIds(b"s", "g-1"), DecisionIds(b"s", "g-2")
    assert [a.opaque(n) for n in range(1, 50)] != [b.opaque(n) for n in range(1, 50)]
