"""What a tournament is: its table, its entrants, how many games, and how each game is seated.

A tournament is named by what defines its games (`Spec.key`): the same arguments give the same
key, whoever creates it (the browser or `arena tournament`), so the same journal continues it.
Game i is dealt with seed SEED + i and its id is `t<KEY>-<i>`.

Entrants (`policies`, the name the command line has always used):

* a built-in policy (`heuristic`, `random`, `easy`, `hard`): the platform's bot workers play
  it; policies rotate over the seats (game i gives seat s policy (s + i) mod k), or with
  `assign` `camp` whole camps share one;
* a bot account (`b-` + 16 hex digits, services/play/accounts.py): an external program on the
  Bot API plays the seat, like a person, on the table's clock (`time_limit_ms`, and `hosted_after`
  time-outs in a row put it on 托管);
* a person (a guest's player id, `g-` + 16 hex digits): seated through their session, one game
  at a time (only a tournament the web server runs can seat a person).

An external entrant (bot or person) takes one seat of every game, the seat moving round the
table from game to game ((i + k) mod players for the k-th of them), so it meets every seat and
role; the built-in policies fill the other seats by their rotation.
"""

from __future__ import annotations

import hashlib
import json
import re
from dataclasses import asdict, dataclass, field
from typing import Any

from ..bots.selfplay import camp_rotation, rotation
from ..contracts.streams import NewMatch, Seat
from ..rules import api

SERVABLE = ("heuristic", "random", "easy", "hard")  # what a bot worker plays (contracts/levels.py)
BOT = "bot:"
BOT_ACCOUNT = re.compile(r"^b-[0-9a-f]{16}$")
PERSON = re.compile(r"^g-[0-9a-f]{16}$")
MAX_GAMES = 100_000
MAX_TIME_LIMIT_MS = 120_000
DEFAULT_TIME_LIMIT_MS = 15_000  # per decision of an external entrant
KEYED = ("ruleset", "players", "policies", "seed", "assign", "options")  # name every tournament
# fields added since: in the key only when they differ from their default, so a tournament
# created before them keeps its key (and its journal)
EXTRA_DEFAULTS: dict[str, Any] = {"time_limit_ms": DEFAULT_TIME_LIMIT_MS, "hosted_after": 2}


class SpecError(ValueError):
    """A tournament that cannot be played as asked (the reason, on one line)."""


def kind_of(entrant: str) -> str:
    """``policy``, ``bot`` (a bot account) or ``person`` (a guest); ``""`` for anything else."""
    if entrant in SERVABLE:
        return "policy"
    if BOT_ACCOUNT.match(entrant):
        return "bot"
    if PERSON.match(entrant):
        return "person"
    return ""


@dataclass(frozen=True)
class Spec:
    """What defines a tournament's games (all but `games` name it)."""

    ruleset: str
    players: int
    games: int
    policies: list[str]  # the entrants (see the module docstring)
    seed: int = 1
    assign: str = "seat"
    options: dict[str, Any] = field(default_factory=dict)
    time_limit_ms: int = DEFAULT_TIME_LIMIT_MS  # per decision of an external entrant
    hosted_after: int = 2  # an external entrant's time-outs in a row before 托管 (0: never)

    def key(self) -> str:
        """16 hex digits naming the tournament: the same arguments give the same key."""
        d = asdict(self)
        ident = {k: d[k] for k in KEYED}
        ident |= {k: d[k] for k, default in EXTRA_DEFAULTS.items() if d[k] != default}
        text = json.dumps(ident, sort_keys=True, separators=(",", ":"))
        return hashlib.sha256(text.encode()).hexdigest()[:16]

    def game_id(self, i: int) -> str:
        """The id of game number i."""
        return f"t{self.key()[:12]}-{i}"

    @property
    def external(self) -> list[str]:
        """The entrants that are not built-in policies (bots, people), in order."""
        return [e for e in dict.fromkeys(self.policies) if kind_of(e) != "policy"]

    @property
    def builtin(self) -> list[str]:
        """The built-in policies among the entrants (repeats kept: they weigh the rotation)."""
        return [e for e in self.policies if kind_of(e) == "policy"]

    def seats(self, i: int) -> list[str]:
        """Entrants by seat of game i."""
        if self.assign == "camp":
            g = api.new_game(self.ruleset, self.players, self.seed + i, dict(self.options))
            return camp_rotation(self.policies, [p.role for p in g.players], i)
        external = self.external
        if not external:
            return rotation(self.policies, self.players, i)
        out = rotation(self.builtin, self.players, i) if self.builtin else [""] * self.players
        for k, e in enumerate(external):
            out[(i + k) % self.players] = e
        return out

    def match(self, i: int, names: dict[str, str] | None = None) -> NewMatch:
        """The match of game i (``names``: what each external entrant is called at the table)."""
        return NewMatch(
            match_id=self.game_id(i),
            ruleset=self.ruleset,
            seed=self.seed + i,
            options=dict(self.options),
            seats=self.seated(i, names),
            time_limit_ms=self.time_limit_ms if self.external else 0,
            hosted_after=self.hosted_after if self.external else 0,
        )

    def seated(self, i: int, names: dict[str, str] | None = None) -> list[Seat]:
        """Who sits where in game i, as the match (and so the header) names them."""
        out = []
        for e in self.seats(i):
            if kind_of(e) == "policy":
                out.append(Seat(f"{BOT}{e}", True))
            else:
                out.append(Seat(e, False, (names or {}).get(e, "")))
        return out

    def check(self) -> None:
        """Refuse what cannot be played (SpecError, one line), before any game is published."""
        bad = [p for p in self.policies if not kind_of(p)]
        if not self.policies or bad:
            raise SpecError(
                f"entrants must be built-in policies ({', '.join(SERVABLE)}), bot accounts "
                f"(b-…) or people (g-…); oracle cannot play (a live bot sees only its seat); "
                f"got {bad or 'none'}"
            )
        if not 0 <= self.games <= MAX_GAMES:
            raise SpecError(f"games must be 0–{MAX_GAMES}")
        if self.assign not in ("seat", "camp"):
            raise SpecError("assign must be seat or camp")
        external = self.external
        if external and self.assign == "camp":
            raise SpecError("bot accounts and people play seats of their own: assign seat")
        if len(external) > self.players or (
            external and not self.builtin and len(external) < self.players
        ):
            raise SpecError(
                f"{len(external)} bot accounts and people for {self.players} seats: each takes "
                "one seat of every game, built-in policies fill the rest"
            )
        if len(self.policies) != len(set(self.policies)) and external:
            raise SpecError("an entrant is named twice")
        if not 2_000 <= self.time_limit_ms <= MAX_TIME_LIMIT_MS:
            raise SpecError(f"time_limit_ms must be 2000–{MAX_TIME_LIMIT_MS}")
        if not 0 <= self.hosted_after <= 20:
            raise SpecError("hosted_after must be 0–20")
        if self.hosted_after == 0 and self.time_limit_ms > 60_000:
            raise SpecError("hosted_after 0 (never 托管) needs time_limit_ms of at most 60000")
        try:
            api.new_game(self.ruleset, self.players, self.seed, dict(self.options))
        except (api.UnknownOption, ValueError, TypeError, KeyError) as exc:
            raise SpecError(str(exc) or type(exc).__name__) from None
