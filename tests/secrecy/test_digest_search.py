"""Digest search (issue 17 "Prove it"): try to recover hidden roles and hidden cards from
everything a spectator and a seat receive on every channel of a live game, by hashing guesses
over the small hidden spaces, as the measured attack did (at most 4 guesses a role, ~25k an
ordered two-card draw) — and find nothing. A positive control runs the same search against
what GameService used to send (each entry's chain hash) and recovers the secrets."""

from __future__ import annotations

import base64
import itertools
import re
from collections.abc import Iterator
from typing import Union

import grpc
import msgspec

from services.bots.random_policy import RandomPolicy
from services.contracts import tokens
from services.eventlog.entry import GENESIS, SCHEMA_VERSION, chain_hash, decode_entry
from services.proto_gen.arena.v1 import game_pb2, game_pb2_grpc, replay_pb2, replay_pb2_grpc
from services.readside import schema
from services.rules import api
from services.rules.api import events as ev

from .noninterference import GAME, SECRET, _fixed_engine_randomness, _serve, _side, _tok, http

HEX = re.compile(rb"[0-9a-fA-F]{64}")
B64 = re.compile(rb"[A-Za-z0-9+/_-]{43}=?")
ROLES = ("lord", "loyalist", "rebel", "renegade")
MAX_PAIR_SEARCHES = 4  # ordered two-card draws searched (each ~25k guesses)
_EVENT: msgspec.json.Decoder[ev.Event] = msgspec.json.Decoder(
    Union[tuple(ev.event_types().values())]  # type: ignore[valid-type]  # noqa: UP007
)


def digests_in(blobs: list[bytes], hashes: list[bytes]) -> set[bytes]:
    """Every 32-byte value a client could read out of what it received: hash fields, and hex
    or base64 strings in the payloads."""
    out = {h for h in hashes if len(h) == 32}
    for b in blobs:
        out |= {bytes.fromhex(m.decode()) for m in HEX.findall(b)}
        for m in B64.findall(b):
            try:
                raw = base64.urlsafe_b64decode(m + b"=" * (-len(m) % 4))
            except ValueError:
                continue
            if len(raw) == 32:
                out.add(raw)
    return out


def guesses(e: ev.Event, n_cards: int) -> Iterator[ev.Event]:
    """Every unredacted event the redacted `e` could have been (over its small hidden space)."""
    if isinstance(e, ev.RoleAssigned) and not e.role:
        for r in ROLES:
            yield msgspec.structs.replace(e, role=r, seen_by=[e.seat])
    elif isinstance(e, ev.CardsMoved) and not e.cards and e.count in (1, 2):
        viewers = [[e.dst_seat]] if e.dst_seat >= 0 else [[e.src_seat]]
        viewers.append([s for s in (e.src_seat, e.dst_seat) if s >= 0])
        for seen in viewers:
            for cards in itertools.permutations(range(n_cards), e.count):
                yield msgspec.structs.replace(e, cards=list(cards), seen_by=seen)


def search(
    received: list[tuple[int, ev.Event]], digests: set[bytes], prev: dict[int, bytes], n_cards: int
) -> list[str]:
    """Redacted events whose secret a guess's digest gives away: the chain hash of the entry
    with the previous entry's hash if the client has it (else the genesis), or the plain
    SHA-256 of the payload, found among the client's digests."""
    import hashlib

    found, pairs = [], 0
    for seq, e in received:
        if isinstance(e, ev.CardsMoved) and e.count == 2 and not e.cards:
            pairs += 1
            if pairs > MAX_PAIR_SEARCHES:
                continue
        before = prev.get(seq - 1, GENESIS)
        for g in guesses(e, n_cards):
            payload = api.encode_event(g)
            if (
                chain_hash(before, seq, SCHEMA_VERSION, "event", payload) in digests
                or hashlib.sha256(payload).digest() in digests
            ):
                found.append(f"entry {seq}: {type(e).__name__} is {g}")
                break
    return found


