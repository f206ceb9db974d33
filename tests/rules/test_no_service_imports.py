"""Import readers the rules tests share. That the rules engine imports no service (every other
package depends on it, never the reverse) is one rule of services/layers.py, checked with every
other part's by tests/test_layers.py.
"""

from __future__ import annotations

import ast
from pathlib import Path

ROOT = Path(__file__).resolve().parents[2]
RULES = ROOT / "services" / "rules"
SERVICES = {"bots", "engine", "eventlog", "replay", "matchmaking", "platform"}


def imported_modules(source: str, module: str) -> list[str]:
    """The absolute names of what ``module`` (its source given) imports.

    ``from X import y`` gives X and X.y (y may be a module or a name in X).
    """
    package = module.split(".")[:-1]
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.Import):
            out += [alias.name for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                base = package[: len(package) - node.level + 1] + base
            out += [".".join(base)] + [".".join([*base, a.name]) for a in node.names]
    return out


def service_of(module: str) -> str | None:
    """The service package a module name belongs to, if any."""
    parts = module.split(".")
    return parts[1] if len(parts) > 1 and parts[0] == "services" and parts[1] in SERVICES else None


def module_name(path: Path) -> str:
    """``services/rules/core/state.py`` -> ``services.rules.core.state``."""
    return ".".join(path.relative_to(ROOT).with_suffix("").parts)
