"""Ruleset ``jinyu``: seed 002 — identity mode with 护甲/玉佩 bounties and the general draft
(REFERENCE §5.1–5.3), plus the 谋攻 rage rules as option ``mougong`` (``mougong.py``, §5.4).

Base rules: the seed's role table (``double_renegade`` takes the 6/8-player lines with two
renegades, A-002-02); the deck of A-002-01 (standard + EX + 军争, 160 cards; ``maneuvering:
false`` keeps the 108); generals by ``pool``: ``standard`` the 27 standard ones, ``honglou``
the 20 红楼梦 characters, ``all`` every general the project has (47: the seed's 6 each, 3 at 10
players), ``vanilla`` the seed's game without generals (no draft; everyone a 4-HP general
without skills, the lord 5 and 2 玉佩); one tier only if ``tier`` is 1–3 (``data.GENERAL_TIERS``,
U-002-02) and that tier still offers every seat at least 2 generals (else the whole pool); the
draft of ``rulesets/draft.py`` — the lord is offered the pool's lord-skill generals +
``lord_extra_random`` random ones (at least 2 in all) and picks publicly, the others are offered
min(``draft_max_offer`` (``draft_max_offer_10p`` at 10), floor(pool / (N − 1))) and pick in
secret (A-002-03/04) — except 谋攻's hidden lord, who by default (``mougong_draft: shared``) is
dealt from the one pool like every seat, since a lord-only offer names the lord who takes a
lord-skill general ("lord_offer" keeps the base rules' offer, and its extras shrink rather than
leave the others a single choice); the lord gets +1 max HP and 2 玉佩 and starts with 5 cards,
the others 4. Every option's allowed values: ``data.CHOICES`` (and services/rules/README.md).
护甲 (cap ``armor_cap``, A-002-07) then 玉佩 (``jade_cap``)
absorb damage before HP; HP loss is not absorbed; a dead seat loses both.

Rewards and penalties (replacing §1.11's), for a killer still alive: a rebel killed → draw 3,
gain 2 护甲; a renegade killed → draw 3, gain 3 玉佩; a loyalist killed (by anyone, or with
``loyalist_penalty_scope: allies_only`` by the lord or a loyalist only, A-002-06) → discard hand
and equipment, lose all 玉佩 and 护甲, and if not the lord reveal the role (a public
``role_assigned``) and lose 1 HP — in that order (A-002-13). On death a 闪电 in the judgement area
moves to the next alive seat that can hold it (A-002-05, ``lightning_passes_on_death``). Game end
as §1.3. Counter changes are ``counter_changed`` events (``armor``, ``jade``, ``rage``).

Scenario tables: every seat gets the ruleset's rule skills (``prepare_table``); with ``mougong``
and the hidden lord, the lord's role is unrevealed and its lord skills wait for 明君, and each
renegade knows the first rebel after it in turn order (real games pick at random).
"""

from __future__ import annotations

from collections.abc import Mapping
from typing import TYPE_CHECKING, Any

from ...core.engine import emit, shuffle
from ...core.events import RoleAssigned
from ...core.index import skills_changed
from ...core.ruleset import VANILLA, General, register_ruleset
from ...core.skills import SKILLS
from ...core.state import Game
from ...core.zones import draw
from ..honglou.data import characters
from ..standard import Standard
from ..standard.generals import standard_generals
from . import counters, mougong, rules
from .data import CHOICES, DEFAULTS, GENERAL_TIERS

if TYPE_CHECKING:
    from ...core.redeal import Redeal


