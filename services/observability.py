"""What every Arena service shares for Prometheus: serving a registry, and small readings.

Each service keeps its metrics on its own `CollectorRegistry` (tests run several services in one
process); `serve` exposes one on /metrics from a thread, as every worker and server does.
"""

from __future__ import annotations

from wsgiref.simple_server import WSGIServer

from prometheus_client import CollectorRegistry, Histogram


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


def mean_ms(histogram: Histogram) -> float:
    """The mean of a histogram's observations (seconds) in ms, 0 if none (for exit reports)."""
    samples = {x.name: x.value for m in histogram.collect() for x in m.samples}
    count = next((v for k, v in samples.items() if k.endswith("_count")), 0.0)
    total = next((v for k, v in samples.items() if k.endswith("_sum")), 0.0)
    return round(1000 * total / count, 2) if count else 0.0
