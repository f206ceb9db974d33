"""Ruleset ``chengtian``: seed 003, 《承天之弈》 1v1 (REFERENCE §4).

What the seed states (§4.1) and we follow: two players share one shuffled 104-card deck (the
seed's distribution table, ``deck.csv``: two cards of every suit and rank; 白鸽 is an extra
temporary card that starts removed from the game); no distance and no attack range — every 杀,
顺手牵羊 and 兵粮寸断 reaches the opponent (``measures_distance = False``: distance 1, range 1);
three equipment slots, weapon, armour and one mount (``equip_slot``); the mounts 的卢 and 紫骍 only
raise the hand limit by 1; 乐不思蜀 seals one battlefield general's skills until a ♥ judgement;
闪电 moves to the opponent; 朱雀羽扇 only in the play phase on an unconverted 杀; 火攻 discards any
card of the shown suit; 贯石斧 discards two cards other than itself; 白鸽 (no 拼点 against its
holder, its other equipment beyond the opponent's cards and skills); 走马换将 swaps a battlefield
general for the camp's top, face down.

Our assumptions where the seed is silent (§4.3, each a named option; default first):

* ``battlefield_size`` (1): U-003-03, one battlefield general per player, deployed face up from
  the top of the dealt generals. Only 1 is implemented (another value is refused at setup).
* ``camp_size`` (2): U-003-02, generals in the camp (军营) behind it, top first.
* ``damage_to`` ("battlefield"): U-003-04, damage, HP loss and recovery go to the battlefield
  general (the only one; the choice between several needs ``battlefield_size`` > 1).
* ``victory`` ("no_general_left"): U-003-06, a player loses when a general falls and its camp is
  empty; "first_fall" ends the game at the first general that falls. Deck exhaustion: a draw.
* ``fall_ends_turn`` (True), ``fall_discards_cards`` (False), ``fall_deploy_face_down`` (False):
  U-003-05, a general nobody saves from dying leaves the game (被将) and the camp's top general is
  deployed face up at once; the areas belong to the player (U-003-21) and keep their cards; if it
  fell in its owner's turn, that turn ends (as a death would end it).
* ``benched_keeps_hp`` (True): U-003-17, a general sent to the camp by 走马换将 keeps its HP.
* ``zouma_self_clears_seal`` (True): U-003-16 [INTERP], a 走马换将 on your own sealed general
  sends it to the camp and discards its 乐不思蜀 (the seal leaves with its general); False keeps
  the 乐不思蜀 in the judgement area, sealing the general deployed in its place.
* ``face_down_skills`` (False): U-003-17, a face-down (暗置) general has no skills until it is
  revealed at the start of its owner's next turn.
* ``first_player`` ("random"): U-003-07, or a seat number; 4 cards each, no compensation.
* ``generals`` ("all"): U-003-01, the 20 红楼梦 characters and the 27 standard generals; "honglou",
  "standard" or "vanilla" (4-HP generals without skills).
* ``fan_play_phase_only`` (True), ``fire_attack_any_card`` (True, U-003-18), ``mount_hand_limit``
  (1); and the options of every ruleset (``core/options.py``: ``max_reshuffles`` …; A-STD-04
  changes nothing here, where every range is 1).

Setup: the first player is drawn; each player is dealt ``1 + camp_size`` generals in secret and
orders them (``draft`` decisions, ``info.about = "camp"``): the first pick takes the battlefield,
the next ones fill the camp from the top. The battlefield generals are then revealed together.

Generals of other seeds, adapted (documented assumption): with every other seat at distance 1 and
every attack range 1, 噬血/狂骨 ("within distance 1") always counts the opponent, 醉骂/烈弓's
"≤ your attack range" means a hand of at most one card, 马术 changes nothing, 流离 and 离间 find no
third character in a two-player game, and lord skills (护主/护驾, 救援) never work — there is no
lord. U-003-13: every trick (走马换将 included) can be answered by 无懈可击.
"""

from __future__ import annotations

import csv
from collections.abc import Mapping
from functools import cache
from importlib import resources
from typing import TYPE_CHECKING, Any

