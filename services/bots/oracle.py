"""The ``oracle`` policy: the heuristic told the true roles — an upper bound for measuring how much
the heuristic loses by having to infer them."""

from __future__ import annotations

from .heuristic import HeuristicPolicy


class OraclePolicy(HeuristicPolicy):
    """The heuristic with every role known from the start."""

    name = "oracle"

    def __init__(
        self,
        seed: int,
        seat: int,
        true_roles: list[str],
        budget_ms: float = 50.0,
        strict: bool = False,
    ) -> None:
        super().__init__(seed, seat, list(true_roles), budget_ms, strict)
