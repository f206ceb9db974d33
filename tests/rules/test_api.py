"""The public engine API (services/rules/README.md): its contract, call by call."""

from __future__ import annotations

import re

import msgspec
import pytest

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.core import events as ev

KINDS = {
    "play",
    "targets",
    "respond",
    "discard",
    "cards",
    "pick_card",
    "confirm",
    "choose",
    "draft",
}
# option keys per decision kind, as the README's table lists them
OPTION_KEYS = {
    "play": re.compile(r"card:\d+|skill:\S+|recast:\d+|end"),  # recast: not in README yet
    "targets": re.compile(r"seat:\d+"),
    "respond": re.compile(r"card:\d+|skill:\S+"),
    "discard": re.compile(r"card:\d+"),
    "cards": re.compile(r"card:\d+"),
    "pick_card": re.compile(r"hand|card:\d+"),
    "confirm": re.compile(r"yes"),
    "choose": re.compile(r"suit:[SHCD]|card:\d+|seat:\d+|discard|damage|give|slash|draw"),
    "draft": re.compile(r"general:\S+"),
}
EVENT_TAGS = set(ev.event_types())


def test_rulesets_and_unknown_options() -> None:
    """Known rulesets are listed; unknown rulesets, options and table sizes are rejected."""
    assert "standard" in api.rulesets()
    with pytest.raises(api.UnknownOption):
        api.new_game("no-such-ruleset", 5, 1)
    with pytest.raises(api.UnknownOption):
        api.new_game("standard", 5, 1, {"no_such_option": True})
    for n in (1, 3, 11):
        with pytest.raises(api.UnknownOption):
            api.new_game("standard", n, 1)
    g = api.new_game("standard", 6, 1, {"double_renegade": True})
    api.advance(g)
    assert sorted(p.role for p in g.players).count("renegade") == 2


def test_new_game_waits_for_advance() -> None:
    """``new_game`` deals; the first ``advance`` starts with game_started and stops at a
    decision; a second ``advance`` at a pending decision produces nothing."""
    g = api.new_game("standard", 8, 7)
    assert api.pending(g) is None and not api.is_over(g)
    first = api.advance(g)
    assert isinstance(first[0], ev.GameStarted)
    assert first[0].rules_version == api.RULES_VERSION and first[0].players == 8
    assert sum(isinstance(e, ev.RoleAssigned) for e in first) == 8
    d = api.pending(g)
    assert d is not None and d.id == 1
    before = api.snapshot(g)
    assert api.advance(g) == []
    assert api.snapshot(g) == before


def test_decisions_follow_the_readme_table() -> None:
    """Kinds, option keys, increasing ids, and the random policy's answers are always legal."""
    for players, seed in [(4, 1), (8, 2), (10, 3)]:
        g = api.new_game("standard", players, seed)
        api.advance(g)
        pol = [RandomPolicy(seed + i) for i in range(players)]
        last_id = 0
        while not api.is_over(g):
            d = api.pending(g)
            assert d is not None
            assert d.kind in KINDS, d
            assert d.id > last_id
            last_id = d.id
            for opt in d.options:
                assert OPTION_KEYS[d.kind].fullmatch(opt), (d.kind, opt, d.info)
            if d.kind == "respond":  # "select" (借刀杀人, 青龙偃月刀) is not in the README yet
                assert d.info.get("need") and d.info.get("mode") in ("use", "play", "select"), (
                    d.info
                )
            if d.kind == "play":
                assert "end" in d.options
            api.submit(g, pol[d.seat].act(d))
        assert api.pending(g) is None


def test_default_answer_is_accepted() -> None:
    """``default_answer`` declines when it may, else picks the forced minimum; always legal."""
    g = api.new_game("standard", 5, 11)
    api.advance(g)
    pol = [RandomPolicy(i) for i in range(5)]
    n = 0
    while not api.is_over(g) and n < 3000:
        d = api.pending(g)
        assert d is not None
        a = api.default_answer(d)
        assert a.decision == d.id and a.seat == d.seat
        assert a.picks == [] if d.declinable else len(a.picks) == d.min
        # alternate silent and random answers so the game moves on
        api.submit(g, a if n % 2 else pol[d.seat].act(d))
        n += 1


