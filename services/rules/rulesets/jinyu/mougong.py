"""The 谋攻 module (seed 002 "谋攻篇特殊规则", REFERENCE §5.4), option ``mougong: true``.

* 怒气 (rage, counter ``rage``): +1 at each preparation phase actually executed (A-002-09), each
  HP loss and each damage taken — per event, or per point with ``rage_per_point`` (A-002-10);
  ``rage_cap`` (U-002-04, 0 = none).
* 洞察: after dealing damage to another character or making it lose HP, its source may spend 1
  rage (``confirm``, info.skill 洞察) to learn ``friend`` / ``enemy`` — camps {lord, loyalists},
  {rebels}, each renegade alone (``insight_renegades_same_camp``, A-002-11); the disguised rebel
  always reads ``enemy``, a renegade ``friend``; a renegade's own insight gives the exact role.
  The result is an ``insight_revealed`` event seen by the inspector only.
* 强化 (A-002-12): when a card is used its user may pay rage (``choose``, info.about 强化; the
  options are the affordable combinations): ``slash`` (1: the 杀 needs two ordinary 闪 or one
  强化 闪), ``dodge`` (1: offered for a 闪 answering a 强化 杀), ``damage`` (2: each damage the card
  causes +1; 杀, 决斗, 南蛮入侵, 万箭齐发, 火攻), ``slash+damage`` (3), ``peach`` (3: recovery 3;
  usable at full HP; A-002-14 ``enhanced_peach_full_hp``: ``max_hp_then_jade`` — a full target
  first gets +1 max HP and +1 HP — or ``jade_only``; leftover recovery becomes 玉佩 per
  ``overheal_to_jade``), ``wine`` (4, play phase: instead of the 酒's effect, all damage you cause
  is +1 for the rest of the turn, or the play phase with ``enhanced_wine_scope: play_phase``,
  A-002-15; it does not count toward the 酒 limit, so several stack), ``delayed`` (4: the delayed
  trick's judgement is inverted, A-002-16 — paid by its user when placing it, A-002-17; it stays
  inverted if 闪电 moves on).
* 明君 (A-002-18, ``mougong_hidden_lord``): the lord is secret, gets no start bonuses (no +1 max
  HP, 5th card or 2 玉佩), its lord skills are inactive, and seat 0 — who plays first — is random
  relative to it. 觉醒技, once, when the lord enters dying, when the second character dies, or at
  the lord's turn start in round 3 or later: reveal the role, recover 2 HP, +1 max HP and the
  general's lord skills (+2 max HP if it has none), and the 2 玉佩 (hidden lord only).
* The disguised rebel (A-002-19): each renegade privately learns one rebel (a ``rebel_disguised``
  event seen by it; a different rebel per renegade when possible, uniformly at random). When that
  rebel first enters dying it recovers to full HP, draws ``disguised_rebel_draw`` (U-002-05) and
  reveals its role.
"""

from __future__ import annotations

from typing import TYPE_CHECKING, Any

import msgspec

from ...core.choices import Choice, register_choice
from ...core.damage import Damage, DyingFrame, recover
from ...core.delayed import DelayedResolve
from ...core.engine import answer, ask, ask_confirm, emit, pop, push, rand_below
from ...core.events import SkillInvoked
from ...core.index import skills_changed
from ...core.judge import Judge
from ...core.registry import ruleset_of
from ...core.respond import AskCard
from ...core.skills import SKILLS, Skill, register
from ...core.state import Frame, Game
from ...core.triggers import Trigger, ctx_frame
from ...core.use import CARD_SPECS, UseCard
from ...core.vcard import VCard, is_slash
from ...core.views import secret
from ...core.zones import draw
from .counters import change_max_hp, counters, gain, reveal_role, set_counter
from .events import InsightRevealed, RebelDisguised

if TYPE_CHECKING:
    from ...core.redeal import Redeal

