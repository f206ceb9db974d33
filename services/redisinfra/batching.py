"""Coalescing: what concurrent tasks ask for in one event-loop iteration goes out as one batch.

Under load a worker has many games in flight, and each answer costs a few Redis commands and,
for bots, a gRPC call. Sent one by one, the per-call cost (a round trip, a task wake-up, packing
and parsing in Python) is most of a worker's CPU. `TickBatcher` lets each task keep writing
`await thing(item)` while the items queued during one iteration of the event loop are handed to
one `flush` call: an item waits at most for the tasks that were already runnable, never for a
timer, so a lone request goes out as fast as before.

While `max_flights` flushes are in flight, new items wait for one to return and then go out
together (group commit): batches grow with the load by themselves, and a caller never waits
longer than one flush behind the one in flight.

`AutoPipeline` is a TickBatcher over Redis: each caller adds its command to a shared
non-transactional pipeline, so N concurrent commands cost one round trip. It is not a
transaction: every command succeeds or fails on its own (a script keeps its own atomicity), and
a command's failure is raised to its caller only.
"""

from __future__ import annotations

import asyncio
from collections.abc import Awaitable, Callable, Sequence
from typing import Any, Generic, TypeVar

import redis.asyncio as aioredis
from redis.asyncio.client import Pipeline

from .redis_client import is_cluster

T = TypeVar("T")
R = TypeVar("R")

Flush = Callable[[list[T]], Awaitable[Sequence["R | BaseException"]]]


class TickBatcher(Generic[T, R]):
    """Collects items submitted in one loop iteration and flushes them together.

    `flush(items)` returns one result per item, in order; a result that is an exception is
    raised to that item's caller only. If `flush` itself raises, every caller of the batch gets
    that exception. With `max_flights` above 1, several flushes may be in flight at once:
    callers that must be ordered (appends to one game, say) are ordered by awaiting one before
    submitting the next.
    """

    def __init__(self, flush: Flush[T, R], max_items: int = 1024, max_flights: int = 1) -> None:
        self._flush = flush
        self.max_items = max_items
        self.max_flights = max_flights
        self._queue: list[tuple[T, Sink[R]]] = []
        self._scheduled = False
        self._running: set[asyncio.Task[None]] = set()
        self.batches = 0  # flushes started (for tests and benchmarks)
        self.items = 0  # items flushed

    async def submit(self, item: T) -> R:
        """Queue `item` for this iteration's batch and wait for its result."""
        loop = asyncio.get_running_loop()
        fut: asyncio.Future[R] = loop.create_future()
        self._queue.append((item, fut))
        if len(self._queue) >= self.max_items:
            self._start()
        elif not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._start)
        return await fut

    async def submit_many(self, items: Sequence[T]) -> list[R | BaseException]:
        """Queue `items` for this iteration's batch; their results in order, an item's error
        as its result (not raised). One future for all of them, not one each."""
        if not items:
            return []
        loop = asyncio.get_running_loop()
        many: _Many[R] = _Many(len(items), loop.create_future())
        self._queue.extend((item, (many, i)) for i, item in enumerate(items))
        if len(self._queue) >= self.max_items:
            self._start()
        elif not self._scheduled:
            self._scheduled = True
            loop.call_soon(self._start)
        return await many.done

    def _start(self) -> None:
        self._scheduled = False
        if not self._queue or len(self._running) >= self.max_flights:
            return  # a returning flight starts the next batch
        batch, self._queue = self._queue[: self.max_items], self._queue[self.max_items :]
        self.batches += 1
        self.items += len(batch)
        task = asyncio.get_running_loop().create_task(self._run(batch))
        self._running.add(task)
        task.add_done_callback(self._landed)

    def _landed(self, task: asyncio.Task[None]) -> None:
        self._running.discard(task)
        self._start()

    async def _run(self, batch: list[tuple[T, Sink[R]]]) -> None:
        try:
            results: Sequence[R | BaseException] = await self._flush([item for item, _ in batch])
            if len(results) != len(batch):
                raise RuntimeError(f"flush returned {len(results)} results for {len(batch)}")
        except BaseException as exc:  # noqa: BLE001 - handed to every caller of the batch
            results = [exc] * len(batch)
            failed: BaseException | None = exc
        else:
            failed = None
        for (_, fut), result in zip(batch, results, strict=True):
            if isinstance(fut, tuple):  # one of a `submit_many`'s items
                fut[0].settle(fut[1], result)
            elif fut.done():  # the caller was cancelled; its command may still have run
                continue
            elif isinstance(result, BaseException):
                fut.set_exception(result)
            else:
                fut.set_result(result)
        if isinstance(failed, asyncio.CancelledError):
            raise failed  # the flush itself was cancelled (shutdown): stay cancelled


class _Many(Generic[R]):
    """The results of a `submit_many`, filled in as their batches land."""

    def __init__(self, n: int, done: asyncio.Future[list[R | BaseException]]) -> None:
        self.results: list[R | BaseException | None] = [None] * n
        self.left, self.done = n, done

    def settle(self, i: int, result: R | BaseException) -> None:
        self.results[i] = result
        self.left -= 1
        if self.left or self.done.done():
            return
        if any(isinstance(r, asyncio.CancelledError) for r in self.results):
            self.done.cancel()  # (the flush was cancelled: shutdown)
        else:
            self.done.set_result(self.results)  # type: ignore[arg-type]


