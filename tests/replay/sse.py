"""A raw HTTP/SSE client for tests: the exact bytes the server sent, and the parsed messages."""

from __future__ import annotations

import asyncio
import json
from dataclasses import dataclass, field
from typing import Any


@dataclass
class SseMessage:
    """One server-sent event."""

    id: str = ""
    event: str = "message"
    data: bytes = b""


@dataclass
class SseClient:
    """Reads an SSE response; ``raw`` keeps every byte received."""

    reader: asyncio.StreamReader
    writer: asyncio.StreamWriter
    status: int = 0
    raw: bytearray = field(default_factory=bytearray)

    async def next(self) -> SseMessage | None:
        """The next message (comments skipped), or None at the end of the stream."""
        msg = SseMessage()
        got = False
        while True:
            line = await self.reader.readline()
            if not line:
                return None
            self.raw += line
            line = line.rstrip(b"\n")
            if not line:
                if got:
                    return msg
                continue
            if line.startswith(b":"):
                continue
            name, _, value = line.partition(b":")
            value = value[1:] if value.startswith(b" ") else value
            if name == b"id":
                msg.id, got = value.decode(), True
            elif name == b"event":
                msg.event, got = value.decode(), True
            elif name == b"data":
                msg.data, got = value, True

    def close(self) -> None:
        """Drop the connection (as a viewer whose network fails)."""
        self.writer.close()


async def open_sse(
    port: int, path: str, last_event_id: str | None = None, token: str = ""
) -> SseClient:
    """GET ``path`` as an EventSource would (``token``: a seat token, as a bearer token)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    extra = f"Last-Event-ID: {last_event_id}\r\n" if last_event_id else ""
    extra += f"Authorization: Bearer {token}\r\n" if token else ""
    writer.write(
        f"GET {path} HTTP/1.1\r\nHost: x\r\nAccept: text/event-stream\r\n{extra}\r\n".encode()
    )
    await writer.drain()
    head = await reader.readuntil(b"\r\n\r\n")
    client = SseClient(reader, writer, int(head.split(b" ")[1]))
    client.raw += head
    return client


async def get(port: int, path: str, token: str = "") -> tuple[int, bytes]:
    """A plain GET: status and body bytes (``token``: a seat token, as a bearer token)."""
    reader, writer = await asyncio.open_connection("127.0.0.1", port)
    auth = f"Authorization: Bearer {token}\r\n" if token else ""
    writer.write(f"GET {path} HTTP/1.1\r\nHost: x\r\n{auth}\r\n".encode())
    await writer.drain()
    data = await reader.read()
    writer.close()
    head, _, body = data.partition(b"\r\n\r\n")
    return int(head.split(b" ")[1]), body


async def get_json(port: int, path: str, token: str = "") -> tuple[int, Any]:
    """A GET whose body is JSON."""
    status, body = await get(port, path, token)
    return status, json.loads(body)