RAGE_SKILL = "谋攻"
MINGJUN = "明君"
DAMAGE_CARDS = ("杀", "火杀", "雷杀", "决斗", "南蛮入侵", "万箭齐发", "火攻")
COSTS = {
    "slash": 1,
    "dodge": 1,
    "damage": 2,
    "slash+damage": 3,
    "peach": 3,
    "wine": 4,
    "delayed": 4,
}


def camp(g: Game, seat: int) -> str:
    """A seat's camp for 洞察 (A-002-11)."""
    role = g.players[seat].role
    if role in ("lord", "loyalist"):
        return "lord"
    if role == "renegade" and not g.options.get("insight_renegades_same_camp", False):
        return f"renegade{seat}"
    return role


def insight(g: Game, seer: int, target: int) -> str:
    """What ``seer``'s 洞察 on ``target`` reads (§5.4.1, §5.4.3)."""
    t = g.players[target]
    if g.players[seer].role == "renegade":
        return t.role
    if t.marks.get("disguised"):
        return "enemy"
    if t.role == "renegade":
        return "friend"
    return "friend" if camp(g, seer) == camp(g, target) else "enemy"


def disguise_rebels(g: Game, at_random: bool) -> None:
    """Each renegade learns one rebel, which becomes disguised (A-002-19); a scenario table
    takes the first rebel after the renegade in turn order instead of a random one."""
    n = len(g.players)
    for r in [p.seat for p in g.players if p.role == "renegade"]:
        rebels = [(r + k) % n for k in range(1, n) if g.players[(r + k) % n].role == "rebel"]
        fresh = [s for s in rebels if not g.players[s].marks.get("disguised")] or rebels
        if not fresh:
            continue
        pick = fresh[rand_below(g, len(fresh))] if at_random else fresh[0]
        g.players[pick].marks["disguised"] = 1
        emit(g, RebelDisguised(seat=r, rebel=pick, seen_by=[r]))


def redisguise(g: Game, seats: list[int], rd: Redeal) -> None:
    """For a look-ahead that deals the roles of ``seats`` again: the disguises not yet used
    among them (no seat but a renegade is told of one, and a view keeps none) are dealt again
    over the alive rebels among them, as many as there were."""
    k = 0
    for t in seats:
        marks = g.players[t].marks
        if marks.get("disguised") and not marks.get("disguise_used"):
            del marks["disguised"]
            k += 1
    rebels = [
        t
        for t in sorted(seats)
        if g.players[t].role == "rebel"
        and g.players[t].alive
        and not g.players[t].marks.get("disguised")
    ]
    for t in rd.shuffled(rebels)[:k]:
        g.players[t].marks["disguised"] = 1


# 洞察's result is the inspector's alone; who learns of a disguise would name the renegade
secret(InsightRevealed, lambda e: msgspec.structs.replace(e, result=""))
secret(RebelDisguised, lambda e: msgspec.structs.replace(e, seat=-1, rebel=-1, seen_by=[]))


def enhancements(g: Game, seat: int, vc: VCard, fr: Any) -> list[str]:
    """The affordable 强化 options for the card ``vc`` being used by ``seat`` (frame ``fr``)."""
    name, spec = vc.name, CARD_SPECS.get(vc.name)
    opts: list[str] = []
    if isinstance(fr, UseCard):
        if is_slash(name):
            opts = ["slash", "damage", "slash+damage"]
        elif name in DAMAGE_CARDS:
            opts = ["damage"]
        elif name == "桃":
            opts = ["peach"]
        elif name == "酒" and g.phase == "play" and g.current == seat:
            opts = ["wine"]
        elif spec is not None and spec.kind == "delayed" and len(vc.cards) == 1:
            opts = ["delayed"]
    elif isinstance(fr, AskCard) and fr.mode == "use":
        if name == "闪" and _answering_enhanced_slash(g):
            opts = ["dodge"]
        elif name == "桃":
            opts = ["peach"]
    rage = counters(g, seat).rage
    return [o for o in opts if COSTS[o] <= rage]


