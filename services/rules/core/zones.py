"""Moving cards between zones, drawing with reshuffles, and the triggers a loss of cards fires."""

from __future__ import annotations

from collections.abc import Callable

from .engine import end_game, shuffle
from .events import CardsMoved, DeckReshuffled
from .index import moves_distances, skills_changed
from .options import DECK_EXHAUSTED, MAX_RESHUFFLES, RESHUFFLE_LIMIT
from .registry import ruleset_of
from .state import Game
from .triggers import fire

PUBLIC = None
# equipment with an effect when it leaves its owner's area (白银狮子): name -> hook(g, seat, cid)
LEAVE_HOOKS: dict[str, Callable[[Game, int, int], None]] = {}


def _remove(g: Game, cid: int, zone: str, seat: int) -> None:
    if zone == "hand":
        g.players[seat].hand.remove(cid)
    elif zone == "equip":
        eq = g.players[seat].equip
        for k, v in eq.items():
            if v == cid:
                del eq[k]
                skills_changed(g, seat, moves_distances(g, cid, k))
                break
    elif zone == "judge":
        g.players[seat].judge.remove(cid)
        g.as_name.pop(cid, None)
    elif zone == "processing":
        g.processing.remove(cid)
    elif zone == "discard":
        g.discard.remove(cid)
    elif zone == "draw":
        g.draw.remove(cid)
    elif zone == "removed":
        g.removed.remove(cid)
    else:  # pragma: no cover - programming error
        raise ValueError(zone)


def _add(g: Game, cid: int, zone: str, seat: int, slot: str) -> None:
    if zone == "hand":
        g.players[seat].hand.append(cid)
    elif zone == "equip":
        g.players[seat].equip[slot] = cid
        skills_changed(g, seat, moves_distances(g, cid, slot))
    elif zone == "judge":
        g.players[seat].judge.append(cid)
    elif zone == "processing":
        g.processing.append(cid)
    elif zone == "discard":
        g.discard.append(cid)
    elif zone == "draw":
        g.draw.append(cid)
    elif zone == "removed":
        g.removed.append(cid)
    else:  # pragma: no cover
        raise ValueError(zone)


def move(
    g: Game,
    cards: list[int],
    src: str,
    dst: str,
    src_seat: int = -1,
    dst_seat: int = -1,
    reason: str = "",
    seen_by: list[int] | None = PUBLIC,
    slot: str = "",
) -> None:
    """Move ``cards`` from one zone to another and emit ``cards_moved``.

    Fires ``hand_emptied`` when the source seat loses its last hand card and ``equip_lost`` once per
    equipment card lost (REFERENCE §1.16: replacement counts as losing).
    """
    if not cards:
        return
    for cid in cards:
        # the usual moves (a hand card used or discarded, the processing area emptied) without
        # a call; the rest through _remove/_add
        if src == "hand":
            g.players[src_seat].hand.remove(cid)
        elif src == "processing":
            g.processing.remove(cid)
        else:
            _remove(g, cid, src, src_seat)
        if dst == "processing":
            g.processing.append(cid)
        elif dst == "discard":
            g.discard.append(cid)
        else:
            _add(g, cid, dst, dst_seat, slot)
    g.out.append(  # emit
        CardsMoved(
            cards=list(cards),
            count=len(cards),
            src=src,
            dst=dst,
            src_seat=src_seat,
            dst_seat=dst_seat,
            reason=reason,
            seen_by=seen_by,
        )
    )
    if src == "judge" or dst == "judge":  # a ruleset's 乐不思蜀 may seal while it lies there
        ruleset_of(g).judge_area_changed(g, src_seat if src == "judge" else dst_seat)
        if src == "judge" and dst == "judge":
            ruleset_of(g).judge_area_changed(g, dst_seat)
    if src == "equip":
        for cid in cards:
            hook = LEAVE_HOOKS.get(g.cards[cid].name)
            if hook is not None:
                hook(g, src_seat, cid)
            fire(g, "equip_lost", data={"seat": src_seat, "card": cid})
    elif src == "hand" and not g.players[src_seat].hand:
        fire(g, "hand_emptied", data={"seat": src_seat})


def take_top(g: Game, n: int) -> list[int]:
    """Remove the top ``n`` cards of the draw pile, reshuffling the discard pile when it runs
    short (§1.14); if even that is not enough the game ends in a draw. A reshuffle past the
    table's ``max_reshuffles`` (A-STD-05, ``core/options.py``) does not happen: the game ends in
    a draw instead."""
    if len(g.draw) < n:
        if g.discard:
            cap = g.options.get(MAX_RESHUFFLES, 0)
            if cap and g.reshuffles >= cap:
                end_game(g, [], draw=True, reason=RESHUFFLE_LIMIT)
            pile = shuffle(g, g.discard)
            g.discard = []
            g.draw = pile + g.draw  # shuffled discards go under the remaining cards
            g.reshuffles += 1
            g.out.append(DeckReshuffled(count=len(pile)))
        if len(g.draw) < n:
            end_game(g, [], draw=True, reason=DECK_EXHAUSTED)
    out = [g.draw.pop() for _ in range(n)]
    return out


def draw(g: Game, seat: int, n: int, reason: str = "draw") -> list[int]:
    """Seat ``seat`` draws ``n`` cards from the top of the draw pile (faces seen by it only)."""
    if n <= 0:
        return []
    cards = take_top(g, n)
    g.players[seat].hand.extend(cards)
    g.out.append(
        CardsMoved(
            cards=cards,
            count=n,
            src="draw",
            dst="hand",
            dst_seat=seat,
            reason=reason,
            seen_by=[seat],
        ),
    )
    return cards


def discard_from(g: Game, seat: int, cards: list[int], reason: str = "discard") -> None:
    """Seat ``seat`` discards ``cards`` from its hand and/or equipment (public)."""
    p = g.players[seat]
    hand = [c for c in cards if c in p.hand]
    equip = [c for c in cards if c not in p.hand]
    if hand:
        move(g, hand, "hand", "discard", src_seat=seat, reason=reason)
    if equip:
        move(g, equip, "equip", "discard", src_seat=seat, reason=reason)


def discard_areas(g: Game, seat: int, reason: str, judge: bool = True) -> None:
    """Discard all of ``seat``'s cards: hand, then equipment, then (``judge``) the judgement area,
    one move each (弃置所有牌, death)."""
    p = g.players[seat]
    if p.hand:
        move(g, list(p.hand), "hand", "discard", seat, reason=reason)
    if p.equip:
        move(g, list(p.equip.values()), "equip", "discard", seat, reason=reason)
    if judge and p.judge:
        move(g, list(p.judge), "judge", "discard", seat, reason=reason)


def zone_of(g: Game, seat: int, cid: int) -> str:
    """Which of ``seat``'s areas holds ``cid`` (``hand``, ``equip``, ``judge``) or ``""``."""
    p = g.players[seat]
    if cid in p.hand:
        return "hand"
    if cid in p.equip.values():
        return "equip"
    if cid in p.judge:
        return "judge"
    return ""
