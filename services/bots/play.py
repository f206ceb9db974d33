"""The heuristic's active choices: which play-phase option to take and whom to target."""

from __future__ import annotations

from ..rules.api import SKILLS, CardDef, Decision, nature_of
from .cardinfo import BAD_JUDGE, SLASHES, SLOT_OF, equip_value, keep_value, std_skill
from .threat import Reading

HEAL_SKILLS = ("青囊",)


def slash_value(r: Reading, t: int, c: CardDef | None = None, drunk: bool = False) -> float:
    """What a 杀 on ``t`` is worth to me (nothing if ``t`` could pass it on to kill a friend, or
    a 火杀/雷杀's chain could); the harm of the damage it deals (:func:`hit_amount`; ``drunk``:
    a 酒 I am about to drink), so a kill is weighed as one."""
    if passed_on_kills(r, t):
        return -9.0
    nature = nature_of(c.name) if c else "normal"
    hit = 1.0 - r.dodge(t, c, nature)
    amount = hit_amount(r, t, nature, slash=True) + drunk
    if nature == "normal":
        return r.harm_value(t, amount) * hit
    chain = chain_value(r, t, amount)
    return -9.0 if chain <= CHAIN_KILLS else (r.harm_value(t, amount) + chain) * hit


def hit_amount(r: Reading, t: int, nature: str = "normal", slash: bool = False) -> int:
    """The damage my card deals ``t`` as far as I can see: 1, +1 for a 杀 after my 酒 this
    turn, +1 for a 杀 through my 古锭刀 at an empty hand, +1 for fire on 藤甲. The lord's side
    killed its own seats with a 火杀 or 火攻 it weighed as 1 damage at 2 HP (issue 42: the kill
    caution of :meth:`.Reading.harm_value` looked at 1)."""
    n = 1
    if slash:
        n += r.mem.drunk
        mine = r.equip(r.me).get("weapon")
        n += bool(mine and mine.name == "古锭刀" and not r.seats[t].hand_count)
    armor = r.equip(t).get("armor")
    return n + (nature == "fire" and armor is not None and armor.name == "藤甲")


CHAIN_KILLS = -9.0  # chain_value's answer when the chain could kill a seat I want alive


def chain_value(r: Reading, t: int, amount: int = 1) -> float:
    """What fire or thunder damage to ``t`` passes on down a chain (铁索连环, REFERENCE §2.7:
    every other seat chained then takes the same): the harm to those seats, or
    :data:`CHAIN_KILLS` when it could kill one I want alive (myself, a friend, the lord my side
    needs). Nothing unless ``t`` is chained."""
    if not r.seats[t].chained:
        return 0.0
    v = 0.0
    for u in r.alive:
        if u == t or not r.seats[u].chained:
            continue
        if r.seats[u].hp <= amount and r.wants_alive(u):
            return CHAIN_KILLS
        v += r.harm_value(u, amount)
    return v


PASSED_ON_HP = 2  # a 杀 may deal 2 (酒, 谋攻's 强化 chosen after the target)


def passed_on_kills(r: Reading, t: int) -> bool:
    """流离: ``t`` may discard a card to pass my 杀 to another seat in its attack range (not me).
    Never give it the chance while that could kill a seat I want alive, or one that may be the
    hidden lord my side needs (a loyalist's 杀 at a rebel's 大乔 once killed the lord so; under
    谋攻 a renegade's 强化 杀 of 2 killed the hidden lord at 2 HP so)."""
    if not any(std_skill(k) == "流离" for k in r.mem.skills.get(t, ())):
        return False
    if not r.seats[t].hand_count and not r.seats[t].equip:
        return False
    reach = r.attack_range(t)
    return any(
        u not in (t, r.me)
        and r.seats[u].hp <= PASSED_ON_HP
        and _keep_alive(r, u)
        and r.distance(t, u) <= reach
        for u in r.alive
    )


def _keep_alive(r: Reading, u: int) -> bool:
    """A seat I want alive, or (a loyalist or renegade) one that may well be the lord."""
    lordish = r.mem.klass in ("loyalist", "renegade") and r.marg[u].get("lord", 0.0) >= 0.1
    return r.wants_alive(u) or lordish


def fire_value(r: Reading, t: int) -> float:
    """What 火攻's fire damage to ``t`` (2 on 藤甲) is worth to me, the chain it would set off
    included."""
    amount = hit_amount(r, t, "fire")
    chain = chain_value(r, t, amount)
    return CHAIN_KILLS if chain <= CHAIN_KILLS else r.harm_value(t, amount) + chain


