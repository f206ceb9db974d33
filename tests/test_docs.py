"""The README is a front page and the documentation stays inside the repository (issue #43).

The README stays under 250 lines; every link of the README, of docs/ and of the services'
READMEs names a file or folder of this repository (or a web address), none outside it; the
scenario format's copy in docs/ equals its master wherever the master is mounted."""

from __future__ import annotations

import re
from pathlib import Path

import pytest

ROOT = Path(__file__).resolve().parents[1]
README = ROOT / "README.md"
LINK = re.compile(r"!?\[[^\]]*\]\(([^)\s]+)\)")
MASTER = Path("/work/shared/design/SCENARIOS.md")  # outside the repository: the design folder
PAGES = [README, *sorted((ROOT / "docs").glob("*.md")), *sorted(ROOT.glob("services/*/README.md"))]


def broken_links_of(page: Path, text: str) -> list[str]:
    """The link targets in ``text``, read as ``page``, that are no file or folder inside the
    repository (web addresses and anchors are not checked)."""
    out = []
    for target in LINK.findall(text):
        if re.match(r"[a-z]+://|mailto:|#", target):
            continue
        path = (page.parent / target.split("#", 1)[0]).resolve()
        if not path.is_relative_to(ROOT) or not path.exists():
            out.append(target)
    return out


def broken_links(page: Path) -> list[str]:
    """The link targets of ``page`` that are no file or folder inside the repository."""
    return broken_links_of(page, page.read_text(encoding="utf-8"))


def test_the_readme_is_a_front_page() -> None:
    lines = README.read_text(encoding="utf-8").splitlines()
    assert len(lines) <= 250, f"README.md has {len(lines)} lines: move detail into docs/"
    outside = [line for line in lines if re.search(r"(?<![\w/])\.\./", line)]
    assert not outside, f"README.md names paths outside the repository: {outside}"
    for topic in ("docs/benchmarks.md", "docs/design.md", "docs/operations.md", "docs/api.md"):
        assert f"]({topic})" in README.read_text(encoding="utf-8"), f"no link to {topic}"


@pytest.mark.parametrize("page", PAGES, ids=lambda p: str(p.relative_to(ROOT)))
def test_every_link_stays_inside_the_repository(page: Path) -> None:
    assert not broken_links(page), f"{page.relative_to(ROOT)}: {broken_links(page)}"


def test_the_link_check_can_fail(tmp_path: Path) -> None:
    page = ROOT / "docs" / "x.md"  # never written: only its folder matters to the check
    assert broken_links_of(page, "[a](../../shared/design/SCENARIOS.md) [b](design.md)") == [
        "../../shared/design/SCENARIOS.md"
    ]
    assert broken_links_of(page, "[c](nosuch.md) ![d](play.png) [e](https://x.org/y)") == [
        "nosuch.md"
    ]


def test_the_scenario_format_copy_equals_its_master() -> None:
    copy = (ROOT / "docs" / "scenarios.md").read_text(encoding="utf-8")
    assert "master" in copy.split("\n# ", 1)[0], "docs/scenarios.md: no note of its master"
    if not MASTER.exists():
        pytest.skip(f"the master ({MASTER}) is not mounted on this machine")
    master = MASTER.read_text(encoding="utf-8")
    assert copy[copy.index("\n# ") + 1 :] == master, "docs/scenarios.md differs from its master"