def test_illegal_answer_has_a_reason() -> None:
    """``IllegalAnswer.reason`` says what was wrong."""
    g = api.new_game("standard", 4, 2)
    api.advance(g)
    d = api.pending(g)
    assert d is not None
    with pytest.raises(api.IllegalAnswer, match="not pending") as info:
        api.submit(g, api.Answer(decision=d.id + 5, seat=d.seat, picks=[]))
    assert str(d.id) in info.value.reason
    with pytest.raises(api.IllegalAnswer, match="may not answer"):
        api.submit(g, api.Answer(decision=d.id, seat=(d.seat + 1) % 4, picks=[]))


def test_a_refusal_names_cards_as_the_ruleset_prints_them() -> None:
    """红楼梦 prints 桃 as 药 (api.display_names): a refusal says 药, while standard keeps 桃;
    a longer name holding a renamed one (桃园结义) is left whole."""
    from services.rules.core.registry import ruleset_of
    from services.rules.scenario.loader import load_text
    from services.rules.scenario.table import build

    assert api.display_names("honglou")["桃"] == "药"
    for ruleset, peach in (("honglou", "药"), ("standard", "桃")):
        g, _ = build(load_text(PEACH_AT_FULL_HP.format(ruleset=ruleset, peach=peach), "t.yaml"))
        api.advance(g)
        d = api.pending(g)
        assert d is not None and d.kind == "play"
        with pytest.raises(api.IllegalAnswer) as info:
            api.submit(g, api.Answer(decision=d.id, seat=0, picks=["card:0"]))
        assert f"a {peach} in the play phase" in info.value.reason, info.value.reason
        assert ("桃" in info.value.reason) == (peach == "桃")
        lord_skill = "主人技" if ruleset == "honglou" else "主公技"
        printed = ruleset_of(g).printed(g, "桃园结义 and 桃 (主公技)")
        assert printed == f"桃园结义 and {peach} ({lord_skill})"


PEACH_AT_FULL_HP = """\
name: t
ruleset: {ruleset}
seats:
  - {{general: vanilla, role: lord, hand: [{peach} H3]}}
  - {{general: vanilla, role: rebel}}
  - {{general: vanilla, role: loyalist}}
  - {{general: vanilla, role: renegade}}
turn: {{seat: 0, phase: play}}
"""


def test_events_round_trip_through_encode_decode() -> None:
    """Every event of a game: decode(encode(e)) == e, with a known ``type`` tag."""
    g = api.new_game("standard", 7, 5)
    stream = api.advance(g)
    pol = [RandomPolicy(i) for i in range(7)]
    while not api.is_over(g):
        d = api.pending(g)
        assert d is not None
        stream += api.submit(g, pol[d.seat].act(d))
    assert isinstance(stream[-1], ev.GameEnded)
    seen = set()
    for e in stream:
        data = api.encode_event(e)
        tag = msgspec.msgpack.decode(data)["type"]
        assert tag in EVENT_TAGS
        seen.add(tag)
        assert api.decode_event(data) == e
    assert {"game_started", "cards_moved", "card_used", "turn_started", "game_ended"} <= seen
    assert g.events_emitted == len(stream)


def test_fork_and_restore_types() -> None:
    """``fork`` and ``restore`` give ``Game`` objects whose snapshots match."""
    g = api.new_game("standard", 6, 9)
    api.advance(g)
    f = api.fork(g)
    assert isinstance(f, api.Game)
    assert api.snapshot(f) == api.snapshot(g)
    assert api.restore(api.snapshot(g)).pending == g.pending


def _mid_game(ruleset: str, players: int, seed: int, decisions: int) -> api.Game:
    g = api.new_game(ruleset, players, seed)
    api.advance(g)
    bots = [RandomPolicy(seed * 100 + s) for s in range(players)]
    for _ in range(decisions):
        d = g.pending
        if d is None:
            break
        api.submit(g, bots[d.seat].act(d))
    return g


def test_a_snapshot_names_the_card_table_instead_of_carrying_it() -> None:
    """The 160 static card definitions are one table per ruleset deck, interned by a digest of
    its contents: a snapshot names it, so it stays small (#20: at most 3 KB mid-game at 8)."""
    g = _mid_game("standard", 8, 4, 120)
    data = api.snapshot(g)
    assert data[:2] == bytes([0xC1, api.SNAPSHOT_FORMAT]) and api.SNAPSHOT_FORMAT == 4
    assert "决斗".encode() not in data and b"normal_trick" not in data
    assert len(data) <= 3 * 1024, len(data)
    back = api.restore(data)
    assert back.cards == g.cards and len(back.cards) == 160
    assert api.fork(g).cards is g.cards  # shared, never copied: it is never changed


