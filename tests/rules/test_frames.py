"""Frames are plain data whose ``step`` names one of their methods (services/rules/README.md,
"Inside the engine")."""

from __future__ import annotations

import inspect
from pathlib import Path

import msgspec
import pytest

import services.rules
from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.core.state import Frame, frame_type


def all_frame_types() -> list[type[Frame]]:
    out: list[type[Frame]] = []
    todo: list[type[Frame]] = [Frame]
    while todo:
        for sub in todo.pop().__subclasses__():
            out.append(sub)
            todo.append(sub)
    return out


def steps_of(cls: type[Frame]) -> set[str]:
    return {
        name
        for name, fn in inspect.getmembers(cls, inspect.isfunction)
        if list(inspect.signature(fn).parameters) == ["self", "g"]
    }


def test_every_frame_has_a_start_and_no_field_hides_a_step() -> None:
    kinds = all_frame_types()
    assert len(kinds) > 50
    for cls in kinds:
        assert cls.start is not Frame.start, f"{cls.__name__} has no start step"
        fields = set(cls.__struct_fields__)
        clash = fields & {n for n, _ in inspect.getmembers(cls, inspect.isfunction)}
        assert not clash, f"{cls.__name__}: fields {clash} hide methods"
        tag = cls.__struct_config__.tag
        assert isinstance(tag, str) and frame_type(tag) is cls


def test_frame_type_rejects_unknown_kinds() -> None:
    try:
        frame_type("no such frame")
    except KeyError:
        return
    raise AssertionError("an unknown frame kind was accepted")


# a game of each ruleset by default (49 frame steps met), a second one under -m slow (53)
@pytest.mark.parametrize("seed", [0, pytest.param(1, marks=pytest.mark.slow)])
def test_every_stacked_frame_names_one_of_its_steps(seed: int) -> None:
    """At every decision of random games in each ruleset, each frame on the stack resumes at a
    step it has — also after a snapshot round trip."""
    seen: set[str] = set()
    for ruleset in api.rulesets():
        players = {"chengtian": 2, "extended": 8}.get(ruleset, 5)
        g = api.new_game(ruleset, players, seed)
        api.advance(g)
        pol = [RandomPolicy(seed * 10 + i) for i in range(players)]
        while not g.over:
            for fr in g.stack:
                assert fr.step in steps_of(type(fr)), (type(fr).__name__, fr.step)
                seen.add(f"{type(fr).__name__}.{fr.step}")
            copy = api.restore(api.snapshot(g))
            assert [msgspec.to_builtins(f) for f in copy.stack] == [
                msgspec.to_builtins(f) for f in g.stack
            ]
            d = api.pending(g)
            assert d is not None
            api.submit(g, pol[d.seat].act(d))
    assert len(seen) > 30, sorted(seen)


def test_timing_points_name_the_running_frame() -> None:
    """``fire``'s ctx is ``g.top``: ``len(g.stack) - 1`` is the running frame only until a card
    move in the same step pushes a ``hand_emptied``/``equip_lost`` trigger (#22 follow-up: 集智
    was not offered for a last trick card with 连营 at the table)."""
    root = Path(services.rules.__file__).parent
    bad = [
        f"{path.relative_to(root)}:{n}"
        for path in sorted(root.rglob("*.py"))
        for n, line in enumerate(path.read_text(encoding="utf-8").splitlines(), 1)
        if "len(g.stack) - 1" in line and "def " not in line
    ]
    assert not bad, f"ctx taken as len(g.stack) - 1 (use g.top): {bad}"


def test_a_step_named_by_its_string_is_one_of_the_frame_steps() -> None:
    """The hot frames name the step that carries on as ``self.step = "name"`` (no bound method
    made, no call: ``then`` is the same without the type checker's help), so every such string
    must name a step of the frame that writes it; ``then``/``goto``/``carry_on`` with a method
    are checked by mypy."""
    import ast
    import textwrap

    checked = 0
    for cls in all_frame_types():
        try:
            tree = ast.parse(textwrap.dedent(inspect.getsource(cls)))
        except (OSError, TypeError):  # pragma: no cover - a frame made without source
            continue
        steps = steps_of(cls)
        for node in ast.walk(tree):
            if not isinstance(node, ast.Assign) or len(node.targets) != 1:
                continue
            target = node.targets[0]
            if (
                isinstance(target, ast.Attribute)
                and target.attr == "step"
                and isinstance(target.value, ast.Name)
                and target.value.id == "self"
            ):
                assert isinstance(node.value, ast.Constant), (cls.__name__, ast.dump(node))
                assert node.value.value in steps, (cls.__name__, node.value.value)
                checked += 1
    assert checked > 50, checked
