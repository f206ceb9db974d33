"""CI runs what the README says, and no test installs system packages."""

from __future__ import annotations

import re
from pathlib import Path

ROOT = Path(__file__).resolve().parents[1]


def readme_test_command() -> str:
    """The command in the fenced block under the README's "Run the checks and the tests"."""
    text = (ROOT / "README.md").read_text()
    found = re.search(r"Run the checks and the tests[^\n]*\n\n```\n([^\n]+)\n```", text)
    assert found, "README.md: no test command block"
    return found.group(1)


def test_ci_runs_exactly_the_readme_test_command() -> None:
    command = readme_test_command()
    for step in ("ruff check .", "ruff format --check .", "mypy", "pytest"):
        assert f"python3 -m {step}" in command
    assert command.index("mypy") < command.index("pytest")  # checks first, then the tests
    ci = (ROOT / ".ci" / "run").read_text().splitlines()
    assert ci[-1] == command  # the last thing CI does; set-up only before it
    assert sum("pytest" in line for line in ci if not line.startswith("#")) == 1


INSTALLER = re.compile(r"""["'](apt-get|apt|dpkg|pip)["']""")  # a program in an argv list


def test_no_test_installs_system_packages() -> None:
    allowed = {Path(__file__)}
    offenders = [
        str(p.relative_to(ROOT))
        for p in sorted((ROOT / "tests").rglob("*.py"))
        if p not in allowed and INSTALLER.search(p.read_text())
    ]
    assert not offenders, offenders
