"""The catalog journal: one appended line per archived game, safe under concurrency and crashes."""

from __future__ import annotations

import asyncio
import multiprocessing
import os
import threading
import time
from pathlib import Path

import msgspec
import pytest

from services.eventlog import InMemoryEventStore, archive, catalog
from services.eventlog.catalog import (
    CATALOG,
    LEGACY_CATALOG,
    CatalogRecord,
    add_record,
    archive_game,
    load_catalog,
    rebuild_catalog,
)
from services.verify import Engine, record_game

from . import fake_engine

ENGINE: Engine = fake_engine  # type: ignore[assignment]


async def finished(store: InMemoryEventStore, *games: str) -> None:
    for n, game in enumerate(games):
        await record_game(store, game, ENGINE, "fake", 2 + n % 3, seed=n)


def journal(folder: Path) -> bytes:
    return (folder / CATALOG).read_bytes()


def lines(folder: Path) -> list[CatalogRecord]:
    return [msgspec.json.decode(x, type=CatalogRecord) for x in journal(folder).splitlines()]


def synthetic(game: str, start: int = 1, file: str = "") -> CatalogRecord:
    return CatalogRecord(
        id=game,
        ruleset="fake",
        players=["a", "b"],
        bots=[True, False],
        start=start,
        end=start + 1,
        winners=[0],
        rules_version="fake-1",
        file=file or f"{game}.arena",
    )


