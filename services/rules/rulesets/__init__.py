"""Rulesets: one package each (importing registers it)."""

from . import honglou, standard  # noqa: F401
