"""The heuristic's reactive choices: responses, confirmations, named choices, picking another seat's
card, discards, skill costs and the draft."""

from __future__ import annotations

from ..rules.api import RULESETS, SKILLS, Decision
from .cardinfo import (
    AOE,
    ARMOR_VALUE,
    BAD_JUDGE,
    HARMFUL_TRICKS,
    SLASHES,
    equip_value,
    keep_value,
    std_skill,
)
from .play import CHAIN_KILLS, aoe_spares, chain_value, hit_amount
from .threat import Reading

SKILL_RANK = {
    "制衡": 3.0,
    "奸雄": 2.0,
    "反馈": 2.0,
    "鬼才": 2.0,
    "刚烈": 2.0,
    "裸衣": 2.0,
    "天妒": 1.0,
    "遗计": 3.0,
    "倾国": 2.0,
    "洛神": 2.5,
    "奇袭": 2.5,
    "离间": 3.0,
    "闭月": 1.5,
    "狂骨": 2.0,
    "英姿": 2.5,
    "反间": 2.0,
    "国色": 2.5,
    "流离": 2.0,
    "谦逊": 2.0,
    "连营": 2.0,
    "结姻": 2.5,
    "枭姬": 2.5,
    "烈弓": 2.5,
    "无双": 3.0,
    "铁骑": 2.5,
    "龙胆": 2.5,
    "青囊": 3.0,
    "急救": 2.5,
}


def ranked_hand(r: Reading, cards: list[int]) -> list[int]:
    """``cards`` cheapest first; a second 闪/杀 is worth less than the first."""
    by_value = sorted(cards, key=lambda c: -keep_value(r.card(c)))
    seen: dict[str, int] = {}
    value: dict[int, float] = {}
    for c in by_value:
        n = r.card(c).name
        value[c] = keep_value(r.card(c), seen.get(n, 0))
        seen[n] = seen.get(n, 0) + 1
    return sorted(cards, key=lambda c: (value[c], c))


def respond(r: Reading, d: Decision) -> list[str]:
    """Give the demanded card, or not."""
    need, reason = d.info.get("need"), str(d.info.get("reason", ""))
    src, tgt = int(d.info.get("source", -1)), int(d.info.get("target", -1))
    skills = [o for o in d.options if o.startswith("skill:")]
    free = [o for o in skills if not _costs_cards(o[6:])]
    costly = [o for o in skills if _costs_cards(o[6:])]
    cards = ranked_hand(r, [int(o[5:]) for o in d.options if o.startswith("card:")])
    # a free skill (八卦阵's judgement, 护驾) first, then a real card, then a conversion that
    # spends cards (丈八蛇矛 spends two for one 杀)
    first = free + [f"card:{c}" for c in cards] + costly
    if need == "桃":
        return first[:1] if tgt == r.me or r.wants_alive(tgt) else []
    if need == "无懈可击":
        return first[:1] if _nullify(r, reason, tgt) else []
    if need == "闪":
        if reason in ("护驾", "护主"):
            return first[:1] if r.friend[src] > 0.3 else []
        return first[:1]
    if need == "杀":
        if reason == "决斗" and r.friend[src] > 0.3 and r.seats[r.me].hp > 2:
            return []
        if reason == "借刀杀人":  # refusing costs my weapon; obeying may kill a friend
            return first[:1] if r.harm_value(tgt) > 0.1 and not r.ally_lord(tgt) else []
        if reason == "青龙偃月刀":
            return first[:1] if r.harm_value(tgt) > 0.2 else []
        return first[:1]
    return first[:1]


def _costs_cards(skill: str) -> bool:
    """Whether answering with ``skill`` spends my cards (a conversion, 丈八蛇矛)."""
    return skill == "丈八蛇矛" or bool(getattr(SKILLS.get(skill), "converts", ""))


def _nullify(r: Reading, reason: str, target: int) -> bool:
    """Whether to play 无懈可击 in the current window (parity says what it would undo)."""
    user = r.mem.trick[0] if r.mem.trick[1] == reason else -1
    harmful = reason in HARMFUL_TRICKS and reason != "铁索连环"
    if reason in ("五谷丰登", "桃园结义"):
        return False
    s = r.seats[target] if 0 <= target < len(r.seats) else None
    if s is None:
        return False
    if r.mem.wuxie % 2 == 0:  # the trick is about to take effect on the target
        if harmful:
            if reason in AOE:
                return r.wants_alive(target) and (s.hp <= 1 or target == r.me and s.hp <= 2)
            if reason == "闪电":
                return target == r.me
            return r.friend[target] > 0.5
        return reason == "无中生有" and r.friend[target] < -0.6
    # the trick stands cancelled: restore it if it hurts an enemy that a friend aimed at
    if harmful and reason not in AOE:
        return r.friend[target] < -0.5 and (user == r.me or (user >= 0 and r.friend[user] > 0.5))
    return False


