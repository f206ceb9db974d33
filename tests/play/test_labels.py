"""Every decision every ruleset asks, in a player's words: self-played games of each ruleset and
table, every decision labelled by services/play/labels.py with a prompt and a label per option
(never the raw key), so no decision kind falls back to option strings on the page."""

from __future__ import annotations

import re
from pathlib import Path
from typing import Any

import pytest

from services.bots.selfplay import make_policy
from services.play import labels, schema
from services.readside.catalogue import general_skills, printed_names, skill_texts
from services.rules import api
from services.rules.api import fold_view as apply
from services.rules.api import new_view, redact

TABLES: list[tuple[str, int, dict[str, Any], int]] = [  # (ruleset, players, options, games)
    ("standard", 5, {"generals": "draft"}, 3),
    ("standard", 8, {}, 1),
    ("honglou", 10, {}, 2),
    ("jinyu", 8, {"mougong": True}, 3),
    ("jinyu", 5, {}, 1),
    ("extended", 8, {}, 2),
    ("extended", 12, {"variant": "advanced"}, 1),
    ("chengtian", 2, {}, 4),
]
# the kinds each ruleset asks in these games (a ruleset asking fewer is a change to look at)
EXPECTED = {"play", "targets", "respond", "discard", "cards", "confirm", "choose", "draft"}


LATIN = re.compile(r"[A-Za-z]{2,}")


def raw(text: str) -> bool:
    """A label that is a key shown as it is (ascii, one word)."""
    return text.isascii() and " " not in text.strip()


@pytest.mark.parametrize(("ruleset", "players", "options", "games"), TABLES)
def test_every_decision_is_labelled(
    ruleset: str, players: int, options: dict[str, Any], games: int
) -> None:
    table = labels.Table(
        cards=[[c.name, c.suit, c.rank] for c in api.new_game(ruleset, players, 0, options).cards],
        seat_names=["" if i else "小安" for i in range(players)],  # one person, the rest bots
        names=printed_names(ruleset),
        generals=api.general_table(ruleset),
        skills=general_skills(ruleset),
        texts=skill_texts(),
        english=api.english_names(ruleset),
    )
    printed = printed_names(ruleset)
    kinds: set[str] = set()
    abouts: set[str] = set()
    # `games` seeded games, and up to four more while a kind is still missing (the heuristic's
    # play decides what a game asks: a better bot once asked no `cards` in standard 8's game)
    for seed in range(games + 4):
        if seed >= games and (EXPECTED - {"draft"} <= kinds or ruleset == "chengtian"):
            break
        g = api.new_game(ruleset, players, seed, options)
        events = list(api.advance(g))
        pols = [make_policy("heuristic", seed * 7 + s, s) for s in range(players)]
        views = [new_view(s) for s in range(players)]
        while not g.over and (d := api.pending(g)) is not None:
            for e in events:
                for s in range(players):
                    r = redact(e, s)
                    apply(views[s], r)
                    pols[s].observe(r)
            playing = [s.general for s in views[d.seat].seats]
            for lang in ("zh", "en"):
                out = labels.decision(d, table, 1, 0, lang, playing)
                assert out.prompt and not raw(out.prompt), out
                assert [o.key for o in out.options] == list(d.options)
                bad = [(o.key, o.text) for o in out.options if raw(o.text) or o.text == o.key]
                assert not bad, f"{d.kind} ({d.info}): {bad}"
                if lang == "zh":  # one language: no English word in a Chinese label
                    words = [
                        t for t in (out.prompt, *(o.text for o in out.options)) if LATIN.search(t)
                    ]
                    assert not words, (d.kind, d.info, words)
                # a card by its name in the label's language: 杀 is Slash in English (红楼梦's
                # 药 is Medicine), generals and skills keep their Chinese names
                for o in out.options:
                    if o.card >= 0 and o.type == "card":
                        name = table.cards[o.card][0]
                        want = table.english[name] if lang == "en" else printed.get(name, name)
                        assert o.text.startswith(want), (lang, name, o.text)
                # a seat is named by its general (or number), never by its player id
                assert not [o.text for o in out.options if "bot" in o.text], out.options
            if ruleset == "honglou":  # 红楼梦 prints 药 for 桃
                zh = labels.decision(d, table, 1, 0, "zh", playing)
                peaches = [o for o in zh.options if o.card >= 0 and table.cards[o.card][0] == "桃"]
                assert all(o.text.startswith("药") for o in peaches), peaches
            kinds.add(d.kind)
            abouts.add(str(d.info.get("about", "")))
            events = api.submit(g, pols[d.seat].act(d, views[d.seat]))
    assert EXPECTED - {"draft"} <= kinds or ruleset == "chengtian", sorted(kinds)
    if ruleset == "jinyu" and options.get("mougong"):
        assert "强化" in abouts
    if ruleset == "chengtian":
        assert "camp" in abouts  # the deployment order is a draft per camp position