from ... import skills as _skills  # noqa: F401  (registers the standard skills)
from ...core.cards import CardDef
from ...core.damage import Death
from ...core.engine import answer, ask, emit, end_game, pop, push, rand_below, shuffle
from ...core.events import DraftOffered
from ...core.flow import GameFrame
from ...core.keys import general_key, general_of
from ...core.ruleset import VANILLA, General, Ruleset, announce_start, register_ruleset
from ...core.state import Frame, Game
from ...core.zones import draw
from ..honglou.data import characters
from ..standard.generals import standard_generals
from . import cards as _cards  # noqa: F401  (registers the seed 003 card texts)
from .camp import (
    CampState,
    GeneralFall,
    camp_of,
    check_seal,
    deploy,
    redeal_camps,
    refresh_skills,
)
from .cards import holds_baige
from .events import CampFormed

if TYPE_CHECKING:
    from ...core.redeal import Redeal

_SUIT = {"spade": "S", "heart": "H", "club": "C", "diamond": "D", "": ""}


@cache
def chengtian_deck() -> tuple[CardDef, ...]:
    """The seed's 104 cards (distribution table order), then the temporary 白鸽."""
    text = resources.files(__package__).joinpath("deck.csv").read_text(encoding="utf-8")
    return tuple(
        CardDef(
            name=r["name_zh"],
            suit=_SUIT[r["suit"]],
            rank=int(r["rank"]),
            type=r["type"],
            subtype=r["subtype"],
            pack=r["pack"],
        )
        for r in csv.DictReader(text.splitlines())
    )


@register_ruleset
class ChengTian(Ruleset):
    """Seed 003: 1v1 with battlefields, camps and 走马换将."""

    name = "chengtian"
    min_players = 2
    max_players = 2
    measures_distance = False
    seat_state = CampState
    defaults = {
        "battlefield_size": 1,
        "camp_size": 2,
        "damage_to": "battlefield",
        "victory": "no_general_left",
        "fall_ends_turn": True,
        "fall_discards_cards": False,
        "fall_deploy_face_down": False,
        "benched_keeps_hp": True,
        "face_down_skills": False,
        "first_player": "random",
        "generals": "all",
        "fan_play_phase_only": True,
        "fire_attack_any_card": True,
        "mount_hand_limit": 1,
        "zouma_self_clears_seal": True,
    }
    choices = {
        "battlefield_size": (1,),  # U-003-03: only one battlefield general is implemented
        "camp_size": range(0, 23),  # 1 + camp_size generals each, from at most 47
        "damage_to": ("battlefield",),
        "victory": ("no_general_left", "first_fall"),
        "first_player": ("random", 0, 1),
        "generals": ("all", "honglou", "standard", "vanilla"),
        "mount_hand_limit": range(0, 11),
    }

    def deck(self, options: dict[str, Any]) -> list[CardDef]:
        return list(chengtian_deck())

    def roles(self, players: int, options: dict[str, Any]) -> list[str]:
        return [""] * players

    def generals(self, options: Mapping[str, Any] | None = None) -> dict[str, General]:
        return {"vanilla": VANILLA, **characters(), **standard_generals()}

    def pool(self, g: Game) -> list[str]:
        """The generals dealt from, by the ``generals`` option."""
        which = g.options.get("generals", "all")
        if which == "vanilla":
            return []
        names = list(characters()) if which in ("all", "honglou") else []
        if which in ("all", "standard"):
            names += list(standard_generals())
        return names

    def general_pool(self, g: Game) -> list[str]:
        return self.pool(g)

    def seen_generals(self, g: Game, seat: int) -> set[str]:
        """Its own generals (battlefield, camp, those it is still to order) and every
        battlefield general face up."""
        me = g.players[seat]
        seen = {me.general, *camp_of(me)}
        seen.update(p.general for p in g.players if not p.marks.get("face_down"))
        for fr in g.stack:
            if isinstance(fr, CampOrder):
                seen.update(fr.offers[seat])
        return seen

    def redeal_generals(self, g: Game, seat: int, rd: Redeal) -> None:
        redeal_camps(g, seat, rd)

    def equip_slot(self, subtype: str) -> str:
        if subtype in ("defensive_horse", "offensive_horse", "mount"):
            return "mount"
        return super().equip_slot(subtype)

    def equip_protected(self, g: Game, owner: int, by: int, cid: int) -> bool:
        """白鸽: the holder's *other* equipment is beyond the opponent's cards and skills."""
        return by != owner and holds_baige(g, owner) and g.cards[cid].name != "白鸽"

    def judge_area_changed(self, g: Game, seat: int) -> None:
        check_seal(g, seat)

    def prepare_table(self, g: Game) -> None:
        """A scenario table: a 乐不思蜀 already in a judgement area seals that seat's general."""
        for p in g.players:
            for cid in p.judge:
                if g.as_name.get(cid, g.cards[cid].name) == "乐不思蜀":
                    p.marks["seal"] = cid + 1
            refresh_skills(g, p.seat)

    def unsaved(self, g: Game, seat: int, killer: int) -> None:
        """U-003-05/06: the next camp general takes over; with none left the player loses."""
        p = g.players[seat]
        if camp_of(p) and g.options.get("victory", "no_general_left") == "no_general_left":
            push(g, GeneralFall(seat=seat, killer=killer))
        else:
            push(g, Death(seat=seat, killer=killer))

    def check_winner(self, g: Game) -> None:
        """The player who still stands wins."""
        alive = [p.seat for p in g.players if p.alive]
        if len(alive) <= 1:
            end_game(g, alive)

    def death_penalty(self, g: Game, dead: int, killer: int) -> None:
        """No rewards or penalties: there are no roles."""

    def setup(self, g: Game) -> None:
        if g.options.get("battlefield_size", 1) != 1:
            raise ValueError("chengtian: only battlefield_size 1 is implemented")
        if g.options.get("damage_to", "battlefield") != "battlefield":
            raise ValueError(
                "chengtian: damage_to other than 'battlefield' needs several battlefield generals"
            )
        announce_start(g, deck=104)
        first = g.options.get("first_player", "random")
        seat = rand_below(g, len(g.players)) if first == "random" else int(first)
        per = 1 + int(g.options.get("camp_size", 2))
        pool = self.pool(g)
        names = [pool[i] for i in shuffle(g, list(range(len(pool))))]
        offers = []
        for s in range(len(g.players)):
            mine = names[s * per : (s + 1) * per]
            offers.append(mine + ["vanilla"] * (per - len(mine)))
            emit(g, DraftOffered(seat=s, generals=offers[s], seen_by=[s]))
        ids = list(range(len(g.cards)))
        g.draw = shuffle(g, [c for c in ids if g.cards[c].pack != "temporary"])
        g.removed = [c for c in ids if g.cards[c].pack == "temporary"]
        push(g, GameFrame(seat=seat))
        push(g, CampOrder(offers=offers))


