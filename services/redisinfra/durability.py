"""Where acknowledged answers live, and noticing when a disk stops taking them.

An engine acknowledges an answer once Redis has it (services/engine/README.md and
docs/durability.md say what that guarantees). Redis writes each command to its append-only
file (AOF) before it replies; with `appendfsync everysec` it fsyncs once a second, with
`always` before every reply. When the AOF cannot be written (the disk is full, or the folder
became unwritable) Redis refuses every later write with `MISCONF …` and keeps what it could
not write in memory, writing it once there is room. So the platform must refuse answers from
then on (`reconnect.refuses_writes`: UNAVAILABLE, never INTERNAL), say where and why, and not stop the
Redis that holds the unwritten tail while the disk is full.

`StorageWatch` looks at both disks an engine writes through: Redis's (INFO persistence, the
folder from CONFIG GET dir, its free space where that folder is on this machine) and the
archive folder (writable, free space). Each is a gauge, `arena_storage_writable{store,path}`
(1 or 0), and each change is one line naming the path and why ("disk full").
"""

from __future__ import annotations

import errno
import os
import time
from collections.abc import Awaitable, Callable
from dataclasses import dataclass
from pathlib import Path
from typing import Any

from prometheus_client import CollectorRegistry, Gauge
from redis.exceptions import ResponseError

DISK_ERRNOS = frozenset({errno.ENOSPC, errno.EDQUOT, errno.EROFS, errno.EACCES, errno.EPERM})
LOW_BYTES = 64 * 1024  # a folder with less free than this is full for our purposes


class StorageUnwritable(Exception):
    """A folder the platform must write cannot be written: its path and why."""

    def __init__(self, what: str, path: Path | str, why: str) -> None:
        super().__init__(f"{what} {path}: {why}")
        self.what, self.path, self.why = what, str(path), why


def why_unwritable(exc: OSError) -> str:
    """An OSError in the words an operator acts on ("disk full", "not writable")."""
    if exc.errno in (errno.ENOSPC, errno.EDQUOT):
        return f"disk full ({exc.strerror})"
    if exc.errno in (errno.EACCES, errno.EPERM, errno.EROFS):
        return f"not writable ({exc.strerror})"
    return exc.strerror or repr(exc)


def folder_state(path: Path) -> str | None:
    """Why `path` (a folder this process writes) cannot take a file now, or None."""
    probe = path if path.exists() else path.parent
    try:
        st = os.statvfs(probe)
    except OSError as exc:
        return why_unwritable(exc)
    if st.f_bavail * st.f_frsize < LOW_BYTES:
        return f"disk full ({st.f_bavail * st.f_frsize // 1024} KB free)"
    if not os.access(probe, os.W_OK):
        return "not writable (permission denied)"
    return None


@dataclass(frozen=True)
class RedisDisk:
    """What Redis says of its persistence: ok, the folder it writes, and why not if not."""

    ok: bool
    path: str
    why: str = ""


async def redis_disk(client: Any, known_dir: list[str]) -> RedisDisk:
    """Read INFO persistence (and, once, CONFIG GET dir into `known_dir`): an AOF or RDB
    write that failed means Redis refuses writes (MISCONF) until it can write again."""
    nodes = _nodes(await client.info("persistence"))  # (a cluster: every node's)
    if not known_dir:
        try:
            reply: Any = await client.config_get("dir")
            known_dir.append(_text(next(iter(reply.values()))) if reply else "?")
        except Exception:  # noqa: BLE001 - CONFIG may be refused (ACL, a managed Redis)
            known_dir.append("(Redis's data folder: CONFIG GET refused)")
    path = known_dir[0]
    failed: list[str] = []
    for info in nodes:
        names = ["rdb_last_bgsave_status"]
        if int(info.get("aof_enabled", 0)):  # (a failed AOF write matters only with AOF on)
            names += ["aof_last_write_status", "aof_last_bgrewrite_status"]
        failed += [n for n in names if _text(info.get(n, "ok")) != "ok" and n not in failed]
    if not failed:
        return RedisDisk(True, path)
    words = ""
    try:
        await client.ping()  # refused while Redis cannot persist: its refusal says why
    except ResponseError as exc:
        words = str(exc).split("MISCONF ", 1)[-1]
    except Exception:  # noqa: BLE001 - away meanwhile: INFO's words will do
        pass
    why = f"{', '.join(failed)}: err"
    if "No space left" in words or "quota" in words.lower():
        why = f"disk full ({words})"
    elif "ermission denied" in words or "Read-only" in words:
        why = f"not writable ({words})"
    elif Path(path).is_absolute() and Path(path).exists():
        why = folder_state(Path(path)) or (words or why)
    return RedisDisk(False, path, why)


