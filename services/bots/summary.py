"""Summaries of self-play: win rates per policy and per role with 95% intervals, the margin
between two policies per role, role-guess accuracy and decision times.

Seats of one game are not independent (teammates share a result), so rates are counted per game:
"policy P as role R" is one Bernoulli outcome per game in which P held R (Wilson interval); the
per-policy rate is the mean over games of the share of P's seats that won (normal interval).
"""

from __future__ import annotations

from typing import Any

import msgspec

from .stats import mean_ci, newcombe, percentile, wilson

ROLES = ("lord", "loyalist", "rebel", "renegade")


class GameRecord(msgspec.Struct, frozen=True):
    """One finished game: policy and role by seat, the winning seats."""

    seats: list[str]
    roles: list[str]
    winners: list[int]
    draw: bool
    camps: list[str] = []  # each seat's camp (Ruleset.camps; a role playing alone is its own)


def camp_of(rec: GameRecord, seat: int) -> str:
    """``seat``'s camp: as recorded, else the lord's side for lord and loyalist, else the role
    (a game without roles: the seat itself)."""
    if rec.camps:
        return rec.camps[seat]
    role = rec.roles[seat]
    return "lord" if role in ("lord", "loyalist") else role or f"seat{seat}"


def _mean(xs: list[float]) -> float:
    return sum(xs) / len(xs) if xs else 0.0


def _r(x: float) -> float:
    return round(x, 4)


def summarise(
    records: list[GameRecord],
    times: dict[str, list[float]],
    accuracy: list[tuple[int, float, float, float, float, float, float]],
    assign: str = "camp",
) -> dict[str, Any]:
    """The JSON summary of ``records``. Per-role margins between two policies compare teams only
    when whole camps share a policy (``assign`` ``camp``); under ``seat`` a policy's loyalist
    plays beside the other policy's lord, so the margins are left out with a warning."""
    names = sorted({n for r in records for n in r.seats})
    present = {x for r in records for x in r.roles}
    roles = [x for x in ROLES if x in present] + sorted(present - set(ROLES))
    share: dict[str, list[float]] = {n: [] for n in names}
    by_role: dict[tuple[str, str], list[int]] = {}
    camp: dict[str, int] = {}
    for rec in records:
        won = set(rec.winners)
        for n in names:
            mine = [s for s, p in enumerate(rec.seats) if p == n]
            if mine:
                share[n].append(sum(s in won for s in mine) / len(mine))
            for role in roles:
                held = [s for s in mine if rec.roles[s] == role]
                if held:
                    by_role.setdefault((n, role), []).append(int(any(s in won for s in held)))
        if rec.draw:
            camp["draw"] = camp.get("draw", 0) + 1
        elif won:
            w = camp_of(rec, min(won))
            camp[w] = camp.get(w, 0) + 1
    out: dict[str, Any] = {"wins_by_camp": camp, "per_policy": {}, "per_role": {}}
    for n in names:
        m, lo, hi = mean_ci(share[n])
        out["per_policy"][n] = {"win_rate": _r(m), "ci95": [_r(lo), _r(hi)], "games": len(share[n])}
    for (n, role), xs in sorted(by_role.items()):
        lo, hi = wilson(sum(xs), len(xs))
        out["per_role"].setdefault(n, {})[role] = {
            "win_rate": _r(sum(xs) / len(xs)),
            "ci95": [_r(lo), _r(hi)],
            "games": len(xs),
        }
    if len(names) == 2 and assign != "camp":
        out["warning"] = (
            "per-role margins need whole camps on one policy (--assign camp); not given"
        )
    elif len(names) == 2:
        a, b = names
        out["margin"] = {"of": f"{a} - {b}"}
        for role in roles:
            xa, xb = by_role.get((a, role), []), by_role.get((b, role), [])
            d, lo, hi = newcombe(sum(xa), len(xa), sum(xb), len(xb))
            out["margin"][role] = {"diff": _r(d), "ci95": [_r(lo), _r(hi)]}
    out["role_guess"] = {}
    for rnd in sorted({a[0] for a in accuracy}):
        got = [a[1] for a in accuracy if a[0] == rnd]
        prior = [a[2] for a in accuracy if a[0] == rnd]
        m, lo, hi = mean_ci(got)
        out["role_guess"][f"round_{rnd}"] = {
            "mean_p_true": _r(m),
            "ci95": [_r(lo), _r(hi)],
            "prior": _r(sum(prior) / len(prior)),
            "brier": _r(_mean([a[3] for a in accuracy if a[0] == rnd])),
            "log_loss": _r(_mean([a[4] for a in accuracy if a[0] == rnd])),
            "prior_brier": _r(_mean([a[5] for a in accuracy if a[0] == rnd])),
            "prior_log_loss": _r(_mean([a[6] for a in accuracy if a[0] == rnd])),
            "samples": len(got),
        }
    out["decision_cpu_ms"] = {
        n: {"p50": _r(percentile(t, 0.5)), "p99": _r(percentile(t, 0.99)), "n": len(t)}
        for n, t in sorted(times.items())
    }
    return out