def test_every_decision_of_every_scenario_is_labelled() -> None:
    """The 516 scenario files exercise every card and skill of every ruleset, rare ones
    included (反间's suit, 五谷丰登, 观星, 遗计, 麒麟弓, 洞察, taking a card from another seat's
    areas): every decision they ask, labelled, shows no raw key and raises no ValueError (an
    unlabelled option key would reach the page as itself)."""
    import contextlib

    from services.rules.scenario import runner
    from services.rules.scenario.loader import load_paths
    from services.rules.scenario.model import ScenarioFormatError

    seen: set[tuple[str, str]] = set()
    bad: list[str] = []

    class Labelling(runner.Runner):
        def submit(self, d: api.Decision, picks: list[str]) -> None:
            g = self.g
            table = labels.Table(
                cards=[[c.name, c.suit, c.rank] for c in g.cards],
                seat_names=["" for _ in g.players],
                names=printed_names(g.ruleset),
                generals=api.general_table(g.ruleset),
            )
            try:
                out = labels.decision(d, table, 1, 0)
            except ValueError as exc:
                bad.append(f"{self.sc.name}: {exc}")
            else:
                if raw(out.prompt):
                    bad.append(f"{self.sc.name}: prompt {out.prompt!r}")
                bad.extend(
                    f"{self.sc.name}: {d.kind} {o.key!r} shown as {o.text!r}"
                    for o in out.options
                    if raw(o.text) or o.text == o.key
                )
                bad.extend(  # one language: no English word in a Chinese label
                    f"{self.sc.name}: {d.kind} ({d.info}) {text!r}"
                    for text in (out.prompt, *(o.text for o in out.options))
                    if LATIN.search(text)
                )
            seen.add((d.kind, str(d.info.get("about") or d.info.get("skill") or "")))
            super().submit(d, picks)

    n = 0
    for path, sc in load_paths([Path(__file__).parents[1] / "scenarios"]):
        assert not isinstance(sc, ScenarioFormatError), path
        n += 1
        with contextlib.suppress(runner._Stop):
            Labelling(sc).run()
    assert n > 500 and not bad, bad[:10]
    kinds = {k for k, _ in seen}
    assert EXPECTED - {"draft"} | {"pick_card"} <= kinds, sorted(kinds)
    for topic in ("反间", "五谷丰登", "观星", "遗计", "强化", "洞察", "火攻_show"):
        assert any(t == topic for _, t in seen), topic


def test_both_languages_have_every_word() -> None:
    """The Chinese and the English label sets name the same words (a word missing from one
    would fail on a page in that language only)."""
    assert set(labels.ZH) == set(labels.EN)
    for key in labels.ZH:  # the same placeholders in both
        assert re.findall(r"{(\w+)}", labels.ZH[key]) == re.findall(
            r"{(\w+)}", labels.EN[key]
        ) or set(re.findall(r"{(\w+)}", labels.ZH[key])) <= set(
            re.findall(r"{(\w+)}", labels.EN[key])
        ), key


def test_a_general_is_offered_with_its_skills_text() -> None:
    """A draft's general options carry the general's skills and their text from the rules'
    registry; a skill option carries the skill's text."""
    table = labels.Table(
        cards=[],
        seat_names=["Ann", ""],
        names={},
        generals=api.general_table("standard"),
        skills=general_skills("standard"),
        texts=skill_texts(),
    )
    d = api.Decision(
        id=1, seat=0, kind="draft", options=["general:曹操", "general:刘备"], min=1, max=1
    )
    out = labels.decision(d, table, 1, 0, "en")
    caocao = out.options[0]
    assert caocao.text == "曹操 (魏, 4 HP)" and caocao.type == "general"
    assert caocao.about.startswith("奸雄: 在你受到伤害后") and "\n护驾: 主公技" in caocao.about
    skill = labels.option("skill:制衡", d, labels.Words(table, "zh"))
    assert skill.about == "出牌阶段限一次，你可以弃置任意张牌，然后摸等量的牌。"
    # seats by general and by the person's name; the asked seat is "you"
    words = labels.Words(table, "zh", me=1, playing=["曹操", ""])
    assert words.seat(0) == "曹操（Ann）" and words.seat(1) == "2号位（你）"


def test_a_choice_is_worded_from_the_rules_registry() -> None:
    """What a card's or skill's `choose` decision asks and what its options do come from the
    rules' registry (api.CHOICES): no word of labels.py is keyed by a card's or a skill's name,
    every registered kind of choice and effect has its words, and a prompt names its card as
    the ruleset prints it (红楼梦 prints 鸳鸯剑 for 雌雄双股剑; the prompt once said 雌雄双股剑)."""
    cjk = re.compile(r"[\u4e00-\u9fff]")
    assert not [key for key in labels.ZH if cjk.search(key)]
    assert {"观星", "五谷丰登", "反间", "火攻_show", "遗计", "刚烈", "雌雄双股剑", "强化"} <= set(
        api.CHOICES
    )
    for about, choice in api.CHOICES.items():
        assert f"asks.{choice.asks}" in labels.ZH, about
        assert all(f"effect.{e}" in labels.ZH for e in choice.options.values()), about
    table = labels.Table(cards=[], seat_names=["", ""], names=printed_names("honglou"), generals={})

    def choose(about: str, options: list[str], lang: str = "zh") -> schema.Decision:
        info = {"about": about, "cards": [1]}
        d = api.Decision(id=1, seat=0, kind="choose", options=options, info=info)
        return labels.decision(d, table, 1, 0, lang)

    zh = choose("雌雄双股剑", ["discard", "draw"])
    assert zh.prompt == "鸳鸯剑：弃置一张手牌，或令使用者摸一张牌"
    assert [o.text for o in zh.options] == ["弃置一张手牌", "令使用者摸一张牌"]
    en = choose("雌雄双股剑", ["discard", "draw"], "en")
    assert en.prompt == "鸳鸯剑: discard a hand card, or let the user draw a card"
    assert choose("刚烈", ["discard", "damage"]).prompt == "刚烈：弃置两张手牌，或受到1点伤害"
    out = choose("观星", ["card:1", "bottom"], "en")
    assert out.ordered and out.prompt.startswith("观星: pick the cards to put on top")
