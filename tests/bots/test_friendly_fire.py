"""Friendly fire of the lord's side (issue 42's loose end): the lord or a loyalist dealing the
killing damage to its own side, by a belief error or a kill it did not see coming.

Two situations from real games (standard 8, all heuristic, the picks of HEAD's heuristic replayed
up to the moment), each of which used to end in such a kill; the count over 450 games per table
is measured under ``-m slow`` in tests/bots/test_blunders.py.
"""

from __future__ import annotations

import json

from services.bots.selfplay import Table
from services.bots.threat import Reading
from services.rules import api
from services.rules.api import Answer, Game

# seed 340: ... seat 6 (a loyalist) plays 过河拆桥 on the lord and takes the 乐不思蜀 a rebel had
# put in the lord's judgement area (the last two picks)
FREED_THE_LORD = json.loads(
    '[["card:106"],["recast:144"],["recast:145"],["end"],["card:57"],["seat:0"],[],[],["card:106"],["card:17"],["seat:0"],["end"],["card:134"],["recast:119"],["end"],["card:131"],["card:41"],[],[],["card:79"],["card:158"],["seat:0"],[],[],["card:66"],["card:69"],["end"],["card:10"],["seat:0"],["card:31"],[],[],["card:36"],[],[],["card:7"],[],[],["card:22"],[],[],["card:127"],[],[],["card:16"],[],[],["card:101"],[],[],["card:23"],[],[],["end"],["card:46"],["card:8"],["card:7"],["seat:4"],["card:133"],[],["card:44"],["seat:3"],["card:89"],["card:105"],["recast:118"],["card:27"],[],[],[],[],[],[],[],[],["end"],["card:22"],["seat:0"],[],["card:10"]]'
)
# seed 325, round 2: the lord's play phase, 南蛮入侵 (card 24) in hand, seat 3 (a loyalist) at 1 HP
AOE_AT_A_LOW_LOYALIST = json.loads(
    '[["card:79"],["end"],["card:62"],["seat:2"],["recast:143"],["card:59"],["seat:2"],[],["card:121"],["card:21"],[],["end"],["card:6"],["seat:0"],["card:133"],["card:66"],["seat:1"],["card:132"],["end"],["card:23"],["card:136"],["card:138"],["seat:2"],["card:78"],["seat:2"],["card:16"],["skill:丈八蛇矛"],["card:129","card:81"],["card:58"],["end"],["card:14"],["seat:3"],["card:122"],["seat:0"],["card:153"],[],["end"],["card:39"],["card:11"],["card:69"],["seat:3"],["recast:145"],["card:123"],["seat:0"],["card:153"],["recast:144"],["card:9"],["end"],["recast:146"],["end"],["card:102","card:19"],["card:37"],["seat:2"],["card:57"],["seat:5"],["hand"],["card:7"],["seat:6"],["card:13"],["card:111"],["card:17"],[],["card:38"],["card:48"],["card:130"],["card:71"],["seat:6"],["card:156"],["end"]]'
)


def replay(seed: int, picks: list[list[str]]) -> tuple[Game, Table]:
    """Standard 8, seed ``seed``: the recorded answers given, every seat's heuristic folding
    what it sees (its view and memory, the belief with it) as in self-play."""
    g = api.new_game("standard", 8, seed, api.table_options("standard", 8, {}))
    t = Table(g, ["heuristic"] * 8, seed, strict=True)
    t.feed(api.advance(g))
    for p in picks:
        d = g.pending
        assert d is not None and (not p or set(p) <= set(d.options)), "the game no longer replays"
        t.feed(api.submit(g, Answer(decision=d.id, seat=d.seat, picks=p)))
    return g, t


def test_a_strip_that_frees_the_lord_reads_as_help() -> None:
    """过河拆桥 that takes the 乐不思蜀 out of the lord's judgement area helps the lord: it is no
    evidence that its user is a rebel. It was read as an attack on the lord (the lord's P(seat 6
    is a rebel) 0.43 -> 0.73); the rebels then saved seat 6 from dying as one of theirs, and in
    round 3 the lord killed it at 99% a rebel."""
    g, t = replay(340, FREED_THE_LORD)
    assert [p.role for p in g.players][0] == "lord" and g.players[6].role == "loyalist"
    lord = t.policies[0]
    assert lord.mem.name(10) == "乐不思蜀" and not t.views[0].seats[0].judge  # taken away
    rebel = lord.mem.belief.marginals()[6]["rebel"]
    assert rebel < 0.45, rebel  # the prior after round 1's acts: 0.43
    assert Reading(lord.mem, t.views[0], 0).friend[6] > -0.2


def test_the_lord_spares_a_likely_loyalist_from_its_aoe() -> None:
    """The lord holds 南蛮入侵 while seat 3, a loyalist, is at 1 HP; the lord puts it at 41% a
    loyalist (friend score about 0: not a likely friend, so the old guard let the 南蛮 through and
    it killed seat 3). An area attack that could kill a seat whose death weighs as a loss is not
    played."""
    g, t = replay(325, AOE_AT_A_LOW_LOYALIST)
    d = g.pending
    assert d is not None and d.seat == 0 and d.kind == "play" and "card:24" in d.options
    assert g.cards[24].name == "南蛮入侵" and g.players[3].role == "loyalist"
    assert g.players[3].hp == 1
    r = Reading(t.policies[0].mem, t.views[0], 0)
    assert 0.3 < r.mate[3] < 0.5
    answer = t.act(d)
    assert answer.picks != ["card:24"], answer


def test_a_duel_that_lijian_forced_is_no_act_of_its_duellists() -> None:
    """A 决斗 made by a third seat's 离间 was read as the first duellist's attack on the second,
    pushing the two apart in every seat's belief (jinyu 8: 54 teammate kills in 450 games came
    from such 决斗s alone). Only the 离间 user chose it (its own act stays evidence); the same
    决斗 played from a hand still is."""
    from services.bots.memory import Memory
    from services.rules.api import events as ev
    from services.rules.api import redact

    g = api.new_game("jinyu", 8, 418, api.table_options("jinyu", 8, {}))
    lord = next(p.seat for p in g.players if p.role == "lord")
    watcher = Memory(lord)
    for e in api.advance(g):
        watcher.observe(redact(e, lord))
    assert watcher.belief is not None
    a, b = [s for s in range(8) if s != lord][:2]
    before = watcher.belief.marginals()
    forced = ev.CardUsed(user=a, name="决斗", suit="", rank=0, cards=[], targets=[b], skill="离间")
    watcher.observe(forced)
    assert watcher.belief.marginals() == before
    chosen = ev.CardUsed(user=a, name="决斗", suit="S", rank=1, cards=[0], targets=[b])
    watcher.observe(chosen)
    assert watcher.belief.marginals() != before
