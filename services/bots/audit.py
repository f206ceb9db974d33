"""Blunder detectors: play seeded games and count, with the true roles, the self-defeating acts a
policy should never make. A measuring instrument for tests and `arena selfplay --audit`: it reads
the whole game (it judges the policies, it does not play), the policies still see only their seat.

Counted per game set (``Audit.counts``):

- ``teammate_kills``: a seat killed by a true teammate (the lord's side, the rebels, a third camp;
  a renegade has no teammate); ``forced_kills``: those of them neither chose — a 决斗 that a
  third seat's 离间 made between the two (the 离间 user's play, not a blunder of theirs; a 杀
  that a 流离 passed on counts as chosen: its user took the risk);
- ``lord_side_kills_own_side``: a seat of the lord's side (the lord, a loyalist) killed by another
  seat of that side that chose to (friendly fire: any damage, a 离间-forced 决斗 left out; also
  counted in ``teammate_kills``);
- ``lord_killed_by_own_side``: a loyalist or renegade chose to kill the lord while a rebel lived;
  ``lord_killed_by_own_side_forced``: such a kill that a third seat's 离间 forced, apart;
- ``lord_dying_peach_held``: the lord died while a seat of its own side (itself, a loyalist) had
  declined, in that last rescue round, a 桃 (or its own 酒) it held;
- ``chain_kills_own_side``: a seat of the lord's side killed by fire or thunder damage that came
  down a chain (铁索连环) its own side caused: the damage's source, or whoever had chained the
  victim, is of the lord's side; ``fire_kills_own_side``: killed by fire or thunder damage a seat
  of the lord's side dealt it directly (itself included);
- ``jiedao_obeyed_vs_friend``: 借刀杀人 obeyed against a seat the obeying bot believed a friend
  (its own ``friend`` score > 0.2); ``jiedao_obeyed_vs_teammate``: against a true teammate;
- ``jiedao_used_vs_friend``: 借刀杀人 used naming as the victim a seat its user believed a friend
  (``friend`` > 0.2); ``jiedao_used_vs_teammate``: a true teammate;
- ``hostile_on_teammate`` / ``hostile_targetings``: targets picked for a hostile card that are true
  teammates, of all such picks; ``hostile_sure_on_teammate`` / ``hostile_sure``: the same among
  the picks the bot was sure of (it put the target's chance of being a teammate under 2%: how
  often such certainty is wrong is the belief's calibration where it matters);
- ``aoe_with_teammate_low``: 南蛮入侵/万箭齐发 used while a true teammate (or, for a loyalist or
  renegade with rebels alive, the lord) was alive at 1 HP;
- ``spear_with_slash``: 丈八蛇矛 chosen while a real 杀 was in hand;
- ``dying_teammate_unsaved``: a 桃 demanded for a dying true teammate, a 桃 in hand, declined;
- ``lightning_played``: 闪电 used.
"""

from __future__ import annotations

from collections import Counter
from typing import Any

from ..rules import api
from ..rules.api import Answer, Decision, Game
from ..rules.api import events as ev
from .cardinfo import AOE, HOSTILE_CARDS, SLASHES, std_skill
from .heuristic import HeuristicPolicy
from .selfplay import Table, play_game, role_classes, rotation
from .threat import Reading

SURE = 0.02  # a target the bot thought a teammate with less than this chance (hostile_sure)
KEYS = (
    "games",
    "teammate_kills",
    "forced_kills",
    "lord_side_kills_own_side",
    "lord_killed_by_own_side",
    "lord_killed_by_own_side_forced",
    "lord_dying_peach_held",
    "chain_kills_own_side",
    "fire_kills_own_side",
    "jiedao_obeyed",
    "jiedao_obeyed_vs_friend",
    "jiedao_obeyed_vs_teammate",
    "jiedao_used",
    "jiedao_used_vs_friend",
    "jiedao_used_vs_teammate",
    "hostile_targetings",
    "hostile_on_teammate",
    "hostile_sure",
    "hostile_sure_on_teammate",
    "aoe_with_teammate_low",
    "spear_with_slash",
    "dying_teammate_unsaved",
    "lightning_played",
)


def _reading(t: Table, seat: int) -> Reading | None:
    """What ``seat``'s policy believes now, where it is the heuristic with a role belief."""
    pol = t.policies[seat]
    if isinstance(pol, HeuristicPolicy) and pol.mem.belief is not None:
        return Reading(pol.mem, t.views[seat], seat)
    return None


