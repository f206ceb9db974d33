"""托管 in the engine: time-outs in a row put a person's seat on its bot, the person takes it back
or resigns; every change is a `control` entry, so a reload (another worker) agrees."""

from __future__ import annotations

import pytest

from services.contracts import tokens
from services.engine.service import HOSTED_PLAYER, Games, NewMatch, Refused
from services.engine.side import MemorySide
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.entry import ANSWER, CONTROL, decode_entry
from services.eventlog.records import AnswerRecord, SeatControl, decode_payload
from services.rules import api
from services.verify import verify

from .test_service import SECRET, play_out


def _games(side: MemorySide, store: InMemoryEventStore | None = None, **kw: object) -> Games:
    return Games(store or InMemoryEventStore(), side, SECRET, **kw)  # type: ignore[arg-type]


def people(
    mid: str = "h1", after: int = 2, bots: tuple[int, ...] = (), level: str = ""
) -> NewMatch:
    return NewMatch(
        match_id=mid,
        ruleset="standard",
        seats=[Seat(f"p{i}", i in bots, f"<b>P{i}</b>") for i in range(4)],
        seed=11,
        hosted_after=after,
        hosted_level=level,
    )


async def entries(g: Games, game: str) -> list[tuple[int, str, bytes]]:
    out = []
    for seq, data in await g.store.read(game):
        e = decode_entry(data)
        out.append((seq, e.kind, e.payload))
    return out


async def sweep_until_hosted(g: Games, game: str) -> int:
    """Let every decision time out until a seat goes on 托管; that seat."""
    for _ in range(200):
        assert await g.sweep() >= 1
        hot = await g.get(game)
        if hot.hosting.hosted:
            (seat,) = hot.hosting.hosted
            return seat
    raise AssertionError("no seat went on 托管")


async def test_timeouts_in_a_row_turn_hosting_on_in_the_same_batch() -> None:
    side = MemorySide()
    g = _games(side, default_time_limit_ms=0)
    await g.create_game(people(after=2))
    seat = await sweep_until_hosted(g, "h1")
    log = await entries(g, "h1")
    controls = [(seq, decode_payload(p, SeatControl)) for seq, k, p in log if k == CONTROL]
    assert len(controls) == 1
    seq, control = controls[0]
    assert control == SeatControl(seat, True, "timeouts")
    # the seat's last two answers before it were both the server's, and nothing came between
    # the second one's batch and the control entry but that batch's events
    answers = [(s, decode_payload(p, AnswerRecord)) for s, k, p in log if k == ANSWER and s < seq]
    mine = [a for _, a in answers if a.seat == seat]
    assert len(mine) >= 2 and all(a.auto for a in mine[-2:])
    last_answer = answers[-1][0]
    assert answers[-1][1].seat == seat
    assert all(k == "event" for s, k, _ in log if last_answer < s < seq)


@pytest.mark.parametrize(("level", "player"), [("", HOSTED_PLAYER), ("hard", "bot:hard")])
async def test_a_hosted_seats_decisions_go_to_the_bots_with_the_hosting_policy(
    level: str, player: str
) -> None:
    """A hosted seat's decisions name the table's bot level (`bot:hard`: the bot workers play
    that level), else the default; a reload (another worker) keeps the level."""
    side = MemorySide()
    g = _games(side, default_time_limit_ms=0)
    await g.create_game(people(after=1, level=level))
    seat = await sweep_until_hosted(g, "h1")
    for _ in range(300):  # the others keep timing out until the hosted seat is asked
        hot = await g.get("h1")
        d = api.pending(hot.game)
        assert d is not None
        if d.seat == seat:
            break
        if d.seat not in hot.hosting.hosted:
            await g.sweep()
        else:  # another hosted seat: its bot would answer; answer for it
            await g.submit_action(
                "h1",
                tokens.issue(SECRET, "h1", d.seat),
                hot.ids.opaque(d.id),
                list(api.default_answer(d).picks),
            )
    hot = await g.get("h1")
    d = api.pending(hot.game)
    assert d is not None and d.seat == seat
    msgs = [m for m in side.decisions() if m.decision == hot.ids.opaque(d.id)]
    assert msgs and msgs[-1].player == player and msgs[-1].seat == seat
    assert await g.deadline_ms(hot, d) == 0  # a bot answers it: no clock for the person
    g.evict("h1")  # another worker: the level comes from the game's secret
    assert (await g.get("h1")).hosting.level == level


