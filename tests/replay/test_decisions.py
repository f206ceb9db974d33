"""The pending decision on the live table, from a real engine over gRPC: only public ones reach a
viewer (the active seat's play/discard/targets, drafts), with seat and kind and nothing else, and
only viewers with no delay get them."""

from __future__ import annotations

import asyncio
import json
from collections.abc import AsyncIterator
from dataclasses import dataclass, field

import pytest

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.engine.grpc_server import make_server
from services.engine.service import Games, NewMatch
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.entry import EVENT, decode_entry
from services.readside.decisions import Pending, may_see, public_json
from services.readside.positions import positions_of
from services.replay import Replay, TablePolicy
from services.replay.decisions import EngineDecisions
from services.replay.http import HttpServer
from services.rules import api
from services.rules.api import GOD, SPECTATOR, fold

from .leaks import Truth, n_cards
from .sse import SseClient, SseMessage, open_sse

SECRET = b"decisions-test"


def is_public(p: Pending, active_seat: int) -> bool:
    """Whether a spectator may learn that ``p`` is pending (the read side's rule)."""
    return may_see(p.kind, p.seat, active_seat, SPECTATOR)


def test_the_rule() -> None:
    for kind in ("play", "discard", "targets"):
        assert is_public(Pending(9, 2, kind), active_seat=2)
        assert not is_public(Pending(9, 3, kind), active_seat=2)
    assert is_public(Pending(9, 3, "draft"), active_seat=-1)
    for kind in ("respond", "confirm", "choose", "cards", "pick_card"):
        assert not is_public(Pending(9, 2, kind), active_seat=2)  # even the active seat's
    assert public_json(Pending(9, 2, "play"), 9) == b'{"version":9,"seat":2,"kind":"play"}'


@dataclass
class Reader:
    """Collects one SSE stream's messages."""

    sse: SseClient
    messages: list[SseMessage] = field(default_factory=list)
    changed: asyncio.Event = field(default_factory=asyncio.Event)
    parsed: list[dict[str, object]] = field(default_factory=list)  # the decision messages'

    async def run(self) -> None:
        while (m := await self.sse.next()) is not None:
            self.messages.append(m)
            if m.event == "decision":  # parsed once (until() asks after every message)
                self.parsed.append(json.loads(m.data))
            self.changed.set()
            if m.event == "end":
                return

    def decisions(self) -> list[dict[str, object]]:
        return list(self.parsed)

    async def until(self, check: object, timeout: float = 10) -> None:
        async def loop() -> None:
            while not check():  # type: ignore[operator]
                self.changed.clear()
                await self.changed.wait()

        await asyncio.wait_for(loop(), timeout)


@pytest.fixture
async def engine() -> AsyncIterator[tuple[Games, str]]:
    games = Games(InMemoryEventStore(), MemorySide(), SECRET)
    server, port, _ = make_server(games)
    await server.start()
    yield games, f"127.0.0.1:{port}"
    await server.stop(None)


class ActiveSeat:
    """The active seat once the first `version` records of the log are folded (the god view's
    `current`), each record folded once: the log only grows (folding the whole prefix again
    for each of a game's ~900 decisions was 40% of the test's time)."""

    def __init__(self) -> None:
        self.view = api.new_view(GOD)
        self.after = [self.view.current]  # [version]: the active seat after that many records

    def __call__(self, records: list[bytes], version: int) -> int:
        while len(self.after) <= version:
            e = decode_entry(records[len(self.after) - 1])
            if e.kind == EVENT:
                fold([api.decode_event(e.payload)], GOD, self.view)
            self.after.append(self.view.current)
        return self.after[version]