def confirm(r: Reading, d: Decision) -> list[str]:
    """Optional skills: yes, unless the skill would help an enemy or cost too much."""
    name = std_skill(str(d.info.get("skill", "")))
    victims = r.mem.last_slash[1]
    victim = victims[0] if victims else -1
    yes = ["yes"]
    if name == "寒冰剑":
        return (
            yes
            if victim >= 0
            and (r.friend[victim] > 0 or r.seats[victim].hp > 2 and len(r.equip(victim)) >= 2)
            else []
        )
    if name == "麒麟弓":
        return yes if victim >= 0 and r.friend[victim] < 0 else []
    if name == "朱雀羽扇":  # a fire 杀 passes down the victim's chain: never to kill my side
        return yes if victim < 0 or chain_value(r, victim) > CHAIN_KILLS else []
    if name == "裸衣":
        n = r.hand_names()
        return yes if sum(1 for x in n if x in SLASHES or x == "决斗") >= 2 else []
    if name in ("护驾", "激将"):
        return yes
    if name == "洞察":  # 1 rage to learn friend/enemy: only about a seat I am unsure of
        t = int(d.info.get("target", -1))
        b = r.mem.belief
        return yes if 0 <= t < len(r.seats) and b is not None and not b.certain(t) else []
    if name == "策立" and d.info.get("about") == "pantu":  # become the 叛徒?
        return yes if _side_lost(r) else []
    if name == "暴乱":  # the damaged seat loses 1 HP more
        t = r.mem.last_damage[1]
        return yes if 0 <= t < len(r.seats) and r.harm_value(t) > 0 else []
    return yes


def _side_lost(r: Reading) -> bool:
    """Whether my side looks beaten: no seat I believe a friend is alive but me, or I am about to
    fall anyway (then a full heal and five cards as the 叛徒 are worth more)."""
    friends = [t for t in r.alive if t != r.me and r.friend[t] > 0.3]
    return not friends or r.seats[r.me].hp <= 1


def enhance(r: Reading, d: Decision) -> list[str]:
    """谋攻 强化 (``info.card``, the affordable options): spend rage where it changes the most."""
    card = str(d.info.get("card", ""))
    opts = set(d.options)
    if "dodge" in opts:
        return ["dodge"]
    if card in SLASHES:
        user, targets = r.mem.last_slash
        dealt = 1 + r.mem.slash_drunk  # (its 酒 was drunk before the target was chosen)
        foes = [t for t in targets if r.harm_value(t, dealt) > 0.2] if user == r.me else []
        if not foes:
            return [] if d.declinable else d.options[:1]
        # +1 damage kills a seat at 2 HP: only where that kill is one I want (issue 42)
        kills = all(r.harm_value(t, dealt + 1) > 0.2 for t in targets)
        low = any(r.seats[t].hp <= 2 for t in foes)
        for o in ("slash+damage", "damage", "slash") if low else ("damage", "slash"):
            if o in opts and (kills or "damage" not in o):
                return [o]
    elif card in ("决斗", "火攻") or card in AOE:
        # an enhanced card deals 2 (火攻 on 藤甲 3): never a kill I do not want
        aoe = card in AOE
        hit = [t for t in (r.alive if aoe else r.mem.trick[2]) if 0 <= t < len(r.seats)]
        amount = {t: 1 + hit_amount(r, t, "fire" if card == "火攻" else "normal") for t in hit}
        if aoe:
            hit = [t for t in hit if t != r.me]
            spares = aoe_spares(r, 2)
        else:
            spares = all(r.harm_value(t, amount[t]) > 0.2 for t in hit)
        if "damage" in opts and spares and sum(r.harm_value(t, amount[t]) for t in hit) > 0.5:
            return ["damage"]
    elif card == "桃" and "peach" in opts:
        return ["peach"]
    elif card == "酒" and "wine" in opts:
        slashes = sum(1 for n in r.hand_names() if n in SLASHES)
        if slashes >= 1 and any(r.is_enemy(t, 0.4) for t in r.alive):
            return ["wine"]
    # "delayed" inverts the judgement: a 乐不思蜀/兵粮寸断 would mostly miss, a 闪电 strike its user
    return [] if d.declinable else d.options[:1]


