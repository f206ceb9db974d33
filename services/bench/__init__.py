"""The benchmarks (`arena bench ...`), apart from the services they measure.

A benchmark may import any part of Arena; no service imports a benchmark (services/layers.py).
Every one prints JSON: CPU time beside wall time, its variants in interleaved rounds, the
machine and its load average (:mod:`services.bench.kit`).

| module | command |
|---|---|
| ``engine`` | ``arena bench engine``: the rules in one process, beside RLCard's Uno |
| ``service`` | ``arena bench service``: the engine worker's own code in one process |
| ``eventlog``, ``cluster`` | ``arena bench eventlog [--cluster]``: appends against raw redis-py |
| ``e2e``, ``e2e_command`` | ``arena bench e2e``: the same games in-process and through ``arena up`` |
| ``replay`` | ``arena bench replay``: SSE fan-out latency beside raw XREAD |
| ``matchmaking`` | ``arena bench matchmaking``: tickets matched per second |
| ``bots`` | ``arena bench bots``: all-bot games through engine and bot worker processes |
| ``play`` | ``arena bench play``: simulated people over the HTTP API while bot games run |
"""
