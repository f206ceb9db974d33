"""The `arena` commands over stored logs: export, verify, archive, catalog, platform-key.

Each command is a pair: ``NAME_arguments(parser)`` defines its options, and a function of the
parsed arguments runs it and returns the exit code (`services/cli.py` wires them into the tree).
"""

from __future__ import annotations

import argparse
import asyncio
import json
from collections.abc import Awaitable, Callable
from dataclasses import asdict
from pathlib import Path
from typing import TypeVar

from ..cliargs import ToolError, tool_redis, tool_redis_options
from ..eventlog import archive, signing
from ..eventlog.catalog import NotArchivable, archive_game, rebuild_catalog
from ..eventlog.checks import VerifyReport
from ..eventlog.redis_store import RedisEventStore
from ..eventlog.store import EventStore
from .rerun import Engine, verify, verify_records

T = TypeVar("T")


async def export_game(
    store: EventStore, game: str, path: Path, signer: signing.Signer | None = None
) -> int:
    """Write `game`'s log (live or finished) as an archive file, signed by `signer` if given;
    returns the entry count."""
    records = [data for _, data in await store.read(game)]
    if not records:
        raise LookupError(f"no such game: {game}")
    archive.write_atomic(Path(path), archive.pack(game, records, signer))
    return len(records)


async def verify_game(store: EventStore, game: str, engine: Engine | None = None) -> VerifyReport:
    """Verify a game straight from the store (with the entries' append times: the reveal's
    and the header's times are checked against them)."""
    rows = await store.read_timed(game)
    if not rows:
        raise LookupError(
            f"no such game in Redis: {game} (an archived game is verified from its file)"
        )
    return verify_records(
        [d for _, d, _ in rows], engine, game_id=game, times=[t for *_, t in rows]
    )


def _on_store(args: argparse.Namespace, action: Callable[[EventStore], Awaitable[T]]) -> T:
    args.redis_url, namespace = tool_redis(args)

    async def run() -> T:
        store = RedisEventStore.from_url(args.redis_url, namespace)
        try:
            return await action(store)
        finally:
            await store.aclose()

    return asyncio.run(run())


def export_arguments(p: argparse.ArgumentParser) -> None:
    """`arena export` options."""
    p.add_argument("game", help="the game's id in Redis")
    p.add_argument("-o", "--output", type=Path, required=True, help="the file to write")
    tool_redis_options(p)


def export_command(args: argparse.Namespace) -> int:
    """`arena export GAME -o FILE`: write a game's log to a self-verifying file."""
    signer = _signer(args.var)
    try:
        n = _on_store(args, lambda store: export_game(store, args.game, args.output, signer))
    except LookupError as exc:  # one line on stderr, as every tool error
        raise ToolError(str(exc)) from None
    print(f"wrote {n} entries to {args.output}")
    return 0


def verify_arguments(p: argparse.ArgumentParser) -> None:
    """`arena verify` options."""
    p.description = (
        "Exit 0 only if the hash chain, the seed commitment and a re-run all hold, and (for a "
        "file) the platform's signature: the platform played this game, and nobody edited it."
    )
    p.add_argument("source", help="an archive file, or the id of a game in Redis")
    p.add_argument("--json", action="store_true", help="print the report as JSON")
    p.add_argument(
        "--key",
        default="",
        metavar="HEX",
        help="the platform's public key (`arena platform-key` there, or GET /api/platform-key "
        "of its web server); default: $ARENA_ARCHIVE_PUBKEY, else the platform in --var",
    )
    p.add_argument(
        "--consistency-only",
        action="store_true",
        help="check chain, seed and re-run but not who signed the file (a forged game with "
        "its own seed passes this)",
    )
    tool_redis_options(p)


def _signer(var: Path) -> signing.Signer | None:
    """The platform's signing key: $ARENA_ARCHIVE_KEY, else the one `arena up` keeps in `var`."""
    try:
        found = signing.signer_from_env()
        path = var / signing.KEY_DIR / signing.KEY_FILE
        return found or (signing.Signer.load(path) if path.is_file() else None)
    except signing.BadKey as exc:
        raise ToolError(str(exc)) from None