Sink = asyncio.Future[R] | tuple[_Many[R], int]
"""Where an item's result goes: its caller's future, or its place in a `submit_many`."""

AddCommand = Callable[[Pipeline], object]


class AutoPipeline:
    """Redis commands from concurrent tasks in one pipeline per loop iteration.

    `await auto.run(lambda p: p.zadd(key, {member: score}))`: the callable adds exactly one
    command to the pipeline; its reply (or its error) is returned (or raised) to that caller.
    Use `evalsha` for scripts (a pipeline's own script handling checks SCRIPT EXISTS on every
    execute, a round trip per batch) and load the script when NOSCRIPT comes back.
    """

    def __init__(
        self,
        client: aioredis.Redis,
        max_items: int = 1024,
        *,
        wait: tuple[int, int] = (0, 0),
        wait_aof: bool = False,
    ) -> None:
        self.client = client
        self.batcher: TickBatcher[AddCommand, Any] = TickBatcher(self._flush, max_items)
        self.wait_replicas, self.wait_timeout_ms = wait
        # WAITAOF 1 N (Redis 7.2+): a reply only once the server's own AOF has it fsynced
        # (and N replicas theirs): an acknowledged write survives Redis's crash or power loss
        self.wait_aof = wait_aof

    async def run(self, add: AddCommand) -> Any:
        """Queue one command; its reply."""
        return await self.batcher.submit(add)

    async def _flush(self, adds: list[AddCommand]) -> list[Any]:
        pipe = self.client.pipeline(transaction=False)
        out: list[Any] = [None] * len(adds)
        sent: list[int] = []
        stack = _stack(pipe)
        for i, add in enumerate(adds):
            before = len(stack)
            try:
                add(pipe)
                if len(stack) != before + 1:
                    raise TypeError("an AutoPipeline command must add exactly one command")
            except Exception as exc:  # noqa: BLE001 - this caller's error only
                del stack[before:]
                out[i] = exc
                continue
            sent.append(i)
        waits: list[str] = []
        if sent and (self.wait_replicas > 0 or self.wait_aof):
            if is_cluster(self.client):  # (the slot table, to know each command's node)
                await self.client.initialize()
            waits = self._add_waits(pipe, stack)
        if sent:
            queued = list(stack)  # (executing resets the pipeline)
            replies: list[Any] = await pipe.execute(raise_on_error=False)
            acked = {node: replies[len(sent) + j] for j, node in enumerate(waits)}
            for i, cmd, reply in zip(sent, queued, replies, strict=False):
                out[i] = reply
                if not waits or isinstance(reply, Exception):
                    continue
                failed = self._unconfirmed(acked[self._node(cmd)])
                if failed is not None:
                    out[i] = failed
        return out

    def _unconfirmed(self, got: Any) -> NotReplicated | None:
        """The error for a write its WAIT (replicas) or WAITAOF ([local fsyncs, replicas'])
        did not confirm in time, or None if confirmed."""
        if isinstance(got, Exception):
            return NotReplicated(self.wait_replicas, got, self.wait_aof)
        if self.wait_aof:
            local, replicas = (int(x) for x in got)
            if local < 1 or replicas < self.wait_replicas:
                return NotReplicated(self.wait_replicas, got, True)
            return None
        return NotReplicated(self.wait_replicas, got) if int(got) < self.wait_replicas else None

    def _node(self, cmd: Any) -> str:
        """The server a queued command goes to ("" on one Redis): the node of its first key
        (EVALSHA sha numkeys KEY ..., or CMD KEY ...)."""
        if not is_cluster(self.client):
            return ""
        args = cmd.args
        key = args[3] if str(args[0]).upper() == "EVALSHA" else args[1]
        return str(self.client.get_node_from_key(key).name)  # type: ignore[attr-defined]

    def _add_waits(self, pipe: Any, stack: list[Any]) -> list[str]:
        """One `WAIT replicas timeout` (or `WAITAOF 1 replicas timeout`) per server after the
        commands queued for it, on the same connection (a cluster pipeline sends each node's
        commands on one, in order)."""
        nodes = list(dict.fromkeys(self._node(cmd) for cmd in stack))
        wait = ("WAITAOF", 1) if self.wait_aof else ("WAIT",)
        for node in nodes:
            target = {"target_nodes": self.client.get_node(node_name=node)} if node else {}  # type: ignore[attr-defined]
            pipe.execute_command(*wait, self.wait_replicas, self.wait_timeout_ms, **target)
        return nodes


class NotReplicated(RuntimeError):
    """The command ran, but fewer replicas than asked confirmed it within the timeout (WAIT),
    or (WAITAOF) the server's own AOF did not have it fsynced in time: a failover or a crash
    now could lose it, so it is not acknowledged."""

    def __init__(self, wanted: int, got: object, aof: bool = False) -> None:
        if aof:
            super().__init__(
                f"written, but not confirmed fsynced in time (WAITAOF: [local, replicas] = "
                f"{got!r}, wanted [1, {wanted}])"
            )
        else:
            super().__init__(f"written, but {got!r} of {wanted} replicas confirmed it in time")


def _stack(pipe: Any) -> list[Any]:
    """The pipeline's list of queued commands (a cluster pipeline keeps it in its strategy)."""
    stack = getattr(pipe, "command_stack", None)
    if stack is None:
        stack = pipe._execution_strategy._command_queue
    assert isinstance(stack, list)
    return stack
