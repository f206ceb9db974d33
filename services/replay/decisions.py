"""The public pending decision of live games, asked of an engine worker.

Decisions are not in the log (only the answers are), so the replay server asks an engine worker
(``GameService.GetDecision`` as a spectator: no seat token, so no options and no info come back)
after each batch of entries; what a viewer is then shown of it, and when, is the read side's
rule (services/readside/decisions.py, readside/feed.py `decision_for`): only the public kinds,
only to a viewer with no delay, only at the position it belongs to.
"""

from __future__ import annotations

import asyncio
import zlib
from typing import Any

from ..readside.decisions import Pending
from ..targets import RESOLVE_EVERY_S, Resolver, Targets

PASS_OVER = ("UNAVAILABLE", "DEADLINE_EXCEEDED")  # the game's worker gone or hung: try the next


class EngineDecisions:
    """``GameService.GetDecision`` on the engine workers (any worker serves any game), called
    without a seat token: the engine itself then leaves options and info out.

    ``addresses`` is a list (or a comma-separated one) where a DNS name stands for every worker
    it resolves to (compose's ``engine:50051``, Kubernetes' headless ``arena-engine:50051``;
    services/targets.py), resolved again every ``resolve_every_s`` and soon after a call
    failed: a channel to each worker, and a game's lookups to one of them by a hash of its id,
    as the play API's and the bot workers' calls go (that worker has the game hot). Given the
    name as one gRPC target, every lookup of every game went to one engine. A worker that is
    gone or silent is passed over for the next one (two tries at most: the caller retries)."""

    def __init__(
        self,
        addresses: str | list[str],
        timeout_s: float = 2.0,
        *,
        resolver: Resolver | None = None,
        resolve_every_s: float = RESOLVE_EVERY_S,
    ) -> None:
        entries = addresses.split(",") if isinstance(addresses, str) else addresses
        self.targets = Targets(entries, resolver, every_s=resolve_every_s)
        self.timeout_s = timeout_s
        self.channels: dict[str, Any] = {}  # target -> its channel (opened at its first use)
        self.stubs: dict[str, Any] = {}
        self._refresh: asyncio.Task[None] | None = None

    @property
    def address(self) -> str:
        """The addresses as given (one line, for messages)."""
        return ",".join(self.targets.entries)

    async def _fresh(self) -> list[str]:
        """The workers now: the names resolved again when due (the first lookup waits for
        the first answer, at most ``timeout_s``; later ones do not wait)."""
        if self.targets.due() and (self._refresh is None or self._refresh.done()):
            self._refresh = asyncio.create_task(self._resolve())
        if self._refresh is not None and not self.targets.resolved:
            await asyncio.wait({self._refresh}, timeout=self.timeout_s)
        return self.targets.current()

    async def _resolve(self) -> None:
        if await self.targets.refresh():
            now = self.targets.current()
            for gone in [t for t in self.channels if t not in now]:
                self.stubs.pop(gone, None)
                await self.channels.pop(gone).close(grace=self.timeout_s)

    def _stub(self, target: str) -> Any:
        import grpc

        from ..proto_gen.arena.v1 import game_pb2_grpc

        if target not in self.stubs:
            self.channels[target] = grpc.aio.insecure_channel(target)
            self.stubs[target] = game_pb2_grpc.GameServiceStub(self.channels[target])  # type: ignore[no-untyped-call]
        return self.stubs[target]

    async def pending(self, game: str) -> Pending | None:
        """See DecisionSource.pending."""
        import grpc

        from ..proto_gen.arena.v1 import game_pb2

        workers = await self._fresh()
        first = zlib.crc32(game.encode()) % len(workers)
        order = [workers[(first + k) % len(workers)] for k in range(min(2, len(workers)))]
        for k, target in enumerate(order):
            try:
                r = await self._stub(target).GetDecision(
                    game_pb2.GetDecisionRequest(game_id=game), timeout=self.timeout_s
                )
                break
            except grpc.aio.AioRpcError as exc:
                if exc.code() in (grpc.StatusCode.NOT_FOUND, grpc.StatusCode.INVALID_ARGUMENT):
                    return None  # not an engine game (a demo), or archived and gone
                if exc.code().name in PASS_OVER:
                    self.targets.soon()  # the worker may be gone, another in its place
                if k == len(order) - 1 or exc.code().name not in PASS_OVER:
                    raise
        if r.over or not r.HasField("decision"):
            return None
        d = r.decision
        return Pending(int(d.version or r.version), int(d.seat), str(d.kind))

    async def close(self) -> None:
        """See DecisionSource.close."""
        if self._refresh is not None:
            self._refresh.cancel()
        for channel in self.channels.values():
            await channel.close()
        self.channels.clear()
        self.stubs.clear()
