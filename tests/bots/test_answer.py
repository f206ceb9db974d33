"""The bot worker's logic without the network: the engine core in process (memory store and
side), decisions messages taken from what it published, answered by `Answerer`."""

from __future__ import annotations

from collections.abc import AsyncGenerator

import msgspec
import pytest

from services.bots.answer import Answerer, Poison
from services.bots.engine_client import EngineError, Submitted
from services.bots.search import SearchPolicy
from services.bots.seats import Minds, SeatMind, policy_name
from services.contracts import tokens
from services.engine.service import Games, NewMatch, Refused, Result
from services.engine.side import MemorySide
from services.engine.worlds import World
from services.eventlog import InMemoryEventStore, Seat
from services.eventlog.entry import ANSWER, decode_entry
from services.verify import verify

SECRET = b"k"


class LocalEngine:
    """Engine port over an in-process `Games`; redacts entries for the token's seat."""

    def __init__(self, games: Games) -> None:
        self.games = games
        self.submits = 0
        self.seen_by: set[int] = set()  # viewers entries were redacted for
        self.worlds = 0  # Determinize calls

    async def submit(self, game: str, token: str, decision: int, picks: list[str]) -> Submitted:
        self.submits += 1
        try:
            r = await self.games.submit_action(game, token, decision, picks)
        except Refused as exc:
            raise EngineError(exc.code, exc.reason) from None
        return Submitted(r.duplicate, r.version, r.over)

    async def submit_many(
        self, answers: list[tuple[str, str, int, list[str]]]
    ) -> list[Submitted | EngineError]:
        """As a bot session sends them: the engine's `answer_many`, all in one batch."""
        self.submits += len(answers)
        out: list[Submitted | EngineError] = [EngineError("UNKNOWN", "none")] * len(answers)

        def done(i: int, r: Result | BaseException) -> None:
            if isinstance(r, Result):
                out[i] = Submitted(r.duplicate, r.version, r.over)
            else:
                out[i] = EngineError(getattr(r, "code", "INTERNAL"), str(r))

        await self.games.answer_many(answers, done)
        return out

    async def determinize(
        self, game: str, token: str, decision: int, worlds: list[tuple[int, dict[int, str]]]
    ) -> list[bytes]:
        self.worlds += 1
        try:
            asked = [World(seed, roles) for seed, roles in worlds]
            return await self.games.determinize(game, token, decision, asked)
        except Refused as exc:
            raise EngineError(exc.code, exc.reason) from None

    def people_at(self, game: str) -> None:
        pass  # (one engine: every game's answers go here)

    async def entries(
        self, game: str, token: str, after: int, upto: int = 0
    ) -> AsyncGenerator[tuple[int, str], None]:
        viewer = tokens.verify(SECRET, token).s
        self.seen_by.add(viewer)
        if upto <= 0:  # the whole game as it is now: this fake does not wait for live entries
            upto = 1 << 62
        async for position, envelope in self.games.view_entries(game, viewer, after, upto):
            yield position, envelope.decode()


async def _setup(policy: str, players: int = 4, seed: int = 3) -> tuple[Games, MemorySide]:
    side = MemorySide()
    games = Games(InMemoryEventStore(), side, SECRET)  # type: ignore[arg-type]
    seats = [Seat(f"bot:{policy}", True) for _ in range(players)]
    await games.create_game(NewMatch(match_id="g1", ruleset="standard", seats=seats, seed=seed))
    return games, side


async def _play(
    games: Games,
    side: MemorySide,
    answerers: list[Answerer],
    repeat: bool = False,
    views: bool = True,
) -> dict[str, int]:
    """Feed every published decision to the answerers in turn until the game ends (without
    their `view` field if not `views`, so bots catch up through the engine)."""
    outcomes: dict[str, int] = {}
    done = 0
    while done < len(msgs := side.decisions()):
        f = msgs[done] if views else msgspec.structs.replace(msgs[done], view=None)
        done += 1
        k = done % len(answerers)
        for a in answerers[k:] + answerers[:k]:
            out = await a.handle(f)
            outcomes[out] = outcomes.get(out, 0) + 1
            if not repeat:
                break
    return outcomes


