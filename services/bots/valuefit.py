"""Fit the look-ahead's state value from self-play: P(my side wins | the table now), per table, role
class and phase (a rebel alive or not), a logistic model over camp features (:func:`.value.features`).

Every turn start of all-heuristic games (the policy the look-ahead plays out with) gives, for each
seat alive, the features from that seat's side and whether it went on to win; a ridge-regularised
logistic regression per (table, class) is fitted by Newton's method (pure Python: ~30 weights).

    arena fit value --games 600 > services/bots/valuemodel.py

fits standard 5 and 8, jinyu 8 谋攻 and extended 8 (seeds from 20,000, apart from the
measurement seeds and the likelihood fit's).
"""

from __future__ import annotations

import argparse
import math
import sys
from typing import Any

from ..rules import api
from ..rules.api import events as ev
from .fit import fit_options
from .roles import table_key
from .selfplay import Table
from .value import FEATURES, classes, features, phase_key

FIT_TABLES: list[tuple[str, int, dict[str, Any]]] = [
    ("standard", 5, {}),
    ("standard", 8, {}),
    ("jinyu", 8, {"mougong": True}),
    ("extended", 8, {}),
]
RIDGE = 2.0
MIN_STATES = 500

Sample = tuple[list[float], int]


def collect(
    ruleset: str, players: int, options: dict[str, Any], games: int, seed: int
) -> dict[str, list[Sample]]:
    """Features and outcomes by class and phase, at every turn start of ``games`` all-heuristic
    games."""
    opts = api.table_options(ruleset, players, options)
    out: dict[str, list[Sample]] = {}
    for i in range(games):
        g = api.new_game(ruleset, players, seed + i, opts)
        t = Table(g, ["heuristic"] * players, seed + i)
        rows: list[tuple[str, int, list[float]]] = []
        events = api.advance(g)
        while True:
            t.feed(events)
            if any(isinstance(e, ev.TurnStarted) for e in events) and not g.over:
                of = classes(g)
                for p in g.players:
                    if p.alive and of[p.seat]:
                        rows.append((phase_key(g, p.seat, of), p.seat, features(g, p.seat, of)))
            if g.over:
                break
            d = g.pending
            assert d is not None
            events = api.submit(g, t.act(d))
        won = set(g.winners)
        for c, seat, x in rows:
            out.setdefault(c, []).append((x, int(seat in won)))
    return out


def _solve(a: list[list[float]], b: list[float]) -> list[float]:
    """Solve a x = b (Gaussian elimination with partial pivoting; ``a`` is small)."""
    n = len(b)
    m = [row[:] + [b[i]] for i, row in enumerate(a)]
    for col in range(n):
        piv = max(range(col, n), key=lambda r: abs(m[r][col]))
        m[col], m[piv] = m[piv], m[col]
        if abs(m[col][col]) < 1e-12:
            continue
        for r in range(n):
            if r != col and m[r][col]:
                f = m[r][col] / m[col][col]
                m[r] = [x - f * y for x, y in zip(m[r], m[col], strict=True)]
    return [m[i][n] / m[i][i] if abs(m[i][i]) > 1e-12 else 0.0 for i in range(n)]


def fit(samples: list[Sample], iterations: int = 12) -> list[float]:
    """Ridge logistic regression by Newton's method (the first feature is the bias, unpenalised);
    with numpy when it is installed (the `bench` extra), else in pure Python (slower, the same)."""
    try:
        import numpy as np
    except ImportError:
        return _fit_python(samples, iterations)
    x = np.array([s[0] for s in samples], dtype=float)
    y = np.array([s[1] for s in samples], dtype=float)
    k = x.shape[1]
    w = np.zeros(k)
    ridge = np.full(k, RIDGE)
    ridge[0] = 0.0
    for _ in range(iterations):
        p = 1.0 / (1.0 + np.exp(-np.clip(x @ w, -30, 30)))
        grad = x.T @ (y - p) - ridge * w
        hess = (x * (p * (1 - p))[:, None]).T @ x + np.diag(ridge) + 1e-9 * np.eye(k)
        step = np.linalg.solve(hess, grad)
        w = w + step
        if float(np.max(np.abs(step))) < 1e-6:
            break
    return [float(v) for v in w]


