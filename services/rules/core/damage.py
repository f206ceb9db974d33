"""Damage, HP loss, recovery, dying and death (REFERENCE §1.10, §1.11, §2.7)."""

from __future__ import annotations

import msgspec

from .engine import pop
from .events import ChainToggled, Damaged, Died, Dying, HpLost, Recovered
from .flow import end_turn_now
from .options import CHAIN_HIT_EFFECTS
from .query import order_from
from .registry import ruleset_of
from .respond import AskCard, demand
from .state import Frame, Game
from .triggers import fire
from .zones import discard_areas

CHAIN_FROM_FIRST_FINAL = "chain_amount_final"  # A-STD-02


class Damage(Frame, tag="damage"):
    """One damage event: source-side and target-side modifiers, HP, dying, after-triggers, chain."""

    source: int
    target: int
    amount: int = 1
    nature: str = "normal"
    card: str = ""
    cards: list[int] = msgspec.field(default_factory=list)
    slash: bool = False  # caused by a 杀 (for 寒冰剑, 古锭刀, 麒麟弓, 裸衣: see own_hit)
    duel: bool = False  # caused by a 决斗 (裸衣)
    propagated: bool = False
    ignore_armor: bool = False
    prevented: bool = False
    dealt: int = 0
    chain: list[int] = msgspec.field(default_factory=list)
    ci: int = 0
    # the target's general left the game before the "after damage" triggers (a ruleset put
    # another general in its place, which did not take this damage): no target-side ones
    target_replaced: bool = False

    def start(self, g: Game) -> None:
        """Source-side modifiers (a dead source is no source)."""
        self.step = "target_side"
        if self.source >= 0 and not g.players[self.source].alive:
            self.source = -1
        if self.source < 0 or not fire(g, "damage_causing", g.top, seats=[self.source], last=True):
            self.target_side(g)  # no skill to ask: on at once

    def target_side(self, g: Game) -> None:
        """Target-side modifiers."""
        self.step = "about_to_hit"
        asks = not self.prevented and g.players[self.target].alive
        if not (asks and fire(g, "damage_taking", g.top, seats=[self.target], last=True)):
            self.about_to_hit(g)

    def about_to_hit(self, g: Game) -> None:
        """The damage is about to reduce HP (狂骨/噬血 measure distance here, before a death)."""
        p = g.players[self.target]
        if self.prevented or self.amount < 1 or not p.alive:
            pop(g, 0)
            return
        self.step = "hit"
        if self.source >= 0 and fire(g, "damage_hit", g.top, seats=[self.source], last=True):
            return
        self.hit(g)

    def hit(self, g: Game) -> None:
        """HP goes down (after shields absorb); a chained target passes elemental damage on."""
        p = g.players[self.target]
        self.step = "caused"
        self.dealt = self.amount
        rest = absorb(g, self.target, self.amount)
        p.hp -= rest
        g.out.append(
            Damaged(
                source=self.source,
                target=self.target,
                amount=self.amount,
                nature=self.nature,
                card=self.card,
                hp=p.hp,
            ),
        )
        if p.chained and self.nature != "normal":
            p.chained = False
            g.out.append(ChainToggled(seat=self.target, chained=False))
            if not self.propagated:
                self.chain = [
                    s for s in order_from(g, g.current) if s != self.target and g.players[s].chained
                ]
        if p.hp <= 0:
            g.stack.append(DyingFrame(seat=self.target, killer=self.source))
        elif g.stack[-1] is self and g.pending is None:  # nothing to wait for: on at once
            self.caused(g)

    def caused(self, g: Game) -> None:
        """After the damage, source side."""
        self.step = "suffered"
        asks = self.source >= 0 and g.players[self.source].alive
        if not (asks and fire(g, "damage_caused", g.top, seats=[self.source], last=True)):
            self.suffered(g)

    def suffered(self, g: Game) -> None:
        """After the damage, target side."""
        self.step = "chain_on"
        asks = g.players[self.target].alive and not self.target_replaced
        if not (asks and fire(g, "damaged", g.top, seats=[self.target], last=True)):
            self.chain_on(g)

    def own_hit(self, g: Game) -> bool:
        """Whether the user's own hit effects apply to this damage ("when your 杀 deals damage":
        古锭刀, 寒冰剑, 麒麟弓, 裸衣, 谋攻's 强化): not to damage propagated through a chain
        (A-STD-03, the peers' ``by_user && !chain``), unless the table's ``chain_hit_effects``
        keeps them there."""
        return not self.propagated or bool(g.options.get(CHAIN_HIT_EFFECTS, False))

    def after_hit(self) -> bool:
        """Whether HP has gone down and the "after damage" triggers are still to come."""
        return self.step in ("caused", "suffered")

    def chain_on(self, g: Game) -> None:
        """Chain propagation (§2.7): same source, nature, card and amount; no further
        propagation."""
        while self.ci < len(self.chain):
            s = self.chain[self.ci]
            self.ci += 1
            if g.players[s].alive and g.players[s].chained:
                g.stack.append(
                    Damage(
                        source=self.source,
                        target=s,
                        amount=self.dealt,
                        nature=self.nature,
                        card=self.card,
                        cards=self.cards,
                        slash=self.slash,
                        propagated=True,
                    ),
                )
                return
        pop(g, self.dealt)


