"""Determinism: a game is a pure function of (ruleset, options, seed, answers).

* the same game twice, with noise in Python's global ``random`` between steps, gives the same
  encoded event bytes (compared by a SHA-256 hash chain) — also across interpreter processes
  with different ``PYTHONHASHSEED`` (set iteration order must never leak into the rules);
* snapshot → restore at random decision points continues exactly like the uninterrupted game;
* ``fork`` is a deep, independent copy.
"""

from __future__ import annotations

import hashlib
import os
import random
import subprocess
import sys
from collections.abc import Callable
from pathlib import Path

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.core.rng import below
from services.rules.core.state import Answer, Game

ROOT = Path(__file__).resolve().parents[2]
CASES = [(4, 11), (5, 12), (6, 13), (7, 14), (8, 15), (9, 16), (10, 17)]


class Run:
    """One recorded game: every answer, the encoded events per step, and the chained digest."""

    def __init__(self) -> None:
        self.answers: list[Answer] = []
        self.steps: list[list[bytes]] = []  # steps[0] = advance(); steps[i] = after answer i
        self.chain = hashlib.sha256()

    def record(self, events: list[api.Event]) -> None:
        data = [api.encode_event(e) for e in events]
        self.steps.append(data)
        for b in data:
            self.chain = hashlib.sha256(self.chain.digest() + b)

    @property
    def digest(self) -> str:
        return self.chain.hexdigest()


def play(
    players: int,
    seed: int,
    noise: Callable[[int], None] | None = None,
    on_decision: Callable[[Game, int], None] | None = None,
) -> tuple[Game, Run]:
    """Play a random game; ``noise(step)`` runs before every engine call."""
    run = Run()
    if noise:
        noise(-1)
    g = api.new_game("standard", players, seed)
    run.record(api.advance(g))
    pol = [RandomPolicy(seed * 7919 + i) for i in range(players)]
    while not g.over:
        d = api.pending(g)
        assert d is not None
        if on_decision:
            on_decision(g, len(run.answers))
        if noise:
            noise(len(run.answers))
        a = pol[d.seat].act(d)
        run.answers.append(a)
        run.record(api.submit(g, a))
    return g, run


def replay(g: Game, answers: list[Answer]) -> list[list[bytes]]:
    """Feed recorded answers to ``g``; the encoded events of each step."""
    out = []
    for a in answers:
        out.append([api.encode_event(e) for e in api.submit(g, a)])
    return out


def global_noise(step: int) -> None:
    """Disturb Python's global ``random`` as other code in the process might."""
    random.seed(step * 31 + 7)
    for _ in range(step % 5):
        random.random()
    xs = list(range(10))
    random.shuffle(xs)
    random.getrandbits(64)


def test_rng_is_a_pure_function() -> None:
    """The counter-based generator ignores the global ``random`` state."""
    a = [below(99, i, 1000) for i in range(50)]
    random.seed(1)
    random.random()
    assert [below(99, i, 1000) for i in range(50)] == a


def test_same_seed_same_bytes_with_global_random_noise() -> None:
    """Identical event bytes with and without noise in the global ``random``."""
    for players, seed in CASES:
        _, quiet = play(players, seed)
        _, noisy = play(players, seed, noise=global_noise)
        assert noisy.digest == quiet.digest, f"{players}p seed {seed}"
        assert noisy.steps == quiet.steps


def test_different_seeds_differ() -> None:
    """The seed matters (guards against a test that compares constants)."""
    assert play(6, 1)[1].digest != play(6, 2)[1].digest


DIGEST_SCRIPT = """
import sys
sys.path.insert(0, sys.argv[1])
from tests.rules.test_determinism import CASES, play
for players, seed in CASES[::2]:
    print(players, seed, play(players, seed)[1].digest)
"""


def test_same_bytes_across_processes_and_hash_seeds() -> None:
    """Fresh interpreters with different ``PYTHONHASHSEED`` produce the same digests."""
    outs = []
    for hash_seed in ("0", "1", "12345"):
        env = dict(os.environ, PYTHONHASHSEED=hash_seed)
        res = subprocess.run(
            [sys.executable, "-c", DIGEST_SCRIPT, str(ROOT)],
            env=env,
            capture_output=True,
            text=True,
            timeout=120,
            check=True,
        )
        outs.append(res.stdout)
    here = "".join(f"{p} {s} {play(p, s)[1].digest}\n" for p, s in CASES[::2])
    assert outs == [here] * 3


def test_snapshot_restore_at_random_points_continues_identically() -> None:
    """Restore snapshots taken at random decision points; the continuation is byte-identical."""
    pick = random.Random(2024)  # the test's own choice of points; not the engine's randomness
    for players, seed in CASES:
        snaps: dict[int, bytes] = {}

        def grab(g: Game, i: int, snaps: dict[int, bytes] = snaps) -> None:
            if pick.random() < 0.02 or i == 0:
                snaps[i] = api.snapshot(g)

        final, run = play(players, seed, on_decision=grab)
        assert len(snaps) >= 2
        end = api.snapshot(final)
        for i, data in snaps.items():
            g = api.restore(data)
            assert api.snapshot(g) == data, "snapshot(restore(b)) != b"
            assert replay(g, run.answers[i:]) == run.steps[i + 1 :], f"{players}p @{i}"
            assert api.snapshot(g) == end


def test_restore_of_a_fresh_and_a_finished_game() -> None:
    """Before the first advance and after the end, snapshots round-trip too."""
    g = api.new_game("standard", 8, 3)
    fresh = api.snapshot(g)
    again = api.restore(fresh)
    assert api.snapshot(again) == fresh
    assert [api.encode_event(e) for e in api.advance(again)] == [
        api.encode_event(e) for e in api.advance(g)
    ]
    final, _ = play(5, 8)
    assert api.snapshot(api.restore(api.snapshot(final))) == api.snapshot(final)


def test_fork_is_independent() -> None:
    """Playing a fork, and mutating it, leaves the original untouched."""
    players, seed = 8, 21
    _, run = play(players, seed)
    mid = len(run.answers) // 2
    g = api.new_game("standard", players, seed)
    api.advance(g)
    replay(g, run.answers[:mid])
    before = api.snapshot(g)

    f = api.fork(g)
    assert api.snapshot(f) == before
    f2 = api.fork(g)  # the frame stack of a mid-game fork is not shared either
    assert f2.stack and all(a is not b for a, b in zip(f2.stack, g.stack, strict=True))
    for fr in f2.stack:
        fr.step = "vandalised"
    assert f2.pending is not None and g.pending is not None
    f2.pending.options.append("bogus")
    assert api.snapshot(g) == before
    assert f is not g and f.players[0] is not g.players[0] and f.stack is not g.stack
    # play the fork out with a different policy, then vandalise its containers
    pol = [RandomPolicy(999 + i) for i in range(players)]
    while not f.over:
        d = api.pending(f)
        assert d is not None
        api.submit(f, pol[d.seat].act(d))
    for p in f.players:
        p.hand.append(-1)
        p.equip["weapon"] = -1
        p.marks["x"] = 1
    f.draw.clear()
    f.options["max_reshuffles"] = 99
    assert api.snapshot(g) == before
    # and the original continues exactly like the uninterrupted game
    assert replay(g, run.answers[mid:]) == run.steps[mid + 1 :]