def jiedao_victims(r: Reading, wielder: int) -> list[int]:
    """The seats ``wielder`` could be told to 杀 with 借刀杀人 that I want hurt: in its attack
    range, not itself, my enemy (never a seat I believe a friend, nor myself)."""
    reach = r.attack_range(wielder)
    return [
        v
        for v in r.alive
        if v not in (wielder, r.me)
        and r.distance(wielder, v) <= reach
        and r.friend[v] <= 0.2
        and r.harm_value(v) > 0.1
    ]


def jiedao_value(r: Reading, w: int) -> float:
    """What making ``w`` (an enemy with a weapon) 杀 an enemy, or give up its weapon, is worth:
    0 when ``w`` is no enemy or has no enemy of mine in reach (it would 杀 a friend or me)."""
    if "weapon" not in r.equip(w) or not r.is_enemy(w, 0.4) or not jiedao_victims(r, w):
        return 0.0
    return -r.friend[w]


def duel_value(r: Reading, t: int) -> float:
    """What a 决斗 against ``t`` is worth (it may backfire on me)."""
    mine = sum(1 for n in r.hand_names() if n in SLASHES)
    theirs = r.expected(t, "杀") * (1 + 0.3 * (r.seats[t].hand_count > 3))
    p_win = 0.85 if mine >= 2 else (0.6 - 0.4 * theirs if mine == 1 else 1.0 - theirs)
    lose = 0.6 if r.seats[r.me].hp > 1 else 2.5  # at 1 HP a lost 决斗 is my death
    return r.harm_value(t) * p_win - (1 - p_win) * lose


def strip_value(r: Reading, t: int, reach: int = 99) -> float:
    """What taking or discarding one of ``t``'s cards is worth (过河拆桥/顺手牵羊)."""
    s = r.seats[t]
    if t == r.me or not s.alive or r.distance(r.me, t) > reach:
        return -9.0
    if r.friend[t] > 0.2:
        bad = any(r.mem.name(c) in BAD_JUDGE for c in s.judge)
        return r.friend[t] * 1.2 if bad else -9.0
    gear = max((equip_value(c) for c in r.equip(t).values()), default=0.0)
    if not gear and not s.hand_count:
        return -9.0
    return -r.friend[t] * (0.5 + 0.08 * gear + 0.05 * min(s.hand_count, 4))


def aoe_value(r: Reading, need: str) -> float:
    """南蛮入侵 (need 杀) / 万箭齐发 (need 闪) over everyone else; nothing while it could kill a
    seat I do not want dead (:func:`aoe_spares`)."""
    if not aoe_spares(r):
        return 0.0
    return sum(r.harm_value(t) * (1 - r.expected(t, need)) for t in r.alive if t != r.me)


def aoe_spares(r: Reading, amount: int = 1) -> bool:
    """Whether damage of ``amount`` to every other seat kills none I do not want dead: a likely
    friend, the lord my side needs, or a seat whose death weighs as a loss
    (:meth:`.Reading.harm_value`: the chance it is my teammate). The lord's 南蛮入侵 killed its
    loyalist at 1 HP whom it held 41% a loyalist (friend score 0.03: below the likely-friend
    line, so the old guard let it through; issue 42)."""
    return not any(
        r.seats[t].hp <= amount and (r.wants_alive(t) or r.harm_value(t, amount) <= 0)
        for t in r.alive
        if t != r.me
    )


def lightning_value(r: Reading) -> float:
    """闪电 travels round the table striking someone for 3 sooner or later: worth placing when the
    others are mostly enemies and none is in it already."""
    if any(r.mem.name(j) == "闪电" for t in r.alive for j in r.seats[t].judge):
        return 0.0
    others = [t for t in r.alive if t != r.me]
    if not others:
        return 0.0
    mean = sum(-r.friend[t] for t in others) / len(others)
    return mean - 0.25 * (r.seats[r.me].hp <= 3)


def _best(r: Reading, seats: list[int], score: dict[int, float]) -> tuple[int, float]:
    best = max(seats, key=lambda t: score[t], default=-1)
    return best, score.get(best, -9.0)