@pytest.mark.parametrize("views", [True, False], ids=["views", "stream-view"])
@pytest.mark.parametrize("policy", ["heuristic", "random"])
async def test_plays_a_game_to_the_end_and_it_verifies(policy: str, views: bool) -> None:
    games, side = await _setup(policy)
    engine = LocalEngine(games)
    answerer = Answerer(engine, Minds("random"))
    outcomes = await _play(games, side, [answerer], views=views)
    hot = await games.get("g1")
    assert hot.game.over and hot.finished
    assert verify([d for _, d in await games.store.read("g1")]).ok
    assert outcomes.get("answered", 0) > 10
    assert set(outcomes) <= {"answered", "fallback"}, outcomes
    # with the views the messages carry, one worker never needs the engine's StreamView;
    # without them each heuristic seat reads entries redacted for that seat (random reads none)
    assert engine.seen_by == (set(range(4)) if policy == "heuristic" and not views else set())
    assert not answerer.minds.minds  # every seat forgotten once its game ended


class KeptMinds(Minds):
    """Minds that also keep every seat's mind after its game (to read its policy's counts)."""

    def __init__(self) -> None:
        super().__init__("random")
        self.kept: dict[tuple[str, int], SeatMind] = {}

    def get(self, game: str, seat: int, player: str) -> SeatMind:
        mind = super().get(game, seat, player)
        self.kept[(game, seat)] = mind
        return mind


class NoWorlds(LocalEngine):
    """An engine that deals no worlds (an older engine, or one that refuses)."""

    async def determinize(
        self, game: str, token: str, decision: int, worlds: list[tuple[int, dict[int, str]]]
    ) -> list[bytes]:
        self.worlds += 1
        raise EngineError("UNIMPLEMENTED", "no Determinize here")


@pytest.mark.parametrize("dealt", [True, False], ids=["worlds", "no-worlds"])
async def test_hard_seats_search_on_worlds_the_engine_deals(dealt: bool) -> None:
    """Every seat `bot:hard`: the worker asks the engine for worlds at the key decisions and
    searches on them; answers stay legal, the game ends and verifies. An engine that deals none
    leaves the answers to the heuristic (counted as refused), and the game still ends."""
    games, side = await _setup("hard", players=5, seed=4)
    engine = LocalEngine(games) if dealt else NoWorlds(games)
    minds = KeptMinds()
    answerer = Answerer(engine, minds)
    outcomes = await _play(games, side, [answerer])
    hot = await games.get("g1")
    assert hot.game.over and hot.finished
    assert verify([d for _, d in await games.store.read("g1")]).ok
    assert set(outcomes) == {"answered"}, outcomes  # no pick refused, no fallback
    policies = [m.policy for m in minds.kept.values()]
    assert len(policies) == 5 and all(isinstance(p, SearchPolicy) for p in policies)
    searched = sum(p.searched for p in policies if isinstance(p, SearchPolicy))
    assert engine.worlds > 0
    if dealt:
        assert answerer.worlds == {"dealt": engine.worlds}
        assert searched > 0 and sum(p.errors for p in policies) == 0
    else:
        assert answerer.worlds == {"refused": engine.worlds} and searched == 0


async def test_every_message_twice_and_by_two_workers_answers_once() -> None:
    games, side = await _setup("heuristic")
    a, b = (Answerer(LocalEngine(games), Minds("heuristic")) for _ in range(2))
    outcomes = await _play(games, side, [a, b, a], repeat=True)
    log = [decode_entry(d) for _, d in await games.store.read("g1")]
    answers = [e for e in log if e.kind == ANSWER]
    decisions = len(side.decisions())
    assert len(answers) == decisions  # one logged answer per decision, however often asked
    assert outcomes["known"] >= decisions - 1  # the same worker again: no call at all
    assert outcomes["duplicate"] + outcomes.get("stale", 0) >= decisions - 1  # the other worker
    assert verify([d for _, d in await games.store.read("g1")]).ok