async def test_each_archive_appends_one_line_and_rewrites_nothing(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    games = [f"g{n}" for n in range(8)]
    await finished(store, *games)
    before = b""
    inode = None
    for n, game in enumerate(games, 1):
        record = await archive_game(store, game, tmp_path)
        after = journal(tmp_path)
        assert after.startswith(before) and after.endswith(b"\n")  # earlier bytes untouched
        assert after.count(b"\n") == n
        assert msgspec.json.decode(after[len(before) :], type=CatalogRecord) == record
        ino = os.stat(tmp_path / CATALOG).st_ino
        assert inode in (None, ino)  # appended in place, never replaced by a rename
        inode, before = ino, after
    assert [r.id for r in load_catalog(tmp_path)] == games
    assert not (tmp_path / LEGACY_CATALOG).exists()


async def test_concurrent_tasks_lose_no_record(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    games = [f"t{n:02d}" for n in range(24)]
    await finished(store, *games)
    await asyncio.gather(*(archive_game(store, g, tmp_path) for g in games))
    # The first to take the lock finds no catalog and lists every file already written, so a
    # game whose own line follows may appear twice in the journal, never zero times.
    assert {r.id for r in lines(tmp_path)} == set(games)
    assert sorted(r.id for r in load_catalog(tmp_path)) == games
    assert all([await store.head(g) == 0 for g in games])


def test_concurrent_threads_lose_no_record(tmp_path: Path) -> None:
    errors: list[BaseException] = []

    def worker(k: int) -> None:
        async def run() -> None:
            store = InMemoryEventStore()  # one per loop: its conditions belong to a loop
            games = [f"w{k}-{n}" for n in range(6)]
            await finished(store, *games)
            for g in games:
                await archive_game(store, g, tmp_path)

        try:
            asyncio.run(run())
        except BaseException as exc:
            errors.append(exc)

    threads = [threading.Thread(target=worker, args=(k,)) for k in range(6)]
    for t in threads:
        t.start()
    for t in threads:
        t.join()
    assert not errors
    expected = sorted(f"w{k}-{n}" for k in range(6) for n in range(6))
    assert {r.id for r in lines(tmp_path)} == set(expected)
    assert sorted(r.id for r in load_catalog(tmp_path)) == expected


def _append_many(folder: str, worker: int, count: int) -> None:
    for n in range(count):
        add_record(Path(folder), synthetic(f"p{worker}-{n}", start=n))


def test_concurrent_processes_never_interleave(tmp_path: Path) -> None:
    ctx = multiprocessing.get_context("spawn")
    procs = [ctx.Process(target=_append_many, args=(str(tmp_path), k, 150)) for k in range(4)]
    for p in procs:
        p.start()
    for p in procs:
        p.join(60)
        assert p.exitcode == 0
    got = lines(tmp_path)  # every line parses: no write landed inside another
    assert len(got) == 600
    assert {r.id for r in got} == {f"p{k}-{n}" for k in range(4) for n in range(150)}


async def test_torn_last_line_is_ignored_and_the_next_append_drops_it(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await finished(store, "a", "b", "c")
    await archive_game(store, "a", tmp_path)
    await archive_game(store, "b", tmp_path)
    good = journal(tmp_path)
    torn = msgspec.json.encode(synthetic("x"))[:40]  # a crash cut the write short
    with open(tmp_path / CATALOG, "ab") as f:
        f.write(torn)
    assert [r.id for r in load_catalog(tmp_path)] == ["a", "b"]
    assert journal(tmp_path) == good + torn  # ignored on read, not a reason to rebuild
    await archive_game(store, "c", tmp_path)
    assert journal(tmp_path).startswith(good)
    assert [r.id for r in lines(tmp_path)] == ["a", "b", "c"]
    assert [r.id for r in load_catalog(tmp_path)] == ["a", "b", "c"]


def test_a_whole_record_that_lost_its_newline_is_kept(tmp_path: Path) -> None:
    add_record(tmp_path, synthetic("a", 1))
    with open(tmp_path / CATALOG, "ab") as f:
        f.write(msgspec.json.encode(synthetic("b", 2)))  # every byte but the newline
    assert [r.id for r in load_catalog(tmp_path)] == ["a", "b"]
    add_record(tmp_path, synthetic("c", 3))
    assert [r.id for r in lines(tmp_path)] == ["a", "b", "c"]


def test_unparseable_last_line_is_ignored_and_damage_before_it_rebuilds(tmp_path: Path) -> None:
    add_record(tmp_path, synthetic("a", 1))
    (tmp_path / CATALOG).write_bytes(journal(tmp_path) + b"\x00\x00garbage\n")
    assert [r.id for r in load_catalog(tmp_path)] == ["a"]
    add_record(tmp_path, synthetic("b", 2))  # drops the garbage instead of burying it
    assert [r.id for r in lines(tmp_path)] == ["a", "b"]
    # Damage before the last line: the index cannot be trusted, so it is rebuilt from the files.
    (tmp_path / CATALOG).write_bytes(b"not json\n" + journal(tmp_path))
    assert load_catalog(tmp_path) == []  # no archive files here, so nothing is listed
    assert journal(tmp_path) == b""


async def test_archiving_a_game_again_lists_it_once(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await finished(store, "a", "b")
    await archive_game(store, "a", tmp_path, delete=False)
    await archive_game(store, "b", tmp_path)
    again = await archive_game(store, "a", tmp_path)
    assert [r.id for r in lines(tmp_path)] == ["a", "b", "a"]
    assert [r.id for r in load_catalog(tmp_path)] == ["a", "b"]
    assert load_catalog(tmp_path)[0] == again
    add_record(tmp_path, msgspec.structs.replace(again, file="moved.arena"))
    assert load_catalog(tmp_path)[0].file == "moved.arena"  # the last line wins
    rebuilt, _ = rebuild_catalog(tmp_path)  # compacts: one line per game
    assert [r.id for r in lines(tmp_path)] == ["a", "b"] and rebuilt[0] == again


async def test_rebuild_from_the_files_alone_gives_the_same_records(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    games = [f"r{n}" for n in range(10)]
    await finished(store, *games)
    for g in reversed(games):
        await archive_game(store, g, tmp_path)
    listed = load_catalog(tmp_path)
    assert [(r.start, r.id) for r in listed] == sorted((r.start, r.id) for r in listed)
    (tmp_path / CATALOG).unlink()
    (tmp_path / f"{archive.TEMP_PREFIX}x{archive.SUFFIX}").write_bytes(b"half")  # being written
    rebuilt, skipped = rebuild_catalog(tmp_path)
    assert rebuilt == listed and skipped == {}
    assert load_catalog(tmp_path) == listed
    (tmp_path / CATALOG).unlink()
    assert load_catalog(tmp_path) == listed  # a missing catalog is rebuilt on read
    (tmp_path / CATALOG).unlink()
    await finished(store, "late")
    await archive_game(store, "late", tmp_path)  # ... and on append, listing every file
    assert sorted(r.id for r in lines(tmp_path)) == sorted([*games, "late"])


def legacy_catalog(folder: Path, records: list[CatalogRecord]) -> None:
    """catalog.json exactly as the catalog was written before the journal."""
    records = sorted(records, key=lambda r: (r.start, r.id))
    archive.write_atomic(folder / LEGACY_CATALOG, msgspec.json.format(msgspec.json.encode(records)))


async def test_a_folder_with_only_the_old_catalog_json_still_works(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await finished(store, "o1", "o2", "o3", "new")
    old = [await archive_game(store, g, tmp_path) for g in ("o1", "o2", "o3")]
    (tmp_path / CATALOG).unlink()
    legacy_catalog(tmp_path, old)
    assert load_catalog(tmp_path) == old
    assert not (tmp_path / CATALOG).exists()  # reading changes nothing
    new = await archive_game(store, "new", tmp_path)
    assert lines(tmp_path) == [new]  # O(1) from the first game on: the old file is not rewritten
    every = sorted([*old, new], key=lambda r: (r.start, r.id))
    assert load_catalog(tmp_path) == every
    rebuilt, _ = rebuild_catalog(tmp_path)  # folds the old file into the journal
    assert rebuilt == every and not (tmp_path / LEGACY_CATALOG).exists()
    assert load_catalog(tmp_path) == every


def test_old_catalog_json_without_archive_files_is_read_as_is(tmp_path: Path) -> None:
    legacy_catalog(tmp_path, [synthetic("b", 2), synthetic("a", 1)])
    assert [r.id for r in load_catalog(tmp_path)] == ["a", "b"]


async def test_file_work_runs_off_the_event_loop(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryEventStore()
    await finished(store, "slow")
    write = archive.write_atomic

    writing, loop_ran = threading.Event(), threading.Event()

    def slow_write(path: Path, data: bytes) -> None:
        writing.set()  # a slow disk: the write waits until the event loop has run meanwhile
        assert loop_ran.wait(10), "the event loop was blocked while the file was written"
        write(path, data)

    monkeypatch.setattr(archive, "write_atomic", slow_write)

    async def on_the_loop() -> None:
        while not writing.is_set():
            await asyncio.sleep(0.001)
        loop_ran.set()

    task = asyncio.create_task(on_the_loop())
    await archive_game(store, "slow", tmp_path)
    await task
    assert loop_ran.is_set()


async def test_live_log_stays_when_listing_fails(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryEventStore()
    await finished(store, "g")

    def broken(folder: Path, records: list[CatalogRecord]) -> None:
        raise OSError("disk full")

    monkeypatch.setattr(catalog, "add_records", broken)
    with pytest.raises(OSError, match="disk full"):
        await archive_game(store, "g", tmp_path)
    assert await store.head("g") > 0  # not listed, so not deleted
    monkeypatch.undo()
    await archive_game(store, "g", tmp_path)
    assert await store.head("g") == 0 and [r.id for r in load_catalog(tmp_path)] == ["g"]


async def test_games_finishing_together_are_written_and_listed_in_one_go(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """Games that finish while others are being archived wait and go together: every file
    is written (and fsynced) before their lines are appended, in one append for them all."""
    store = InMemoryEventStore()
    games = [f"b{n}" for n in range(5)]
    await finished(store, *games)
    done: list[tuple[str, list[str]]] = []
    write, add = archive.write_atomic, catalog.add_records

    def writes(path: Path, data: bytes) -> None:
        write(path, data)
        if path.suffix == archive.SUFFIX:  # (not the first append's new catalog)
            done.append(("file", [path.name]))

    def adds(folder: Path, records: list[CatalogRecord]) -> None:
        add(folder, records)
        done.append(("catalog", [r.id for r in records]))

    monkeypatch.setattr(archive, "write_atomic", writes)
    monkeypatch.setattr(catalog, "add_records", adds)
    first = asyncio.create_task(archive_game(store, "b0", tmp_path))
    while not done:  # b0's batch is under way in its thread ...
        await asyncio.sleep(0.001)
    await asyncio.gather(first, *(archive_game(store, g, tmp_path) for g in games[1:]))
    assert (
        done
        == [  # ... and the four finishing meanwhile go in the next one
            ("file", ["b0.arena"]),
            ("catalog", ["b0"]),
            *(("file", [f"{g}.arena"]) for g in games[1:]),
            ("catalog", games[1:]),
        ]
    )
    assert [r.id for r in lines(tmp_path)] == games
    assert all([await store.head(g) == 0 for g in games])
    assert not catalog._writers  # an idle writer leaves


async def test_a_game_that_fails_fails_alone(tmp_path: Path) -> None:
    store = InMemoryEventStore()
    await finished(store, "ok1", "ok2")
    unfinished = InMemoryEventStore()
    await record_game(unfinished, "open", ENGINE, "fake", 2, seed=1)
    rows = await unfinished.read("open")
    await unfinished.delete("open")
    await unfinished.append("open", 0, [data for _, data in rows[:-1]])  # no seed reveal
    got = await asyncio.gather(
        archive_game(store, "ok1", tmp_path),
        archive_game(unfinished, "open", tmp_path),
        archive_game(store, "ok2", tmp_path),
        return_exceptions=True,
    )
    assert isinstance(got[1], catalog.NotArchivable) and "open" in str(got[1])
    assert [r.id for r in got if isinstance(r, CatalogRecord)] == ["ok1", "ok2"]
    assert [r.id for r in lines(tmp_path)] == ["ok1", "ok2"]
    assert await unfinished.head("open") == len(rows) - 1  # kept, and no file
    assert not (tmp_path / "open.arena").exists()
    assert await store.head("ok1") == 0 and await store.head("ok2") == 0


async def test_a_listing_that_fails_keeps_every_live_log_of_its_batch(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryEventStore()
    games = ["l1", "l2", "l3"]
    await finished(store, *games)
    calls: list[list[str]] = []

    def broken(folder: Path, records: list[CatalogRecord]) -> None:
        calls.append([r.id for r in records])
        raise OSError("disk full")

    monkeypatch.setattr(catalog, "add_records", broken)
    got = await asyncio.gather(
        *(archive_game(store, g, tmp_path) for g in games), return_exceptions=True
    )
    assert calls == [games]  # one batch
    assert all(isinstance(e, OSError) and "disk full" in str(e) for e in got)
    assert all([await store.head(g) > 0 for g in games])


async def test_a_cancelled_caller_leaves_the_file_written_and_the_live_log(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    store = InMemoryEventStore()
    await finished(store, "c")
    write = archive.write_atomic
    writing, go_on = threading.Event(), threading.Event()

    def slow_write(path: Path, data: bytes) -> None:
        writing.set()
        assert go_on.wait(10)
        write(path, data)

    monkeypatch.setattr(archive, "write_atomic", slow_write)
    task = asyncio.create_task(archive_game(store, "c", tmp_path))
    while not writing.is_set():
        await asyncio.sleep(0.001)
    task.cancel()
    go_on.set()
    with pytest.raises(asyncio.CancelledError):
        await task
    while catalog._writers:  # the batch still finishes in its thread
        await asyncio.sleep(0.001)
    assert (tmp_path / "c.arena").exists() and [r.id for r in lines(tmp_path)] == ["c"]
    assert await store.head("c") > 0  # the caller never got to drop it
    await archive_game(store, "c", tmp_path)  # archiving again is harmless
    assert await store.head("c") == 0 and [r.id for r in load_catalog(tmp_path)] == ["c"]


def test_an_engine_sweeps_the_temp_files_a_killed_writer_left(tmp_path: Path) -> None:
    """An engine SIGKILLed inside write_atomic leaves its temp file for good (the slow chaos run
    found one beside the archives); sweep_temp, run at an engine's start, removes those older
    than any live write and leaves a fresh one (another engine writing now) and the archives."""
    old = tmp_path / f"{archive.TEMP_PREFIX}dead{archive.SUFFIX}"
    fresh = tmp_path / f"{archive.TEMP_PREFIX}live{archive.SUFFIX}"
    kept = tmp_path / f"g1{archive.SUFFIX}"
    for p in (old, fresh, kept):
        p.write_bytes(b"x")
    an_hour_ago = time.time() - 3600
    os.utime(old, (an_hour_ago, an_hour_ago))
    os.utime(kept, (an_hour_ago, an_hour_ago))
    assert archive.sweep_temp(tmp_path) == 1
    assert not old.exists() and fresh.exists() and kept.exists()
    assert archive.sweep_temp(tmp_path / "none") == 0  # no folder yet: nothing to do


async def test_the_folder_is_fsynced_after_the_renames_and_before_the_listing(
    tmp_path: Path, monkeypatch: pytest.MonkeyPatch
) -> None:
    """By POSIX a renamed file is durable once its directory is fsynced: the archive folder
    is, after the game's file is renamed into place and before the line that lists it."""
    store = InMemoryEventStore()
    await finished(store, "g0", "g1")
    await archive_game(store, "g0", tmp_path)  # (the first one writes the catalog whole)
    steps: list[str] = []
    real_fsync, real_replace = os.fsync, os.replace

    def fsync(fd: int) -> None:
        st = os.fstat(fd)
        is_dir = os.path.samestat(st, os.stat(tmp_path))
        is_catalog = (tmp_path / CATALOG).exists() and os.path.samestat(
            st, os.stat(tmp_path / CATALOG)
        )
        steps.append("dir" if is_dir else "catalog" if is_catalog else "file")
        real_fsync(fd)

    def replace(src: str, dst: str | Path) -> None:
        steps.append("rename")
        real_replace(src, dst)

    monkeypatch.setattr(os, "fsync", fsync)
    monkeypatch.setattr(os, "replace", replace)
    await archive_game(store, "g1", tmp_path)
    assert steps.index("file") < steps.index("rename") < steps.index("dir")
    assert steps.index("dir") < len(steps) - 1 - steps[::-1].index("catalog")
