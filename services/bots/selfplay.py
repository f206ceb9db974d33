"""In-process self-play: run seeded games with policies per seat and summarise them."""

from __future__ import annotations

import time
from typing import Any, Protocol

from ..rules import api
from ..rules.core.state import Answer, Decision, Game
from .random_policy import RandomPolicy


class Policy(Protocol):
    """Anything that answers a decision."""

    name: str

    def act(self, d: Decision, view: Any = None) -> Answer: ...


def make_policy(name: str, seed: int) -> Policy:
    """A policy by name."""
    if name == "random":
        return RandomPolicy(seed)
    raise ValueError(f"unknown policy {name!r} (known: random)")


def play_game(ruleset: str, players: int, seed: int, policies: list[str] | None = None,
              options: dict[str, Any] | None = None, max_decisions: int = 200_000,
              ) -> tuple[Game, dict[str, int]]:
    """Play one game to its end; returns the final state and counts."""
    g = api.new_game(ruleset, players, seed, options)
    names = policies or ["random"]
    seats = [make_policy(names[i % len(names)], seed * 1000 + i) for i in range(players)]
    events = len(api.advance(g))
    decisions = 0
    while not g.over:
        d = g.pending
        assert d is not None, "engine stopped without a decision or an end"
        events += len(api.submit(g, seats[d.seat].act(d)))
        decisions += 1
        if decisions >= max_decisions:
            raise RuntimeError(f"game {seed} did not end within {max_decisions} decisions")
    return g, {"decisions": decisions, "events": events, "turns": g.round}


def selfplay(ruleset: str, players: int, games: int, seed: int,
             policies: list[str] | None = None, options: dict[str, Any] | None = None
             ) -> dict[str, Any]:
    """Play ``games`` seeded games and return the JSON summary."""
    wins: dict[str, int] = {}
    draws = decisions = events = turns = 0
    t0 = time.perf_counter()
    for i in range(games):
        g, c = play_game(ruleset, players, seed + i, policies, options)
        decisions += c["decisions"]
        events += c["events"]
        turns += c["turns"]
        if g.draw_game:
            draws += 1
        else:
            camp = camp_of(g)
            wins[camp] = wins.get(camp, 0) + 1
    secs = time.perf_counter() - t0
    return {"ruleset": ruleset, "players": players, "games": games, "seed": seed,
            "wins": wins, "draws": draws, "mean_turns": turns / max(games, 1),
            "mean_rounds": turns / max(games, 1), "decisions": decisions, "events": events,
            "seconds": round(secs, 3)}


def camp_of(g: Game) -> str:
    """The winning camp of a finished game (by the first winner's role)."""
    roles = {g.players[s].role for s in g.winners}
    if "lord" in roles or "loyalist" in roles:
        return "lord"
    return sorted(roles)[0] if roles else "none"
