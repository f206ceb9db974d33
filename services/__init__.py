"""Arena: an event-sourced platform for Sanguosha-family card games."""

import os

# gRPC's fork support restarts its poller thread in a forked child. Our processes fork only to
# exec a service (services/platform/procs.py, redisinfra/server.py, redisinfra/cluster_server.py), and
# with a preexec_fn (PR_SET_PDEATHSIG) that restarted poller can find its epoll fd closed and
# abort the child before exec (grpc/grpc#43055; reproduced here: 2 of 400 spawns from a process
# serving gRPC died so, none of 1,500 with this off). grpc reads the variable when it is
# imported, and every Arena process imports this package first.
os.environ.setdefault("GRPC_ENABLE_FORK_SUPPORT", "false")