async def test_stale_and_poison_messages() -> None:
    games, side = await _setup("random")
    answerer = Answerer(LocalEngine(games), Minds("random"))
    first = side.decisions()[0]
    assert await answerer.handle(first) == "answered"
    other = Answerer(LocalEngine(games), Minds("random"))
    assert await other.handle(first) == "duplicate"  # the engine's no-op
    body = first.body.replace(b'"id":%d' % first.decision, b'"id":999')
    # a decision of the seat at a later version that the engine does not have pending
    later = msgspec.structs.replace(first, decision=999, body=body, version=first.version + 1)
    assert await other.handle(later) == "stale"  # not pending: acked and dropped
    with pytest.raises(Poison):
        await other.handle(msgspec.structs.replace(first, body=b"{"))
    with pytest.raises(Poison):  # fields disagree with the body
        await other.handle(msgspec.structs.replace(first, seat=first.seat + 1))


async def test_transient_errors_are_retried_then_left_pending() -> None:
    games, side = await _setup("random")

    class Flaky(LocalEngine):
        fails = 2

        async def submit(self, game: str, token: str, decision: int, picks: list[str]) -> Submitted:
            if self.fails:
                self.fails -= 1
                raise EngineError("UNAVAILABLE", "down")
            return await super().submit(game, token, decision, picks)

    first = side.decisions()[0]
    flaky = Flaky(games)
    assert await Answerer(flaky, Minds("random"), backoff_s=0).handle(first) == "answered"
    flaky.fails = 5
    nxt = side.decisions()[1]
    with pytest.raises(EngineError):  # left pending: the stream delivers it again
        await Answerer(flaky, Minds("random"), backoff_s=0).handle(nxt)


async def test_random_seats_are_taken_in_batches_and_the_games_verify() -> None:
    """A worker answering random seats takes each session message's decisions at once (no
    task per decision) and sends their answers in one batch, which the engine decides together
    (`Games.answer_many`); three games played to the end that way verify, every decision
    answered once, none left to the one-at-a-time path."""
    side = MemorySide()
    games = Games(InMemoryEventStore(), side, SECRET)  # type: ignore[arg-type]
    seats = [Seat("bot:random", True) for _ in range(5)]
    for i in range(3):
        await games.create_game(NewMatch(match_id=f"g{i}", ruleset="standard", seats=seats, seed=i))
    answerer = Answerer(LocalEngine(games), Minds("heuristic"))
    outcomes: dict[str, int] = {}
    done = 0
    while done < len(msgs := side.decisions()):
        batch, done = msgs[done:], len(msgs)
        taken, known, rest = answerer.take(batch)
        assert not rest and not known and len(taken) == len(batch) <= 3  # a game's one each
        got, again = await answerer.submit_taken(taken)
        assert not again
        for o in got:
            outcomes[o] = outcomes.get(o, 0) + 1
    for i in range(3):
        log = [d for _, d in await games.store.read(f"g{i}")]
        assert verify(log).ok
    assert outcomes == {"answered": len(side.decisions())}


