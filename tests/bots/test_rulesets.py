"""The heuristic and the oracle on every registered ruleset and variant: every answer is accepted
by api.submit (strict mode raises on any internal error instead of falling back), the new
decisions (谋攻 强化 and 洞察, seed 004's identity choices, seed 003's camp order) are met and
answered, and role inference follows each ruleset's role table and camps."""

from __future__ import annotations

from collections import Counter
from typing import Any

import pytest

from services.bots.heuristic import HeuristicPolicy
from services.bots.roles import FactoredBelief, RoleBelief, classes_of, make_belief
from services.bots.selfplay import Table, camp_rotation, play_game, role_classes
from services.rules import api
from services.rules.api import RULESETS, Answer, Decision, View

# (ruleset, players, options, games): every ruleset and variant; a new ruleset fails the check below
TABLES: list[tuple[str, int, dict[str, Any], int]] = [
    *[("standard", n, {}, 2) for n in range(4, 11)],
    ("honglou", 10, {}, 3),
    ("jinyu", 8, {}, 4),
    ("jinyu", 8, {"mougong": True}, 6),
    ("jinyu", 6, {"mougong": True, "double_renegade": True}, 3),
    ("jinyu", 8, {"mougong": True, "mougong_hidden_lord": False}, 3),
    ("extended", 8, {"variant": "beginner"}, 6),
    ("extended", 12, {"variant": "advanced"}, 4),
    ("chengtian", 2, {}, 8),
]
MIXES = (["heuristic"], ["heuristic", "random", "oracle"], ["oracle", "heuristic"])


def test_every_registered_ruleset_is_covered() -> None:
    assert {t[0] for t in TABLES} == set(RULESETS)


def _batches() -> list[Any]:
    """Each table's games: the first half (rounded up) by default, the rest under -m slow."""
    out: list[Any] = []
    for ruleset, players, options, games in TABLES:
        name = f"{ruleset}-{players}-{'-'.join(map(str, options.values())) or 'default'}"
        half = (games + 1) // 2
        out.append(pytest.param(ruleset, players, options, range(half), id=name))
        out.append(
            pytest.param(
                ruleset,
                players,
                options,
                range(half, games),
                id=f"{name}-rest",
                marks=pytest.mark.slow,
            )
        )
    return out


@pytest.mark.parametrize(("ruleset", "players", "options", "seeds"), _batches())
def test_every_answer_is_accepted(
    ruleset: str, players: int, options: dict[str, Any], seeds: range
) -> None:
    for seed in seeds:
        g, counts = play_game(
            ruleset, players, 300 + seed, MIXES[seed % len(MIXES)], options, strict=True
        )
        assert g.over and counts["decisions"] > 0


def _record(monkeypatch: pytest.MonkeyPatch) -> list[tuple[Decision, list[str]]]:
    seen: list[tuple[Decision, list[str]]] = []
    act = HeuristicPolicy.act

    def spy(self: HeuristicPolicy, d: Decision, view: View | None = None) -> Answer:
        a = act(self, d, view)
        seen.append((d, a.picks))
        return a

    monkeypatch.setattr(HeuristicPolicy, "act", spy)
    return seen


def _topic(d: Decision) -> str:
    return str(d.info.get("about") or d.info.get("skill") or d.info.get("reason") or "")


def test_mougong_decisions_are_played(monkeypatch: pytest.MonkeyPatch) -> None:
    """强化 is used (never the self-defeating ``delayed``), 洞察 is bought about unsure seats."""
    seen = _record(monkeypatch)
    for seed in range(6):
        play_game("jinyu", 8, 40 + seed, ["heuristic"], {"mougong": True}, strict=True)
    enh = [(d, p) for d, p in seen if _topic(d) == "强化"]
    ins = [(d, p) for d, p in seen if _topic(d) == "洞察"]
    assert enh and ins
    picked = Counter(p[0] for _, p in enh if p)
    assert picked and "delayed" not in picked, picked
    assert {"damage", "slash+damage", "slash", "dodge", "peach"} & set(picked)
    assert any(p for _, p in ins) and any(not p for _, p in ins)


# the first 3 games by default (each of the five topics is met in them), the other 5 under -m slow
@pytest.mark.parametrize(
    "seeds",
    [
        pytest.param(range(3), id="first"),
        pytest.param(range(3, 8), id="rest", marks=pytest.mark.slow),
    ],
)
def test_extended_identity_decisions_are_played(
    monkeypatch: pytest.MonkeyPatch, seeds: range
) -> None:
    """The advanced game's identity decisions reach the heuristic and get legal answers."""
    seen = _record(monkeypatch)
    for seed in seeds:
        play_game("extended", 12, 60 + seed, ["heuristic"], {"variant": "advanced"}, strict=True)
    topics = Counter(_topic(d) for d, _ in seen)
    assert (
        topics["pantu"] + topics["策立"] + topics["势颓"] + topics["背水"] + topics["暴乱"] > 0
    ), topics


