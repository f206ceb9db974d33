"""The ``oracle`` policy: the heuristic told the true roles — an upper bound for measuring how much
the heuristic loses by having to infer them. ``lordsight``: the heuristic told only who the
lord is, to split that loss where the lord is hidden (jinyu's 谋攻): what knowing the lord is
worth, which no evidence before 明君 gives (services/bots/README.md, the goals table)."""

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


class LordSightPolicy(HeuristicPolicy):
    """The heuristic told the lord's seat from the start, and no other role."""

    name = "lordsight"

    def __init__(
        self,
        seed: int,
        seat: int,
        true_roles: list[str],
        budget_ms: float = 50.0,
        strict: bool = False,
    ) -> None:
        lord_only = [r if r == "lord" else "" for r in true_roles]
        super().__init__(seed, seat, lord_only, budget_ms, strict)
