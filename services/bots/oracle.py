"""The ``oracle`` policy: the heuristic told the true roles — an upper bound for measuring how much
the heuristic loses by having to infer them. ``lordsight``: the heuristic told only who the
lord is, to split that loss where the lord is hidden (jinyu's 谋攻): what knowing the lord is
worth, which no evidence before 明君 gives (services/bots/README.md, the goals table)."""

from __future__ import annotations

from .heuristic import HeuristicPolicy


class _Told(HeuristicPolicy):
    """The heuristic told some of the true roles from the start (``told`` says which)."""

    def __init__(
        self,
        seed: int,
        seat: int,
        true_roles: list[str],
        budget_ms: float = 50.0,
        strict: bool = False,
    ) -> None:
        super().__init__(seed, seat, self.told(true_roles), budget_ms, strict)

    @staticmethod
    def told(true_roles: list[str]) -> list[str]:
        """The roles it knows by seat ("" unknown)."""
        return list(true_roles)


class OraclePolicy(_Told):
    """The heuristic with every role known from the start."""

    name = "oracle"


class LordSightPolicy(_Told):
    """The heuristic told the lord's seat from the start, and no other role."""

    name = "lordsight"

    @staticmethod
    def told(true_roles: list[str]) -> list[str]:
        """The lord's seat alone."""
        return [r if r == "lord" else "" for r in true_roles]