def choose(r: Reading, d: Decision) -> list[str]:
    """A named choice (``info.about``)."""
    about = std_skill(str(d.info.get("about", "")))
    opts = d.options
    if about == "强化":
        return enhance(r, d)
    if about == "势颓":  # the ruler: recover 1 when hurt, else draw 2
        me = r.seats[r.me]
        return ["recover" if "recover" in opts and me.hp <= min(2, me.max_hp - 1) else "draw"]
    if about == "策立":  # everyone else loses 1 HP, or an extra turn
        hurt = sum(r.harm_value(t) for t in r.alive if t != r.me)
        return ["lose_hp" if "lose_hp" in opts and hurt > 1.0 else opts[0]]
    cards = [int(o[5:]) for o in opts if o.startswith("card:")]
    if about == "五谷丰登" and cards:
        return [f"card:{ranked_hand(r, cards)[-1]}"]
    if about == "刚烈":
        cheap = ranked_hand(r, list(r.seats[r.me].hand))[:2]
        cost = sum(keep_value(r.card(c)) for c in cheap)
        return [
            "discard" if "discard" in opts and (cost < 11 or r.seats[r.me].hp <= 1) else "damage"
        ]
    if about == "雌雄双股剑":
        cheap = ranked_hand(r, list(r.seats[r.me].hand))
        low = cheap and keep_value(r.card(cheap[0])) < 4
        src = r.mem.last_slash[0]
        return ["discard" if "discard" in opts and low and r.friend[src] < 0 else "draw"]
    if about == "麒麟弓" and cards:
        return [f"card:{max(cards, key=lambda c: (equip_value(r.card(c)), c))}"]
    if cards:
        return [f"card:{ranked_hand(r, cards)[0 if about == '火攻_show' else -1]}"]
    seats = [int(o[5:]) for o in opts if o.startswith("seat:")]
    if seats:
        return [f"seat:{max(seats, key=lambda t: (r.friend[t], -t))}"]
    if any(o.startswith("suit:") for o in opts):
        return [opts[r.mem.turns % len(opts)]]
    for w in ("draw", "slash", "discard", "give", "damage"):
        if w in opts:
            return [w]
    return opts[: d.min]


def pick_card(r: Reading, d: Decision) -> list[str]:
    """Pick one of another seat's cards: an enemy's best gear or hand, a friend's bad judgement."""
    owner = int(d.info.get("owner", -1))
    friendly = 0 <= owner < len(r.seats) and r.friend[owner] > 0.2

    def worth(o: str) -> float:
        if o == "hand":
            return -1.0 if friendly else 4.6
        cid = int(o[5:])
        c = r.card(cid)
        if cid in r.seats[owner].judge:
            bad = r.mem.name(cid) in BAD_JUDGE
            return (8.0 if bad else 0.5) if friendly else (-2.0 if bad else 1.0)
        v = ARMOR_VALUE.get(c.name, equip_value(c)) if c.type == "equip" else 3.0
        return -v if friendly else v

    return [max(d.options, key=lambda o: (worth(o), o))]


def discard(r: Reading, d: Decision) -> list[str]:
    """Discard the least valuable cards (火攻's optional discard only to hurt an enemy)."""
    cards = ranked_hand(r, [int(o[5:]) for o in d.options])
    if d.declinable and d.min <= 1:
        target = r.mem.trick[2][0] if r.mem.trick[2] else -1
        ok = (
            target >= 0
            and r.harm_value(target, hit_amount(r, target, "fire")) > 0.2
            and keep_value(r.card(cards[0])) < 7
        )
        return [f"card:{cards[0]}"] if ok else []
    return [f"card:{c}" for c in cards[: d.min]]


def pick_cards(r: Reading, d: Decision) -> list[str]:
    """Own cards for a skill or conversion: the cheapest ones."""
    skill = std_skill(str(d.info.get("skill", "")))
    cards = ranked_hand(r, [int(o[5:]) for o in d.options])
    if skill == "制衡":
        low = [c for c in cards if keep_value(r.card(c)) < 4.5][: d.max]
        pick = low if len(low) >= d.min else cards[: d.min]
        return [f"card:{c}" for c in pick]
    if skill == "鬼才" and d.declinable:
        return []
    if skill in ("流离", "贯石斧") and d.declinable:
        cost = sum(keep_value(r.card(c)) for c in cards[: d.min])
        if cost > 6.0 * d.min or skill == "贯石斧" and r.harm_value(_slashed(r)) < 0.3:
            return []
    return [f"card:{c}" for c in cards[: d.min]]


def _slashed(r: Reading) -> int:
    t = r.mem.last_slash[1]
    return t[0] if t else r.me


def draft(r: Reading, d: Decision) -> list[str]:
    """The general with the most HP and the strongest skills."""
    gens = RULESETS[r.mem.ruleset].generals() if r.mem.ruleset in RULESETS else {}

    def score(o: str) -> float:
        g = gens.get(o[8:])
        if g is None:
            return 0.0
        return g.hp * 2.0 + sum(SKILL_RANK.get(std_skill(s), 1.0) for s in g.skills)

    return [max(d.options, key=lambda o: (score(o), o))]
