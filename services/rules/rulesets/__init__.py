"""Rulesets: one package each (importing registers it)."""

from . import standard  # noqa: F401
