"""Rulesets: one package each (importing registers it)."""

from . import extended, honglou, jinyu, standard  # noqa: F401
