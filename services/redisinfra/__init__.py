"""The Redis infrastructure every service stands on: the client, work streams with consumer
groups, trimming, reconnecting, batching, liveness, the redis-server launcher, migrate (README.md).

Nothing here knows a game: the event log itself is services/eventlog.
"""
