"""CSRF in a real browser (issue 40 item 1): a signed-in person visits a page on another port of
the same host (same site: the SameSite=Strict cookie goes along) and on another origin (another
host name), and each page posts a plain HTML form to the play API. 0 effects: the person is not
seated, the table gains nobody.

Before the Origin check, such a form (no body, so no content-type check) made a person resign;
here, without it, the form on another port seats the person at a stranger's table (200).
The play API runs in this process (tests/play/test_edges.py's server: the real HTTP server,
a real matchmaker over signed gRPC, Redis); the pages are Debian's chromium through Playwright.
"""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from pathlib import Path

import pytest
import pytest_asyncio
import redis.asyncio as aioredis

from tests.browser.conftest import Tab
from tests.play.test_edges import TABLE, Server, edge_server, guest, request


@pytest_asyncio.fixture(loop_scope="session")  # (the browser tests' event loop: conftest.py)
async def server(
    redis_client: aioredis.Redis, redis_namespace: str, tmp_path: Path
) -> AsyncIterator[Server]:
    """tests/play/test_edges.py's web server."""
    async with edge_server(redis_client, redis_namespace, tmp_path) as s:
        yield s


async def _attacker_site(html: str) -> AsyncIterator[int]:
    """A tiny HTTP server on another port that serves one page."""

    async def serve(reader: asyncio.StreamReader, writer: asyncio.StreamWriter) -> None:
        await reader.readuntil(b"\r\n\r\n")
        body = html.encode()
        writer.write(
            b"HTTP/1.1 200 OK\r\nContent-Type: text/html\r\nContent-Length: %d\r\n"
            b"Connection: close\r\n\r\n%s" % (len(body), body)
        )
        await writer.drain()
        writer.close()

    site = await asyncio.start_server(serve, "127.0.0.1", 0)
    yield int(site.sockets[0].getsockname()[1])
    site.close()


@pytest.mark.parametrize("host", ["127.0.0.1", "localhost"], ids=["other-port", "other-origin"])
async def test_a_form_on_another_page_changes_nothing(
    server: Server, browser: Tab, host: str
) -> None:
    api = f"http://127.0.0.1:{server.port}"
    # someone else's open table the attack would seat the person at
    other = await guest(server, "Host")
    status, _, table = await request(server.port, "POST", "/api/tables", TABLE, other)
    assert status == 201
    # the person signs in from the play page's origin (the cookie is the browser's)
    await browser.goto(f"{api}/api/openapi.json")
    me = await browser.js(
        """fetch('/api/guests', {method: 'POST', headers: {'Content-Type': 'application/json'},
            body: JSON.stringify({name: 'Victim'})}).then(r => r.status)"""
    )
    assert me == 201
    targets = [
        f"{api}/api/tables/{table['table']}/join",
        f"{api}/api/quickplay",
        f"{api}/api/tables",
        f"{api}/api/games/g1/seats/0/resign",
    ]
    forms = "".join(
        f'<form id="f{i}" method="POST" action="{t}" target="w{i}"></form>'
        f'<iframe name="w{i}"></iframe>'
        for i, t in enumerate(targets)
    )
    page = (
        f"<html><body>{forms}<script>"
        f"for (let i = 0; i < {len(targets)}; i++) document.getElementById('f' + i).submit();"
        "</script></body></html>"
    )
    gen = _attacker_site(page)
    port = await gen.__anext__()
    try:
        responses: list[tuple[str, int]] = []
        browser.page.on("response", lambda r: responses.append((r.url, r.status)))
        await browser.goto(f"http://{host}:{port}/")
        for _ in range(100):  # every form's response arrived
            if sum(1 for u, _ in responses if u.startswith(api)) >= len(targets):
                break
            await asyncio.sleep(0.1)
        answered = {u: s for u, s in responses if u.startswith(api)}
        assert len(answered) == len(targets), responses
        # another port: same site, the cookie went along and the Origin check refused (403);
        # another origin: cross-site, no cookie (401) or refused (403)
        allowed = {403} if host == "127.0.0.1" else {401, 403}
        assert set(answered.values()) <= allowed, answered
    finally:
        await gen.aclose()
    # 0 effects: the person waits nowhere, the table has its creator alone
    await browser.goto(f"{api}/api/openapi.json")
    state = await browser.js("fetch('/api/me').then(r => r.json())")
    assert state["waiting"] is None and state["seated"] is None, state
    _, _, tables = await request(server.port, "GET", "/api/tables")
    listed = {t["table"]: t for t in tables["tables"]}
    assert listed[table["table"]]["waiting"] == ["Host"], json.dumps(listed)
