"""How the rules package is imported (issue #23 item 6): inside it, no module hides an import in
a function body, and the module-level imports form no cycle. That callers outside it go through
``services.rules.api`` (or the scenario runner the CLI runs) is the rules' facade in
services/layers.py, checked by tests/test_layers.py."""

from __future__ import annotations

import ast
from pathlib import Path

from tests.rules.test_no_service_imports import ROOT, RULES, imported_modules, module_name


def local_imports(source: str) -> list[int]:
    """Line numbers of imports inside a function or class body."""
    out: list[int] = []

    def visit(node: ast.AST, nested: bool) -> None:
        for child in ast.iter_child_nodes(node):
            if isinstance(child, ast.Import | ast.ImportFrom) and nested:
                out.append(child.lineno)
            inner = nested or isinstance(
                child, ast.FunctionDef | ast.AsyncFunctionDef | ast.ClassDef | ast.Lambda
            )
            visit(child, inner)

    visit(ast.parse(source), False)
    return out


def module_imports(path: Path) -> set[str]:
    """The rules modules ``path`` imports at module level, TYPE_CHECKING blocks left out."""
    tree = ast.parse(path.read_text())
    body: list[ast.stmt] = [n for n in tree.body if isinstance(n, ast.Import | ast.ImportFrom)]
    source = ast.unparse(ast.Module(body=body, type_ignores=[]))  # TYPE_CHECKING blocks left out
    out = set()
    for name in imported_modules(source, module_name(path)):
        parts = name.split(".")
        as_file = ROOT.joinpath(*parts).with_suffix(".py")
        as_package = ROOT.joinpath(*parts, "__init__.py")
        if name.startswith("services.rules") and (as_file.exists() or as_package.exists()):
            out.add(name)
    return out


def cycles(graph: dict[str, set[str]]) -> list[list[str]]:
    """The strongly connected components with more than one module (Tarjan)."""
    index: dict[str, int] = {}
    low: dict[str, int] = {}
    stack: list[str] = []
    found: list[list[str]] = []

    def strong(v: str) -> None:
        index[v] = low[v] = len(index)
        stack.append(v)
        for w in graph.get(v, ()):
            if w not in index:
                strong(w)
                low[v] = min(low[v], low[w])
            elif w in stack:
                low[v] = min(low[v], index[w])
        if low[v] == index[v]:
            comp = []
            while True:
                w = stack.pop()
                comp.append(w)
                if w == v:
                    break
            if len(comp) > 1:
                found.append(sorted(comp))

    for v in sorted(graph):
        if v not in index:
            strong(v)
    return found


def test_no_import_is_hidden_in_a_function() -> None:
    offenders = [
        f"{path.relative_to(ROOT)}:{line}"
        for path in sorted(RULES.rglob("*.py"))
        for line in local_imports(path.read_text())
    ]
    assert not offenders, "imports inside functions:\n" + "\n".join(offenders)


def test_the_rules_modules_import_no_cycle() -> None:
    graph = {module_name(p): module_imports(p) for p in sorted(RULES.rglob("*.py"))}
    assert len(graph) > 50
    assert "services.rules.core.state" in graph["services.rules.core.engine"]
    assert not cycles(graph), cycles(graph)


def test_the_checks_can_fail() -> None:
    """A local import and a two-module cycle are found."""
    assert local_imports("import a\ndef f():\n    from b import c\n") == [3]
    assert cycles({"a": {"b"}, "b": {"a"}, "c": {"a"}}) == [["a", "b"]]


def test_the_api_events_namespace_has_every_event_type() -> None:
    """Callers find every event class, the rulesets' too, in ``api.events``."""
    from services.rules import api

    types = api.event_types()
    assert {"insight_revealed", "camp_formed", "cards_moved"} <= set(types)
    for tag, cls in types.items():
        assert getattr(api.events, cls.__name__, None) is cls, tag
