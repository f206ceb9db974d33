"""The `arena` command tree: help on stdout, bad commands named, every option documented."""

from __future__ import annotations

import argparse
import subprocess
import sys
from collections.abc import Iterator
from pathlib import Path

import pytest

from services.cli import COMMANDS, main, parser
from services.cliargs import Group

ROOT = Path(__file__).resolve().parents[1]


def _commands(
    p: argparse.ArgumentParser, path: tuple[str, ...] = ()
) -> Iterator[tuple[tuple[str, ...], argparse.ArgumentParser]]:
    """Every (command path, its parser) of the tree, groups included."""
    for action in p._actions:
        if isinstance(action, argparse._SubParsersAction):
            for name, sub in action.choices.items():
                yield (*path, name), sub
                yield from _commands(sub, (*path, name))


ALL = [path for path, _ in _commands(parser())]


def test_the_tree_holds_every_command() -> None:
    expected = {(name,) for name in COMMANDS} | {
        (name, inner)
        for name, entry in COMMANDS.items()
        if isinstance(entry, Group)
        for inner in entry.commands
    }
    assert set(ALL) == expected
    assert {
        ("bench", b)
        for b in ("engine", "service", "eventlog", "e2e", "replay", "matchmaking", "bots")
    } <= (expected)


def test_help_goes_to_stdout(capsys: pytest.CaptureFixture[str]) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(["--help"])
    assert exit_.value.code == 0
    out, err = capsys.readouterr()
    assert err == "" and all(name in out for name in COMMANDS)
    with pytest.raises(SystemExit) as exit_:
        main(["up", "--help"])
    out, err = capsys.readouterr()
    assert exit_.value.code == 0 and err == ""
    assert "--engines" in out and "--redis-url" in out


def test_arena_alone_prints_the_commands(capsys: pytest.CaptureFixture[str]) -> None:
    assert main([]) == 2
    out, _ = capsys.readouterr()
    assert all(name in out for name in COMMANDS)


def test_an_unknown_command_is_named_in_one_line() -> None:
    """A real process: exit status 2, one line on stderr, no traceback."""
    proc = subprocess.run(
        [sys.executable, "-m", "services.cli", "nosuch"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
    )
    assert proc.returncode == 2 and proc.stdout == ""
    lines = proc.stderr.splitlines()
    assert len(lines) == 1, proc.stderr
    assert "'nosuch'" in lines[0] and all(name in lines[0] for name in COMMANDS)


@pytest.mark.parametrize(
    "argv, named",
    [
        (["bench", "nosuch"], ["'nosuch'", "engine", "e2e", "bots"]),
        (["ratings", "nosuch"], ["'nosuch'", "rebuild", "show"]),
        (["up", "--nosuch"], ["--nosuch"]),
        (["bench", "engine", "--options", "[1]"], ["--options", "JSON object"]),
        (["bench", "e2e", "--engines", "0"], ["--engines"]),
        (["bench", "e2e", "--policy", "oracle"], ["--policy", "random", "heuristic"]),
        (["matchmaker", "--policy", "standard-5={bad"], ["--policy", "JSON"]),
        (["matchmaker", "--policy", 'standard-5={"nosuch": 1}'], ["--policy", "nosuch"]),
    ],
)
def test_bad_arguments_are_one_named_line(
    argv: list[str], named: list[str], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main(argv)
    assert exit_.value.code == 2
    out, err = capsys.readouterr()
    assert out == "" and len(err.splitlines()) == 1, err
    assert all(word in err for word in named), err


@pytest.mark.parametrize("path", ALL, ids=" ".join)
def test_every_command_help_exits_0_on_stdout(
    path: tuple[str, ...], capsys: pytest.CaptureFixture[str]
) -> None:
    with pytest.raises(SystemExit) as exit_:
        main([*path, "--help"])
    assert exit_.value.code == 0
    out, err = capsys.readouterr()
    assert err == "" and out.startswith(f"usage: arena {' '.join(path)}")


@pytest.mark.parametrize("path", ALL, ids=" ".join)
def test_every_option_has_help_and_shows_its_default(path: tuple[str, ...]) -> None:
    sub = dict(_commands(parser()))[path]
    formatter = sub._get_formatter()
    for action in sub._actions:
        if isinstance(action, (argparse._HelpAction, argparse._SubParsersAction)):
            continue
        name = "/".join(action.option_strings) or action.dest
        assert action.help, f"arena {' '.join(path)}: {name} has no help"
        if not action.option_strings or action.required:
            continue  # positionals and required options have no default
        text = formatter._expand_help(action)
        flag = action.nargs == 0  # store_true and the like: off unless given
        assert flag or "default" in text, f"arena {' '.join(path)}: {name} shows no default"


@pytest.mark.parametrize("path", [p for p in ALL if p[0] == "bench" and len(p) == 2], ids=" ".join)
def test_every_bench_takes_json(path: tuple[str, ...]) -> None:
    args = parser().parse_args([*path, "--json"])
    assert args.json is True