def test_a_snapshot_of_an_older_format_or_an_unknown_table_is_stale() -> None:
    g = _mid_game("standard", 5, 2, 10)
    old = bytes([0xC1, 2]) + api.snapshot(g)[2:]
    with pytest.raises(api.StaleSnapshot):
        api.restore(old)
    raw = msgspec.msgpack.decode(api.snapshot(g)[2:])
    raw["deck"] = "0123456789abcdef"  # a table no ruleset builds (a scenario's, elsewhere)
    with pytest.raises(api.StaleSnapshot, match="card table"):
        api.restore(api.snapshot(g)[:2] + msgspec.msgpack.encode(raw))


def test_redact_viewers() -> None:
    """GOD sees everything; the spectator sees no hand faces of the deal."""
    g = api.new_game("standard", 4, 1)
    deal = [e for e in api.advance(g) if isinstance(e, ev.CardsMoved) and e.reason == "deal"]
    assert len(deal) == 4
    for e in deal:
        assert api.redact(e, api.GOD).cards == e.cards
        assert api.redact(e, e.dst_seat).cards == e.cards
        hidden = api.redact(e, api.SPECTATOR)
        assert isinstance(hidden, ev.CardsMoved)
        assert hidden.cards == [] and hidden.count == 4


def test_every_event_type_is_documented_in_the_rules_readme() -> None:
    """A reader (or a client in another language) finds every event in the README's table."""
    from pathlib import Path

    from services.rules.core.events import event_types

    readme = (Path(__file__).resolve().parents[2] / "services/rules/README.md").read_text()
    missing = sorted(t for t in event_types() if f"`{t}`" not in readme)
    assert not missing, f"events missing from services/rules/README.md: {missing}"


def test_every_option_of_every_ruleset_lists_its_allowed_values() -> None:
    """Each option declares what it allows (a boolean: false and true), its default is allowed,
    and a value outside is refused with the allowed values in the message."""
    from services.rules.core.ruleset import RULESETS, allows

    for name, rs in RULESETS.items():
        for key, default in rs.option_defaults().items():
            choices = rs.option_choices(key)
            assert len(choices) > 0, f"{name}: option {key!r} declares no allowed values"
            assert allows(choices, default), f"{name}: {key!r} default {default!r} not allowed"
            with pytest.raises(api.UnknownOption, match=rf"option '{key}' .*\(allowed: "):
                api.resolve_options(name, {key: "no such value"})


def test_the_readme_lists_every_option_with_its_default_and_allowed_values() -> None:
    """services/rules/README.md "Ruleset options" is what variant designers read: it names every
    option of every ruleset, its default and what it allows, as the code has them."""
    from pathlib import Path

    from services.rules.core.options import COMMON_DEFAULTS
    from services.rules.core.ruleset import RULESETS, describe_choices

    readme = Path(__file__).resolve().parents[2] / "services" / "rules" / "README.md"
    rows = set(
        re.findall(r"^\| `(\w+)` \| `(\w+)` \| ([^|]+) \| ([^|]+) \|$", readme.read_text(), re.M)
    )

    def show(v: object) -> str:
        return str(v).lower() if isinstance(v, bool) else str(v)

    want = {
        (name, k, show(v), describe_choices(rs.option_choices(k)))
        for name, rs in RULESETS.items()
        for k, v in rs.option_defaults().items()
        if k not in COMMON_DEFAULTS
    }
    assert want == rows, (sorted(want - rows), sorted(rows - want))
    common = set(
        re.findall(r"^\| `(\w+)` \| ([^|`][^|]*) \| ([^|]+) \| [^|]+ \|$", readme.read_text(), re.M)
    )
    for name, rs in RULESETS.items():  # every ruleset offers them, with the one default
        assert {
            (k, show(v), describe_choices(rs.option_choices(k)))
            for k, v in rs.option_defaults().items()
            if k in COMMON_DEFAULTS
        } == common, name