class DyingFrame(Frame, tag="dying"):
    """The rescue round for a seat at HP ≤ 0 (§1.11)."""

    seat: int
    killer: int = -1
    order: list[int] = msgspec.field(default_factory=list)
    i: int = 0

    def start(self, g: Game) -> None:
        self.step = "rescue"
        g.out.append(Dying(seat=self.seat, hp=g.players[self.seat].hp))
        self.order = order_from(g, g.current)
        fire(g, "dying", g.top, seats=[self.seat], last=True)

    def rescue(self, g: Game) -> None:
        """Ask each seat in turn for 桃 while the dying seat is still below 1 HP."""
        p = g.players[self.seat]
        if p.hp >= 1 or not p.alive:
            pop(g, True)
            return
        while self.i < len(self.order):  # a seat with nothing to give answers at once
            s = self.order[self.i]
            if g.players[s].alive and demand(
                g, AskCard(user=s, need="桃", target=self.seat, reason="dying")
            ):
                self.step = "peach_answered"
                return
            self.i += 1
        pop(g, False)
        ruleset_of(g).unsaved(g, self.seat, self.killer)  # standard: Death

    def peach_answered(self, g: Game) -> None:
        self.step = "rescue"
        vc = g.ret
        if vc is not None:
            # every seat may react (救援: the dying lord, or — literal reading — its holder)
            fire(
                g,
                "peach_saving",
                g.top,
                data={"by": self.order[self.i], "seat": self.seat},
            )
            ruleset_of(g).peach_recover(g, self.order[self.i], self.seat, vc)
            return
        self.i += 1
        self.rescue(g)


class Death(Frame, tag="death"):
    """Death: reveal, game-over check, on-death skills, discard everything, reward/penalty."""

    seat: int
    killer: int = -1

    def start(self, g: Game) -> None:
        """The role is revealed, the game may end; then on-death skills."""
        p = g.players[self.seat]
        self.step = "discard_all"
        p.alive = False
        g.dead += 1
        p.role_revealed = True
        if self.killer >= 0 and not g.players[self.killer].alive:
            self.killer = -1
        g.out.append(Died(seat=self.seat, killer=self.killer, role=p.role))
        ruleset_of(g).check_winner(g)
        fire(g, "death", g.top, last=True)

    def discard_all(self, g: Game) -> None:
        self.step = "rewards"
        discard_areas(g, self.seat, reason="death")

    def rewards(self, g: Game) -> None:
        self.step = "done"
        ruleset_of(g).death_penalty(g, self.seat, self.killer)

    def done(self, g: Game) -> None:
        pop(g)
        if self.seat == g.current:
            end_turn_now(g)


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
    g.stack.append(
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
    g.out.append(Recovered(seat=seat, amount=amt, hp=p.hp))
    return amt


def lose_hp(g: Game, seat: int, n: int = 1, source: int = -1) -> None:
    """HP loss (not damage): no prevention; may cause dying (no killer). ``source`` is who made
    the seat lose it, if anyone (skills read it at ``hp_lost``, which fires before the dying
    procedure runs)."""
    p = g.players[seat]
    p.hp -= n
    g.out.append(HpLost(seat=seat, amount=n, hp=p.hp))
    if p.hp <= 0:
        g.stack.append(DyingFrame(seat=seat, killer=-1))
    fire(g, "hp_lost", data={"seat": seat, "amount": n, "source": source})


def absorb(g: Game, seat: int, amount: int) -> int:
    """The damage left after the ruleset's shields absorb some (``Ruleset.absorb_damage``)."""
    return ruleset_of(g).absorb_damage(g, seat, amount)
