"""The tools find the running platform through VAR/up.json, and every mistake or unreachable
Redis is one line on stderr with a non-zero exit code, never a traceback."""

from __future__ import annotations

import asyncio
import json
import os
import re
import signal
import subprocess
from pathlib import Path

import pytest
from process_helpers import FREE_PORTS, arena, clean_env, until

from services.cli import main
from services.eventlog import signing
from services.eventlog.redis_store import RedisEventStore
from services.rules import api
from services.running import Running
from services.verify import record_game


def _one_line(args: list[str], env: dict[str, str] | None = None) -> tuple[int, str]:
    p = arena(*args, env=env, stdout=subprocess.PIPE, stderr=subprocess.PIPE)
    out, err = p.communicate(timeout=60)
    lines = err.strip().splitlines()
    assert len(lines) == 1 and "Traceback" not in err, err
    assert out == "", out
    return p.returncode, lines[0]


@pytest.mark.parametrize(
    ("args", "says"),
    [
        (["export", "g1", "-o", "x.arena", "--redis-url", "redis://127.0.0.1:1/0"], "cannot reach"),
        (["archive", "g1", "--redis-url", "redis://127.0.0.1:1/0"], "cannot reach"),
        (["verify", "g1", "--redis-url", "redis://127.0.0.1:1/0"], "cannot reach"),
        (["ratings", "show", "m", "--redis-url", "redis://127.0.0.1:1/0"], "cannot reach"),
        (["export", "g1", "-o", "x.arena", "--redis-url", "localhost:6379"], "want redis://"),
        (["ratings", "show", "m", "--redis-url", "http://x/"], "want redis://"),
        (["verify", "missing/g1.arena"], "no such file: missing/g1.arena"),
        (["up", "--redis-url", "localhost:6379"], "want redis://HOST:PORT/DB"),
        (["tournament", "--redis-url", "x"], "want redis://HOST:PORT/DB"),
        (["engine", "--redis-url", "x"], "want redis://HOST:PORT/DB"),
        (["verify", "g1.arena"], "no such file: g1.arena"),
        (["bots", "--consumer", "bots 0"], "a consumer name is 1-200 printable ASCII"),
        (["engine", "--consumer", "e\u00e9"], "a consumer name is 1-200 printable ASCII"),
    ],
)
def test_tool_errors_are_one_line(args: list[str], says: str, tmp_path: Path) -> None:
    code, line = _one_line([*args, "--var", str(tmp_path)])
    assert code != 0 and says in line, line
    assert line.startswith("arena "), line


def test_a_bad_redis_url_in_the_environment_is_one_line(tmp_path: Path) -> None:
    env = {**clean_env(), "REDIS_URL": "localhost:6379"}
    code, line = _one_line(["up", "--var", str(tmp_path), *FREE_PORTS], env)
    assert code == 2 and "localhost:6379" in line, line
    code, line = _one_line(["export", "g1", "-o", "x", "--var", str(tmp_path)], env)
    assert code == 2 and "bad --redis-url 'localhost:6379'" in line, line


def test_without_a_platform_the_tools_say_so(tmp_path: Path) -> None:
    env = clean_env()  # no REDIS_URL
    for args in (["export", "g1", "-o", "x.arena"], ["ratings", "show", "m"], ["verify", "g1"]):
        code, line = _one_line([*args, "--var", str(tmp_path)], env)
        assert code == 2, line
        assert f"no running platform ({tmp_path / 'up.json'}" in line and "--redis-url" in line


def test_the_tools_use_the_running_platform_of_up_json(
    redis_url: str, redis_namespace: str, tmp_path: Path, capsys: pytest.CaptureFixture[str]
) -> None:
    """No --redis-url: the Redis and the namespace of VAR/up.json (a live pid, a Redis that
    answers), whatever $REDIS_URL says."""
    var = tmp_path / "var"
    var.mkdir()
    run = Running(os.getpid(), redis_url, redis_namespace, str(var / "archive"))
    (var / "up.json").write_text(run.to_json())
    # a game only that platform has: export finds it there

    async def record() -> None:
        store = RedisEventStore.from_url(redis_url, redis_namespace)
        await record_game(store, "upjson1", api, "standard", 5, seed=3)  # type: ignore[arg-type]
        await store.aclose()

    asyncio.run(record())
    out = tmp_path / "g.arena"
    signing.keep_in(var)  # the platform's archive key, as arena up keeps it: export signs
    assert main(["export", "upjson1", "-o", str(out), "--var", str(var)]) == 0
    assert main(["verify", str(out), "--var", str(var)]) == 0  # signed by that platform
    assert main(["archive", "upjson1", "--var", str(var)]) == 0  # into the platform's archive
    assert (var / "archive" / "upjson1.arena").exists()
    capsys.readouterr()
    assert main(["ratings", "show", "standard-5", "--var", str(var)]) == 0
    assert json.loads(capsys.readouterr().out) == []