async def test_what_is_not_taken_goes_the_one_at_a_time_way() -> None:
    """Another policy, a malformed message, a seat busy with another message, a repost: left to
    `handle`; a decision the seat answered already: known, with no call."""
    games, side = await _setup("random")
    first = side.decisions()[0]
    answerer = Answerer(LocalEngine(games), Minds("random"))
    heuristic = msgspec.structs.replace(first, player="bot:heuristic", game="g2")
    malformed = msgspec.structs.replace(first, body=b"{", game="g3")
    taken, known, rest = answerer.take([first, first, heuristic, malformed])
    assert [t.msg for t in taken] == [first] and known == ["known"]  # (taken: answered)
    assert rest == [heuristic, malformed]
    outcomes, again = await answerer.submit_taken(taken)
    assert outcomes == ["answered"] and not again
    taken, known, rest = answerer.take([first, msgspec.structs.replace(first, repost=True)])
    assert not taken and known == ["known"] and len(rest) == 1 and rest[0].repost
    # an answer the engine refuses (the decision moved on) goes back to `handle`, which says so
    stale = Answerer(LocalEngine(games), Minds("random"))
    taken, _, _ = stale.take([first])
    assert await stale.submit_taken(taken) == (["duplicate"], [])
    body = first.body.replace(b'"id":%d' % first.decision, b'"id":999')
    later = msgspec.structs.replace(first, decision=999, body=body, version=first.version + 5)
    taken, _, _ = stale.take([later])
    assert await stale.submit_taken(taken) == ([], [later])
    assert await stale.handle(later) == "stale"


async def test_a_taken_answer_that_fails_is_given_back() -> None:
    """The engine away: the taken answer is not counted as given (the seat has not answered
    it), so `handle` answers it once the engine is back (it is not `known`)."""
    games, side = await _setup("random")

    class Away(LocalEngine):
        async def submit_many(
            self, answers: list[tuple[str, str, int, list[str]]]
        ) -> list[Submitted | EngineError]:
            return [EngineError("UNAVAILABLE", "down")] * len(answers)

    first = side.decisions()[0]
    answerer = Answerer(Away(games), Minds("random"))
    taken, _, _ = answerer.take([first])
    assert taken and taken[0].mind.answered == first.version
    assert await answerer.submit_taken(taken) == ([], [first])
    assert taken[0].mind.answered == -1
    assert await answerer.handle(first) == "answered"


def test_policy_per_seat() -> None:
    assert policy_name("bot:random", "heuristic") == "random"
    assert policy_name("bot:heuristic", "random") == "heuristic"
    assert policy_name("bot:oracle", "random") == "random"  # needs the true roles: not served
    assert policy_name("alice", "heuristic") == "heuristic"


def test_a_seats_fold_steps_over_every_entry_kind_that_is_no_event() -> None:
    """Control entries (托管), entries of kinds this code does not know and an event that does not
    decode are stepped over (the last counted), never raised: a raise left the seat's decision
    pending forever, since the same entries came back at every retry (the 托管 freeze)."""
    mind = Minds("heuristic").get("g1", 0, "bot:heuristic")
    answer = '{"seq":1,"kind":"answer","answer":{"decision":7,"seat":0,"picks":[]}}'
    mind.fold(1, answer)
    mind.fold(2, '{"seq":2,"kind":"control","control":{"seat":0,"hosted":true,"reason":"asked"}}')
    mind.fold(3, '{"seq":3,"kind":"other","type":"a_kind_from_a_newer_schema"}')
    assert (mind.seq, mind.unreadable, mind.over) == (3, 0, False)
    assert mind.folded.hosted == {0}
    mind.fold(4, '{"seq":4,"kind":"event","event":{"type":"cards_moved","not":"an event"}}')
    assert (mind.seq, mind.unreadable) == (4, 1)
    reveal = '"reveal":{"seed":1,"salt":"00","ended_at_ms":0,"winners":[],"sides":[]}'
    mind.fold(5, '{"seq":5,"kind":"seed_reveal",' + reveal + "}")
    assert mind.over and mind.seq == 5


def test_a_games_end_forgets_every_seat_of_it_and_no_other() -> None:
    minds = Minds("random")
    for game, seats in (("g-1", 16), ("g-2", 3)):
        for seat in range(seats):
            minds.get(game, seat, "bot:random")
    minds.drop_game("g-1")
    assert sorted(minds.minds) == [("g-2", 0), ("g-2", 1), ("g-2", 2)]
