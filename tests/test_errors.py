"""How refusals for a store that is away are logged (services/errors.py): once per change of
state, not once per refused request (a full disk refused every write of every request, and
each said `store unavailable: ResponseError`)."""

from __future__ import annotations

import logging

import pytest
from redis.exceptions import ConnectionError as RedisConnectionError
from redis.exceptions import ResponseError

from services import errors
from services.errors import DISK_MESSAGE, UNAVAILABLE_MESSAGE, OutageLog, http_error

MISCONF = ResponseError("MISCONF Errors writing to the AOF file: No space left on device")
IN_PIPELINE = ResponseError(
    "Command # 1 (HSET arena:x k v) of pipeline caused error: MISCONF Errors writing to the AOF "
    "file: No space left on device"
)
AWAY = RedisConnectionError("Error 111 connecting to 127.0.0.1:6379. Connection refused.")


class Clock:
    def __init__(self) -> None:
        self.now = 1000.0

    def __call__(self) -> float:
        return self.now


def _said(caplog: pytest.LogCaptureFixture) -> list[str]:
    return [r.getMessage() for r in caplog.records if r.name == "arena.errors"]


def test_a_full_disk_is_said_once_per_change_of_state(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    clock = Clock()
    monkeypatch.setattr(errors, "outages", OutageLog(quiet_s=60, clock=clock))
    with caplog.at_level(logging.WARNING, "arena.errors"):
        for i in range(200):  # every request refused while the disk is full
            clock.now += 0.05
            assert http_error(MISCONF if i % 2 else IN_PIPELINE) == (503, {"error": DISK_MESSAGE})
        said = _said(caplog)
        assert len(said) == 1, said
        assert "cannot persist them" in said[0] and "No space left on device" in said[0]
        assert "\n" not in said[0] and not any(r.exc_info for r in caplog.records)

        clock.now += 1
        assert http_error(AWAY) == (503, {"error": UNAVAILABLE_MESSAGE})  # now Redis is away
        for _ in range(50):
            http_error(AWAY)
        said = _said(caplog)
        assert len(said) == 2, said
        assert "Redis unavailable (ConnectionError)" in said[1] and "199 more refused" in said[1]
        assert "127.0.0.1" not in said[1]  # the store's own words stay out

        clock.now += 61  # nothing refused for a minute: over, so the next refusal is said
        http_error(AWAY)
        assert len(_said(caplog)) == 3
        http_error(AWAY)
        assert len(_said(caplog)) == 3


def test_anything_else_is_not_an_outage(
    caplog: pytest.LogCaptureFixture, monkeypatch: pytest.MonkeyPatch
) -> None:
    monkeypatch.setattr(errors, "outages", OutageLog())
    with caplog.at_level(logging.WARNING, "arena.errors"):
        assert http_error(errors.BadRequest("no")) == (400, {"error": "no"})
        assert _said(caplog) == []
