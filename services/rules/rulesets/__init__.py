"""Rulesets: one package each (importing registers it)."""

from . import extended, honglou, standard  # noqa: F401
