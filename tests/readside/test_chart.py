"""The win-chance chart (services/readside/chart.py): a finished game's chart ends on the side
that won and marks every death; a live one is the public model's, held the viewer's delay behind;
its features count a hidden role only as the share the role table leaves it; the fitted public
model tells the winner better than the base rate on games it never saw."""

from __future__ import annotations

import math
from collections.abc import Callable
from typing import Any

import msgspec
import pytest

from services.eventlog import InMemoryEventStore
from services.play.watchschema import Chart
from services.readside import chart
from services.readside.access import TablePolicy
from services.readside.clock import ManualClock
from services.readside.reader import ReadSide
from services.rules import api
from services.verify import record_game


async def _chart(reads: ReadSide, viewer: int = api.SPECTATOR, delay: int = 0) -> dict[str, Any]:
    feed, grant = await reads.grant("g", viewer, None, delay)
    body = chart.render(
        chart.Charts(),
        feed,
        reads.header_of(feed),
        grant.viewer,
        grant.delay_ms,
        reads.clock.now_ms(),
    )
    msgspec.json.decode(body, type=Chart)  # what the OpenAPI document says it sends
    out: dict[str, Any] = msgspec.json.decode(body)
    return out


async def test_a_finished_games_chart_ends_on_the_winners_and_marks_the_deaths() -> None:
    for ruleset, players, seed in (("standard", 5, 3), ("extended", 8, 4), ("chengtian", 2, 5)):
        store = InMemoryEventStore()
        await record_game(store, "g", api, ruleset, players, seed)
        reads = ReadSide(store)
        feed = await reads.feed("g")
        got = await _chart(reads)
        camps = [c["key"] for c in got["camps"]]
        log = [  # what the spectator got, numbered by its positions (the chart's numbers too)
            msgspec.json.decode(env)
            for s in range(1, feed.version + 1)
            if (env := feed.envelope(s, api.SPECTATOR)) is not None
        ]
        events = [(x["seq"], x["event"]) for x in log if x.get("kind") == "event"]
        end = next(e for _, e in events if e["type"] == "game_ended")
        assert got["over"] and got["model"] in ("full", "hand-set")
        last = got["points"][-1]
        table = chart.table_of(reads.header_of(feed))
        winning = {
            f"seat{s}" if table.roleless else table.camp_of[end["roles"][s]]
            for s in end["winner_seats"]
        }
        assert [c for c, p in zip(camps, last[1:], strict=True) if p > 0] == sorted(
            winning, key=camps.index
        )
        assert math.isclose(sum(last[1:]), 1.0, abs_tol=0.01)
        seqs = [p[0] for p in got["points"]]
        assert seqs == sorted(seqs) and len(set(seqs)) == len(seqs)
        for p in got["points"][:-1]:
            assert math.isclose(sum(p[1:]), 1.0, abs_tol=0.01) and all(0 <= x <= 1 for x in p[1:])
        deaths = [(s, e["seat"]) for s, e in events if e["type"] == "died"]
        marked = [(m["seq"], m["seat"]) for m in got["moments"] if m["kind"] == "death"]
        assert marked == deaths
        swings = [m for m in got["moments"] if m["kind"] == "swing"]
        assert len(swings) <= chart.SWINGS and all(m["seq"] in seqs for m in swings)
        assert [m["kind"] for m in got["moments"]][-1] == "end"


async def test_a_live_chart_is_the_public_models_held_the_viewers_delay_behind() -> None:
    store = InMemoryEventStore()
    await record_game(store, "g", api, "standard", 5, 9)
    records = [data for _, data in await store.read("g")]
    cut = next(  # the log up to (not with) its first death: still live
        i for i, d in enumerate(records) if b"died" in d
    )
    clock = ManualClock(10_000_000)
    live = InMemoryEventStore(clock.now_ms)  # entries stamped on the read side's clock
    await live.append("g", 0, records[:cut])
    reads = ReadSide(live, clock=clock, policy=lambda h: TablePolicy(spectator_delay_ms=60_000))
    got = await _chart(reads)
    assert not got["over"] and got["points"] == [] and got["upto"] == 0  # all held back
    clock.advance(120_000)
    got = await _chart(reads)
    assert got["model"] in ("public", "hand-set") and got["points"]
    assert not [m for m in got["moments"] if m["kind"] in ("death", "end")]


def test_a_hidden_role_counts_as_its_share() -> None:
    """Standard, 5 seats, before any death: the lord is shown, the other four are one
    loyalist, two rebels and a renegade among four unknown seats."""
    t = chart.table("standard", 5, "{}")
    v = api.new_view(api.SPECTATOR)
    for s in range(5):
        v.seats.append(api.SeatView(seat=s, hp=4, max_hp=4, hand_count=4))
    v.seats[0].role = "lord"
    x = chart.features(t, v, full=False)
    names = chart.feature_names(t, full=False)
    f = dict(zip(names, x, strict=True))
    assert t.camps == ("lord", "rebel", "renegade")
    assert math.isclose(f["lord_alive"], 2.0) and math.isclose(f["rebel_alive"], 2.0)
    assert math.isclose(f["renegade_alive"], 1.0) and math.isclose(f["lord_hp"], 8.0)
    v.seats[3].alive, v.seats[3].role, v.seats[3].hp = False, "rebel", 0  # a rebel died
    f = dict(zip(names, chart.features(t, v, full=False), strict=True))
    assert math.isclose(f["rebel_alive"], 1.0) and math.isclose(f["lord_alive"], 2.0)
    v.seats[4].role = "loyalist"  # ... and this one is known now
    f = dict(zip(names, chart.features(t, v, full=False), strict=True))
    assert math.isclose(f["lord_alive"], 2.0) and math.isclose(f["renegade_alive"], 1.0)