class CampOrder(Frame, tag="chengtian_camp_order"):
    """Each player in secret orders its dealt generals: battlefield first, then the camp from
    the top; then the battlefield generals are revealed and the hands dealt."""

    offers: list[list[str]]
    seat: int = 0

    def start(self, g: Game) -> None:
        """Ask for the next general of the next seat with some left; then deploy and deal."""
        self.then(self.picked)
        while self.seat < len(g.players):
            left = self.offers[self.seat]
            if left:
                ask(
                    g,
                    self.seat,
                    "draft",
                    [general_key(n) for n in dict.fromkeys(left)],
                    declinable=False,
                    info={
                        "about": "camp",
                        "position": len(camp_of(g.players[self.seat])),
                        "offer": list(left),
                    },
                )
                return
            self.seat += 1
        for p in g.players:  # the first general picked takes the battlefield, face up
            deploy(g, p.seat, face_down=False)
            emit(g, CampFormed(seat=p.seat, count=len(camp_of(p))))
        for p in g.players:
            draw(g, p.seat, 4, reason="deal")
        pop(g)

    def redeal(self, g: Game, rd: Redeal) -> None:
        """The generals another seat is still to order are its secret: dealt again."""
        for t, left in enumerate(self.offers):
            if t != rd.seat:
                self.offers[t] = rd.generals(g, len(left))

    def picked(self, g: Game) -> None:
        name = general_of(answer(g)[0])
        self.offers[self.seat].remove(name)
        camp_of(g.players[self.seat]).append(name)
        self.start(g)


def camps(g: Game) -> list[list[str]]:
    """Every seat's camp, top first (a copy)."""
    return [list(camp_of(p)) for p in g.players]