@register_ruleset
class JinYu(Standard):
    """Seed 002: identity with 护甲/玉佩 bounties, tiers and the draft; 谋攻 as an option."""

    name = "jinyu"
    defaults = dict(DEFAULTS)
    choices = dict(CHOICES)
    seat_state = counters.Counters

    def generals(self, options: Mapping[str, Any] | None = None) -> dict[str, General]:
        return {"vanilla": VANILLA, **standard_generals(), **characters()}

    # --- setup -------------------------------------------------------------------------------
    def hidden_lord(self, g: Game) -> bool:
        """谋攻 with A-002-18: the lord is secret until 明君 awakens."""
        return bool(g.options.get("mougong") and g.options.get("mougong_hidden_lord", True))

    def setup(self, g: Game) -> None:
        self.setup_drafted(g, draft=g.options.get("pool") != "vanilla")

    def pick_generals(self, g: Game) -> list[General]:
        """``pool: vanilla`` (the seed's game without generals): a 4-HP general without skills
        for every seat (the lord gets its +1 and 2 玉佩 from ``seat_general``)."""
        return [VANILLA] * len(g.players)

    def deal_roles(self, g: Game) -> None:
        if not self.hidden_lord(g):
            super().deal_roles(g)
            return
        roles = self.roles(len(g.players), g.options)
        for seat, i in enumerate(shuffle(g, list(range(len(roles))))):  # lord anywhere
            g.players[seat].role = roles[i]
            emit(g, RoleAssigned(seat=seat, role=roles[i], seen_by=[seat]))
        skills_changed(g)  # lord skills follow the role

    def roster(self, g: Game) -> dict[str, General]:
        """The pool's generals (``pool``), of one tier only if that tier still offers every
        seat at least 2 to choose from (U-002-02; else the whole pool)."""
        pool = g.options.get("pool", "standard")
        full = {
            **(characters() if pool in ("honglou", "all") else {}),
            **(standard_generals() if pool in ("standard", "all") else {}),
        }
        tier = int(g.options.get("tier", 0) or 0)
        if tier:
            sub = {n: x for n, x in full.items() if GENERAL_TIERS.get(n) == tier}
            if min(self.offer_sizes(g, sub)) >= 2:
                return sub
        return full

    def offer_sizes(self, g: Game, roster: dict[str, General]) -> tuple[int, int]:
        """(generals offered to the lord, to each other seat) from ``roster``: the lord's
        candidates + ``lord_extra_random``, the others the seed's 6 (3 at 10 players) as far as
        the roster goes (A-002-04). The lord's extras grow to give it a choice of 2, and shrink
        when a hidden lord picks with the others rather than leave them a single choice."""
        n = len(g.players)
        key = "draft_max_offer_10p" if n >= 10 else "draft_max_offer"
        extra, most = int(g.options.get("lord_extra_random", 2)), int(g.options.get(key, 6))
        if self.shared_draft(g):  # every seat, the hidden lord too, is dealt from one pool
            k = min(most, len(roster) // n)
            return k, k
        lords = len(self.lord_candidates(g, roster))
        extra = max(extra, 2 - lords)
        if self.public_lord(g):  # the lord's other offers go back to the pool
            return lords + extra, min(most, (len(roster) - 1) // (n - 1))
        extra = max(2 - lords, min(extra, len(roster) - lords - 2 * (n - 1)))
        return lords + extra, min(most, max(0, len(roster) - lords - extra) // (n - 1))

    def draft_sizes(self, g: Game) -> tuple[int, int]:
        roster = self.roster(g)
        lord, others = self.offer_sizes(g, roster)
        return max(0, lord - len(self.lord_candidates(g, roster))), others

    def public_lord(self, g: Game) -> bool:
        return not self.hidden_lord(g)

    def shared_draft(self, g: Game) -> bool:
        """The hidden lord drafts from everyone's pool (option ``mougong_draft``, default
        "shared"): a lord-only offer of 曹操/刘备/孙权 would name the lord who takes one."""
        return self.hidden_lord(g) and g.options.get("mougong_draft", "shared") == "shared"

    def lord_bonus_for(self, options: dict[str, Any], players: int) -> int:
        hidden = options.get("mougong") and options.get("mougong_hidden_lord", True)
        return 0 if hidden else 1

    def seat_general(self, g: Game, seat: int, gen: General) -> None:
        super().seat_general(g, seat, gen)
        p = g.players[seat]
        self.attach_rule_skills(g, seat)
        if p.role == "lord" and not self.hidden_lord(g):
            counters.gain(g, seat, "jade", 2)

    def starting_hand(self, g: Game, seat: int) -> int:
        lord = g.players[seat].role == "lord" and not self.hidden_lord(g)
        return 5 if lord else 4

    def deal_hands(self, g: Game) -> None:
        super().deal_hands(g)
        if g.options.get("mougong"):
            mougong.disguise_rebels(g, at_random=True)

    def attach_rule_skills(self, g: Game, seat: int) -> None:
        """The rule skills every seat holds (and 明君 for the lord; a hidden lord's lord skills
        wait for it)."""
        p = g.players[seat]
        extra = [rules.RULE_SKILL]
        if g.options.get("mougong"):
            extra.insert(0, mougong.RAGE_SKILL)
            if p.role == "lord":
                extra.append(mougong.MINGJUN)
                if self.hidden_lord(g):
                    p.skills = [s for s in p.skills if not SKILLS[s].lord]
        p.skills = extra + [s for s in p.skills if s not in extra]
        skills_changed(g, seat)

    def roles_redealt(self, g: Game, seat: int, before: dict[int, str], rd: Redeal) -> None:
        """What goes with a 谋攻 role card: a hidden lord's 明君 and its general's lord skills
        held back (every seat dealt again holds its general's skills as the new role gives
        them), and a rebel's disguise (:func:`.mougong.redisguise`)."""
        if not g.options.get("mougong"):
            return
        if self.hidden_lord(g):
            for t in before:
                self.fit_rule_skills(g, t)
        mougong.redisguise(g, [seat, *before], rd)

    def fit_rule_skills(self, g: Game, seat: int) -> None:
        """A seated seat's skills made again from its general and its role: the general's in
        printed order, any gained since, the rule skills first (:meth:`attach_rule_skills`)."""
        p = g.players[seat]
        if not p.skills:
            return  # not seated yet: the draft is running
        gen = self.generals(g.options).get(p.general)
        own = list(gen.skills) if gen else []
        rule = (mougong.RAGE_SKILL, rules.RULE_SKILL, mougong.MINGJUN)
        p.skills = own + [s for s in p.skills if s not in own and s not in rule]
        self.attach_rule_skills(g, seat)

    def prepare_table(self, g: Game) -> None:
        for p in g.players:
            self.attach_rule_skills(g, p.seat)
            if p.role == "lord" and self.hidden_lord(g):
                p.role_revealed = False
        if g.options.get("mougong"):
            mougong.disguise_rebels(g, at_random=False)

    # --- rules that vary -----------------------------------------------------------------------
    def absorb_damage(self, g: Game, seat: int, amount: int) -> int:
        return counters.absorb(g, seat, amount)

    def peach_at_full_hp(self, g: Game, seat: int) -> bool:
        return mougong.peach_at_full_hp(g, seat)

    def wine_beyond_limit(self, g: Game, seat: int) -> bool:
        return mougong.wine_beyond_limit(g, seat)

    def peach_recover(self, g: Game, user: int, target: int, vc: Any) -> None:
        mougong.peach_recover(g, user, target, vc)

    def death_penalty(self, g: Game, dead: int, killer: int) -> None:
        counters.set_counter(g, dead, "armor", 0)
        counters.set_counter(g, dead, "jade", 0)
        if killer < 0 or not g.players[killer].alive:
            return
        role, k = g.players[dead].role, g.players[killer]
        if role in ("rebel", "renegade"):
            draw(g, killer, 3, reason="reward")
            counters.gain(
                g, killer, "armor" if role == "rebel" else "jade", 2 if role == "rebel" else 3
            )
        elif role == "loyalist":
            scope = g.options.get("loyalist_penalty_scope", "any")
            if scope == "any" or k.role in ("lord", "loyalist"):
                rules.loyalist_penalty(g, killer)