async def _received(
    side, viewer: int
) -> tuple[list[tuple[int, ev.Event]], set[bytes], dict[int, bytes]]:  # type: ignore[no-untyped-def]
    """Everything `viewer` gets on GameService, ReplayService and HTTP/SSE: the redacted
    events (with their seq), the digests it could read, and hashes by seq."""
    events: dict[int, ev.Event] = {}
    blobs: list[bytes] = []
    hashes: dict[int, bytes] = {}
    tok = _tok(viewer)
    async with grpc.aio.insecure_channel(f"127.0.0.1:{side.grpc_port}") as ch:
        stub = game_pb2_grpc.GameServiceStub(ch)
        view = await stub.GetView(game_pb2.GetViewRequest(game_id=GAME, seat_token=tok))
        last = view.events[-1].seq
        call = stub.StreamView(
            game_pb2.StreamViewRequest(game_id=GAME, seat_token=tok, upto_seq=last)
        )
        streamed = [e async for e in call]
        decision = await stub.GetDecision(game_pb2.GetDecisionRequest(game_id=GAME, seat_token=tok))
        blobs.append(decision.SerializeToString())
        for e in [*view.events, *streamed]:
            blobs.append(e.SerializeToString())
            if e.hash:
                hashes[e.seq] = e.hash
            if isinstance(entry := schema.decode(e.json), schema.EventEntry):
                events[e.seq] = entry.event
    meta = [("authorization", f"Bearer {tok}")] if viewer >= 0 else []
    async with grpc.aio.insecure_channel(f"127.0.0.1:{side.replay_port}") as ch:
        rs = replay_pb2_grpc.ReplayServiceStub(ch)
        got = await rs.GetEvents(
            replay_pb2.GetEventsRequest(game_id=GAME, viewer=viewer), metadata=meta
        )
        for e in got.events:
            blobs.append(e.SerializeToString())
            if e.hash:
                hashes[e.seq] = e.hash
    blobs += await http(side, viewer, last)
    return sorted(events.items()), digests_in(blobs, list(hashes.values())), hashes


async def _live_game() -> object:
    with _fixed_engine_randomness():
        side = await _side("standard", 5, 9, {}, None)
    await _serve(side)
    policy = RandomPolicy(9)
    for _ in range(80):
        d = api.pending((await side.games.get(GAME)).game)
        assert d is not None
        await side.games.submit_action(
            GAME,
            tokens.issue(SECRET, GAME, d.seat),
            (await side.games.get(GAME)).ids.opaque(d.id),
            list(policy.act(d).picks),
        )
    return side


async def test_no_secret_is_recovered_from_any_channel() -> None:
    side = await _live_game()
    n_cards = len((await side.games.get(GAME)).game.cards)  # type: ignore[attr-defined]
    try:
        for viewer in (api.SPECTATOR, 1):
            received, digests, prev = await _received(side, viewer)
            hidden = [x for x in received if next(guesses(x[1], n_cards), None) is not None]
            assert len(hidden) >= 8, len(hidden)  # roles and draws really were hidden from it
            assert not search(received, digests, prev, n_cards)
    finally:
        for close in side.closers:  # type: ignore[attr-defined]
            await close()


async def test_the_search_finds_secrets_given_chain_hashes() -> None:
    """Positive control: with the chain hashes GameService used to send, the same search gives
    every hidden role and the hidden draws away."""
    side = await _live_game()
    n_cards = len((await side.games.get(GAME)).game.cards)  # type: ignore[attr-defined]
    try:
        received, digests, prev = await _received(side, api.SPECTATOR)
        records = await side.games.store.read(GAME)  # type: ignore[attr-defined]
        old = {seq: decode_entry(d).hash for seq, d in records}  # what every caller got before
        found = search(received, digests | set(old.values()), old, n_cards)
        roles = [f for f in found if "RoleAssigned" in f]
        assert len(roles) == 4 and any("CardsMoved" in f for f in found), found[:6]
    finally:
        for close in side.closers:  # type: ignore[attr-defined]
            await close()