async def test_reload_keeps_hosting_from_before_the_snapshot() -> None:
    side, store = MemorySide(), InMemoryEventStore()
    g = _games(side, store, default_time_limit_ms=0, snapshot_every=5)
    await g.create_game(people(after=1))
    seat = await sweep_until_hosted(g, "h1")
    for _ in range(40):  # move past a few snapshots
        hot = await g.get("h1")
        d = api.pending(hot.game)
        assert d is not None
        await g.submit_action(
            "h1",
            tokens.issue(SECRET, "h1", d.seat),
            hot.ids.opaque(d.id),
            list(api.default_answer(d).picks),
        )
    snap = await store.load_snapshot("h1")
    control_seq = next(s for s, k, _ in await entries(g, "h1") if k == CONTROL)
    assert snap is not None and snap.version > control_seq
    other = _games(side, store)
    hot = await other.get("h1")
    assert seat in hot.hosting.hosted


async def test_take_back_resign_and_refusals() -> None:
    side = MemorySide()
    g = _games(side, default_time_limit_ms=60_000)
    await g.create_game(people(after=0, bots=(3,)))
    hot = await g.get("h1")
    d = api.pending(hot.game)
    assert d is not None
    tok = tokens.issue(SECRET, "h1", d.seat)
    due = await g.deadline_ms(hot, d)
    assert due > 0

    v1, hosted = await g.set_hosted("h1", tok, True)
    assert hosted
    msgs = [m for m in side.decisions() if m.decision == hot.ids.opaque(d.id)]
    assert msgs and msgs[-1].player == HOSTED_PLAYER  # the pending decision went to the bots
    assert await g.set_hosted("h1", tok, True) == (v1, True)  # a repeat: nothing appended

    v2, hosted = await g.set_hosted("h1", tok, False)
    assert not hosted and v2 == v1 + 1
    assert side.deadlines[f"h1|{d.id}"] > 0  # the person's clock runs again
    hot = await g.get("h1")
    assert await g.deadline_ms(hot, d) > 0

    v3, hosted = await g.set_hosted("h1", tok, False, resign=True)
    assert hosted
    with pytest.raises(Refused) as err:
        await g.set_hosted("h1", tok, False)
    assert err.value.code == "FAILED_PRECONDITION" and "resigned" in err.value.reason
    assert await g.set_hosted("h1", tok, True) == (v3, True)

    kinds = [decode_payload(p, SeatControl) for _, k, p in await entries(g, "h1") if k == CONTROL]
    assert [(c.hosted, c.reason) for c in kinds] == [
        (True, "asked"),
        (False, "taken_back"),
        (True, "resigned"),
    ]

    with pytest.raises(Refused) as err:  # a bot's seat has no person to take it back
        await g.set_hosted("h1", tokens.issue(SECRET, "h1", 3), True)
    assert err.value.code == "FAILED_PRECONDITION"
    with pytest.raises(Refused) as err:
        await g.set_hosted("h1", tokens.issue(SECRET, "other", 0), True)
    assert err.value.code == "PERMISSION_DENIED"
    with pytest.raises(Refused) as err:
        await g.set_hosted("h1", "forged.token", True)
    assert err.value.code == "UNAUTHENTICATED"


async def test_a_game_with_control_entries_verifies() -> None:
    side = MemorySide()
    g = _games(side, default_time_limit_ms=0)
    await g.create_game(people(after=1))
    await sweep_until_hosted(g, "h1")
    await play_out(g, "h1")
    records = [d for _, d in await g.store.read("h1")]
    assert any(decode_entry(r).kind == CONTROL for r in records)
    assert verify(records).ok
    hot = await g.get("h1")
    assert [s.name for s in hot.header.seats][0] == "<b>P0</b>"  # names kept as given