def test_chengtian_camp_order_and_the_opponent_is_the_enemy(
    monkeypatch: pytest.MonkeyPatch,
) -> None:
    seen = _record(monkeypatch)
    tables: list[Table] = []
    play_game("chengtian", 2, 5, ["heuristic"], strict=True, table_out=tables)
    assert any(d.kind == "draft" and d.info.get("about") == "camp" for d, _ in seen)
    p = tables[0].policies[0]
    assert isinstance(p, HeuristicPolicy) and p.mem.rivals and p.mem.belief is None
    # the heuristic attacks: some 杀 targets were picked
    assert any(
        d.kind == "targets" and d.info.get("card") in ("杀", "火杀", "雷杀") and picks
        for d, picks in seen
    )


# --- role inference over any role table --------------------------------------------------------


def test_classes_follow_the_camps() -> None:
    ext = RULESETS["extended"]
    cls = classes_of(ext.roles(12, {"variant": "advanced"}) + ["pantu"], ext.camps)
    assert cls["lord"] == "lord" and cls["chujun"] == cls["dajiang"] == "loyalist"
    assert cls["zeishou"] == cls["daofei"] == "rebel"
    assert cls["renegade"] == cls["pantu"] == "renegade"
    assert cls["ninghuan"] == cls["dangren"] == "third"
    std = RULESETS["standard"]
    assert classes_of(std.roles(8, {}), std.camps) == {r: r for r in std.roles(8, {})}


def test_hidden_lord_is_among_the_hidden_cards() -> None:
    """jinyu 谋攻 with the hidden lord: the lord's seat is inferred like any other role."""
    g = api.new_game("jinyu", 8, 11, {"mougong": True})
    t = Table(g, ["heuristic"] * 8, 11)
    t.feed(api.advance(g))
    lord = next(p.seat for p in g.players if p.role == "lord")
    me = (lord + 1) % 8
    p = t.policies[me]
    assert isinstance(p, HeuristicPolicy) and p.mem.belief is not None
    b = p.mem.belief
    assert lord not in b.known and abs(sum(b.prob(s, "lord") for s in range(8)) - 1) < 1e-9
    assert b.prob(me, g.players[me].role) == 1.0


def test_role_learned_and_the_factored_belief() -> None:
    """Seed 004 advanced: the lord learns the 储君 (立储); 27,720 arrangements are too many to
    enumerate, so the belief is factored and still adds up to the role counts."""
    g = api.new_game("extended", 12, 2, {"variant": "advanced", "generals": "vanilla"})
    t = Table(g, ["heuristic"] * 12, 2)
    t.feed(api.advance(g))
    heir = next(p.seat for p in g.players if p.role == "chujun")
    lord = t.policies[0]
    assert isinstance(lord, HeuristicPolicy) and lord.mem.belief is not None
    assert lord.mem.belief.prob(heir, "chujun") == 1.0
    other = t.policies[next(p.seat for p in g.players if p.role == "yizei")]
    assert isinstance(other, HeuristicPolicy)
    b = other.mem.belief
    assert isinstance(b, FactoredBelief)
    marg = b.marginals()
    hidden = [s for s in range(12) if s not in b.known]
    assert abs(sum(marg[s].get("rebel", 0.0) for s in hidden) - 4) < 1e-6  # 5 bandits, me one
    b.act(hidden[0], 0, hostile=True)
    assert b.marginals()[hidden[0]]["rebel"] > marg[hidden[0]]["rebel"]


def test_a_role_gained_in_play_keeps_the_old_card_hidden() -> None:
    cards = ["lord", "loyalist", "rebel", "rebel", "renegade"]
    for b in (
        RoleBelief(cards, {0: "lord", 1: "rebel"}),
        FactoredBelief(cards, {0: "lord", 1: "rebel"}),
    ):
        b.reveal(2, "pantu")  # not a dealt card: a conversion
        assert b.known_role[2] == "pantu"
        total = sum(sum(b.marginals()[s].values()) for s in (3, 4))
        assert abs(total - 2) < 1e-6


def test_insight_narrows_the_belief() -> None:
    b = make_belief(
        ["lord", "loyalist", "loyalist", "rebel", "rebel", "rebel", "renegade"],
        {0: "lord", 1: "loyalist"},
    )
    b.restrict(3, {"rebel"})
    assert b.prob(3, "rebel") == pytest.approx(1.0)


def test_camp_assignment_by_class() -> None:
    cls = role_classes("extended", 8, {"variant": "beginner"})
    roles = RULESETS["extended"].roles(8, {"variant": "beginner"})
    names = camp_rotation(["h", "r"], roles, 1, cls)  # game 1: lord's side r? digit 0 = 1 -> r
    by = dict(zip(roles, names, strict=True))
    assert by["lord"] == by["chujun"] == by["loyalist"]
    assert by["zeishou"] == by["rebel"]
