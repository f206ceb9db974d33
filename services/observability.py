"""What every Arena service shares for Prometheus: serving a registry, and small readings.

Each service keeps its metrics on its own `CollectorRegistry` (tests run several services in one
process); `serve` exposes one on /metrics from a thread, as every worker and server does.
"""

from __future__ import annotations

import bisect
from collections.abc import Iterator
from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry
from prometheus_client.core import HistogramMetricFamily
from prometheus_client.registry import Collector


def serve(port: int, registry: CollectorRegistry, host: str = "127.0.0.1") -> WSGIServer:
    """Serve /metrics of `registry` on `host`:`port` (0: any free port) in a thread — the
    service's own --host, so a service bound to loopback does not expose its metrics on every
    address; the bound port is `server.server_port`."""
    from prometheus_client import start_http_server

    from .ports import check_free

    check_free(host, port, "--metrics-port")
    server, _ = start_http_server(port, addr=host, registry=registry)
    return server


def stop_serving(server: WSGIServer) -> None:
    """Stop a server from `serve` (waits up to half a second: call it off the event loop)."""
    server.shutdown()
    server.server_close()


def mean_ms(histogram: Collector) -> float:
    """The mean of a histogram's observations (seconds) in ms, 0 if none (for exit reports)."""
    samples = {x.name: x.value for m in histogram.collect() for x in m.samples}
    count = next((v for k, v in samples.items() if k.endswith("_count")), 0.0)
    total = next((v for k, v in samples.items() if k.endswith("_sum")), 0.0)
    return round(1000 * total / count, 2) if count else 0.0


class Latency(Collector):
    """A histogram observed on every answer (the engine's, the bot worker's), in plain numbers
    read at scrape time: prometheus_client's Histogram takes a lock and runs a Python loop per
    observation, a microsecond on every answer. Exposed exactly as a Histogram with these
    buckets is (without `_created`); register it on the service's registry."""

    def __init__(self, name: str, doc: str, buckets: tuple[float, ...]) -> None:
        self.name, self.doc, self.bounds = name, doc, buckets
        self.counts = [0] * (len(buckets) + 1)  # per bucket (not cumulative); the last: +Inf
        self.sum = 0.0

    def observe(self, seconds: float, times: int = 1) -> None:
        """One observation (or `times` alike: the answers of one batch)."""
        self.counts[bisect.bisect_left(self.bounds, seconds)] += times
        self.sum += seconds * times

    def collect(self) -> Iterator[HistogramMetricFamily]:
        """The histogram, cumulative buckets, sum and count."""
        counts, total, cumulative = list(self.counts), self.sum, 0
        buckets = []
        for bound, n in zip([*map(float, self.bounds), float("inf")], counts, strict=True):
            cumulative += n
            le = "+Inf" if bound == float("inf") else repr(bound)
            buckets.append((le, cumulative))
        yield HistogramMetricFamily(self.name, self.doc, buckets=buckets, sum_value=total)