def _public_key(args: argparse.Namespace) -> signing.PublicKey | None:
    """--key, else $ARENA_ARCHIVE_PUBKEY (or $ARENA_ARCHIVE_KEY's), else the key in --var."""
    try:
        if args.key:
            return signing.PublicKey.from_hex(args.key)
        return signing.platform_key() or signing.find_key(args.var)
    except signing.BadKey as exc:
        raise ToolError(str(exc)) from None


def verify_command(args: argparse.Namespace) -> int:
    """`arena verify GAME|FILE`: exit 0 only if chain, seed commitment and replay all hold
    (and a file's signature, unless --consistency-only)."""
    if Path(args.source).is_file():
        key = None if args.consistency_only else _public_key(args)
        if key is None and not args.consistency_only:
            raise ToolError(
                f"no platform key to check who signed {args.source}: pass --key HEX "
                "(`arena platform-key` on the platform, GET /api/platform-key of its web "
                "server), or --consistency-only"
            )
        report = verify(Path(args.source), key=key)
    elif _looks_like_a_file(args.source):
        raise ToolError(f"no such file: {args.source}")
    else:
        try:
            report = _on_store(args, lambda store: verify_game(store, args.source))
        except LookupError as exc:
            raise ToolError(str(exc)) from None
    print(json.dumps(asdict(report), indent=2) if args.json else report.summary())
    return 0 if report.ok else 1


def _looks_like_a_file(source: str) -> bool:
    """A path (a folder in it, a suffix, or not a valid game id), not a game id."""
    from ..eventlog.store import check_game_id

    if "/" in source or source.endswith(archive.SUFFIX) or Path(source).exists():
        return True
    try:
        check_game_id(source)
    except ValueError:
        return True
    return False


def archive_arguments(p: argparse.ArgumentParser) -> None:
    """`arena archive` options."""
    p.add_argument("game", help="a finished game's id in Redis")
    p.add_argument(
        "--dir",
        type=Path,
        default=None,
        help="the archive folder (default: the running platform's, else ./archive)",
    )
    tool_redis_options(p)


def archive_command(args: argparse.Namespace) -> int:
    """`arena archive GAME --dir DIR`: move a finished game from Redis into the archive."""
    if args.dir is None:
        from ..running import find_running

        run = None if args.redis_url else find_running(args.var)
        args.dir = Path(run.archive_dir) if run is not None else Path("archive")
    try:
        signer = _signer(args.var)
        record = _on_store(
            args, lambda store: archive_game(store, args.game, args.dir, signer=signer)
        )
    except NotArchivable as exc:
        raise ToolError(str(exc)) from None
    print(f"archived {args.game} -> {args.dir / record.file}")
    return 0


def catalog_arguments(p: argparse.ArgumentParser) -> None:
    """`arena catalog` options."""
    p.add_argument("action", choices=["rebuild"], help="rebuild: catalog.jsonl from the files")
    p.add_argument("--dir", type=Path, default=Path("archive"), help="the archive folder")


def catalog_command(args: argparse.Namespace) -> int:
    """`arena catalog rebuild --dir DIR`: rebuild the catalog (catalog.jsonl) from the archive files."""
    records, skipped = rebuild_catalog(args.dir)
    print(f"{len(records)} games catalogued in {args.dir}")
    for name, why in skipped.items():
        print(f"skipped {name}: {why}")
    return 0 if not skipped else 1


def platform_key_arguments(p: argparse.ArgumentParser) -> None:
    """`arena platform-key` options."""
    p.description = (
        "Print the public key this platform signs its archives with (64 hex digits): give it "
        "to `arena verify --key` wherever an archive file is checked."
    )
    p.add_argument("--var", type=Path, default=Path("var"), help="the platform's var folder")


def platform_key_command(args: argparse.Namespace) -> int:
    """`arena platform-key`: the public key of the platform in --var (or $ARENA_ARCHIVE_KEY's)."""
    try:
        key = signing.platform_key() or signing.find_key(args.var)
    except signing.BadKey as exc:
        raise ToolError(str(exc)) from None
    if key is None:
        raise ToolError(
            f"no platform key in {args.var / signing.KEY_DIR} (arena up makes one there) "
            f"and {signing.KEY_ENV} is not set"
        )
    print(key.hex)
    return 0