def _fit_python(samples: list[Sample], iterations: int) -> list[float]:
    k = len(samples[0][0])
    w = [0.0] * k
    for _ in range(iterations):
        grad = [0.0] * k
        hess = [[0.0] * k for _ in range(k)]
        for x, y in samples:
            z = sum(wi * xi for wi, xi in zip(w, x, strict=True))
            p = 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
            r, s = y - p, p * (1 - p)
            for i in range(k):
                if x[i]:
                    grad[i] += r * x[i]
                    sx = s * x[i]
                    row = hess[i]
                    for j in range(i, k):
                        if x[j]:
                            row[j] += sx * x[j]
        for i in range(k):
            for j in range(i):
                hess[i][j] = hess[j][i]
            if i:
                grad[i] -= RIDGE * w[i]
                hess[i][i] += RIDGE
        step = _solve(hess, grad)
        w = [wi + si for wi, si in zip(w, step, strict=True)]
        if max(abs(s) for s in step) < 1e-6:
            break
    return w


def log_loss(w: list[float], samples: list[Sample]) -> float:
    """Mean log-loss of the model on ``samples``."""
    total = 0.0
    for x, y in samples:
        z = sum(wi * xi for wi, xi in zip(w, x, strict=True))
        p = 1.0 / (1.0 + math.exp(-max(min(z, 30.0), -30.0)))
        total -= math.log(max(p if y else 1 - p, 1e-9))
    return total / max(len(samples), 1)


def render(models: dict[str, dict[str, list[float]]], notes: list[str], games: int) -> str:
    """The value model module's text."""
    lines = [
        '"""The look-ahead\'s state value, fitted from self-play by services/bots/valuefit.py',
        f"(`arena fit value --games {games} > services/bots/valuemodel.py`).",
        "",
        "WEIGHTS[table][class] are the logistic weights of P(a seat of that class wins) over",
        "value.FEATURES; held-out log-loss against the base rate's:",
        "",
        *[f"    {n}" for n in notes],
        '"""',
        "",
        "from __future__ import annotations",
        "",
        f"FEATURES = {tuple(FEATURES)!r}",
        "",
        "WEIGHTS: dict[str, dict[str, tuple[float, ...]]] = {",
    ]
    for key in sorted(models):
        lines.append(f'    "{key}": {{')
        for c in sorted(models[key]):
            ws = ", ".join(f"{x:.4f}" for x in models[key][c])
            lines.append(f'        "{c}": ({ws}),')
        lines.append("    },")
    lines.append("}")
    return "\n".join(lines) + "\n"


def add_arguments(p: argparse.ArgumentParser) -> None:
    """`arena fit value`'s options."""
    fit_options(p, games=600, seed=20_000)


def main(a: argparse.Namespace) -> int:
    """`arena fit value`: collect, fit and print the value model module."""
    models: dict[str, dict[str, list[float]]] = {}
    notes: list[str] = []
    for ruleset, players, options in FIT_TABLES:
        key = table_key(ruleset, players, options)
        data = collect(ruleset, players, options, a.games, a.seed)
        models[key] = {}
        for c, samples in sorted(data.items()):
            if len(samples) < MIN_STATES:
                continue  # too few to fit: that class and phase reads the hand-set score
            cut = len(samples) * 4 // 5  # games in order: the last fifth is held out
            w = fit(samples[:cut])
            models[key][c] = w
            held = samples[cut:]
            base = sum(y for _, y in samples[:cut]) / max(cut, 1)
            flat = [0.0] * len(w)
            flat[0] = math.log(max(base, 1e-6) / max(1 - base, 1e-6))
            notes.append(
                f"{key} {c}: {log_loss(w, held):.3f} vs {log_loss(flat, held):.3f}"
                f" ({len(samples)} states)"
            )
            print(notes[-1], file=sys.stderr)
    sys.stdout.write(render(models, notes, a.games))
    return 0