class Audit:
    """Counts blunders over the games it watches (see the module docstring)."""

    def __init__(self) -> None:
        self.counts: Counter[str] = Counter({k: 0 for k in KEYS})
        self.examples: dict[str, list[tuple[int, int]]] = {}  # kind -> (game seed, decision id)
        self.forced = False  # the 决斗 being resolved was made by 离间
        self.chainer = -1  # the user of the 铁索连环 being resolved
        self.chained_by: dict[int, int] = {}  # chained seat -> who chained it (-1: unknown)
        self.chain_left: set[int] = set()  # the seats a chain's propagation is still to reach
        # seat -> the last damage it took: source, whether forced, whether elemental, and for a
        # damage that came down a chain, who had chained the seat (else -2)
        self.hit: dict[int, tuple[int, bool, bool, int]] = {}
        self.peach_held: set[int] = set()  # lord's-side seats that declined to save the lord

    def _hit(self, kind: str, g: Game, d: int) -> None:
        self.counts[kind] += 1
        self.examples.setdefault(kind, []).append((g.seed, d))

    def camp(self, g: Game, seat: int, cls: dict[str, str]) -> str:
        """``seat``'s team: lord's side, rebels, a third camp; a renegade is its own team."""
        c = cls.get(g.players[seat].role, "renegade")
        if c in ("lord", "loyalist"):
            return "lord"
        return f"renegade{seat}" if c == "renegade" else c

    def before(self, g: Game, d: Decision, a: Answer, t: Table, cls: dict[str, str]) -> None:
        """Judge answer ``a`` to ``d`` against the true state before it is submitted."""
        if not a.picks:
            if d.kind == "respond":
                self._unsaved(g, d, cls)
            return
        me = g.players[d.seat]
        mine = self.camp(g, d.seat, cls)

        def mate(s: int) -> bool:
            return 0 <= s < len(g.players) and s != d.seat and self.camp(g, s, cls) == mine

        names = [g.cards[c].name for c in me.hand]
        if d.kind == "targets" and d.info.get("card") == "借刀杀人" and d.info.get("second"):
            self._jiedao_victim(g, d, a, t, mate)
        if (
            d.kind == "respond"
            and d.info.get("reason") == "借刀杀人"
            and d.info.get("need") == "杀"
        ):
            tgt = int(d.info.get("target", -1))
            self.counts["jiedao_obeyed"] += 1
            r = _reading(t, d.seat)
            if r is not None and 0 <= tgt < len(r.friend) and r.friend[tgt] > 0.2:
                self._hit("jiedao_obeyed_vs_friend", g, d.id)
            if mate(tgt):
                self._hit("jiedao_obeyed_vs_teammate", g, d.id)
        if any(p == "skill:丈八蛇矛" for p in a.picks) and any(n in SLASHES for n in names):
            self._hit("spear_with_slash", g, d.id)
        if d.kind == "targets" and str(d.info.get("card", "")) in HOSTILE_CARDS:
            reading = _reading(t, d.seat)
            for p in a.picks:
                self.counts["hostile_targetings"] += 1
                tgt = int(p[5:]) if p.startswith("seat:") else -1
                if mate(tgt):
                    self._hit("hostile_on_teammate", g, d.id)
                if (
                    reading is not None
                    and 0 <= tgt < len(reading.mate)
                    and reading.mate[tgt] < SURE
                ):
                    self.counts["hostile_sure"] += 1
                    if mate(tgt):
                        self._hit("hostile_sure_on_teammate", g, d.id)
        if d.kind == "play" and a.picks[0].startswith("card:"):
            name = g.cards[int(a.picks[0][5:])].name
            if name == "闪电":
                self.counts["lightning_played"] += 1
            if name in AOE and self._low_friend(g, d.seat, cls, mate):
                self._hit("aoe_with_teammate_low", g, d.id)

    def _jiedao_victim(self, g: Game, d: Decision, a: Answer, t: Table, mate: Any) -> None:
        """借刀杀人's user names the victim: a believed friend, or a true teammate, is a blunder."""
        reading = _reading(t, d.seat)
        for p in a.picks:
            tgt = int(p[5:]) if p.startswith("seat:") else -1
            self.counts["jiedao_used"] += 1
            if tgt == d.seat:  # naming oneself: the user's own gamble, not a friend's harm
                continue
            if reading is not None and 0 <= tgt < len(reading.friend) and reading.friend[tgt] > 0.2:
                self._hit("jiedao_used_vs_friend", g, d.id)
            if mate(tgt):
                self._hit("jiedao_used_vs_teammate", g, d.id)

    def _low_friend(self, g: Game, seat: int, cls: dict[str, str], mate: Any) -> bool:
        rebels = any(p.alive and cls.get(p.role) == "rebel" for p in g.players if p.seat != seat)
        mine = cls.get(g.players[seat].role, "renegade")
        for p in g.players:
            if not p.alive or p.hp > 1 or p.seat == seat:
                continue
            if mate(p.seat):
                return True
            if p.role == "lord" and rebels and mine in ("loyalist", "renegade"):
                return True
        return False

    def _unsaved(self, g: Game, d: Decision, cls: dict[str, str]) -> None:
        if d.info.get("need") != "桃" or not any(o.startswith("card:") for o in d.options):
            return
        tgt = int(d.info.get("target", -1))
        if not 0 <= tgt < len(g.players):
            return
        if g.players[tgt].role == "lord" and self.camp(g, d.seat, cls) == "lord":
            self.peach_held.add(d.seat)  # the lord itself too: its own 桃 or 酒
        if tgt == d.seat:
            return
        if self.camp(g, tgt, cls) == self.camp(g, d.seat, cls):
            self._hit("dying_teammate_unsaved", g, d.id)

    def after(self, g: Game, events: list[api.Event], cls: dict[str, str], alive: set[int]) -> None:
        """Deaths among ``events`` (``alive``: who lived before them)."""
        for e in events:
            if isinstance(e, ev.CardUsed):
                if e.name == "决斗":
                    self.forced = std_skill(e.skill) == "离间"
                if e.name == "铁索连环":
                    self.chainer = e.user
                elif e.name != "无懈可击":  # a 无懈 window inside the 铁索连环 keeps its user
                    self.chainer = -1
            elif isinstance(e, ev.ChainToggled):
                if e.chained:
                    self.chained_by[e.seat] = self.chainer
                else:
                    self.chained_by.pop(e.seat, None)
            elif isinstance(e, ev.TurnStarted):
                self.chain_left = set()
            elif isinstance(e, ev.Dying) and g.players[e.seat].role == "lord":
                self.peach_held = set()  # a new rescue round
            elif isinstance(e, ev.Damaged):
                self._damaged(e)
            if isinstance(e, ev.Died):
                self._died(g, e, cls, alive)

    def _damaged(self, e: ev.Damaged) -> None:
        """Note who hit the seat and how; follow a chain's propagation (REFERENCE §2.7: the first
        elemental damage to a chained seat passes on to the seats chained then)."""
        forced = e.card == "决斗" and self.forced  # (a 杀 流离 passed on: the shooter's risk)
        elemental = e.nature != "normal"
        chained = -2
        if elemental and e.target in self.chained_by:
            if e.target in self.chain_left:  # propagated
                self.chain_left.discard(e.target)
                chained = self.chained_by[e.target]
            else:  # the first target: the others chained now are reached next
                self.chain_left = set(self.chained_by) - {e.target}
        self.hit[e.target] = (e.source, forced, elemental, chained)

    def _died(self, g: Game, e: ev.Died, cls: dict[str, str], alive: set[int]) -> None:
        victim = g.players[e.seat]
        if victim.role == "lord" and self.peach_held:
            self._hit("lord_dying_peach_held", g, 0)
        self.peach_held = set()
        source, forced, elemental, chainer = self.hit.get(e.seat, (-1, False, False, -2))
        if elemental and self.camp(g, e.seat, cls) == "lord":
            by_side = e.killer >= 0 and self.camp(g, e.killer, cls) == "lord"
            if chainer == -2:  # not down a chain
                if by_side:
                    self._hit("fire_kills_own_side", g, 0)
            elif by_side or (chainer >= 0 and self.camp(g, chainer, cls) == "lord"):
                self._hit("chain_kills_own_side", g, 0)
        if e.killer < 0 or e.killer == e.seat:
            return
        forced = forced and source == e.killer
        if self.camp(g, e.killer, cls) == self.camp(g, e.seat, cls):
            self._hit("teammate_kills", g, 0)
            if forced:
                self._hit("forced_kills", g, 0)
            elif self.camp(g, e.seat, cls) == "lord":
                self._hit("lord_side_kills_own_side", g, 0)
        killer = cls.get(g.players[e.killer].role, "renegade")
        rebels = any(
            s in alive and cls.get(g.players[s].role) == "rebel" for s in range(len(g.players))
        )
        if victim.role == "lord" and killer in ("loyalist", "renegade") and rebels:
            self._hit(
                "lord_killed_by_own_side_forced" if forced else "lord_killed_by_own_side", g, 0
            )


