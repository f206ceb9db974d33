"""Every import of the code mypy checks (services/) and of the default suite (tests/) is met by
what pyproject.toml declares: the dependencies and the `test` extra, with what those pull in.

A fresh machine installs exactly that (`.ci/run` makes a new virtual environment every run), so
a module that only a hand install provided fails here by name instead of in mypy or at import
(numpy did: only the `bench` extra pulled it, through rlcard). Imports inside functions count;
a module of the `bench` extra is allowed only where the import is guarded (the bench explains
how to install it when it is missing)."""

from __future__ import annotations

import ast
import importlib.metadata as md
import re
import sys
import tomllib
from pathlib import Path

from packaging.requirements import Requirement

ROOT = Path(__file__).resolve().parents[1]
LOCAL = {"services", "tests"} | {p.stem for p in (ROOT / "tests").glob("*.py")}  # helpers


def _name(dist: str) -> str:
    return re.sub(r"[-_.]+", "-", dist).lower()


def _declared() -> tuple[list[Requirement], list[Requirement]]:
    project = tomllib.loads((ROOT / "pyproject.toml").read_text())["project"]
    extras = project["optional-dependencies"]
    base = [Requirement(r) for r in project["dependencies"] + extras["test"]]
    return base, [Requirement(r) for r in extras.get("bench", [])]


def _closure(roots: list[Requirement]) -> set[str]:
    """The distributions `roots` install, transitively (markers evaluated, extras followed)."""
    seen: set[str] = set()
    todo = [(r, frozenset(r.extras)) for r in roots]
    while todo:
        req, extras = todo.pop()
        name = _name(req.name)
        if name in seen and not extras:
            continue
        seen.add(name)
        try:
            requires = md.requires(req.name) or []
        except md.PackageNotFoundError:
            continue  # reported by the test below if something imports it
        for text in requires:
            sub = Requirement(text)
            env_extras = extras or {""}
            if sub.marker is None or any(sub.marker.evaluate({"extra": e}) for e in env_extras):
                todo.append((sub, frozenset(sub.extras)))
    return seen


def _imports(path: Path) -> list[tuple[str, int, bool]]:
    """(top-level module, line, guarded by `except ImportError`) of every absolute import.

    Only statements are visited (an import is one, and sits in a statement list: a body, an
    `else`, a `finally`, a handler's or a `case`'s body), not the expressions, which are most
    of a module's nodes: walking every node, twice, was most of this test's time."""
    found: list[tuple[str, int, bool]] = []

    def visit(statements: list[ast.stmt], guarded: bool) -> None:
        for node in statements:
            names: list[str] = []
            if isinstance(node, ast.Import):
                names = [a.name for a in node.names]
            elif isinstance(node, ast.ImportFrom) and node.level == 0 and node.module:
                names = [node.module]
            for name in names:
                found.append((name.split(".")[0], node.lineno, guarded))
            for field in ("body", "orelse", "finalbody"):
                inner = getattr(node, field, None)
                if isinstance(inner, list):
                    # a try's body is guarded when one of its handlers catches ImportError
                    visit(inner, guarded or (field == "body" and _catches_import_error(node)))
            for holder in [*getattr(node, "handlers", []), *getattr(node, "cases", [])]:
                visit(holder.body, guarded)

    visit(ast.parse(path.read_text(), str(path)).body, False)
    return found


def _catches_import_error(node: ast.stmt) -> bool:
    return isinstance(node, ast.Try) and any(
        isinstance(h.type, ast.Name) and h.type.id in ("ImportError", "ModuleNotFoundError")
        for h in node.handlers
    )


def test_every_import_is_met_by_the_declared_dependencies() -> None:
    base, bench = _declared()
    installed = _closure(base)
    bench_only = {_name(r.name) for r in bench} - installed
    providers = md.packages_distributions()
    missing = []
    for path in sorted([*(ROOT / "services").rglob("*.py"), *(ROOT / "tests").rglob("*.py")]):
        if "proto_gen" in path.parts:
            continue
        for module, line, guarded in _imports(path):
            if module in LOCAL or module in sys.stdlib_module_names or module == "__future__":
                continue
            dists = {_name(d) for d in providers.get(module, [module])}
            if dists & installed:
                continue
            if dists & bench_only and guarded:
                continue
            missing.append(f"{path.relative_to(ROOT)}:{line}: {module} ({', '.join(dists)})")
    assert not missing, "imports no declared dependency provides:\n" + "\n".join(missing)


def test_the_check_sees_an_undeclared_import(tmp_path: Path) -> None:
    """The walk above finds function-local and guarded imports (so it can fail)."""
    f = tmp_path / "m.py"
    f.write_text(
        "def f():\n    import numpy\ntry:\n    import rlcard\nexcept ImportError:\n    pass\n"
    )
    assert _imports(f) == [("numpy", 2, False), ("rlcard", 4, True)]
