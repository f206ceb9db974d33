"""The import graph of services/ held against the parts of services/layers.py (issue #41 item 2).

Every import statement of every module is read: module-level, function-local and TYPE_CHECKING
ones, relative ones resolved against the module's package, and a module name given as a string
argument to a call (``importlib.import_module("services.rules.api")``, the CLI's
``Command(help, "services.bench.engine")``); a module name in a list (``[python, "-m",
"services.cli", ...]``, a process started) is not an import. Each import that leaves its part
for a part outside the part's ``uses`` is a broken rule.

The rules broken today are listed below in KNOWN_DEBT: a shrinking allow-list. Each entry is a
known debt (the read-side work of #41 and a later clean-up remove them); the test fails on any
break not in it, and on an entry that no longer breaks (remove it: the list only shrinks).
`python3 -m pytest tests/test_layers.py -rA` prints every broken rule, debts included.
"""

from __future__ import annotations

import ast
import warnings
from dataclasses import dataclass
from pathlib import Path

import pytest

from services import layers
from services.layers import PARTS, Part, part_of

ROOT = Path(__file__).resolve().parents[1]
SERVICES = ROOT / "services"

# (importer, imported) -> why it is a debt and who pays it. Remove an entry when it is paid.
KNOWN_DEBT: dict[tuple[str, str], str] = {}  # all paid (issue 41): keep it empty


def module_name(path: Path) -> str:
    """``services/rules/core/state.py`` -> ``services.rules.core.state`` (a package: its name)."""
    parts = path.relative_to(ROOT).with_suffix("").parts
    return ".".join(parts[:-1] if parts[-1] == "__init__" else parts)


MODULES = {module_name(p): p for p in sorted(SERVICES.rglob("*.py"))}


def _docstrings(tree: ast.AST) -> set[int]:
    out = set()
    for node in ast.walk(tree):
        if isinstance(node, ast.Module | ast.ClassDef | ast.FunctionDef | ast.AsyncFunctionDef):
            first = node.body[0] if node.body else None
            if isinstance(first, ast.Expr) and isinstance(first.value, ast.Constant):
                out.add(id(first.value))
    return out


def imported(source: str, module: str, is_package: bool, known: set[str]) -> list[tuple[str, int]]:
    """(module of ``known``, line) for every import of services code in ``source``.

    ``from X import y`` is X.y if that is a known module, else X; a name is cut back to the
    longest known module it starts with (``import services.a.b`` of a module services.a)."""
    package = module.split(".") if is_package else module.split(".")[:-1]
    tree = ast.parse(source)
    raw: list[tuple[str, int]] = []
    for node in ast.walk(tree):
        if isinstance(node, ast.Import):
            raw += [(alias.name, node.lineno) for alias in node.names]
        elif isinstance(node, ast.ImportFrom):
            base = node.module.split(".") if node.module else []
            if node.level:
                base = package[: len(package) - node.level + 1] + base
            for alias in node.names:
                name = ".".join([*base, alias.name])
                raw.append((name if name in known else ".".join(base), node.lineno))
        elif isinstance(node, ast.Call):
            for arg in [*node.args, *(k.value for k in node.keywords)]:
                text = arg.value if isinstance(arg, ast.Constant) else None
                if isinstance(text, str) and text.startswith(layers.ROOT + ".") and " " not in text:
                    raw.append((text, node.lineno))
    out = []
    for name, line in raw:
        while name and name not in known:
            name = name.rpartition(".")[0]
        if name and (name == layers.ROOT or name.startswith(layers.ROOT + ".")):
            out.append((name, line))
    return out


@dataclass(frozen=True)
class Break:
    """One import that breaks the table: ``importer`` (its part) imports ``target``."""

    importer: str
    target: str
    line: int
    rule: str

    def __str__(self) -> str:
        path = MODULES[self.importer].relative_to(ROOT)
        return f"{path}:{self.line} imports {self.target}: {self.rule}"


def rule_broken(source: Part, target: Part, target_module: str) -> str | None:
    """The rule an import from ``source`` into ``target_module`` (of ``target``) breaks."""
    if source is target:
        return None
    if target.name not in source.uses:
        return f"{source.name} never imports {target.name}"
    if target.facade and not target_module.startswith(target.facade):
        return f"{source.name} imports {target.name} only through {', '.join(target.facade)}"
    return None


