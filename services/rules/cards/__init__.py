"""Card definitions: one small named unit per card, registered by name (importing registers)."""

from . import basic, delayed, equipment, tricks  # noqa: F401
