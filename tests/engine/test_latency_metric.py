"""The engine's and the bot worker's answer latency: a lock-free histogram exposed exactly as
prometheus_client's Histogram with the same buckets (the dashboards and alerts read it)."""

from __future__ import annotations

from hypothesis import given
from hypothesis import strategies as st
from prometheus_client import CollectorRegistry, Histogram, generate_latest

from services.bots.worker import Metrics as BotMetrics
from services.engine.metrics import Metrics
from services.observability import Latency, mean_ms

BOUNDS = (0.0005, 0.001, 0.002, 0.005, 0.01, 0.02, 0.05, 0.1, 0.25, 0.5, 1, 2.5)


def _lines(registry: CollectorRegistry, name: str) -> list[str]:
    text = generate_latest(registry).decode()
    return [x for x in text.splitlines() if name in x and "_created" not in x]


@given(st.lists(st.sampled_from([0.0, 1e-4, *BOUNDS, 0.3, 2.6, 9.0]), max_size=40))
def test_exposed_as_the_histogram_is(values: list[float]) -> None:
    name = "arena_engine_action_latency_seconds"
    reference = CollectorRegistry()
    histogram = Histogram(name, "SubmitAction latency", buckets=BOUNDS, registry=reference)
    metrics = Metrics()
    for v in values:
        histogram.observe(v)
        metrics.latency.observe(v)
    assert _lines(metrics.registry, name) == _lines(reference, name)
    assert mean_ms(metrics.latency) == mean_ms(histogram)


def test_the_bot_workers_keeps_the_default_buckets() -> None:
    reference = CollectorRegistry()
    name = "arena_bot_answer_seconds"
    histogram = Histogram(name, "message received to acked", registry=reference)
    bots = BotMetrics()
    assert isinstance(bots.latency, Latency)
    for v in (0.001, 0.005, 0.3, 1.0, 11.0):
        histogram.observe(v)
        bots.latency.observe(v)
    assert _lines(bots.registry, name) == _lines(reference, name)
