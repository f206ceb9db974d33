"""Entry points for the `arena` CLI: export, verify, archive, catalog.

Each `*_cli(argv)` parses its own arguments and returns the process exit code, so the CLI
module only dispatches: `arena verify …` -> `verify_cli(sys.argv[2:])`.
"""

from __future__ import annotations

import argparse
import asyncio
import json
import os
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import TypeVar

from . import archive
from .catalog import NotArchivable, archive_game, rebuild_catalog
from .redis_store import RedisEventStore
from .store import EventStore
from .verify import Engine, VerifyReport, verify, verify_records

DEFAULT_URL = "redis://127.0.0.1:6379/0"
T = TypeVar("T")


async def export_game(store: EventStore, game: str, path: Path) -> int:
    """Write `game`'s log (live or finished) as an archive file; returns the entry count."""
    records = [data for _, data in await store.read(game)]
    if not records:
        raise LookupError(f"no such game: {game}")
    archive.write_atomic(Path(path), archive.pack(game, records))
    return len(records)


async def verify_game(store: EventStore, game: str, engine: Engine | None = None) -> VerifyReport:
    """Verify a game straight from the store."""
    records = [data for _, data in await store.read(game)]
    return verify_records(records, engine, game_id=game)


def _store_args(parser: argparse.ArgumentParser) -> None:
    parser.add_argument("--redis-url", default=os.environ.get("REDIS_URL", DEFAULT_URL))
    parser.add_argument("--namespace", default="arena", help="key prefix (default: arena)")


def _on_store(args: argparse.Namespace, action: Callable[[EventStore], Awaitable[T]]) -> T:
    async def run() -> T:
        store = RedisEventStore.from_url(args.redis_url, args.namespace)
        try:
            return await action(store)
        finally:
            await store.aclose()

    return asyncio.run(run())


def export_cli(argv: list[str]) -> int:
    """`arena export GAME -o FILE`: write a game's log to a self-verifying file."""
    p = argparse.ArgumentParser(prog="arena export", description=export_cli.__doc__)
    p.add_argument("game")
    p.add_argument("-o", "--output", type=Path, required=True)
    _store_args(p)
    args = p.parse_args(argv)
    try:
        n = _on_store(args, lambda store: export_game(store, args.game, args.output))
    except LookupError as exc:
        print(f"error: {exc}")
        return 2
    print(f"wrote {n} entries to {args.output}")
    return 0


def verify_cli(argv: list[str]) -> int:
    """`arena verify GAME|FILE`: exit 0 only if chain, seed commitment and replay all hold."""
    p = argparse.ArgumentParser(prog="arena verify", description=verify_cli.__doc__)
    p.add_argument("source", help="an archive file, or the id of a game in Redis")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    _store_args(p)
    args = p.parse_args(argv)
    if Path(args.source).is_file():
        report = verify(Path(args.source))
    else:
        report = _on_store(args, lambda store: verify_game(store, args.source))
    print(json.dumps(asdict(report), indent=2) if args.json else report.summary())
    return 0 if report.ok else 1


def archive_cli(argv: list[str]) -> int:
    """`arena archive GAME --dir DIR`: move a finished game from Redis into the archive."""
    p = argparse.ArgumentParser(prog="arena archive", description=archive_cli.__doc__)
    p.add_argument("game")
    p.add_argument("--dir", type=Path, default=Path("archive"))
    _store_args(p)
    args = p.parse_args(argv)
    try:
        record = _on_store(args, lambda store: archive_game(store, args.game, args.dir))
    except NotArchivable as exc:
        print(f"error: {exc}")
        return 1
    print(f"archived {args.game} -> {args.dir / record.file}")
    return 0


def catalog_cli(argv: list[str]) -> int:
    """`arena catalog rebuild --dir DIR`: rebuild the catalog (catalog.jsonl) from the archive files."""
    p = argparse.ArgumentParser(prog="arena catalog", description=catalog_cli.__doc__)
    p.add_argument("action", choices=["rebuild"])
    p.add_argument("--dir", type=Path, default=Path("archive"))
    args = p.parse_args(argv)
    records, skipped = rebuild_catalog(args.dir)
    print(f"{len(records)} games catalogued in {args.dir}")
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    return 0 if not skipped else 1
