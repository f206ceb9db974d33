"""What a seat remembers from its redacted event stream beyond the view: the public card table,
the role belief, the trick being resolved and the 无懈可击 chain, and its own cancelled moves."""

from __future__ import annotations

from ..rules.api import RULESETS, CardDef
from ..rules.api import events as ev
from .cardinfo import (
    BAD_JUDGE,
    HARMFUL_TRICKS,
    HELPFUL_TRICKS,
    HOSTILE_CARDS,
    card_table,
    std_skill,
)
from .roles import Belief, classes_of, make_belief, table_key

HEALS = frozenset(("青囊", "葬花", "结姻"))
STRIPS = frozenset(("过河拆桥", "顺手牵羊"))  # take one of the target's cards, judge area included
STRIP_MOVES = ("dismantle", "take")  # the reasons their CardsMoved carries
TRICKS = HARMFUL_TRICKS | HELPFUL_TRICKS


class Memory:
    """Folded from one seat's redacted events (the same stream its view is folded from)."""

    def __init__(self, seat: int, true_roles: list[str] | None = None) -> None:
        self.seat = seat
        self.cards: tuple[CardDef, ...] = ()
        self.ruleset = ""
        self.role = ""
        self.klass = ""  # my role's class (roles.classes_of)
        self.cls: dict[str, str] = {}
        self.rivals = False  # a game without roles (seed 003's 1v1): every other seat is an enemy
        self.seen_roles: dict[int, str] = {}
        self.rebel_cards = 0  # rebel-class role cards dealt
        self.dead_rebels = 0  # seats that died revealed as one
        self.belief: Belief | None = None  # reweighted by others' acts only (see _act)
        self.true_roles = true_roles  # the oracle's privilege; None for honest policies
        self.trick: tuple[int, str, list[int]] = (-1, "", [])  # user, name, targets
        self.wuxie = 0  # 无懈可击 used in the current window
        self.last_slash: tuple[int, list[int]] = (-1, [])
        # a 酒 I drank this turn: my next 杀 deals +1 (``drunk``); whether my last 杀 took it
        # (``slash_drunk``: its damage when 谋攻's 强化 is chosen after the target)
        self.drunk = False
        self.slash_drunk = False
        self.last_damage: tuple[int, int] = (-1, -1)  # source, target
        self.judge_as: dict[int, str] = {}  # judge-area card -> the delayed trick it is
        self.judged: dict[int, set[int]] = {}  # seat -> the cards in its judge area (public)
        self.strip: tuple[int, int] = (-1, -1)  # a 过河拆桥/顺手牵羊 read when its card moves
        self.cancelled: set[str] = set()  # play options that came to nothing this phase
        self.acted: dict[tuple[int, int, bool], float] = {}  # this turn's evidence (_evidence)
        self.last_play = ""
        self.turns = 0
        self.round = 0
        # 谋攻's hidden lord flips (明君) when it enters dying and when its turn starts in round
        # 3: a seat that passed either point and did not flip is no lord (_mingjun)
        self.lord_hidden = False
        self.unflipped: set[int] = set()
        self.skills: dict[int, tuple[str, ...]] = {}
        self._n = 0
        self._options: dict[str, object] = {}

    def observe(self, e: ev.Event) -> None:
        """Fold one redacted event."""
        if isinstance(e, ev.CardUsed):
            self._used(e)
        elif isinstance(e, ev.CardsMoved):
            self._moved(e)
            if e.reason == "use":
                return
            self.wuxie = 0
        elif isinstance(e, ev.Damaged):
            self.wuxie = 0
            self.last_damage = (e.source, e.target)
            if self.belief and e.card == "" and e.source >= 0:
                self._evidence(e.source, e.target, True, 0.5)
        elif isinstance(e, ev.SkillInvoked):
            self.wuxie = 0
            if self.belief and e.skill in HEALS:
                for t in e.targets:
                    self._evidence(e.seat, t, False)
            elif self.belief and e.skill in ("反间", "离间") and e.targets:
                self._evidence(e.seat, e.targets[-1], True, 0.7)
        elif isinstance(e, ev.TargetChanged):
            if self.belief:
                self._evidence(e.old, e.new, True, 0.7)
        elif isinstance(e, ev.Dying):
            if self.lord_hidden:
                self.unflipped.add(e.seat)
        elif isinstance(e, ev.Died):
            self.dead_rebels += self.cls.get(e.role, "") == "rebel"
            if self.belief:
                self.belief.reveal(e.seat, e.role)
        elif isinstance(e, ev.TurnStarted):
            self.drunk = False
            self.turns += 1
            self.acted.clear()
            self.round = e.round
            self.cancelled.clear()
            if self.lord_hidden and e.round >= 3:
                self.unflipped.add(e.seat)
        elif isinstance(e, ev.PhaseStarted):
            self.cancelled.clear()
            if self.unflipped:
                self._mingjun()
        elif isinstance(e, ev.RoleAssigned):
            self._role(e)
        elif isinstance(e, ev.RoleLearned):
            if self.belief and e.seat >= 0 and e.role:
                self.belief.reveal(e.seat, e.role)
        elif isinstance(e, ev.RebelDisguised):
            if self.belief and e.rebel >= 0:
                self.belief.reveal(e.rebel, "rebel")
        elif isinstance(e, ev.InsightRevealed):
            self._insight(e)
        elif isinstance(e, ev.GeneralChosen):
            if e.general:
                gen = RULESETS[self.ruleset].generals().get(e.general)
                self.skills[e.seat] = gen.skills if gen else ()
        elif isinstance(e, ev.GameStarted):
            self.ruleset, self._n = e.ruleset, e.players
            self._options = dict(e.options)
            self.cards = card_table(e.ruleset, e.options)
            rs = RULESETS[e.ruleset]
            try:
                table = rs.roles(e.players, self._options)
            except Exception:
                table = []
            self.rivals = not any(table)
            self.cls = classes_of(set(table) | set(rs.camps), rs.camps)
        else:
            self.wuxie = (
                0 if isinstance(e, ev.Nullified | ev.Dodged | ev.CardPlayed) else self.wuxie
            )

    def _mingjun(self) -> None:
        """明君 is a 觉醒技 that fires at once (REFERENCE §5.4.2): by the next phase's start, a
        seat that entered dying, or began a turn in round 3 or later, while the lord was
        hidden and no lord was revealed since, is not the lord."""
        assert self.belief is not None  # seats are noted only while lord_hidden, set with it
        others = {c for c in self.cls.values() if c != "lord"}
        for seat in self.unflipped:
            self.belief.restrict(seat, others)
        self.unflipped.clear()

    def _role(self, e: ev.RoleAssigned) -> None:
        if e.seat == self.seat and e.role:
            self.role = e.role
            self.klass = self.cls.get(e.role, "renegade")
        if self.belief is not None:  # a reveal in play (or a role gained: 叛徒)
            if e.role:
                self.belief.reveal(e.seat, e.role)
                if self.cls.get(e.role) == "lord":
                    self.lord_hidden = False
                    self.unflipped.clear()
            return
        if e.role:
            self.seen_roles[e.seat] = e.role
        if e.seat != self._n - 1:
            return
        # every role is dealt: start the belief from the role table and what is known (the
        # public lord, my own role; a hidden lord stays among the hidden cards)
        cards = RULESETS[self.ruleset].roles(self._n, self._options)
        self.rebel_cards = sum(self.cls.get(r, "") == "rebel" for r in cards)
        known = dict(self.seen_roles)
        if self.true_roles is not None:  # the roles it is told ("" where it is told none)
            known.update((s, r) for s, r in enumerate(self.true_roles) if r)
        self.belief = make_belief(
            cards, known, self.cls, table_key(self.ruleset, self._n, self._options)
        )
        self.lord_hidden = bool(self._options.get("mougong")) and not any(
            self.cls.get(r) == "lord" for r in known.values()
        )  # 谋攻 with the lord's card face down (A-002-18): 明君 will name it (_mingjun)

    def _insight(self, e: ev.InsightRevealed) -> None:
        """洞察: an exact role (a renegade's), or friend/enemy as seen from my camp."""
        if not self.belief or e.target < 0 or not e.result:
            return
        if e.result not in ("friend", "enemy"):
            self.belief.reveal(e.target, e.result)
            return
        loyal = self.klass in ("lord", "loyalist")
        if e.result == "friend":
            allowed = {"lord", "loyalist", "renegade"} if loyal else {"rebel", "renegade"}
        else:  # the disguised rebel reads enemy to everyone
            allowed = {"rebel"} if loyal else {"lord", "loyalist", "rebel"}
        self.belief.restrict(e.target, allowed)

    def _used(self, e: ev.CardUsed) -> None:
        if e.name == "无懈可击":
            self.wuxie += 1
            if self.belief and self.wuxie % 2 == 1 and e.targets:
                user, name, _ = self.trick
                if name in HARMFUL_TRICKS and user != e.targets[0]:
                    self._evidence(e.user, e.targets[0], False, 0.6)
            return
        self.wuxie = 0
        self.strip = (-1, -1)  # (a strip whose card never moved was nullified: no act read)
        if e.name in ("杀", "火杀", "雷杀"):
            self.last_slash = (e.user, list(e.targets))
            if e.user == self.seat:
                self.slash_drunk, self.drunk = self.drunk, False
        elif e.name == "酒" and e.user == self.seat and e.targets == [self.seat]:
            self.drunk = True  # (a 酒 that saves me from dying sets it too: only more careful)
        if e.name in TRICKS:
            self.trick = (e.user, e.name, list(e.targets))
        if e.name in ("乐不思蜀", "兵粮寸断", "闪电"):
            for c in e.cards:
                self.judge_as[c] = e.name
        if not self.belief:
            return
        if e.name in HOSTILE_CARDS and std_skill(e.skill) == "离间":
            pass  # a 决斗 a third seat's 离间 made: neither duellist chose the other
        elif e.name in HOSTILE_CARDS:
            for t in e.targets:
                if e.name in STRIPS and self._bad_judged(t):
                    self.strip = (e.user, t)  # it may take the 乐不思蜀: read what it takes
                    continue
                self._evidence(e.user, t, True)
        elif e.name == "借刀杀人" and e.targets:
            self._evidence(e.user, e.targets[0], True, 0.4)
        elif e.name == "桃":
            for t in e.targets:
                self._evidence(e.user, t, False, 1.5)

    def _bad_judged(self, seat: int) -> bool:
        return any(self.name(c) in BAD_JUDGE for c in self.judged.get(seat, ()))

    def _moved(self, e: ev.CardsMoved) -> None:
        """Keep the judge areas; read a pending 过河拆桥/顺手牵羊 by the card it took: a 乐不思蜀 or
        兵粮寸断 out of the target's judge area helps the target (a loyalist's 过河拆桥 that freed
        the lord of its 乐不思蜀 read as an attack on the lord: the rebels saved the loyalist as
        one of theirs, and the lord killed it at 99% a rebel; issue 42), any other card hurts."""
        user, target = self.strip
        if target >= 0 and e.src_seat == target and e.reason in STRIP_MOVES:
            self.strip = (-1, -1)
            if self.belief:
                freed = e.src == "judge" and any(self.name(c) in BAD_JUDGE for c in e.cards)
                self._evidence(user, target, not freed, 1.0 if not freed else 0.6)
        if e.src == "judge":
            self.judged.get(e.src_seat, set()).difference_update(e.cards)
        if e.dst == "judge" and e.dst_seat >= 0:
            self.judged.setdefault(e.dst_seat, set()).update(e.cards)

    def _evidence(self, actor: int, target: int, hostile: bool, strength: float = 1.0) -> None:
        """An act of ``actor`` towards ``target``, counted once per turn: the acts of one seat on
        one target in one turn (three 杀 through 诸葛连弩, a 杀 and the damage it deals) are one
        choice of target, so they weigh as the strongest of them, not as independent evidence
        (counted apart, a blind first turn's volley made its target certain the attacker was an
        enemy, and two loyalists fought to the death from round 1)."""
        key = (actor, target, hostile)
        before = self.acted.get(key, 0.0)
        if strength > before:
            self.acted[key] = strength
            self._act(actor, target, hostile, strength - before)

    def _act(self, actor: int, target: int, hostile: bool, strength: float = 1.0) -> None:
        """Evidence from an act of ``actor`` towards ``target`` — never from my own acts: a blind
        first attack of mine says nothing about my target, and counting it would make the guess
        that chose the target its own proof."""
        if self.belief is not None and actor != self.seat:
            rebels_left = self.dead_rebels < self.rebel_cards
            self.belief.act(actor, target, hostile, strength, self.round, rebels_left)

    def card(self, cid: int) -> CardDef:
        """The printed face of card ``cid``."""
        return self.cards[cid]

    def name(self, cid: int) -> str:
        """The name of card ``cid`` (a judge-area card by the trick it stands for)."""
        return self.judge_as.get(cid) or self.cards[cid].name