class _Watching:
    """The audit as `play_game`'s watch: the table's role classes, and who lived before each
    answer."""

    def __init__(self, au: Audit, cls: dict[str, str]) -> None:
        self.au, self.cls = au, cls
        self.alive: set[int] = set()

    def before(self, g: Game, d: Decision, a: Answer, t: Table) -> None:
        self.alive = {p.seat for p in g.players if p.alive}
        self.au.before(g, d, a, t, self.cls)

    def after(self, g: Game, events: list[api.Event]) -> None:
        self.au.after(g, events, self.cls, self.alive)


def audit_games(
    ruleset: str,
    players: int,
    games: int,
    seed: int,
    policies: list[str] | None = None,
    options: dict[str, Any] | None = None,
    assign: str = "seat",
) -> Audit:
    """Play ``games`` seeded games (policies cycled over seats, or by camp) and audit them."""
    names = policies or ["heuristic"]
    au = Audit()
    options = api.table_options(ruleset, players, options)
    api.new_game(ruleset, players, seed, options)  # an unknown ruleset: ValueError, one line
    watch = _Watching(au, role_classes(ruleset, players, options))
    camp = assign == "camp"
    for i in range(games):
        au.counts["games"] += 1
        by_seat = names if camp else rotation(names, players, i)
        play_game(
            ruleset, players, seed + i, by_seat, options, camp_game=i if camp else -1, watch=watch
        )
    return au
