"""Spawning a service from a process that serves gRPC must not kill the child before exec.

gRPC's fork support restarts its poller thread in a forked child; with the preexec_fn the
supervisor uses (PR_SET_PDEATHSIG) the child runs long enough for that poller to find its epoll
fd closed and abort (grpc/grpc#43055): a bot worker of the play tests' platform died so, before
it had printed a line. `services/__init__.py` turns gRPC's fork support off for every Arena
process. Without that, about one spawn in 200 died here.
"""

from __future__ import annotations

import subprocess
import sys

CHILD = """
import asyncio, subprocess, sys
import services  # first, as in every Arena process
import grpc
from grpc._cython import cygrpc
from services.redisinfra.server import die_with_parent

async def main() -> None:
    server = grpc.aio.server()
    server.add_insecure_port("127.0.0.1:0")
    await server.start()
    died = 0
    for _ in range(int(sys.argv[1])):
        p = subprocess.run(["true"], preexec_fn=die_with_parent, start_new_session=True,
                           stderr=subprocess.PIPE)
        died += p.returncode != 0
    await server.stop(None)
    print(cygrpc._GRPC_ENABLE_FORK_SUPPORT, died)

asyncio.run(main())
"""


def test_services_spawned_beside_a_grpc_server_reach_exec() -> None:
    env = {"PATH": "/usr/bin:/bin"}  # no GRPC_ENABLE_FORK_SUPPORT from outside
    out = subprocess.run(
        [sys.executable, "-c", CHILD, "600"],
        capture_output=True,
        text=True,
        timeout=120,
        env=env,
    )
    assert out.returncode == 0, out.stderr[-2000:]
    fork_support, died = out.stdout.split()
    assert fork_support == "False"  # the switch took: gRPC read it at import
    assert died == "0", out.stderr[-2000:]