def breaks() -> list[Break]:
    """Every broken rule of services/, one per (importer, imported module), first line."""
    known = set(MODULES)
    seen: dict[tuple[str, str], Break] = {}
    for module, path in MODULES.items():
        source = part_of(module)
        assert source is not None, (
            f"{path.relative_to(ROOT)} belongs to no part: add it to {LAYERS}"
        )
        names = imported(path.read_text(), module, path.name == "__init__.py", known)
        for target_module, line in names:
            target = part_of(target_module)
            assert target is not None, f"{target_module} belongs to no part: add it to {LAYERS}"
            rule = rule_broken(source, target, target_module)
            if rule and (module, target_module) not in seen:
                seen[(module, target_module)] = Break(module, target_module, line, rule)
    return sorted(seen.values(), key=lambda b: (b.importer, b.target))


LAYERS = "services/layers.py"


def test_every_module_belongs_to_a_part() -> None:
    homeless = [str(p.relative_to(ROOT)) for m, p in MODULES.items() if part_of(m) is None]
    assert not homeless, f"modules in no part of {LAYERS}: {homeless}"
    assert part_of("services.rules.core.state") is PARTS[0]
    assert part_of("services.cliargs") is not part_of("services.cli")
    assert part_of("services.newthing") is None  # the root package names only itself


def test_the_table_is_a_layering() -> None:
    """Every part used exists, no part uses itself, and `uses` has no cycle."""
    names = {p.name: p for p in PARTS}
    assert len(names) == len(PARTS)
    for part in PARTS:
        assert set(part.uses) <= set(names) - {part.name}, part.name
    done: set[str] = set()

    def visit(name: str, path: tuple[str, ...]) -> None:
        assert name not in path, f"cycle in {LAYERS}: {' -> '.join([*path, name])}"
        if name not in done:
            for used in names[name].uses:
                visit(used, (*path, name))
            done.add(name)

    for name in names:
        visit(name, ())


def test_no_new_break() -> None:
    found = breaks()
    debts = [str(b) for b in found if (b.importer, b.target) in KNOWN_DEBT]
    if debts:  # shown in every run's warnings summary: the debt stays in sight
        warnings.warn(
            f"{len(debts)} known layer breaks (KNOWN_DEBT in tests/test_layers.py):\n  "
            + "\n  ".join(debts),
            stacklevel=1,
        )
    new = [str(b) for b in found if (b.importer, b.target) not in KNOWN_DEBT]
    assert not new, f"imports that break {LAYERS}:\n" + "\n".join(new)


def test_known_debts_are_still_owed() -> None:
    """An entry of KNOWN_DEBT whose import is gone is removed, so the list only shrinks."""
    found = {(b.importer, b.target) for b in breaks()}
    paid = [f"{a} -> {b}" for a, b in KNOWN_DEBT if (a, b) not in found]
    assert not paid, "no longer broken, remove from KNOWN_DEBT: " + ", ".join(paid)


def test_the_checker_sees_every_kind_of_import() -> None:
    """Relative, absolute, function-local, TYPE_CHECKING and importlib imports are found; a
    module named in a process's argv is not an import."""
    known = {
        "services",
        "services.engine",
        "services.engine.feed",
        "services.replay.clock",
        "services.rules.api",
        "services.rules.core.state",
        "services.cli",
        "services.bots.x",
    }
    source = (
        "import importlib, sys\n"
        "from typing import TYPE_CHECKING\n"
        "from .feed import SeatView\n"
        "from ..replay.clock import ServerClock\n"
        "if TYPE_CHECKING:\n    from services.rules.core.state import Game\n"
        "def f():\n    from ..rules import api\n"
        "def g():\n    return importlib.import_module('services.bots.x')\n"
        "argv = [sys.executable, '-m', 'services.cli', 'engine']\n"
    )
    found = {name for name, _ in imported(source, "services.engine.views", False, known)}
    assert found == {
        "services.engine.feed",
        "services.replay.clock",
        "services.rules.core.state",
        "services.rules.api",
        "services.bots.x",
    }
    engine, replay, rules = (
        part_of(m) for m in ("services.engine", "services.replay", "services.rules")
    )
    assert engine and replay and rules
    assert rule_broken(engine, replay, "services.replay.clock") == "engine never imports replay"
    assert "only through" in (rule_broken(engine, rules, "services.rules.core.state") or "")
    assert rule_broken(engine, rules, "services.rules.api") is None


@pytest.mark.parametrize("part", PARTS, ids=lambda p: p.name)
def test_a_part_names_modules_that_exist_or_are_coming(part: Part) -> None:
    """A part's modules and facade name real modules (the read side's package may not exist
    yet: it is being built)."""
    for name in [*part.modules, *part.facade]:
        exists = name in MODULES
        assert exists or name == "services.readside", name
