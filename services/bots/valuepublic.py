"""Fit the win-chance chart's models from self-play: P(each camp wins | what a viewer sees), per
table, over the features of services/readside/chart.py: `public` from the spectator's view
(the live chart: nothing hidden goes in), `full` from the god view (a finished game's chart:
the true roles and the 桃 in every hand).

At every turn start of all-heuristic games, each view is folded from the game's events as that
viewer receives them (api.redact, then the fold) and its features taken; the label is the camp
that won (draws are left out). A multinomial logistic regression per (table, kind), ridge-
regularised, is fitted by Newton's method with numpy (the `test` extra); the last fifth of the
games is held out and its log-loss printed beside the base rate's.

    arena fit chart --games 1500 > services/readside/chartmodel.py
    python3 -m ruff format services/readside/chartmodel.py

Unlike the look-ahead's model (value.py: one seat's side, under a world's roles), these read only
views: the public one is what a spectator could compute for itself.
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..readside.chart import Table, feature_names, features, table
from ..rules import api
from ..rules.api import events as ev
from .fit import fit_options
from .selfplay import Table as Players

FIT_TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 4, {}),
    ("standard", 5, {}),
    ("standard", 6, {}),
    ("standard", 7, {}),
    ("standard", 8, {}),
    ("honglou", 5, {}),
    ("jinyu", 5, {}),
    ("jinyu", 8, {"mougong": True}),
    ("extended", 8, {}),
    ("chengtian", 2, {}),
]
RIDGE = 1.0
KINDS = ("public", "full")

Sample = tuple[list[float], int]


def collect(
    ruleset: str, players: int, options: dict[str, Any], games: int, seed: int
) -> tuple[Table, dict[str, list[list[Sample]]]]:
    """Per kind, per game: (features, the winning camp's index) at every turn start."""
    import json

    t = table(ruleset, players, json.dumps(options, sort_keys=True))
    out: dict[str, list[list[Sample]]] = {k: [] for k in KINDS}
    for i in range(games):
        g = api.new_game(ruleset, players, seed + i, dict(options))
        seats = Players(g, ["heuristic"] * players, seed + i)
        views = {"public": api.new_view(api.SPECTATOR), "full": api.new_view(api.GOD)}
        rows: dict[str, list[list[float]]] = {k: [] for k in KINDS}
        events = api.advance(g)
        while True:
            seats.feed(events)
            for e in events:
                for v in views.values():
                    api.fold_view(v, api.redact(e, v.viewer))
                if isinstance(e, ev.TurnStarted) and not g.over:
                    for kind, v in views.items():
                        rows[kind].append(features(t, v, kind == "full"))
            if g.over:
                break
            d = g.pending
            assert d is not None
            events = api.submit(g, seats.act(d))
        won = _winner(t, g)
        if won is None:
            continue  # a draw: no camp to learn
        for kind in KINDS:
            out[kind].append([(x, won) for x in rows[kind]])
    return t, out


def _winner(t: Table, g: api.Game) -> int | None:
    winners = set(g.winners)
    if not winners:
        return None
    seat = min(winners)
    camp = f"seat{seat}" if t.roleless else t.camp_of.get(g.players[seat].role, "")
    return t.camps.index(camp) if camp in t.camps else None


def fit(samples: list[Sample], classes: int, iterations: int = 25) -> list[list[float]]:
    """Multinomial logistic regression (softmax), ridge on every weight but the biases, by
    Newton's method; the weights of class 0 are pinned at 0 (softmax is unchanged by a shift),
    then the mean is taken out so no class is singled out."""
    import numpy as np

    x = np.array([s[0] for s in samples], dtype=float)
    y = np.array([s[1] for s in samples], dtype=int)
    n, f = x.shape
    k = classes - 1  # free classes
    w = np.zeros((k, f))
    ridge = np.full(f, RIDGE)
    ridge[0] = 1e-6
    onehot = np.zeros((n, classes))
    onehot[np.arange(n), y] = 1.0
    for _ in range(iterations):
        z = np.concatenate([np.zeros((n, 1)), x @ w.T], axis=1)
        z -= z.max(axis=1, keepdims=True)
        p = np.exp(z)
        p /= p.sum(axis=1, keepdims=True)
        grad = ((onehot[:, 1:] - p[:, 1:]).T @ x) - ridge * w  # (k, f)
        hess = np.zeros((k * f, k * f))
        for a in range(k):
            for b in range(k):
                c = p[:, a + 1] * ((a == b) - p[:, b + 1])
                hess[a * f : (a + 1) * f, b * f : (b + 1) * f] = (x * c[:, None]).T @ x
        hess += np.diag(np.tile(ridge, k)) + 1e-9 * np.eye(k * f)
        step = np.linalg.solve(hess, grad.reshape(-1)).reshape(k, f)
        w += step
        if float(np.max(np.abs(step))) < 1e-7:
            break
    full = np.concatenate([np.zeros((1, f)), w], axis=0)
    full -= full.mean(axis=0, keepdims=True)
    return [[float(v) for v in row] for row in full]


def log_loss(w: list[list[float]], samples: list[Sample]) -> float:
    """Mean log-loss of the model on ``samples``."""
    total = 0.0
    for x, y in samples:
        z = [sum(a * b for a, b in zip(row, x, strict=True)) for row in w]
        top = max(z)
        den = sum(math.exp(zi - top) for zi in z)
        total -= (z[y] - top) - math.log(den)
    return total / max(len(samples), 1)


def render(
    models: dict[str, dict[str, dict[str, list[float]]]],
    names: dict[str, list[str]],
    notes: list[str],
    games: int,
) -> str:
    """The chart model module's text."""
    lines = [
        '"""The win-chance chart\'s models, fitted from self-play by services/bots/valuepublic.py',
        f"(`arena fit chart --games {games} > services/readside/chartmodel.py`).",
        "",
        "WEIGHTS[table][kind][camp] are the softmax weights of P(camp wins) over chart.features",
        "(`public`: the spectator's view; `full`: the god view); FEATURES[table] names them.",
        "Held-out log-loss against the base rate's:",
        "",
        *[f"    {n}" for n in notes],
        '"""',
        "",
        "from __future__ import annotations",
        "",
        "FEATURES: dict[str, dict[str, tuple[str, ...]]] = {",
    ]
    for key in sorted(models):
        lines.append(f"    {key!r}: {{")
        for kind in KINDS:
            lines.append(f"        {kind!r}: {tuple(names[key + '|' + kind])!r},")
        lines.append("    },")
    lines += ["}", "", "WEIGHTS: dict[str, dict[str, dict[str, tuple[float, ...]]]] = {"]
    for key in sorted(models):
        lines.append(f"    {key!r}: {{")
        for kind in KINDS:
            lines.append(f"        {kind!r}: {{")
            for camp, ws in models[key][kind].items():
                lines.append(f"            {camp!r}: ({', '.join(f'{v:.4f}' for v in ws)},),")
            lines.append("        },")
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena fit chart`'s options."""
    fit_options(p, games=1500, seed=40_000)


def main(a: argparse.Namespace) -> int:
    """`arena fit chart`: collect, fit and print the chart model module."""
    models: dict[str, dict[str, dict[str, list[float]]]] = {}
    names: dict[str, list[str]] = {}
    notes: list[str] = []
    for ruleset, players, options in FIT_TABLES:
        t, data = collect(ruleset, players, options, a.games, a.seed)
        models[t.key] = {}
        names[t.key] = []
        for kind in KINDS:
            games = data[kind]
            cut = len(games) * 4 // 5
            train = [s for g in games[:cut] for s in g]
            held = [s for g in games[cut:] for s in g]
            w = fit(train, len(t.camps))
            models[t.key][kind] = dict(zip(t.camps, w, strict=True))
            names[t.key + "|" + kind] = feature_names(t, kind == "full")
            counts = [sum(1 for _, y in train if y == c) for c in range(len(t.camps))]
            base = [[0.0] * len(w[0]) for _ in t.camps]
            for c, m in enumerate(counts):
                base[c][0] = math.log(max(m, 1) / max(len(train), 1))
            notes.append(
                f"{t.key} {kind}: {log_loss(w, held):.3f} vs {log_loss(base, held):.3f} "
                f"({len(train) + len(held)} states, {len(games)} games)"
            )
            print(notes[-1], file=sys.stderr, flush=True)
    sys.stdout.write(render(models, names, notes, a.games))
    return 0