async def test_hosted_after_out_of_range_is_refused() -> None:
    g = _games(MemorySide())
    with pytest.raises(Refused) as err:
        await g.create_game(people(after=101))
    assert err.value.code == "INVALID_ARGUMENT"


def test_only_time_outs_in_a_row_count() -> None:
    """A seat's own answer between two time-outs sets the count back: 托管 needs `after`
    time-outs with none of the person's answers between them."""
    from services.engine.hosting import Hosting

    h = Hosting(after=2)
    auto, own = AnswerRecord(1, 0, [], auto=True), AnswerRecord(2, 0, ["end"])
    assert h.answered(auto) is None
    assert h.answered(own) is None  # the person answered: back to zero
    assert h.answered(auto) is None and 0 not in h.hosted
    assert h.answered(AnswerRecord(3, 1, [], auto=True)) is None  # another seat's count
    assert h.answered(auto) == SeatControl(0, True, "timeouts") and h.hosted == {0}


async def test_a_level_alone_sets_the_seats_hosting_level_without_hosting_it() -> None:
    """The person's default level recorded for their seat (`level_only`, reason `level`): the
    seat stays the person's (their clock keeps running, nothing goes to the bots), its later
    托管 by time-outs plays at that level, the time-outs counted before still count, a repeat
    appends nothing, a reload agrees, and every reader folds the entry as no change of who
    plays the seat; on a seat on 托管 it changes the level its bot plays at."""
    side = MemorySide()
    g = _games(side, default_time_limit_ms=0)
    await g.create_game(people(after=2, level="easy"))
    hot = await g.get("h1")
    d = api.pending(hot.game)
    assert d is not None
    seat, tok = d.seat, tokens.issue(SECRET, "h1", d.seat)
    await g.sweep()  # one time-out of that seat (the table puts it on 托管 after two)
    hot = await g.get("h1")
    assert hot.hosting.timeouts.get(seat) == 1
    due = dict(side.deadlines)
    sent = len(side.decisions())
    with pytest.raises(Refused) as err:
        await g.set_hosted("h1", tok, False, level="", level_only=True)
    assert err.value.code == "INVALID_ARGUMENT"
    with pytest.raises(Refused) as err:
        await g.set_hosted("h1", tok, False, level="godlike", level_only=True)
    assert err.value.code == "INVALID_ARGUMENT"
    v1, hosted = await g.set_hosted("h1", tok, True, level="hard", level_only=True)
    assert not hosted  # `hosted` is not read: the seat is not put on 托管
    assert await g.set_hosted("h1", tok, False, level="hard", level_only=True) == (v1, False)
    hot = await g.get("h1")
    assert hot.hosting.levels == {seat: "hard"} and seat not in hot.hosting.hosted
    assert hot.hosting.timeouts.get(seat) == 1  # the time-out before still counts
    assert len(side.decisions()) == sent and side.deadlines == due  # no clock restarted
    g.evict("h1")
    hot = await g.get("h1")
    assert hot.hosting.levels == {seat: "hard"} and hot.hosting.timeouts.get(seat) == 1
    assert await sweep_until_hosted(g, "h1") == seat
    hot = await g.get("h1")
    assert hot.hosting.player(seat, HOSTED_PLAYER) == "bot:hard"
    # on 托管 now: a level alone changes its bot's level, and it stays on 托管
    _, hosted = await g.set_hosted("h1", tok, False, level="normal", level_only=True)
    assert hosted and (await g.get("h1")).hosting.player(seat, HOSTED_PLAYER) == "bot:normal"
    controls = [
        decode_payload(p, SeatControl) for _, k, p in await entries(g, "h1") if k == CONTROL
    ]
    assert [(c.seat, c.hosted, c.reason, c.level) for c in controls] == [
        (seat, False, "level", "hard"),
        (seat, True, "timeouts", ""),
        (seat, True, "level", "normal"),
    ]
    # a reader folding only `hosted` (an older engine, a spectator's page) sees no change
    hosted_by_fold: set[int] = set()
    for c in controls:
        (hosted_by_fold.add if c.hosted else hosted_by_fold.discard)(c.seat)
    assert hosted_by_fold == (await g.get("h1")).hosting.hosted
