"""Modes: a table to fill, named `<ruleset>-<players>`, generated from the registered rulesets.

Every ruleset registered in the rules engine yields one mode per table it can seat
(`Ruleset.tables()`: a size and the options selecting it, e.g. `extended-12` is the advanced game),
so a new ruleset (or a variant) is playable as soon as it registers. A policy per mode says how
long humans wait before bots fill the empty seats and how close ratings must be.
"""

from __future__ import annotations

import re
from collections.abc import Mapping
from dataclasses import dataclass, field, replace
from typing import Any

from ..rules import api
from ..rules.api import RULESETS

MODE_ID = re.compile(r"^([a-z][a-z0-9_]*)-(\d{1,2})$")


class UnknownMode(ValueError):
    """A ticket, status or leaderboard request named no known mode."""


@dataclass(frozen=True)
class Policy:
    """How a mode's tables are formed.

    `bot_after_ms`: after the oldest ticket waited this long, bots take the empty seats
    (0 = never). `min_humans`: humans needed before bots may fill the rest. The rating window
    (in openskill mu) starts at `window` and grows by `widen_per_s` for every second waited, up
    to `max_window`.
    """

    bot_after_ms: int = 30_000
    min_humans: int = 1
    bot_policy: str = "random"
    window: float = 3.0
    widen_per_s: float = 0.5
    max_window: float = 50.0

    def window_at(self, waited_ms: int) -> float:
        """The rating window of a ticket that has waited `waited_ms`."""
        return min(self.max_window, self.window + self.widen_per_s * max(0, waited_ms) / 1000)


@dataclass(frozen=True)
class Mode:
    """A table kind: ruleset, table size, the ruleset options the game starts with, policy;
    and the clock of its people (0: the matchmaker's default time limit; 托管 never) and the
    level of the bot that plays a person's seat on 托管."""

    id: str
    ruleset: str
    players: int
    options: dict[str, Any] = field(default_factory=dict)
    policy: Policy = Policy()
    time_limit_ms: int = 0
    hosted_after: int = 0
    hosted_level: str = ""  # the bot level that plays a person's seat on 托管 ("": the engine's)


def mode_id(ruleset: str, players: int) -> str:
    """The id of the mode for `ruleset` at a table of `players`."""
    return f"{ruleset}-{players}"


def build_modes(
    policies: Mapping[str, Policy] | None = None, default: Policy | None = None
) -> dict[str, Mode]:
    """Every mode of every registered ruleset; `policies` overrides by mode id or ruleset id."""
    policies = dict(policies or {})
    base = default or Policy()
    out: dict[str, Mode] = {}
    for name in api.rulesets():
        rs = RULESETS[name]
        for n, options in rs.tables():
            mid = mode_id(name, n)
            policy = policies.get(mid, policies.get(name, base))
            out[mid] = Mode(mid, name, n, dict(options), policy)
    return out


def with_policy(modes: Mapping[str, Mode], policy: Policy) -> dict[str, Mode]:
    """The same modes, every one with `policy`."""
    return {k: replace(m, policy=policy) for k, m in modes.items()}


def resolve(modes: Mapping[str, Mode], mode: str, players: int = 0) -> Mode:
    """The mode a request names: a mode id, or a ruleset id plus a table size."""
    key = mode if players == 0 else mode_id(mode, players)
    found = modes.get(key)
    if found is None:
        known = ", ".join(sorted(modes))
        raise UnknownMode(f"unknown mode {key!r} (known: {known})")
    if players and found.players != players:
        raise UnknownMode(f"mode {mode!r} seats {found.players}, not {players}")
    return found


def parse_mode_id(mode: str) -> tuple[str, int]:
    """(ruleset, players) of a mode id; raises UnknownMode if it is not shaped like one."""
    m = MODE_ID.match(mode)
    if m is None:
        raise UnknownMode(f"{mode!r} is not a mode id (<ruleset>-<players>)")
    return m.group(1), int(m.group(2))
