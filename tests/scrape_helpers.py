"""Reading a service's /metrics in tests (the matchmaker's and the replay server's)."""

from __future__ import annotations

import urllib.request

from prometheus_client.parser import text_string_to_metric_families

Samples = dict[tuple[str, tuple[tuple[str, str], ...]], float]


def scrape(port: int, names: set[str]) -> Samples:
    """GET /metrics: {(sample name, sorted labels): value}; also checks every family in `names`
    is served."""
    with urllib.request.urlopen(f"http://127.0.0.1:{port}/metrics", timeout=5) as r:
        text = r.read().decode()
    families = list(text_string_to_metric_families(text))
    missing = names - {f.name for f in families}
    assert not missing, missing
    return {(s.name, tuple(sorted(s.labels.items()))): s.value for f in families for s in f.samples}
