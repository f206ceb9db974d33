"""A small tmpfs for the full-disk tests (tests/engine/test_disk_full.py,
tests/platform/test_disk_full_up.py): mounted for one test, and a filler file that takes its
room. Mounting needs root: the test is skipped, with the reason, where it cannot mount."""

from __future__ import annotations

import contextlib
import os
import subprocess
from collections.abc import Iterator
from pathlib import Path

import pytest


@contextlib.contextmanager
def mounted_tmpfs(where: Path, size: str) -> Iterator[Path]:
    """A tmpfs of ``size`` (mount's words: "1m") at ``where`` (made), unmounted at the end."""
    where.mkdir(parents=True, exist_ok=True)
    if os.geteuid() != 0:
        pytest.skip("mounting a tmpfs needs root")
    done = subprocess.run(
        ["mount", "-t", "tmpfs", "-o", f"size={size}", "tmpfs", str(where)], capture_output=True
    )
    if done.returncode != 0:
        pytest.skip(f"cannot mount a tmpfs here: {done.stderr.decode().strip()}")
    try:
        yield where
    finally:
        subprocess.run(["umount", "-l", str(where)], check=False)


def fill(filler: Path, leave: int) -> None:
    """Write ``filler`` until its file system has about ``leave`` bytes free (or is full)."""
    st = os.statvfs(filler.parent)
    with filler.open("wb") as f, contextlib.suppress(OSError):
        f.write(b"\0" * max(0, st.f_bavail * st.f_frsize - leave))


def unfill(filler: Path) -> None:
    """Remove ``filler`` if it is there (room again)."""
    with contextlib.suppress(FileNotFoundError):
        filler.unlink()
