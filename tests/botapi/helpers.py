"""Small HTTP helpers for the Bot API's and the tournaments' tests (what any client sends), and
running the Node.js bot of tests/botapi/nodebot.mjs."""

from __future__ import annotations

import json
import os
import shutil
import subprocess
import urllib.error
import urllib.request
from pathlib import Path
from typing import Any

import pytest

NODEBOT = Path(__file__).with_name("nodebot.mjs")
ROOT = Path(__file__).resolve().parents[2]


def http(
    method: str, url: str, token: str | None = None, body: object = None, timeout: float = 30
) -> tuple[int, Any]:
    """(status, JSON body) of one request; a bearer token if given."""
    data = None if body is None else json.dumps(body).encode()
    req = urllib.request.Request(url, data=data, method=method)
    if token:
        req.add_header("Authorization", f"Bearer {token}")
    if data is not None:
        req.add_header("Content-Type", "application/json")
    try:
        with urllib.request.urlopen(req, timeout=timeout) as r:
            raw = r.read()
            status = r.status
    except urllib.error.HTTPError as err:
        raw, status = err.read(), err.code
    try:
        return status, json.loads(raw) if raw else None
    except ValueError:
        return status, raw.decode()


def arena_tool(*args: str) -> Any:
    """Run an `arena` tool command with --json; its JSON output."""
    out = subprocess.run(
        ["python3", "-m", "services.cli", *args, "--json"],
        cwd=ROOT,
        capture_output=True,
        text=True,
        timeout=60,
        check=True,
    )
    return json.loads(out.stdout)


def node() -> str:
    """The node binary (skip the test with the package to install when there is none)."""
    found = shutil.which("node")
    if found is None:
        pytest.skip("no node on PATH (Debian: apt-get install nodejs)")
    return found


def nodebot(base: str, token: str, *args: str) -> subprocess.Popen[str]:
    """The Node.js bot, playing as ``token`` against the server at ``base``."""
    env = {k: v for k, v in os.environ.items() if not k.startswith("NODE_")}
    return subprocess.Popen(
        [node(), str(NODEBOT), "--url", base, "--token", token, *args],
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
        text=True,
        env=env,
    )