def card_score(r: Reading, c: CardDef, opts: set[str]) -> float:
    """How good using ``c`` now is (≤ 0: not now)."""
    me = r.seats[r.me]
    others = [t for t in r.alive if t != r.me]
    n = c.name
    if c.type == "equip":
        cur = r.equip(r.me).get(SLOT_OF.get(c.subtype, ""))
        if cur is None:
            return 8.0
        return 5.0 if equip_value(c) > equip_value(cur) + 0.4 else 0.0
    if n == "无中生有":
        return 9.0
    if n == "桃":
        return 7.0 if me.hp < me.max_hp else 0.0
    if n in SLASHES:
        reach = [t for t in others if r.distance(r.me, t) <= r.attack_range(r.me)]
        v = max((slash_value(r, t, c) for t in reach), default=0.0)
        return 4.0 + 3.0 * v if v > 0.25 else 0.0
    if n == "酒":
        slashes = [o for o in opts if o.startswith("card:") and r.card(int(o[5:])).name in SLASHES]
        reach = [t for t in others if r.distance(r.me, t) <= r.attack_range(r.me)]
        v = max((slash_value(r, t, drunk=True) for t in reach), default=0.0)
        return 7.5 if slashes and v > 0.6 else 0.0
    if n == "决斗":
        v = max((duel_value(r, t) for t in others), default=0.0)
        return 5.0 + 2.0 * v if v > 0.3 else 0.0
    if n in ("过河拆桥", "顺手牵羊"):
        dist = 1 if n == "顺手牵羊" else 99
        v = max((strip_value(r, t, dist) for t in others), default=0.0)
        return 5.0 + 2.0 * v if v > 0.3 else 0.0
    if n in ("南蛮入侵", "万箭齐发"):
        v = aoe_value(r, "杀" if n == "南蛮入侵" else "闪")
        return 4.0 + v if v > 0.3 else 0.0
    if n == "桃园结义":
        v = sum(r.friend[t] for t in r.alive if r.seats[t].hp < r.seats[t].max_hp)
        return 3.0 + v if v > 0.5 else 0.0
    if n == "五谷丰登":
        return 3.0 if sum(r.friend[t] for t in r.alive) > 0 else 0.0
    if n in BAD_JUDGE:
        dist = 1 if n == "兵粮寸断" else 99
        v = max(
            (
                -r.friend[t]
                for t in others
                if r.distance(r.me, t) <= dist
                and not any(r.mem.name(j) == n for j in r.seats[t].judge)
            ),
            default=0.0,
        )
        return 6.0 + v if v > 0.4 else 0.0
    if n == "借刀杀人":  # only with an enemy wielder that has an enemy of mine in reach
        v = max((jiedao_value(r, t) for t in others), default=0.0)
        return 3.5 if v > 0.4 else 0.0
    if n == "火攻":
        v = max((fire_value(r, t) for t in others if r.seats[t].hand_count), default=0.0)
        return 2.0 + v if v > 0.5 and me.hand_count >= 4 else 0.0
    if n == "走马换将":  # seed 003: bench my hurt general (it keeps its HP) and draw 1
        return 6.0 if me.hp <= 2 < me.max_hp else 0.0
    if n == "闪电":
        v = lightning_value(r)
        return 2.0 + v if v > 0.15 else 0.0
    return 0.0  # 铁索连环 (recast instead), anything unknown


def low_cards(r: Reading, below: float = 4.5) -> list[int]:
    """My hand cards worth less than ``below``, cheapest first."""
    hand = sorted(r.seats[r.me].hand, key=lambda c: keep_value(r.card(c)))
    return [c for c in hand if keep_value(r.card(c)) < below]


def skill_score(r: Reading, name: str, opts: set[str]) -> float:
    """How good activating skill ``name`` in the play phase is."""
    sk = SKILLS.get(name)
    converts = getattr(sk, "converts", "") if sk else ""
    cheap = low_cards(r, 5.5)
    if std_skill(name) == "丈八蛇矛":  # two hand cards for one 杀: not while a real 杀 is held
        if any(n in SLASHES for n in r.hand_names()) or len(cheap) < 2:
            return 0.0
        proxy = next((c for c in r.mem.cards if c.name == "杀"), None)
        return card_score(r, proxy, opts) - 1.5 if proxy else 0.0
    if converts:
        if not cheap and r.seats[r.me].hand_count <= r.seats[r.me].hp:
            return 0.0
        proxy = next((c for c in r.mem.cards if c.name == converts), None)
        return card_score(r, proxy, opts) - 0.5 if proxy else 0.0
    wounded = [t for t in r.alive if r.seats[t].hp < r.seats[t].max_hp and r.friend[t] > 0.3]
    name = std_skill(name)
    if name in HEAL_SKILLS:
        return 6.0 if wounded and r.seats[r.me].hand_count else 0.0
    if name == "结姻":
        return 5.0 if wounded and len(cheap) >= 2 else 0.0
    if name == "制衡":
        return 3.0 if len(low_cards(r, 4.0)) >= 2 else 0.0
    if name in ("离间", "反间"):
        return 4.5 if any(r.is_enemy(t, 0.4) for t in r.alive) and cheap else 0.0
    return 1.0


