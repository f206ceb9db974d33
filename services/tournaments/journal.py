"""A tournament's files, in its folder (`VAR/tournaments`, which `arena tournament` and the web
server of `arena up` share):

    KEY.jsonl       the journal: one finished game a line (standings.Played), appended as each
                    ends; a run started again with the same spec plays only what it lacks
    KEY.meta.json   what the pages show: the spec, a name, who made it and when, the entrants'
                    names, which host runs it (`cli` or `web`), its concurrency
    KEY.lock        held (flock) by the process playing it: a second runner of the same
                    tournament refuses, and the pages say whether it is running; it names who
                    holds it (`web` for a web server, empty for `arena tournament`)
    KEY.json        the results `arena tournament` writes at the end (spec, standings)
"""

from __future__ import annotations

import contextlib
import fcntl
import os
from collections.abc import Iterator
from pathlib import Path
from typing import Any

import msgspec

from .standings import Played

KEY_CHARS = frozenset("0123456789abcdef")


class Busy(RuntimeError):
    """Another process plays this tournament now."""


class Meta(msgspec.Struct, kw_only=True):
    """What a tournament is called, by whom and where it runs (KEY.meta.json)."""

    key: str
    spec: dict[str, Any]
    name: str = ""
    organiser: str = ""
    created_ms: int = 0
    host: str = "cli"  # who plays it: `arena tournament` (cli) or the web server (web)
    names: dict[str, str] = {}  # entrant -> the name shown (bot accounts, people)
    concurrency: int = 0
    stopped: bool = False  # the organiser stopped it (the web server does not resume it)
    error: str = ""  # why the web server's run of it ended early, if it did


def is_key(text: str) -> bool:
    """Whether ``text`` looks like a tournament key (16 hex digits)."""
    return len(text) == 16 and set(text) <= KEY_CHARS


def read_journal(path: Path) -> dict[int, Played]:
    """Finished games by number; a torn last line (killed mid-write) is ignored."""
    out: dict[int, Played] = {}
    if not path.exists():
        return out
    for line in path.read_bytes().splitlines():
        with contextlib.suppress(msgspec.MsgspecError):
            p = msgspec.json.decode(line, type=Played)
            out[p.i] = p
    return out


def write_meta(folder: Path, meta: Meta) -> None:
    """Write (or replace) a tournament's meta file, atomically."""
    folder.mkdir(parents=True, exist_ok=True)
    tmp = folder / f".{meta.key}.meta.json.tmp"
    tmp.write_bytes(msgspec.json.encode(meta))
    os.replace(tmp, folder / f"{meta.key}.meta.json")


def read_meta(folder: Path, key: str) -> Meta | None:
    """A tournament's meta file, if it has one (None: unknown or unreadable)."""
    if not is_key(key):
        return None
    try:
        return msgspec.json.decode((folder / f"{key}.meta.json").read_bytes(), type=Meta)
    except (OSError, msgspec.MsgspecError):
        return None


def all_meta(folder: Path) -> list[Meta]:
    """Every tournament of the folder that has a meta file, newest first."""
    out = []
    for path in folder.glob("*.meta.json"):
        meta = read_meta(folder, path.name.split(".")[0])
        if meta is not None:
            out.append(meta)
    return sorted(out, key=lambda m: (-m.created_ms, m.key))


@contextlib.contextmanager
def locked(folder: Path, key: str, holder: str = "") -> Iterator[None]:
    """Hold the tournament's lock while playing it; Busy if another process holds it. The lock
    file says ``holder`` while it is held (who plays it: see holder())."""
    folder.mkdir(parents=True, exist_ok=True)
    fd = os.open(folder / f"{key}.lock", os.O_RDWR | os.O_CREAT, 0o644)
    try:
        try:
            fcntl.flock(fd, fcntl.LOCK_EX | fcntl.LOCK_NB)
        except BlockingIOError:
            raise Busy(f"tournament {key} is being played by another process now") from None
        os.ftruncate(fd, 0)
        os.pwrite(fd, holder.encode(), 0)
        yield
    finally:
        os.close(fd)  # (closing releases the lock)


def running(folder: Path, key: str) -> bool:
    """Whether some process plays the tournament now (holds its lock)."""
    path = folder / f"{key}.lock"
    if not path.exists():
        return False
    try:
        with locked(folder, key):
            return False
    except Busy:
        return True


def holder(folder: Path, key: str) -> str:
    """Who plays the tournament now, as its lock file says (`web`: a web server; empty: the
    command line, or nobody). Only meaningful while running() says so."""
    try:
        return (folder / f"{key}.lock").read_text(errors="replace").strip()
    except OSError:
        return ""
