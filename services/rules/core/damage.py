"""Damage, HP loss, recovery, dying and death (REFERENCE §1.10, §1.11, §2.7)."""

from __future__ import annotations

import msgspec

from .engine import emit, handler, pop, push
from .events import ChainToggled, Damaged, Died, Dying, HpLost, Recovered
from .query import order_from
from .state import Frame, Game
from .triggers import fire

CHAIN_FROM_FIRST_FINAL = "chain_amount_final"  # A-STD-02


class Damage(Frame, tag="damage"):
    """One damage event: source-side and target-side modifiers, HP, dying, after-triggers, chain."""

    source: int
    target: int
    amount: int = 1
    nature: str = "normal"
    card: str = ""
    cards: list[int] = msgspec.field(default_factory=list)
    slash: bool = False  # caused by a 杀 (for 寒冰剑, 古锭刀, 麒麟弓, 裸衣)
    duel: bool = False  # caused by a 决斗 (裸衣)
    propagated: bool = False
    ignore_armor: bool = False
    prevented: bool = False
    dealt: int = 0
    chain: list[int] = msgspec.field(default_factory=list)
    ci: int = 0
    # seed 003: the target's general fell and the next one took the battlefield, so no
    # target-side "after damage" triggers (the new general did not take this damage)
    target_replaced: bool = False


class DyingFrame(Frame, tag="dying"):
    """The rescue round for a seat at HP ≤ 0 (§1.11)."""

    seat: int
    killer: int = -1
    order: list[int] = msgspec.field(default_factory=list)
    i: int = 0


class Death(Frame, tag="death"):
    """Death: reveal, game-over check, on-death skills, discard everything, reward/penalty."""

    seat: int
    killer: int = -1


def damage(
    g: Game,
    source: int,
    target: int,
    amount: int = 1,
    nature: str = "normal",
    card: str = "",
    cards: list[int] | None = None,
    slash: bool = False,
    duel: bool = False,
    ignore_armor: bool = False,
) -> None:
    """Push a damage event."""
    push(
        g,
        Damage(
            source=source,
            target=target,
            amount=amount,
            nature=nature,
            card=card,
            cards=list(cards or []),
            slash=slash,
            duel=duel,
            ignore_armor=ignore_armor,
        ),
    )


def recover(g: Game, seat: int, n: int = 1) -> int:
    """Recover up to ``n`` HP (capped at max HP); returns the amount recovered."""
    p = g.players[seat]
    amt = min(n, p.max_hp - p.hp)
    if amt <= 0 or not p.alive:
        return 0
    p.hp += amt
    emit(g, Recovered(seat=seat, amount=amt, hp=p.hp))
    return amt


def lose_hp(g: Game, seat: int, n: int = 1, source: int = -1) -> None:
    """HP loss (not damage): no prevention; may cause dying (no killer). ``source`` is who made
    the seat lose it, if anyone (seed 002's 洞察 reads it at ``hp_lost``, which fires before
    the dying procedure runs)."""
    p = g.players[seat]
    p.hp -= n
    emit(g, HpLost(seat=seat, amount=n, hp=p.hp))
    if p.hp <= 0:
        push(g, DyingFrame(seat=seat, killer=-1))
    fire(g, "hp_lost", data={"seat": seat, "amount": n, "source": source})


def absorb(g: Game, seat: int, amount: int) -> int:
    """Variant hook: 护甲/玉佩 absorb damage first (seed 002). Standard: nothing absorbs."""
    from .ruleset import ruleset_of

    return ruleset_of(g).absorb_damage(g, seat, amount)