def play_scores(r: Reading, d: Decision) -> list[tuple[float, str]]:
    """Every play-phase option worth taking now (score > 0), best first (ties: the first
    offered), as (score, option)."""
    opts = set(d.options)
    out: list[tuple[float, int, str]] = []
    for i, o in enumerate(d.options):
        if o in r.mem.cancelled:
            continue
        if o.startswith("card:"):
            s = card_score(r, r.card(int(o[5:])), opts)
        elif o.startswith("skill:"):
            s = skill_score(r, o[6:], opts)
        elif o.startswith("recast:"):
            s = 1.5
        else:
            continue
        if s > 0:
            out.append((-s, i, o))
    return [(-s, o) for s, _, o in sorted(out)]


def choose_play(r: Reading, d: Decision) -> str:
    """The best play-phase option, or ``end``."""
    ranked = play_scores(r, d)
    return ranked[0][1] if ranked else "end"


def target_scores(r: Reading, d: Decision) -> dict[int, float]:
    """What each offered seat is worth as a target of ``d``'s card or skill (离间 aside)."""
    seats = [int(o[5:]) for o in d.options if o.startswith("seat:")]
    card = str(d.info.get("card", "") or "")
    skill = str(d.info.get("skill", "") or "")
    if d.info.get("second") and card == "借刀杀人":  # a friend last, myself before a friend
        score = {t: r.harm_value(t) - (0.5 if t == r.me else 0.0) for t in seats}
        score.update({t: -9.0 - r.friend[t] for t in seats if t != r.me and r.friend[t] > 0.2})
    elif d.info.get("second"):
        score = {t: r.harm_value(t) for t in seats}
    elif card in SLASHES:
        c = r.card(d.info["cards"][0]) if d.info.get("cards") else None
        score = {t: slash_value(r, t, c) for t in seats}
    elif card == "决斗":
        score = {t: duel_value(r, t) for t in seats}
    elif card in ("过河拆桥", "顺手牵羊"):
        score = {t: strip_value(r, t) for t in seats}
    elif card == "借刀杀人":
        score = {t: jiedao_value(r, t) for t in seats}
    elif card == "火攻":
        score = {t: fire_value(r, t) for t in seats}
    elif card == "走马换将":
        score = {t: (1.0 if t == r.me else -1.0) for t in seats}
    elif card == "铁索连环":
        score = {t: (r.friend[t] if r.seats[t].chained else -r.friend[t]) for t in seats}
    elif std_skill(skill) in HEAL_SKILLS or skill == "结姻" or card in ("桃", "酒"):
        score = {
            t: r.friend[t] * (1 + r.seats[t].max_hp - r.seats[t].hp)
            for t in seats
            if r.seats[t].hp < r.seats[t].max_hp
        }
        score.update({t: -9.0 for t in seats if t not in score})
    else:
        score = {t: r.harm_value(t) for t in seats}
    return score


def choose_targets(r: Reading, d: Decision) -> list[str]:
    """Targets for a card or skill (``[]`` declines when nothing is worth it)."""
    seats = [int(o[5:]) for o in d.options]
    if std_skill(str(d.info.get("skill", "") or "")) == "离间":
        return _lijian(r, d, seats)
    score = target_scores(r, d)
    ranked = sorted(seats, key=lambda t: (-score[t], t))
    good = [t for t in ranked if score[t] > 0.1][: d.max]
    if len(good) < d.min:
        if d.declinable:
            return []
        good = ranked[: d.min]
    return [f"seat:{t}" for t in good]


def _lijian(r: Reading, d: Decision, seats: list[int]) -> list[str]:
    """离间: the 决斗's user first, then its target — the target the worst enemy."""
    ranked = sorted(seats, key=lambda t: (-r.harm_value(t), t))
    if len(ranked) < 2 or r.harm_value(ranked[0]) <= 0.2:
        return [] if d.declinable else [f"seat:{t}" for t in ranked[:2]]
    target, user = ranked[0], ranked[1]
    return [f"seat:{user}", f"seat:{target}"]
