"""A policy's reading of the table for one decision: who is a friend, how well a seat defends,
distances and ranges — computed from the seat's view and memory only."""

from __future__ import annotations

from ..rules.api import RULESETS, CardDef, SeatView, View, color_of
from .cardinfo import SLOT_OF, weapon_range
from .memory import Memory

PUNISHERS = frozenset(("刚烈", "反馈", "遗计", "奸雄", "好色", "枭姬"))
DODGE_SKILLS = {"龙胆": 0.2, "优伶": 0.2, "倾国": 0.45}
TEAM = {
    "lord": ("loyalist",),
    "loyalist": ("lord", "loyalist"),
    "rebel": ("rebel",),
    "third": ("third",),
}  # the classes that win with mine (a renegade wins alone)
KILL_CAUTION = 4.0  # a killing blow: minus this times P(the victim is my teammate)
# ... for the lord's side: three seats of eight (rebels four) lose more with each teammate, and a
# lord that kills its loyalist discards every card. jinyu 8, seeds 1-450: with the other issue 42
# fixes the lord's side chose to kill its own seats in 22 games at 4, in 16 at 6 (29 before
# them); head to head against HEAD's heuristic, level (services/bots/README.md, "Blunders")
SIDE_CAUTION = {"lord": 6.0, "loyalist": 6.0}


def relations(my_class: str, rebels: int, loyal: int, renegades_alive: int) -> dict[str, float]:
    """How much I want each role class (:func:`.roles.classes_of`) to prosper, in [-1.5, 1.5]."""
    if my_class in ("lord", "loyalist"):
        rene = -0.6 if rebels else -1.0
        return {
            "lord": 1.5,
            "loyalist": 1.0,
            "rebel": -1.0,
            "renegade": rene,
            "third": -0.3 if rebels else -1.0,
        }
    if my_class == "rebel":
        return {"lord": -1.5, "loyalist": -1.0, "rebel": 1.0, "renegade": -0.3, "third": -0.9}
    if my_class == "third":  # 佞臣: the one ruler alive, everyone else gone, loyalists too
        return {
            "lord": 1.2 if rebels else 0.6,
            "loyalist": -0.4 if rebels else -1.0,
            "rebel": -1.0,
            "renegade": -0.8,
            "third": 1.0,
        }
    # renegade: prop up the lord while the rebels are strong, then turn on everyone, lord last
    if rebels and rebels >= loyal:
        return {"lord": 0.9, "loyalist": 0.2, "rebel": -1.0, "renegade": -0.5, "third": 0.1}
    if rebels:
        return {"lord": 0.4, "loyalist": -0.6, "rebel": -0.9, "renegade": -0.6, "third": -0.6}
    last = loyal <= 1 and renegades_alive <= 1
    return {
        "lord": -1.5 if last else 0.3,
        "loyalist": -1.0,
        "rebel": -1.0,
        "renegade": -1.0,
        "third": -1.0,
    }


_RATES: dict[int, tuple[tuple[CardDef, ...], tuple[float, float, float, float]]] = {}


def card_rates(cards: tuple[CardDef, ...]) -> tuple[float, float, float, float]:
    """The share of 闪, 杀 (any), 桃 and 无懈可击 among a card table's cards (cached per table:
    a Reading is built for every decision, a play-out's included)."""
    hit = _RATES.get(id(cards))
    if hit is not None and hit[0] is cards:
        return hit[1]
    n = max(len(cards), 1)
    rates = (
        sum(1 for c in cards if c.name == "闪") / n,
        sum(1 for c in cards if c.name in ("杀", "火杀", "雷杀")) / n,
        sum(1 for c in cards if c.name == "桃") / n,
        sum(1 for c in cards if c.name == "无懈可击") / n,
    )
    _RATES[id(cards)] = (cards, rates)
    return rates


