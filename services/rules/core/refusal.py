"""Why an answer is refused, in words that name the rule (SCENARIOS.md ``expect_error``).

The engine offers only legal options; an answer picking another gets ``IllegalAnswer``, and the
frame that asked adds the rule that forbids the pick (``Frame.refusal``): out of range, once per
phase, the skill that protects the target, a lord skill without a lord … These functions hold the
words shared by every frame; a card spec or a skill adds its own (``CardSpec.refuse_target``,
``CardSpec.refuse_use``, ``Skill.refusal``). They only read the game.
"""

from __future__ import annotations

from .cards import notation
from .keys import CardPick, read
from .query import attack_range, distance, distance_without, in_range, limit_lifted, with_hook
from .skills import HOOK_SETS, SKILLS
from .state import Game


def _both_alive(g: Game, a: int, b: int) -> bool:
    return a != b and g.players[a].alive and g.players[b].alive  # distance needs both seated


def protector(g: Game, t: int, user: int, card_name: str) -> str:
    """The skill of ``t`` that forbids ``user``'s ``card_name`` on it (谦逊, 空城 …), or ""."""
    for s in with_hook(g, t, "prohibits"):
        if s.prohibits(g, t, user, card_name):
            return s.name
    return ""


def target_refusal(g: Game, user: int, t: int, card_name: str) -> str:
    """The common reasons a seat may not be a target: dead, the user itself, protected."""
    if not g.players[t].alive:
        return f"seat {t} is dead"
    if t == user:
        return f"{card_name} cannot target its own user"
    skill = protector(g, t, user, card_name)
    if skill:
        return f"{skill}: seat {t} cannot be the target of {card_name}"
    return ""


def out_of_range(g: Game, user: int, t: int, card_name: str, without: int = -1) -> str:
    """ "out of range …" if ``t`` is beyond ``user``'s attack range for ``card_name``, else "";
    ``without``: a card of the user's equipment the range is measured without (A-STD-04)."""
    if not _both_alive(g, user, t) or limit_lifted(g, user, t, card_name):
        return ""
    if in_range(g, user, t, without):
        return ""
    d, r = distance_without(g, user, t, without), attack_range(g, user, without)
    why = f" (measured without {notation(g.cards[without])}, used as the card)" * (without >= 0)
    return f"out of range: seat {t} is at distance {d}, beyond attack range {r}{why}"


def too_far(g: Game, user: int, t: int, card_name: str, limit: int = 1) -> str:
    """ "out of range …" if ``t`` is farther than ``limit`` for ``card_name``, else ""."""
    if not _both_alive(g, user, t):
        return ""
    d = distance(g, user, t)
    if d <= limit or limit_lifted(g, user, t, card_name):
        return ""
    return f"out of range: seat {t} is at distance {d}, {card_name} reaches distance {limit}"


def skill_refusal(g: Game, seat: int, name: str) -> str:
    """Why ``seat`` cannot use the skill ``name`` now (play phase or a demand)."""
    sk = SKILLS.get(name)
    if sk is None:
        return f"there is no skill {name}"
    p = g.players[seat]
    held = name in p.skills or (p.ext is not None and name in p.ext.rule_skills())
    lordly = p.role == "lord" or (p.ext is not None and p.ext.has_lord_skills())
    if sk.lord and held and not lordly:
        return f"{name} is a lord skill (主公技): it works only while its holder is the lord"
    if not held and not any(g.cards[c].name == name for c in p.equip.values()):
        return f"seat {seat} has no skill {name}"
    why = sk.refusal(g, seat)
    if why:
        return why
    if name not in HOOK_SETS["can_activate"] and name not in HOOK_SETS["provides"]:
        return f"{name} is not activated: the engine offers it when it triggers"
    return f"{name} cannot be used now"


def hand_refusal(g: Game, seat: int, pick: str) -> str:
    """Why ``card:ID`` is not one of ``seat``'s hand cards to give (a discard …)."""
    match read(pick):
        case CardPick(cid) if cid < len(g.cards) and cid not in g.players[seat].hand:
            return f"seat {seat} does not hold that card in its hand"
    return ""