class StorageWatch:
    """Redis's disk and the archive folder, looked at every `interval_s` (module docstring).
    `changed(key, ok, why)` is told each change (the engine's health)."""

    def __init__(
        self,
        client: Any,
        archive_dir: Path | None,
        registry: CollectorRegistry,
        changed: Callable[[str, bool, str], Awaitable[None]],
        say: Callable[[str], None],
    ) -> None:
        self.client, self.archive_dir = client, archive_dir
        self.changed, self.say = changed, say
        self.gauge = Gauge(
            "arena_storage_writable",
            "1 while a store the engine writes through can write to its disk, 0 while it "
            "cannot (answers are refused then): store redis (its AOF/RDB folder) or archive",
            ["store", "path"],
            registry=registry,
        )
        self.state: dict[str, str | None] = {}  # store -> why not ("" = fine)
        self.known_dir: list[str] = []
        self.archive_failed: tuple[str, float] | None = None  # (why, when) the last write failed

    def archive_write_failed(self, exc: StorageUnwritable) -> None:
        """An archive write failed just now (the next look says so, with the path)."""
        self.archive_failed = (exc.why, time.monotonic())

    async def once(self) -> None:
        """Look at both stores; report what changed."""
        redis = await redis_disk(self.client, self.known_dir)
        await self._set("redis", redis.path, None if redis.ok else redis.why)
        if self.archive_dir is not None:
            why = folder_state(self.archive_dir)
            if why is None and self.archive_failed is not None:
                failed, at = self.archive_failed
                if time.monotonic() - at < 30:  # a write failed lately: until one succeeds
                    why = failed
            await self._set("archive", str(self.archive_dir), why)

    def archive_ok(self) -> None:
        """An archive was written: the folder takes files."""
        self.archive_failed = None

    async def _set(self, store: str, path: str, why: str | None) -> None:
        self.gauge.labels(store, path).set(0 if why else 1)
        if self.state.get(store, "") == (why or ""):
            return
        before = self.state.get(store)
        self.state[store] = why or ""
        name = "Redis's data folder" if store == "redis" else "the archive folder"
        then = (
            "Redis refuses writes, so answers are refused until it can"
            if store == "redis"
            else "finished games stay in Redis until it can"
        )
        if why:
            self.say(f"{name} {path} cannot be written: {why}; {then}")
        elif before:
            self.say(f"{name} {path} can be written again")
        await self.changed(store, not why, f"{name} {path}: {why}" if why else "")


def _text(value: Any) -> str:
    return value.decode() if isinstance(value, bytes) else str(value)


class NotDurable(RuntimeError):
    """The Redis cannot confirm that a write is on its disk (`--fsync-ack` refused): one line."""


def _nodes(reply: Any) -> list[dict[str, Any]]:
    """An INFO reply as one dict per server (a cluster client answers per node)."""
    if isinstance(reply, dict) and reply and all(isinstance(v, dict) for v in reply.values()):
        return list(reply.values())
    return [reply]


async def fsync_ack_mode(client: Any) -> str:
    """How this Redis can confirm an acknowledged write is fsynced to its disk: ``waitaof``
    (Redis 7.2+ with AOF on: WAITAOF after each append round trip) or ``always`` (its
    `appendfsync always`: it fsyncs before it replies); NotDurable naming what it has else."""
    servers = _nodes(await client.info("server"))
    persistence = _nodes(await client.info("persistence"))
    version = min(tuple(int(x) for x in _text(s["redis_version"]).split(".")[:2]) for s in servers)
    aof = all(int(p.get("aof_enabled", 0)) for p in persistence)
    if not aof:
        raise NotDurable("--fsync-ack needs Redis's AOF on (appendonly yes); this Redis has it off")
    if version >= (7, 2):
        return "waitaof"
    reply: Any = await client.config_get("appendfsync")
    modes = {_text(v) for v in (reply.values() if isinstance(reply, dict) else [])}
    if modes == {"always"}:
        return "always"
    have = "/".join(sorted(modes)) or "unknown"
    raise NotDurable(
        f"--fsync-ack needs Redis 7.2+ (WAITAOF) or appendfsync always; this Redis is "
        f"{version[0]}.{version[1]} with appendfsync {have} (arena up --fsync-ack starts one so)"
    )
