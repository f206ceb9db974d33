"""Rulesets: one package each (importing registers it)."""

from . import chengtian, extended, honglou, jinyu, standard  # noqa: F401
