"""`arena bot-account create|list|revoke` and `arena organiser-token create|revoke`: an operator
(whoever reaches the platform's Redis: the running `arena up` of VAR/up.json, or --redis-url)
issues the Bot API's and the organisers' credentials (accounts.py). A token is printed once."""

from __future__ import annotations

import argparse
import asyncio
import json
import sys
from collections.abc import Awaitable, Callable
from typing import Any

from ..cliargs import tool_redis, tool_redis_options
from ..matchmaking.tables import check_name
from ..redisinfra.redis_client import connect
from .accounts import Accounts


def _name_arguments(p: argparse.ArgumentParser, what: str) -> None:
    p.add_argument("name", help=f"the {what}'s name (1-32 characters)")
    p.add_argument("--json", action="store_true", help="print JSON")
    tool_redis_options(p)


def create_bot_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bot-account create` options."""
    _name_arguments(p, "bot")
    p.add_argument("--owner", default="operator", help="who issued it (shown with the account)")


def list_bots_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bot-account list` options."""
    tool_redis_options(p)


def revoke_bot_arguments(p: argparse.ArgumentParser) -> None:
    """`arena bot-account revoke` options."""
    p.add_argument("player", help="the bot's player id (b-…)")
    tool_redis_options(p)


def create_organiser_arguments(p: argparse.ArgumentParser) -> None:
    """`arena organiser-token create` options."""
    _name_arguments(p, "organiser")


def revoke_organiser_arguments(p: argparse.ArgumentParser) -> None:
    """`arena organiser-token revoke` options."""
    p.add_argument("token", help="the organiser token (org_…)")
    tool_redis_options(p)


def _run(args: argparse.Namespace, action: Callable[[Accounts], Awaitable[int]]) -> int:
    args.redis_url, namespace = tool_redis(args)

    async def go() -> int:
        client = connect(args.redis_url)
        try:
            return await action(Accounts(client, namespace))
        finally:
            await client.aclose()

    return asyncio.run(go())


def _checked(prog: str, name: str) -> str | None:
    try:
        return check_name(name)
    except ValueError as exc:
        print(f"{prog}: {exc}", file=sys.stderr)
        return None


def _print(args: argparse.Namespace, body: dict[str, Any], text: str) -> None:
    print(json.dumps(body, ensure_ascii=False) if args.json else text)


def create_bot_command(args: argparse.Namespace) -> int:
    """`arena bot-account create NAME`: a bot account and its token (shown once)."""
    name = _checked("arena bot-account", args.name)
    if name is None:
        return 2

    async def go(accounts: Accounts) -> int:
        bot, token = await accounts.create_bot(name, args.owner)
        body = {"player": bot.player, "name": bot.name, "token": token}
        _print(args, body, f"bot {bot.player} ({bot.name})\ntoken {token}\n(shown once)")
        return 0

    return _run(args, go)


def list_bots_command(args: argparse.Namespace) -> int:
    """`arena bot-account list`: the newest bot accounts, as JSON."""

    async def go(accounts: Accounts) -> int:
        rows = [
            {"player": b.player, "name": b.name, "owner": b.owner, "created_ms": b.created_ms}
            for b in await accounts.bots()
        ]
        print(json.dumps(rows, ensure_ascii=False))
        return 0

    return _run(args, go)


def revoke_bot_command(args: argparse.Namespace) -> int:
    """`arena bot-account revoke PLAYER`: its token stops working (account and rating stay)."""

    async def go(accounts: Accounts) -> int:
        if await accounts.bot(args.player) is None:
            print(f"arena bot-account: no bot {args.player!r}", file=sys.stderr)
            return 2
        done = await accounts.revoke_bot(args.player)
        print(f"bot {args.player}: {'token revoked' if done else 'had no token'}")
        return 0

    return _run(args, go)


def create_organiser_command(args: argparse.Namespace) -> int:
    """`arena organiser-token create NAME`: an organiser token (shown once)."""
    name = _checked("arena organiser-token", args.name)
    if name is None:
        return 2

    async def go(accounts: Accounts) -> int:
        token = await accounts.create_organiser(name)
        _print(args, {"name": name, "token": token}, f"organiser {name}\ntoken {token}")
        return 0

    return _run(args, go)


def revoke_organiser_command(args: argparse.Namespace) -> int:
    """`arena organiser-token revoke TOKEN`."""

    async def go(accounts: Accounts) -> int:
        if not await accounts.revoke_organiser(args.token):
            print("arena organiser-token: no such token", file=sys.stderr)
            return 2
        print("organiser token revoked")
        return 0

    return _run(args, go)
