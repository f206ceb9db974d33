"""What the platform does when a disk stops taking writes (services/redisinfra/durability.py,
reconnect.py, batching.py): a Redis refusing writes (MISCONF) is an outage answered with
UNAVAILABLE and the disk's words, a local file error is no Redis outage, `--fsync-ack` knows
which Redis can confirm an fsync, and a WAITAOF reply that does not confirm one fails the write.
"""

from __future__ import annotations

import errno
from pathlib import Path

import pytest
from prometheus_client import CollectorRegistry
from redis.exceptions import ResponseError

from services.errors import DISK_MESSAGE, unavailable
from services.redisinfra.batching import AutoPipeline, NotReplicated
from services.redisinfra.durability import (
    NotDurable,
    StorageUnwritable,
    StorageWatch,
    folder_state,
    fsync_ack_mode,
    why_unwritable,
)
from services.redisinfra.reconnect import is_outage, outage_words
from services.redisinfra.redis_client import connect
from services.redisinfra.server import RedisServer

MISCONF = ResponseError("MISCONF Errors writing to the AOF file: No space left on device")


def test_what_is_an_outage() -> None:
    assert is_outage(MISCONF) and "cannot persist" in outage_words(MISCONF)
    in_script = ResponseError("@user_script: 51: -MISCONF Errors writing to the AOF file: x")
    assert is_outage(in_script) and unavailable(in_script).message == DISK_MESSAGE  # type: ignore[union-attr]
    assert is_outage(ResponseError("BUSY Redis is busy running a script."))
    assert not is_outage(ResponseError("BUSYGROUP Consumer Group name already exists"))
    # a file of this machine's that cannot be written is not Redis being away
    full = OSError(errno.ENOSPC, "No space left on device", "/var/archive/g.arena")
    assert not is_outage(full) and not is_outage(PermissionError(errno.EACCES, "denied", "/x"))
    assert is_outage(ConnectionRefusedError(errno.ECONNREFUSED, "refused"))
    # a file not there yet (an archive being written) is tried again soon, as before
    assert is_outage(FileNotFoundError(errno.ENOENT, "No such file", "/var/archive/g.arena"))
    refused = unavailable(MISCONF)
    assert refused is not None and refused.code == "UNAVAILABLE"
    assert refused.message == DISK_MESSAGE and "disk" in DISK_MESSAGE


def test_file_errors_in_an_operators_words(tmp_path: Path) -> None:
    assert why_unwritable(OSError(errno.ENOSPC, "No space left on device")).startswith("disk full")
    assert why_unwritable(PermissionError(errno.EACCES, "Permission denied")).startswith(
        "not writable"
    )
    err = StorageUnwritable("archive folder", tmp_path, "disk full")
    assert str(err) == f"archive folder {tmp_path}: disk full"
    assert folder_state(tmp_path) is None  # a roomy, writable temp folder


async def test_an_archive_write_failure_is_said_with_its_path(tmp_path: Path) -> None:
    said: list[str] = []
    changes: list[tuple[str, bool, str]] = []

    async def changed(store: str, ok: bool, why: str) -> None:
        changes.append((store, ok, why))

    class NoRedis:  # (only the archive half is looked at here)
        async def info(self, _: str) -> dict[str, object]:
            return {"aof_enabled": 0, "rdb_last_bgsave_status": "ok"}

        async def config_get(self, _: str) -> dict[str, str]:
            return {"dir": str(tmp_path)}

    registry = CollectorRegistry()
    watch = StorageWatch(NoRedis(), tmp_path / "archive", registry, changed, said.append)
    await watch.once()
    assert said == [] and changes == []  # fine from the start: nothing to say
    watch.archive_write_failed(StorageUnwritable("archive folder", tmp_path, "disk full"))
    await watch.once()
    assert said == [
        f"the archive folder {tmp_path / 'archive'} cannot be written: disk full; finished "
        "games stay in Redis until it can"
    ]
    labels = {"store": "archive", "path": str(tmp_path / "archive")}
    assert registry.get_sample_value("arena_storage_writable", labels) == 0
    watch.archive_ok()
    await watch.once()
    assert said[-1] == f"the archive folder {tmp_path / 'archive'} can be written again"
    assert registry.get_sample_value("arena_storage_writable", labels) == 1
    assert changes[-1] == ("archive", True, "")


@pytest.mark.parametrize(("fsync", "mode"), [("always", "always"), ("everysec", None)])
async def test_fsync_ack_knows_which_redis_confirms_an_fsync(
    tmp_path: Path, fsync: str, mode: str | None
) -> None:
    server = RedisServer(tmp_path / "redis", fsync=fsync)
    client = connect(server.url)
    try:
        version = str((await client.info("server"))["redis_version"])
        if tuple(int(x) for x in version.split(".")[:2]) >= (7, 2):
            assert await fsync_ack_mode(client) == "waitaof"
        elif mode is not None:
            assert await fsync_ack_mode(client) == mode
        else:
            with pytest.raises(NotDurable, match="appendfsync everysec"):
                await fsync_ack_mode(client)
        await client.config_set("appendonly", "no")
        with pytest.raises(NotDurable, match="AOF on"):
            await fsync_ack_mode(client)
    finally:
        await client.aclose()
        server.stop()


def test_a_waitaof_that_does_not_confirm_the_fsync_fails_the_write() -> None:
    auto = AutoPipeline(None, wait=(0, 100), wait_aof=True)  # type: ignore[arg-type]
    assert auto._unconfirmed([1, 0]) is None
    assert isinstance(auto._unconfirmed([0, 0]), NotReplicated)
    assert "fsynced" in str(auto._unconfirmed([0, 0]))
    assert isinstance(auto._unconfirmed(ResponseError("ERR WAITAOF cannot be used")), NotReplicated)
    replicas = AutoPipeline(None, wait=(1, 100), wait_aof=True)  # type: ignore[arg-type]
    assert isinstance(replicas._unconfirmed([1, 0]), NotReplicated)
    assert is_outage(NotReplicated(1, [1, 0], True))  # (the caller tries again)
