"""护甲 (armor), 玉佩 (jade) and 怒气 (rage): public per-seat counters, each change announced as
``counter_changed``; damage is absorbed by 护甲, then 玉佩, then HP (REFERENCE §5.2–5.3)."""

from __future__ import annotations

from ...core.engine import emit
from ...core.events import CounterChanged, MaxHpChanged, RoleAssigned
from ...core.state import Game, SeatExt

COUNTERS = ("armor", "jade", "rage")
CAP_OPTION = {"armor": "armor_cap", "jade": "jade_cap", "rage": "rage_cap"}


class Counters(SeatExt, kw_only=True):
    """A seat's 护甲, 玉佩 and 怒气 (``Player.ext`` in jinyu games)."""

    armor: int = 0
    jade: int = 0
    rage: int = 0


def counters(g: Game, seat: int) -> Counters:
    """``seat``'s counters."""
    ext = g.players[seat].ext
    assert isinstance(ext, Counters), f"{g.ruleset} keeps no counters"
    return ext


def counter(g: Game, seat: int, name: str) -> int:
    """The value of the counter ``name`` (armor, jade or rage) of ``seat``."""
    value: int = getattr(counters(g, seat), name)
    return value


def set_counter(g: Game, seat: int, name: str, value: int) -> None:
    """Set a counter (capped by its option; 0 = no cap) and announce a change."""
    cap = int(g.options.get(CAP_OPTION[name], 0) or 0)
    value = max(0, min(value, cap) if cap else value)
    if counter(g, seat, name) != value:
        setattr(counters(g, seat), name, value)
        emit(g, CounterChanged(seat=seat, counter=name, value=value))


def gain(g: Game, seat: int, name: str, n: int) -> None:
    """Add ``n`` to a counter (up to its cap)."""
    set_counter(g, seat, name, counter(g, seat, name) + n)


def absorb(g: Game, seat: int, amount: int) -> int:
    """Damage left for HP after 护甲, then 玉佩, absorb point for point."""
    for name in ("armor", "jade"):
        took = min(counter(g, seat, name), amount)
        if took:
            set_counter(g, seat, name, counter(g, seat, name) - took)
            amount -= took
    return amount


def reveal_role(g: Game, seat: int) -> None:
    """Turn ``seat``'s role card face up (a public ``role_assigned``)."""
    p = g.players[seat]
    if not p.role_revealed:
        p.role_revealed = True
        emit(g, RoleAssigned(seat=seat, role=p.role))


def change_max_hp(g: Game, seat: int, delta: int, heal: int = 0) -> None:
    """Raise max HP by ``delta`` (and HP by ``heal``), announced as ``max_hp_changed``."""
    p = g.players[seat]
    p.max_hp += delta
    p.hp = min(p.hp + heal, p.max_hp)
    emit(g, MaxHpChanged(seat=seat, max_hp=p.max_hp, hp=p.hp))
