"""Small statistics for self-play summaries: Wilson and Newcombe intervals, percentiles."""

from __future__ import annotations

import math

Z95 = 1.959963984540054


def wilson(wins: int, n: int, z: float = Z95) -> tuple[float, float]:
    """The Wilson score interval of a binomial proportion."""
    if n == 0:
        return 0.0, 1.0
    p = wins / n
    den = 1 + z * z / n
    mid = (p + z * z / (2 * n)) / den
    half = z * math.sqrt(p * (1 - p) / n + z * z / (4 * n * n)) / den
    return max(0.0, mid - half), min(1.0, mid + half)


def newcombe(w1: int, n1: int, w2: int, n2: int) -> tuple[float, float, float]:
    """p1 − p2 with Newcombe's hybrid score interval (from the two Wilson intervals)."""
    if not n1 or not n2:
        return 0.0, -1.0, 1.0
    p1, p2 = w1 / n1, w2 / n2
    l1, u1 = wilson(w1, n1)
    l2, u2 = wilson(w2, n2)
    d = p1 - p2
    return (
        d,
        d - math.sqrt((p1 - l1) ** 2 + (u2 - p2) ** 2),
        d + math.sqrt((u1 - p1) ** 2 + (p2 - l2) ** 2),
    )


def mean_ci(xs: list[float], z: float = Z95) -> tuple[float, float, float]:
    """Mean and normal-approximation interval of independent samples."""
    n = len(xs)
    if n == 0:
        return 0.0, 0.0, 1.0
    m = sum(xs) / n
    if n == 1:
        return m, m, m
    sd = math.sqrt(sum((x - m) ** 2 for x in xs) / (n - 1))
    h = z * sd / math.sqrt(n)
    return m, m - h, m + h


def percentile(xs: list[float], q: float) -> float:
    """The ``q``-quantile (0..1) by the nearest-rank method."""
    if not xs:
        return 0.0
    s = sorted(xs)
    k = min(len(s) - 1, max(0, math.ceil(q * len(s)) - 1))
    return s[k]