def forced_enhancement(g: Game, seat: int, vc: VCard, fr: Any) -> str:
    """The 强化 the use of ``vc`` cannot do without ("" if none): a 桃 used at full HP may only
    be a 强化桃, and a 酒 beyond the turn's limit only a 强化酒 (which the limit does not count)."""
    if not isinstance(fr, UseCard):
        return ""
    p = g.players[seat]
    if vc.name == "桃" and p.hp >= p.max_hp and (fr.targets or [seat]) == [seat]:
        return "peach"
    if vc.name == "酒" and p.marks.get("t:wine_used", 0) > 1:  # counted already at on_declare
        return "wine"
    return ""


def _answering_enhanced_slash(g: Game) -> bool:
    for fr in reversed(g.stack):
        if isinstance(fr, UseCard):
            return is_slash(fr.vc.name) and "slash" in fr.vc.tags
    return False


def _enclosing_use(g: Game, card: str) -> UseCard | None:
    for fr in reversed(g.stack):
        if isinstance(fr, UseCard) and fr.vc.name == card:
            return fr
    return None


@register
class Rage(Skill):
    """谋攻 (rule): 每轮玩家的准备阶段、玩家失去体力或受到伤害时，获得一点怒气值；洞察；强化卡牌；
    被伪装的反贼进入濒死时回复体力至上限并摸牌、翻开身份。"""

    name = RAGE_SKILL
    events = (
        "phase_start",
        "damaged",
        "hp_lost",
        "damage_caused",
        "card_using",
        "damage_causing",
        "judge_result",
        "dying",
    )
    asks_itself = True  # a rule: runs without a "use it?" question; its frames ask their own

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        pt, p = trig.point, g.players[seat]
        if pt == "phase_start":
            return bool(trig.data.get("phase") == "start" and g.current == seat)
        if pt == "hp_lost":
            src = int(trig.data.get("source", -1))
            return int(trig.data["seat"]) == seat or (
                src == seat
                and int(trig.data["seat"]) != seat
                and counters(g, seat).rage >= 1
                and g.players[int(trig.data["seat"])].alive
            )
        fr = ctx_frame(g, trig)
        if pt == "damaged":
            return isinstance(fr, Damage) and fr.target == seat
        if pt == "damage_caused":
            return (
                isinstance(fr, Damage)
                and fr.source == seat
                and fr.target != seat
                and counters(g, seat).rage >= 1
                and g.players[fr.target].alive
            )
        if pt == "card_using":
            vc = getattr(fr, "vc", None)
            return (
                isinstance(fr, UseCard | AskCard)
                and fr.user == seat
                and isinstance(vc, VCard)
                and bool(enhancements(g, seat, vc, fr))
            )
        if pt == "damage_causing":
            return isinstance(fr, Damage) and fr.source == seat and self._bonus(g, seat, fr) > 0
        if pt == "judge_result":
            return isinstance(fr, Judge) and fr.seat == seat and self._inverted(g, fr) >= 0
        if pt == "dying":
            return (
                isinstance(fr, DyingFrame)
                and fr.seat == seat
                and bool(p.marks.get("disguised"))
                and not p.marks.get("disguise_used")
            )
        return False

    def _bonus(self, g: Game, seat: int, d: Damage) -> int:
        p, bonus = g.players[seat], 0
        if g.options.get("enhanced_wine_scope") != "play_phase" or (
            g.phase == "play" and g.current == seat
        ):
            bonus += p.marks.get("t:强化酒", 0)
        use = _enclosing_use(g, d.card) if d.card and d.own_hit(g) else None
        if use is not None and use.user == seat and "damage" in use.vc.tags:
            bonus += 1
        return bonus

    def _inverted(self, g: Game, j: Judge) -> int:
        """The card of the delayed trick being judged if it was 强化 (inverted), else -1."""
        for fr in reversed(g.stack):
            if isinstance(fr, DelayedResolve):
                if fr.seat == j.seat and any(q.marks.get(f"inv:{fr.card}") for q in g.players):
                    return fr.card
                return -1
        return -1

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        pt, p = trig.point, g.players[seat]
        if pt in ("phase_start", "damaged", "hp_lost") and (
            pt != "hp_lost" or int(trig.data["seat"]) == seat
        ):
            n = 1
            if g.options.get("rage_per_point") and pt != "phase_start":
                n = int(trig.data["amount"]) if pt == "hp_lost" else ctx_frame(g, trig).dealt
            gain(g, seat, "rage", n)
            return
        if pt in ("hp_lost", "damage_caused"):
            target = int(trig.data["seat"]) if pt == "hp_lost" else ctx_frame(g, trig).target
            push(g, InsightAsk(seat=seat, target=target))
            return
        fr = ctx_frame(g, trig)
        if pt == "card_using":
            forced = forced_enhancement(g, seat, fr.vc, fr)
            options = [forced] if forced else enhancements(g, seat, fr.vc, fr)
            push(g, EnhanceAsk(seat=seat, ctx=trig.ctx, options=options, forced=bool(forced)))
        elif pt == "damage_causing":
            fr.amount += self._bonus(g, seat, fr)
        elif pt == "judge_result":
            card = self._inverted(g, fr)
            for q in g.players:
                q.marks.pop(f"inv:{card}", None)
            fr.result = not fr.result
            if fr.reason == "闪电" and not fr.result:
                g.players[seat].marks[f"inv:{card}"] = 1  # it stays 强化 as it moves on
            emit(g, SkillInvoked(seat=seat, skill="强化"))
        elif pt == "dying":
            p.marks["disguise_used"] = 1
            emit(g, SkillInvoked(seat=seat, skill="伪装"))
            recover(g, seat, p.max_hp - p.hp)
            draw(g, seat, int(g.options.get("disguised_rebel_draw", 2)), reason="伪装")
            reveal_role(g, seat)