@handler(Damage)
def _damage(g: Game, f: Damage) -> None:
    if f.pc == 0:
        f.pc = 1
        if f.source >= 0 and not g.players[f.source].alive:
            f.source = -1
        if f.source >= 0:
            fire(g, "damage_causing", len(g.stack) - 1, seats=[f.source])
        return
    if f.pc == 1:
        f.pc = 2
        if not f.prevented and g.players[f.target].alive:
            fire(g, "damage_taking", len(g.stack) - 1, seats=[f.target])
        return
    if f.pc == 2:
        p = g.players[f.target]
        if f.prevented or f.amount < 1 or not p.alive:
            pop(g, 0)
            return
        f.pc = 6
        # the damage is about to reduce HP (狂骨/噬血 measure distance here, before a death)
        if f.source >= 0 and fire(g, "damage_hit", len(g.stack) - 1, seats=[f.source]):
            return
    if f.pc == 6:
        p = g.players[f.target]
        f.pc = 3
        f.dealt = f.amount
        rest = absorb(g, f.target, f.amount)
        p.hp -= rest
        emit(
            g,
            Damaged(
                source=f.source,
                target=f.target,
                amount=f.amount,
                nature=f.nature,
                card=f.card,
                hp=p.hp,
            ),
        )
        if p.chained and f.nature != "normal":
            p.chained = False
            emit(g, ChainToggled(seat=f.target, chained=False))
            if not f.propagated:
                f.chain = [
                    s for s in order_from(g, g.current) if s != f.target and g.players[s].chained
                ]
        if p.hp <= 0:
            push(g, DyingFrame(seat=f.target, killer=f.source))
        return
    if f.pc == 3:
        f.pc = 4
        if f.source >= 0 and g.players[f.source].alive:
            fire(g, "damage_caused", len(g.stack) - 1, seats=[f.source])
        return
    if f.pc == 4:
        f.pc = 5
        if g.players[f.target].alive and not f.target_replaced:
            fire(g, "damaged", len(g.stack) - 1, seats=[f.target])
        return
    # chain propagation (§2.7): same source, nature, card and amount; no further propagation
    while f.ci < len(f.chain):
        s = f.chain[f.ci]
        f.ci += 1
        if g.players[s].alive and g.players[s].chained:
            push(
                g,
                Damage(
                    source=f.source,
                    target=s,
                    amount=f.dealt,
                    nature=f.nature,
                    card=f.card,
                    cards=f.cards,
                    slash=f.slash,
                    propagated=True,
                ),
            )
            return
    pop(g, f.dealt)


@handler(DyingFrame)
def _dying(g: Game, f: DyingFrame) -> None:
    from .respond import AskCard

    p = g.players[f.seat]
    if f.pc == 0:
        f.pc = 1
        emit(g, Dying(seat=f.seat, hp=p.hp))
        f.order = order_from(g, g.current)
        fire(g, "dying", len(g.stack) - 1, seats=[f.seat])
        return
    if f.pc == 2:
        f.pc = 1
        vc = g.ret
        if vc is not None:
            # every seat may react (救援: the dying lord, or — literal reading — its holder)
            fire(g, "peach_saving", len(g.stack) - 1, data={"by": f.order[f.i], "seat": f.seat})
            from .ruleset import ruleset_of

            ruleset_of(g).peach_recover(g, f.order[f.i], f.seat, vc)
            return
        f.i += 1
    if p.hp >= 1 or not p.alive:
        pop(g, True)
        return
    while f.i < len(f.order) and not g.players[f.order[f.i]].alive:
        f.i += 1
    if f.i < len(f.order):
        f.pc = 2
        push(g, AskCard(user=f.order[f.i], need="桃", target=f.seat, reason="dying"))
        return
    f.pc = 3
    if f.pc == 3:
        from .ruleset import ruleset_of

        pop(g, False)
        ruleset_of(g).unsaved(g, f.seat, f.killer)  # standard: Death


@handler(Death)
def _death(g: Game, f: Death) -> None:
    from .ruleset import ruleset_of
    from .zones import move

    p = g.players[f.seat]
    if f.pc == 0:
        f.pc = 1
        p.alive = False
        g.dead += 1
        p.role_revealed = True
        if f.killer >= 0 and not g.players[f.killer].alive:
            f.killer = -1
        emit(g, Died(seat=f.seat, killer=f.killer, role=p.role))
        ruleset_of(g).check_winner(g)
        fire(g, "death", len(g.stack) - 1)
        return
    if f.pc == 1:
        f.pc = 2
        if p.hand:
            move(g, list(p.hand), "hand", "discard", f.seat, reason="death")
        if p.equip:
            move(g, list(p.equip.values()), "equip", "discard", f.seat, reason="death")
        if p.judge:
            move(g, list(p.judge), "judge", "discard", f.seat, reason="death")
        return
    if f.pc == 2:
        f.pc = 3
        ruleset_of(g).death_penalty(g, f.seat, f.killer)
        return
    pop(g)
    if f.seat == g.current:
        g.abort_turn = True
