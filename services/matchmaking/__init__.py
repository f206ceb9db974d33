"""Matchmaking: modes, tickets and tables in Redis, bot backfill, openskill ratings (README.md)."""