@register
class Insight(Skill):
    """洞察 (谋攻 rule): after hurting another seat, spend 1 rage to learn whether it is a friend
    or an enemy. 谋攻 offers it itself (``InsightAsk``); registered so that it is a named skill
    (a scenario's ``skill 洞察``, a UI's label), with no hook of its own."""

    name = "洞察"


class InsightAsk(Frame, tag="insight_ask"):
    """Offer 洞察 on ``target`` (1 rage); the result is seen by ``seat`` only."""

    seat: int
    target: int

    def start(self, g: Game) -> None:
        if counters(g, self.seat).rage < 1 or not g.players[self.seat].alive:
            pop(g)
            return
        self.then(self.confirmed)
        ask_confirm(g, self.seat, "洞察", target=self.target)

    def confirmed(self, g: Game) -> None:
        pop(g)
        if answer(g):
            emit(g, SkillInvoked(seat=self.seat, skill="洞察", targets=[self.target]))
            gain(g, self.seat, "rage", -1)
            result = insight(g, self.seat, self.target)
            emit(
                g,
                InsightRevealed(
                    seat=self.seat, target=self.target, result=result, seen_by=[self.seat]
                ),
            )


register_choice("强化", Choice("enhance"))


class EnhanceAsk(Frame, tag="enhance_ask"):
    """Offer 强化 for the card of the frame at ``ctx`` (a UseCard or an AskCard)."""

    seat: int
    ctx: int
    options: list[str] = msgspec.field(default_factory=list)
    forced: bool = False  # the card may only be used 强化 (a 桃 at full HP, a second 酒)

    def start(self, g: Game) -> None:
        fr = g.stack[self.ctx]
        self.then(self.chosen)
        ask(
            g,
            self.seat,
            "choose",
            list(self.options),
            declinable=not self.forced,
            info={
                "about": "强化",
                "card": fr.vc.name,
                "rage": counters(g, self.seat).rage,
                "costs": {o: COSTS[o] for o in self.options},
            },
        )

    def chosen(self, g: Game) -> None:
        picks = answer(g)
        pop(g)
        if not picks:
            return
        pick, fr, p = picks[0], g.stack[self.ctx], g.players[self.seat]
        set_counter(g, self.seat, "rage", counters(g, self.seat).rage - COSTS[pick])
        targets = list(getattr(fr, "targets", None) or [])
        emit(g, SkillInvoked(seat=self.seat, skill="强化", targets=targets))
        vc: VCard = fr.vc
        vc.tags.extend(pick.split("+"))
        if pick == "wine":
            left = p.marks.pop("t:wine_used", 1) - 1  # this one is not counted toward the limit
            if left > 0:
                p.marks["t:wine_used"] = left
            p.marks["t:强化酒"] = p.marks.get("t:强化酒", 0) + 1
            fr.targets = []  # "效果改为": the ordinary 酒 effect does not happen
        elif pick == "delayed":
            for q in g.players:
                q.marks.pop(f"inv:{vc.cards[0]}", None)
            g.players[(fr.targets or [self.seat])[0]].marks[f"inv:{vc.cards[0]}"] = 1