async def test_public_decisions_reach_live_viewers_and_nothing_else_does(
    engine: tuple[Games, str],
) -> None:
    games, address = engine
    store = games.store
    assert isinstance(store, InMemoryEventStore)
    game_id = "dec"
    await games.create_game(
        NewMatch(
            match_id=game_id, ruleset="standard", seats=[Seat(f"p{i}") for i in range(5)], seed=12
        )
    )
    replay = Replay(
        store, seat_check=lambda g, s, t: t == f"seat-{s}", decisions=EngineDecisions(address)
    )
    http = HttpServer(replay)
    port = await http.start()
    delayed = Replay(
        store,
        seat_check=lambda g, s, t: True,
        decisions=EngineDecisions(address),
        policy=lambda h: TablePolicy(spectator_delay_ms=1),
    )
    http2 = HttpServer(delayed)
    port2 = await http2.start()
    readers = [
        Reader(await open_sse(port, f"/api/games/{game_id}/stream")),
        Reader(await open_sse(port, f"/api/games/{game_id}/stream?viewer=1", token="seat-1")),
        Reader(await open_sse(port2, f"/api/games/{game_id}/stream")),
    ]
    spectator, seat1, late = readers
    tasks = [asyncio.create_task(r.run()) for r in readers]
    policy = RandomPolicy(5)
    active_seat = ActiveSeat()
    # a spectator's position -> (seat, kind) pending there (several: answers are withheld from
    # it); each viewer is told a decision at its own position
    asked: dict[int, set[tuple[int, str]]] = {}
    public_seen = hidden_seen = 0
    for _ in range(4000):
        hot = await games.get(game_id)
        d = api.pending(hot.game)
        if d is None or hot.game.over:
            break
        version = hot.log.version
        records = [data for _, data in await store.read(game_id)]
        at = positions_of(enumerate(records, 1))
        asked.setdefault(at.position(SPECTATOR, version), set()).add((d.seat, d.kind))
        if is_public(Pending(version, d.seat, d.kind), active_seat(records, version)):
            public_seen += 1
            for r, viewer in ((spectator, SPECTATOR), (seat1, 1)):  # the same public part
                want = {"version": at.position(viewer, version), "seat": d.seat, "kind": d.kind}
                await r.until(lambda r=r, want=want: want in r.decisions())
        else:
            hidden_seen += 1  # nothing to wait for (an answer batch may hold no public entry)
            while (await replay.feed(game_id)).version < version:
                await asyncio.sleep(0.001)
        answer = policy.act(d)
        await games.submit_action(
            game_id,
            tokens.issue(SECRET, game_id, d.seat),
            (await games.get(game_id)).ids.opaque(d.id),
            list(answer.picks),
        )
    assert hot.game.over
    await asyncio.wait_for(asyncio.gather(*tasks), 20)
    assert public_seen > 20 and hidden_seen > 5, (public_seen, hidden_seen)
    # "nothing public pending" ({"version"} alone) comes when the decision shown was answered by
    # an answer alone (withheld) and what follows is hidden; it names a position the spectator
    # holds, never one counting the withheld answer
    clears = [int(x["version"]) for x in spectator.decisions() if set(x) == {"version"}]  # type: ignore[call-overload]
    held = max(int(m.id) for m in spectator.messages if m.id)
    assert all(0 < v <= held for v in clears)

    records = [data for _, data in await store.read(game_id)]
    at = positions_of(enumerate(records, 1))
    for r, viewer in ((spectator, SPECTATOR), (seat1, 1)):
        for x in r.decisions():
            if set(x) == {"version"}:  # "nothing public pending": only after one was shown
                continue
            assert set(x) == {"version", "seat", "kind"}
            position, seat, kind = int(x["version"]), int(x["seat"]), str(x["kind"])  # type: ignore[call-overload]
            version = at.seq(viewer, position)
            # the feed may be a batch ahead of or behind the engine it asks: a decision is
            # pinned to a spectator's position (the engine tells spectators no more)
            assert (seat, kind) in asked[at.position(SPECTATOR, version)]
            assert is_public(Pending(version, seat, kind), active_seat(records, version))
    assert late.decisions() == []  # a delayed viewer gets none
    truth = Truth(records, n_cards(records))
    for r, viewer in ((spectator, SPECTATOR), (seat1, 1)):
        raw = bytes(r.sse.raw)  # option keys (card:ID …) and answers: not to a spectator
        for needle in (b"card:", b"skill:", b"general:", b'"picks"', b"declinable"):
            assert viewer != SPECTATOR or needle not in raw, needle
        for m in r.messages:
            if m.event == "decision":
                assert b"options" not in m.data and b"info" not in m.data and b'"id"' not in m.data
        leaks = [x for m in r.messages if m.id for x in truth.leaks(int(m.id), m.data, viewer)]
        assert not leaks, leaks[:5]
    for r in readers:
        r.sse.close()
    await http.close()
    await http2.close()
    await replay.close()
    await delayed.close()
