"""`arena up` after its serve loop (services/platform/up_command.py `_serve`): asyncio's loop,
closing, puts back the default SIGTERM action, and a SIGTERM then killed `arena up` before its
`finally` stopped the services it started. `_serve` now returns with SIGTERM and SIGINT
blocked, and the caller ignores what arrived meanwhile. Run in a child process: the signal is
real."""

from __future__ import annotations

import subprocess
import sys
import textwrap

CHILD = textwrap.dedent(
    """
    import asyncio, os, signal, types
    from services.platform.up_command import _serve

    platform = types.SimpleNamespace(
        stopping=types.SimpleNamespace(signum=None), keep_alive=lambda: []
    )
    cfg = types.SimpleNamespace(demo=0)

    async def main():
        asyncio.get_running_loop().call_later(0.2, os.kill, os.getpid(), signal.SIGTERM)
        return await _serve(platform, None, cfg)

    status, why = asyncio.run(main())
    print("served", status, why, flush=True)
    os.kill(os.getpid(), signal.SIGTERM)  # in the gap: the loop is closed, `finally` not yet run
    print("survived the gap", flush=True)
    signal.signal(signal.SIGTERM, signal.SIG_IGN)
    signal.pthread_sigmask(signal.SIG_UNBLOCK, {signal.SIGTERM, signal.SIGINT})
    print("stopped cleanly", flush=True)
    """
)


def test_a_sigterm_after_the_serve_loop_does_not_kill_arena_up() -> None:
    out = subprocess.run(
        [sys.executable, "-c", CHILD], capture_output=True, text=True, timeout=60, check=False
    )
    assert out.stdout.splitlines() == [
        "served 0 SIGTERM",
        "survived the gap",
        "stopped cleanly",
    ], (out.returncode, out.stdout, out.stderr)
    assert out.returncode == 0, out.stderr