class Reading:
    """Friendship, defence and reach of every seat as ``me`` sees them now."""

    def __init__(self, mem: Memory, view: View, me: int) -> None:
        self.mem, self.view, self.me = mem, view, me
        self.seats = view.seats
        self.alive = [s.seat for s in view.seats if s.alive]
        marg = mem.belief.marginals() if mem.belief else [{} for _ in view.seats]
        rebels = sum(marg[s].get("rebel", 0.0) for s in self.alive)
        loyal = sum(marg[s].get("lord", 0.0) + marg[s].get("loyalist", 0.0) for s in self.alive)
        renes = sum(marg[s].get("renegade", 0.0) for s in self.alive)
        self.rel = relations(mem.klass or mem.role, round(rebels), round(loyal), round(renes))
        self.marg = marg
        if mem.rivals:  # no roles (1v1): the opponent is simply the enemy
            self.friend = [1.0 if s.seat == me else -1.0 for s in view.seats]
        else:
            self.friend = [
                1.0
                if s.seat == me
                else sum(p * self.rel.get(r, 0.0) for r, p in marg[s.seat].items())
                for s in view.seats
            ]
        mates = TEAM.get(mem.klass, ())
        self.mate = [
            0.0 if s.seat == me else sum(marg[s.seat].get(c, 0.0) for c in mates)
            for s in view.seats
        ]  # P(seat is on my team)
        rs = RULESETS.get(mem.ruleset)
        self.measures = rs.measures_distance if rs is not None else True
        self.q_dodge, self.q_slash, self.q_peach, self.q_wuxie = card_rates(mem.cards)

    # --- cards and equipment ---------------------------------------------------------------
    def card(self, cid: int) -> CardDef:
        """The face of card ``cid``."""
        return self.mem.cards[cid]

    def equip(self, seat: int) -> dict[str, CardDef]:
        """``seat``'s equipment by slot."""
        out = {}
        for cid in self.seats[seat].equip:
            c = self.mem.cards[cid]
            out[SLOT_OF.get(c.subtype, c.subtype)] = c
        return out

    def hand_names(self, seat: int | None = None) -> list[str]:
        """Names of the hand cards I know ``seat`` (default me) holds."""
        return [self.mem.cards[c].name for c in self.seats[self.me if seat is None else seat].hand]

    def role_of(self, seat: int) -> str:
        """The most likely role of ``seat``."""
        m = self.marg[seat]
        return max(m, key=lambda r: m[r]) if m else ""

    def ally_lord(self, t: int) -> bool:
        """Whether ``t`` is likely the lord and my side needs it alive: a loyalist's always, a
        renegade's while the rebels are strong."""
        if self.mem.klass not in ("loyalist", "renegade") or self.marg[t].get("lord", 0.0) < 0.3:
            return False
        return self.mem.klass == "loyalist" or self.rel.get("lord", 0.0) > 0

    def wants_alive(self, t: int) -> bool:
        """A seat I would rather keep alive: a likely friend, or the lord my side needs."""
        return t == self.me or self.friend[t] > 0.1 or self.ally_lord(t)

    def is_enemy(self, seat: int, margin: float = 0.2) -> bool:
        """Whether I would like ``seat`` to suffer."""
        return seat != self.me and self.friend[seat] < -margin

    # --- distance and reach (REFERENCE §1.7) -----------------------------------------------
    def distance(self, a: int, b: int) -> int:
        """Distance a → b from the view."""
        if a == b:
            return 0
        if not self.measures:
            return 1 if self.seats[b].alive else 99
        ring = self.alive
        if a not in ring or b not in ring:
            return 99
        i, j = ring.index(a), ring.index(b)
        d = min((i - j) % len(ring), (j - i) % len(ring))
        if "minus" in self.equip(a):
            d -= 1
        if "plus" in self.equip(b):
            d += 1
        return max(d, 1)

    def attack_range(self, seat: int) -> int:
        """``seat``'s attack range."""
        if not self.measures:
            return 1
        w = self.equip(seat).get("weapon")
        return weapon_range(w.name) if w else 1

    # --- defence ----------------------------------------------------------------------------
    def dodge(self, t: int, slash: CardDef | None = None, nature: str = "normal") -> float:
        """P(``t`` cancels or shrugs off a 杀 from me)."""
        s: SeatView = self.seats[t]
        known = self.hand_names(t)
        q = self.q_dodge + sum(DODGE_SKILLS.get(k, 0.0) for k in self.mem.skills.get(t, ()))
        p = 1.0 if "闪" in known else 1.0 - (1.0 - min(q, 0.9)) ** max(s.hand_count - len(known), 0)
        armor = self.equip(t).get("armor")
        mine = self.equip(self.me).get("weapon")
        if armor and not (mine and mine.name == "青釭剑"):
            color = color_of(slash.suit) if slash else "none"
            if armor.name == "八卦阵":
                p += (1 - p) * 0.5
            elif (armor.name, color) == ("仁王盾", "black") or (armor.name, nature) == (
                "藤甲",
                "normal",
            ):
                p = 1.0
        return min(p, 1.0)

    def harm_value(self, t: int, amount: int = 1) -> float:
        """How much I gain when ``t`` loses ``amount`` HP (negative for friends)."""
        s = self.seats[t]
        w = 1.0 + (1.2 if s.hp <= amount else 0.0) + 0.15 * max(s.max_hp - s.hp, 0)
        if any(k in PUNISHERS for k in self.mem.skills.get(t, ())):
            w *= 0.75
        v = -self.friend[t] * w
        if s.hp <= amount:  # a kill cannot be taken back: only when I am sure it is no teammate
            caution = SIDE_CAUTION.get(self.mem.klass, KILL_CAUTION)
            v -= caution * self.mate[t] + (2.0 if self.ally_lord(t) else 0.0)
        return v

    def expected(self, t: int, need: str) -> float:
        """P(``t`` holds at least one ``need`` card), from its hand count."""
        s = self.seats[t]
        q = {
            "闪": self.q_dodge,
            "杀": self.q_slash,
            "桃": self.q_peach,
            "无懈可击": self.q_wuxie,
        }.get(need, 0.1)
        known = self.hand_names(t)
        if need in known:
            return 1.0
        return 1.0 - (1.0 - q) ** max(s.hand_count - len(known), 0)
