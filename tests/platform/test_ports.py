"""Ports are exclusive: a second `arena up` on the same ports, or a service on a port that is
taken, fails at once with one line naming the port and the flag that sets it."""

from __future__ import annotations

import json
import socket
import subprocess
import time
from pathlib import Path

from process_helpers import arena, clean_env

from services.redisinfra.server import free_port


def _ports() -> list[str]:
    return [
        "--http-port",
        str(free_port()),
        "--replay-grpc-port",
        str(free_port()),
        "--matchmaker-port",
        str(free_port()),
        "--engine-port",
        str(free_port()),
        "--metrics-port",
        "0",
    ]


def test_a_second_arena_up_on_the_same_ports_fails_fast(tmp_path: Path) -> None:
    ports = _ports()
    common = ["up", "--engines", "1", "--bots", "1", "--no-persist", "--json", *ports]
    first = arena(*common, "--var", str(tmp_path / "a"), stdout=subprocess.PIPE)
    try:
        assert first.stdout is not None
        run = json.loads(first.stdout.readline())
        assert run["engines"] == [f"127.0.0.1:{ports[7]}"]
        t0 = time.monotonic()
        second = arena(
            *common,
            "--var",
            str(tmp_path / "b"),
            stdout=subprocess.PIPE,
            stderr=subprocess.PIPE,
        )
        out, err = second.communicate(timeout=30)
        took = time.monotonic() - t0
        assert second.returncode == 2, err
        lines = err.strip().splitlines()
        assert len(lines) == 1, err
        assert "is in use" in lines[0] and "choose another with --" in lines[0], lines
        flag = lines[0].rsplit(" ", 1)[1]
        assert flag in ports and ports[ports.index(flag) + 1] in lines[0]  # the port and its flag
        assert out == "" and not (tmp_path / "b" / "up.json").exists()
        print(f"second arena up refused in {took:.2f} s (process start included)")
        assert first.poll() is None  # the first one is untouched
    finally:
        first.terminate()
        first.wait(30)


def test_a_service_on_a_taken_port_says_which_and_its_flag(tmp_path: Path) -> None:
    with socket.socket() as held:
        held.bind(("127.0.0.1", 0))
        held.listen(1)
        port = held.getsockname()[1]
        env = {**clean_env(), "ARENA_SECRET": "s" * 32}
        for argv, flag in (
            (["engine", "--port", str(port)], "--port"),
            (["matchmaker", "--port", str(port)], "--port"),
            (["replay-server", "--http-port", str(port), "--port", "0"], "--http-port"),
        ):
            p = arena(
                *argv,
                "--redis-url",
                "redis://127.0.0.1:1/0",
                env=env,
                stdout=subprocess.PIPE,
                stderr=subprocess.PIPE,
            )
            _, err = p.communicate(timeout=30)
            assert p.returncode == 2, err
            assert err.strip().splitlines() == [
                f"arena {argv[0]}: port {port} on 127.0.0.1 is in use (another arena up?); "
                f"choose another with {flag}"
            ]


def test_is_free_says_what_check_free_would() -> None:
    """`ports.is_free` (for tools picking ports for servers they start) judges as check_free:
    a port something listens on is taken, the same port once closed is free."""
    import socket

    from services.ports import is_free

    with socket.socket() as s:
        s.bind(("127.0.0.1", 0))
        s.listen(1)
        port = s.getsockname()[1]
        assert not is_free(port)
    assert is_free(port)