def log_loss(samples: list[Any], z_of: Callable[[list[float]], list[float]]) -> float:
    """The mean log-loss of the scores `z_of(features)` (softmaxed) on (features, winner)."""
    total = 0.0
    for x, y in samples:
        z = z_of(x)
        top = max(z)
        total -= z[y] - top - math.log(sum(math.exp(zi - top) for zi in z))
    return total / len(samples)


@pytest.mark.parametrize("games", [10, pytest.param(40, marks=pytest.mark.slow)])
def test_the_public_model_tells_the_winner_better_than_the_base_rate(games: int) -> None:
    """On 40 games it never saw (other seeds), the fitted model's log-loss at every turn start
    is below the base rate's (each camp's share of the wins in those games): 0.64 vs 0.77. The
    default suite plays the first 10 of them (0.54 vs 0.64), -m slow all 40."""
    from services.bots.valuepublic import collect

    t, data = collect("standard", 5, {}, games, 900_000)
    samples = [s for g in data["public"] for s in g]
    w = chart._weights(t, "public")
    assert w is not None, "no public model for standard/5"
    weights = [list(w[c]) for c in t.camps]
    counts = [sum(1 for _, y in samples if y == c) for c in range(len(t.camps))]
    base = [math.log(max(k, 1) / len(samples)) for k in counts]
    fitted = log_loss(
        samples, lambda x: [sum(a * b for a, b in zip(row, x, strict=True)) for row in weights]
    )
    flat = log_loss(samples, lambda x: base)
    assert fitted < flat - 0.05, (fitted, flat)


UNFITTED = [  # tables no model was fitted for (chartmodel.WEIGHTS): the hand-set score charts them
    ("jinyu", 6, {}),
    ("honglou", 7, {}),
    ("standard", 9, {}),
    ("jinyu", 5, {"mougong": True}),
    ("extended", 12, {"variant": "advanced"}),
]


async def test_a_table_without_a_fitted_model_is_still_charted() -> None:
    """A ruleset or size the fitted models do not cover gets the hand-set score (each camp's
    expected HP, cards and equipment, the lord's danger): a live chart that moves with the
    game and a finished one that ends on the winners, never an empty chart."""
    from services.readside.chartmodel import WEIGHTS

    for ruleset, players, options in UNFITTED:
        t = chart.table(ruleset, players, msgspec.json.encode(options).decode())
        assert t.key not in WEIGHTS, t.key  # (else this case tests the fitted model)
        store = InMemoryEventStore()
        await record_game(store, "g", api, ruleset, players, 3, options=options)
        records = [data for _, data in await store.read("g")]
        live = InMemoryEventStore()
        await live.append("g", 0, records[: len(records) * 2 // 3])
        got = await _chart(ReadSide(live))
        assert got["model"] == "hand-set" and not got["over"], (t.key, got["model"])
        assert [c["key"] for c in got["camps"]] == list(t.camps)
        assert len(got["points"]) > 10, t.key
        assert len({tuple(p[1:]) for p in got["points"]}) > 5, t.key  # it moves with the game
        for p in got["points"]:
            assert math.isclose(sum(p[1:]), 1.0, abs_tol=0.01) and all(0 <= x <= 1 for x in p[1:])
        done = await _chart(ReadSide(store))
        assert done["model"] == "hand-set" and done["over"]
        assert [m["kind"] for m in done["moments"]][-1] == "end"


@pytest.mark.parametrize("games", [10, pytest.param(30, marks=pytest.mark.slow)])
def test_the_hand_set_score_tells_the_winner_better_than_a_flat_guess(games: int) -> None:
    """What a spectator reads on a table without a model is worth reading: over 30 games each of
    two unfitted tables, the hand-set score's log-loss at every turn start is well below an even
    guess's (measured: jinyu/6 0.90 vs 1.10, honglou/6 0.78 vs 1.10; it also beats the base
    rate of each camp's wins there, 1.05 and 1.00, which a spectator could not know). The
    default suite plays the first 10 games of each (0.75 and 0.82 vs 1.10), -m slow all 30."""
    from services.bots.valuepublic import collect

    for ruleset, players in (("jinyu", 6), ("honglou", 6)):
        t, data = collect(ruleset, players, {}, games, 900_000)
        samples = [s for g in data["public"] for s in g]
        hand_set = log_loss(samples, lambda x, t=t: chart._hand_set(t, x, False))
        even = log_loss(samples, lambda x, t=t: [0.0] * len(t.camps))
        assert hand_set < even - 0.1, (t.key, hand_set, even)
