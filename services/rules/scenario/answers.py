"""How a script step answers a decision (SCENARIOS.md "Intents"): the picks it gives when legal,
where it is to be tried, and what it means when it is not legal (for the engine to refuse)."""

from __future__ import annotations

from collections.abc import Iterable

from ..core.keys import (
    SkillPick,
    card_key,
    card_keys,
    general_key,
    parse,
    recast_key,
    seat_keys,
    skill_key,
    suit_key,
)
from ..core.ruleset import RULESETS
from ..core.skills import HOOK_SETS, SKILLS
from ..core.state import Decision, Game
from .model import CardRef, Intent, Scenario, Step
from .table import RECAST


class Progress:
    """How much of the current step's intent has been used up by earlier decisions."""

    def __init__(self) -> None:
        self.started = False
        self.cards_done = False
        self.targets_done = 0


class Answers:
    """The translation of intents into option keys, for one scenario's table."""

    sc: Scenario
    g: Game
    refs: dict[CardRef, int]
    progress: Progress

    def keys(self, refs: Iterable[CardRef]) -> list[str]:
        """The option keys of the scenario's cards (``build`` checked that each exists)."""
        return card_keys(self.refs[r] for r in refs)

    @staticmethod
    def legal(keys: list[str], d: Decision) -> list[str] | None:
        """``keys`` if the decision offers every one of them."""
        return keys if keys and all(k in d.options for k in keys) else None

    def skill_for(self, intent: Intent, d: Decision) -> str | None:
        """The option of the skill that turns the intent's cards into ``as NAME``: one that
        converts into NAME, else the only offered provider that names no card (丈八蛇矛)."""
        aliases = RULESETS[self.sc.ruleset].aliases
        want = aliases.get(intent.as_name or "", intent.as_name or "")
        offered = [p.name for p in map(parse, d.options) if isinstance(p, SkillPick)]
        for name in offered:
            sk = SKILLS.get(name)
            names = getattr(sk, "names", None)  # a Conversion names what it makes for a need
            makes = names(want) if names is not None else [getattr(sk, "converts", "")]
            if name == intent.skill or want in makes:
                return skill_key(name)
        plain = [
            n
            for n in offered
            if n in HOOK_SETS["provides"] and not getattr(SKILLS[n], "converts", "")
        ]
        return skill_key(plain[0]) if len(plain) == 1 else None

    def skill_name(self, it: Intent) -> str | None:
        """The engine's name of the intent's skill (an equipment effect may be printed under the
        ruleset's card name, e.g. seed 000's 护官符 for 八卦阵)."""
        if it.skill is None:
            return None
        return RULESETS[self.sc.ruleset].aliases.get(it.skill, it.skill)

    def choose_keys(self, it: Intent, d: Decision) -> list[str]:
        """The option keys a `choose` intent names."""
        keys: list[str] = []
        for w in it.words:
            if w in ("S", "H", "C", "D"):
                keys.append(suit_key(w))
            else:
                keys.append(w if w in d.options else general_key(w))
        return keys + self.keys(it.cards) + seat_keys(it.targets)

    def rest_targets(self, it: Intent) -> list[str]:
        """The step's targets not yet given, as option keys."""
        return seat_keys(it.targets[self.progress.targets_done :])

    def targets(self, it: Intent, d: Decision) -> list[str] | None:
        rest = self.rest_targets(it)
        if not rest or (len(rest) > d.max and not d.info.get("two_step")):
            return None  # none left, or more than the card may have (the engine rejects those)
        return self.legal(rest[: d.max], d)

    def answer_for(self, st: Step, d: Decision) -> list[str] | None:
        """The legal picks that step ``st`` gives decision ``d``, or None if it does not answer
        it. A started step answers only the decisions that continue it (its cards, its targets):
        one step answers one offer, so a skill offered again needs a step of its own."""
        it, pr = st.parsed, self.progress
        if d.seat != st.seat:
            return None
        k = it.kind
        if k == "pass":
            return [] if d.declinable else None
        if k == "end":
            return ["end"] if d.kind == "play" else None
        if k == "discard":
            return self.legal(self.keys(it.cards), d) if d.kind in ("discard", "cards") else None
        if k == "choose":
            return self.legal(self.choose_keys(it, d), d)
        if pr.started:
            if d.kind == "targets" or (d.kind in ("choose", "pick_card") and it.targets):
                return self.targets(it, d)
            if d.kind == "cards" and not pr.cards_done:
                return self.legal(self.keys(it.cards), d)
            return None
        skill = self.skill_name(it)
        if k == "skill" and d.info.get("skill") == skill:
            if d.kind == "confirm":
                return ["yes"]
            if d.kind == "cards":
                return self.legal(self.keys(it.cards), d)
        if d.kind not in ("play", "respond"):
            return None
        if k == "skill":
            if skill == RECAST and len(it.cards) == 1:
                return self.legal([recast_key(self.refs[it.cards[0]])], d)
            return self.legal([skill_key(str(skill))], d)
        if it.as_name is None and len(it.cards) == 1:
            cid = self.refs[it.cards[0]]
            if not it.targets and recast_key(cid) in d.options:
                return [recast_key(cid)]  # a targeted card used with no targets: 重铸
            return self.legal([card_key(cid)], d)
        opt = self.skill_for(it, d)
        return [opt] if opt else None

    def continues(self, st: Step, d: Decision) -> bool:
        """Whether ``d`` continues the started step ``st`` (its cards or targets are asked)."""
        it, pr = st.parsed, self.progress
        if d.seat != st.seat or it.kind not in ("use", "play", "skill"):
            return False
        if d.kind == "targets":
            return bool(self.rest_targets(it))
        return d.kind == "cards" and not pr.cards_done and bool(it.cards)

    def could_answer(self, st: Step, d: Decision) -> bool:
        """Whether ``d`` is where the not yet started step ``st`` is to be tried: a decision of
        its seat of the kind its intent answers (the demanded card, for a respond)."""
        it = st.parsed
        if d.seat != st.seat:
            return False
        k = it.kind
        if k == "pass":
            return True
        if k == "end":
            return d.kind == "play"
        if k == "discard":
            return d.kind in ("discard", "cards")
        if k == "choose":
            return d.kind in ("choose", "pick_card", "draft")
        if k == "skill":
            name = self.skill_name(it)
            provider = d.kind == "respond" and name in HOOK_SETS["provides"]
            return d.kind == "play" or provider or d.info.get("skill") == name
        # the demanded card, or 酒 for a dying seat's 桃 (its self-rescue, §2.1)
        aliases = RULESETS[self.sc.ruleset].aliases
        names = {self.g.cards[self.refs[r]].name for r in it.cards}
        if it.as_name is not None:
            names = {aliases.get(it.as_name, it.as_name)}
        need = d.info.get("need")
        demanded = d.kind == "respond" and (need in names or (need == "桃" and "酒" in names))
        return demanded or (k == "use" and d.kind == "play")

    def raw_picks(self, st: Step, d: Decision) -> list[str]:
        """What the step means at ``d``, legal or not (for the engine to accept or refuse)."""
        it, pr = st.parsed, self.progress
        if it.kind == "pass":
            return []
        if it.kind == "end":
            return ["end"]
        if it.kind == "choose":
            return self.choose_keys(it, d)
        if pr.started and d.kind != "cards":
            return self.rest_targets(it)
        if it.kind == "discard" or d.kind == "cards":
            return self.keys(it.cards)
        if it.kind == "skill":
            return [skill_key(str(self.skill_name(it)))]
        if it.as_name is None:
            return self.keys(it.cards[:1])
        return [skill_key(self.converter(st.seat, it.as_name))]

    def converter(self, seat: int, name: str) -> str:
        """The seat's skill that makes cards into ``name`` (the conversion the step asks for)."""
        aliases = RULESETS[self.sc.ruleset].aliases
        want = aliases.get(name, name)
        p = self.g.players[seat]
        for s in [*p.skills, *(self.g.cards[c].name for c in p.equip.values())]:
            if getattr(SKILLS.get(s), "converts", None) in (name, want):
                return s
        return f"as {name}"  # no skill of the seat converts: the engine refuses the conversion