def peach_at_full_hp(g: Game, seat: int) -> bool:
    """A 强化 桃 may be used at full HP: only with 谋攻 and the 3 rage it costs (and then it
    must be 强化: ``forced_enhancement``)."""
    return bool(g.options.get("mougong")) and counters(g, seat).rage >= COSTS["peach"]


def wine_beyond_limit(g: Game, seat: int) -> bool:
    """A 强化酒 (4 rage, in its user's play phase) is not counted toward the 酒 limit, so a 酒
    may be used after the turn's one as a 强化酒 ("此“酒”不计入上限")."""
    return (
        bool(g.options.get("mougong"))
        and g.phase == "play"
        and g.current == seat
        and counters(g, seat).rage >= COSTS["wine"]
    )


def peach_recover(g: Game, user: int, target: int, vc: Any) -> None:
    """桃: 1 HP; a 强化 桃 3 (A-002-14: at full HP first +1 max HP and +1 HP; the rest → 玉佩
    as ``overheal_to_jade`` allows)."""
    p = g.players[target]
    enhanced = isinstance(vc, VCard) and "peach" in vc.tags
    amount = 3 if enhanced else 1
    if (
        enhanced
        and p.hp >= p.max_hp
        and p.alive
        and (g.options.get("enhanced_peach_full_hp", "max_hp_then_jade") == "max_hp_then_jade")
    ):
        change_max_hp(g, target, 1, heal=1)
        amount -= 1
    over = amount - recover(g, target, amount)
    mode = g.options.get("overheal_to_jade", "enhanced_peach_only")
    if over > 0 and p.alive and (mode == "always" or (mode == "enhanced_peach_only" and enhanced)):
        gain(g, target, "jade", over)


@register
class MingJun(Skill):
    """明君: 觉醒技，当主公进入濒死、场上有两名角色阵亡、第三轮的主公回合开始时，将会翻开身份牌并
    回复2点体力，然后增加一点体力上限，获得主公的主公技（若该角色没有主公技，则改为增加两点体力
    上限）。"""

    name = MINGJUN
    events = ("dying", "death", "turn_start")
    asks_itself = True  # 觉醒技: not optional; hidden until it awakens

    def can(self, g: Game, seat: int, trig: Trigger) -> bool:
        p = g.players[seat]
        if p.marks.get(self.name) or not p.alive or p.role != "lord":
            return False
        if trig.point == "dying":
            fr = ctx_frame(g, trig)
            return isinstance(fr, DyingFrame) and fr.seat == seat
        if trig.point == "death":
            return g.dead >= 2
        return g.current == seat and g.round >= 3

    def run(self, g: Game, seat: int, trig: Trigger) -> None:
        p = g.players[seat]
        p.marks[self.name] = 1
        emit(g, SkillInvoked(seat=seat, skill=self.name))
        hidden = not p.role_revealed
        reveal_role(g, seat)
        recover(g, seat, 2)
        gen = ruleset_of(g).generals().get(p.general)
        lords = [s for s in (gen.skills if gen else ()) if SKILLS[s].lord]
        change_max_hp(g, seat, 1 if lords else 2)
        p.skills += [s for s in lords if s not in p.skills]
        skills_changed(g, seat)
        if hidden:
            gain(g, seat, "jade", 2)