@pytest.mark.parametrize(
    "args",
    [
        ["verify", "nosuch"],
        ["export", "nosuch", "-o", "out.arena"],
        ["archive", "nosuch", "--dir", "archive"],
    ],
)
def test_a_game_redis_lacks_is_one_line(
    args: list[str], redis_url: str, redis_namespace: str, capsys: pytest.CaptureFixture[str]
) -> None:
    """A game id Redis does not hold (a typo, or a game already archived) is named on stderr;
    verify no longer reports it as a log that FAILED ('first entry is not a header')."""
    code = main([*args, "--redis-url", redis_url, "--namespace", redis_namespace])
    out, err = capsys.readouterr()
    assert code == 2 and out == "", out
    assert len(err.splitlines()) == 1 and err.startswith(f"arena {args[0]}: "), err
    assert "nosuch" in err and "FAILED" not in err, err


@pytest.mark.parametrize("down", ["--to", "--redis-url"])
def test_migrate_names_the_redis_that_is_down(
    down: str, redis_url: str, redis_namespace: str, redis_client: object
) -> None:
    """`arena migrate --to URL` with one side down names that side's URL and flag (it named
    the source it had just reached, whichever was down), and copies nothing."""
    import redis

    live = redis.Redis.from_url(redis_url)
    live.set(f"{redis_namespace}:partitions", 16)  # a partitioned source, so the copy would run
    dead = "redis://127.0.0.1:1/0"
    urls = {"--redis-url": redis_url, "--to": redis_url}
    urls[down] = dead
    args = ["migrate", "--namespace", redis_namespace, "--redis-url", urls["--redis-url"]]
    code, line = _one_line([*args, "--to", urls["--to"]])
    assert code == 1 and line == f"arena migrate: cannot reach {dead} ({down}: ConnectionError)"
    assert live.keys(f"{redis_namespace}:*") == [f"{redis_namespace}:partitions".encode()]
    live.close()


def _up(var: Path) -> subprocess.Popen[str]:
    return arena(
        "up",
        "--var",
        str(var),
        "--bots",
        "0",
        *FREE_PORTS,
        stdout=subprocess.PIPE,
        stderr=subprocess.PIPE,
    )


def test_arena_up_says_why_it_stopped_during_start_up(tmp_path: Path) -> None:
    """SIGTERM while the services start (a caller that gave up on a loaded machine): the last
    line says so and how long it had been starting, not a bare 'arena up: stopped'."""
    proc = _up(tmp_path)
    until(lambda: (tmp_path / "keys").exists() or proc.poll() is not None, 30, "start-up")
    proc.send_signal(signal.SIGTERM)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    last = err.strip().splitlines()[-1]
    assert re.fullmatch(r"arena up: stopped \(SIGTERM during start-up, \d+ s in\)", last), err


def test_arena_up_says_why_it_stopped_once_up(tmp_path: Path) -> None:
    proc = _up(tmp_path)
    until(lambda: (tmp_path / "up.json").exists() or proc.poll() is not None, 60, "arena up")
    proc.send_signal(signal.SIGINT)
    out, err = proc.communicate(timeout=60)
    assert proc.returncode == 0, err
    assert err.strip().splitlines()[-1] == "arena up: stopped (Ctrl-C)", err


def test_an_unreachable_redis_is_named_without_its_password() -> None:
    """`arena up`'s Redis has a password, in the URL up.json holds: a tool given such a URL
    that cannot reach it names it with the password masked (stderr ends up in scrollback and
    logs)."""
    url = "redis://:s3cret-pw@127.0.0.1:1/0"
    code, line = _one_line(["ratings", "show", "standard-5", "--redis-url", url])
    assert code == 1 and "s3cret" not in line, line
    assert line == "arena ratings show: cannot reach redis://:***@127.0.0.1:1/0 (ConnectionError)"
