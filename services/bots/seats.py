"""What a bot worker remembers of the bot seats it has answered for: policy, view, progress.

A worker is stateless in the sense that matters: everything here can be rebuilt from the game's
log, so any worker can answer any seat. A seat seen for the first time (or evicted, or last
answered by another worker) starts from an empty view and folds the redacted log from the start.

Policy per seat: a seat whose player id is `bot:NAME` with a servable NAME plays NAME (the
matchmaker seats bots that way); any other seat plays the worker's default. `oracle` is not
servable: it needs the true roles, and a bot in a live game sees only its seat.
"""

from __future__ import annotations

import asyncio
import hashlib
from collections import OrderedDict
from dataclasses import dataclass, field

from ..contracts.levels import LEVELS, POLICIES, policy_of
from ..readside.fold import SeatFold
from ..rules.api import Answer, Decision, Game, View
from ..rules.api import events as ev
from .random_policy import random_picks
from .search import SearchPolicy
from .selfplay import Policy, make_policy

MAX_SEATS = 16  # a table's most seats (the engine refuses more: engine/service.py MAX_SEATS)
# seats kept (`arena bots --cache-size`): 1,000 games of 5 in flight are 5,000 seats, and at
# 4,096 their minds were dropped and made again (a viewing seat's caught up through the engine)
CACHE_SIZE = 16_384
SERVABLE = (*LEVELS, *POLICIES)  # the levels, and policies by their own names
# ignores the view and observes nothing: no need to fold (and `Answerer.take` answers these
# seats at once, with random_picks: another policy here would need its own way there)
VIEWLESS = frozenset({"random"})
BOT_PREFIX = "bot:"


def policy_name(player: str, default: str) -> str:
    """The policy a seat plays: `bot:NAME` names it, else the worker's default."""
    if player.startswith(BOT_PREFIX):
        name = player[len(BOT_PREFIX) :]
        if name in SERVABLE:
            return name
    return default


def seat_seed(game: str, seat: int) -> int:
    """A seed for one seat of one game, the same on every worker."""
    digest = hashlib.sha256(f"arena-bot-v1|{game}|{seat}".encode()).digest()
    return int.from_bytes(digest[:8], "big") >> 1


@dataclass
class SeatMind:
    """One bot seat: its policy, its view (the read side's fold of the seat's entries, numbered
    by the seat's positions), and a lock so two deliveries of its decisions are never handled
    at once."""

    game: str
    seat: int
    policy_name: str
    policy: Policy
    folded: SeatFold
    answered: int = -1  # the highest version (seat position) of a decision seen accepted
    seed: int = 0  # seat_seed(game, seat)
    lock: asyncio.Lock = field(default_factory=asyncio.Lock)

    @property
    def view(self) -> View:
        """The seat's view so far."""
        return self.folded.view

    @property
    def seq(self) -> int:
        """The seat's position the view is folded up to."""
        return self.folded.at

    @seq.setter
    def seq(self, position: int) -> None:
        self.folded.at = max(self.folded.at, position)

    @property
    def over(self) -> bool:
        """The seed reveal was folded: the game is finished."""
        return self.folded.closed

    @property
    def unreadable(self) -> int:
        """Entries the fold stepped over because it could not read them (logged once)."""
        return self.folded.unreadable

    @property
    def needs_view(self) -> bool:
        """Whether the policy reads the view (random does not)."""
        return self.policy_name not in VIEWLESS

    def fold(self, position: int, envelope: bytes | str) -> None:
        """Fold one entry the seat receives, as its envelope (services/readside: any kind; one
        that cannot be read is stepped over, counted and logged once), and let the policy
        observe the event it carried."""
        e = self.folded.envelope(position, envelope)
        if e is not None:
            self.policy.observe(e)

    def fold_event(self, position: int, e: ev.Event) -> None:
        """Fold one already decoded (and redacted) event, the seat's ``position``-th entry."""
        if self.folded.event(position, e) is not None:
            self.policy.observe(e)

    def plan(self, d: Decision) -> list[tuple[int, dict[int, str]]]:
        """The worlds the policy's look-ahead needs for ``d`` (``hard``: search.py), to be dealt
        by the engine and handed to ``provide`` before ``act``; [] for every other policy."""
        if isinstance(self.policy, SearchPolicy):
            return self.policy.plan(d, self.view)
        return []

    def provide(self, states: list[Game]) -> None:
        """The worlds ``plan`` asked for, in its order."""
        if isinstance(self.policy, SearchPolicy):
            self.policy.provide(states)

    def act(self, d: Decision) -> Answer:
        """The policy's answer; random is seeded per decision, so any worker answers alike."""
        if self.policy_name == "random":  # (`Answerer.take` answers so too, without `act`)
            return Answer(decision=d.id, seat=d.seat, picks=random_picks(self.seed ^ d.id, d))
        return self.policy.act(d, self.view)


class Minds:
    """A bounded LRU of SeatMinds by (game, seat)."""

    def __init__(self, default_policy: str, capacity: int = CACHE_SIZE) -> None:
        if default_policy not in SERVABLE:
            raise ValueError(f"unknown policy {default_policy!r} (servable: {SERVABLE})")
        self.default = default_policy
        self.capacity = capacity
        self.minds: OrderedDict[tuple[str, int], SeatMind] = OrderedDict()

    def get(self, game: str, seat: int, player: str) -> SeatMind:
        """The seat's mind, created (empty view, fresh policy) if this worker has none."""
        key = (game, seat)
        mind = self.minds.get(key)
        if mind is None:
            name, seed = policy_name(player, self.default), seat_seed(game, seat)
            policy = make_policy(policy_of(name), seed, seat)
            fold = SeatFold(seat, f"{game} seat {seat}")
            mind = SeatMind(game, seat, name, policy, fold, seed=seed)
            self.minds[key] = mind
            while len(self.minds) > self.capacity:
                self.minds.popitem(last=False)
        self.minds.move_to_end(key)
        return mind

    def drop(self, game: str, seat: int) -> None:
        """Forget a seat (its game ended)."""
        self.minds.pop((game, seat), None)

    def drop_game(self, game: str) -> None:
        """Forget every seat of a game (it ended)."""
        # by its seats, not a scan of every mind (thousands, at each game's end)
        for seat in range(MAX_SEATS):
            self.minds.pop((game, seat), None)
