"""Contracts between services: what one process sends another, typed once and imported by both.

Seat tokens, and the messages of the shared streams (a match to start, a decision for a bot seat,
a finished game) live here, so producers and consumers cannot drift apart. Nothing here imports a
service package; every service may import this one.
"""
