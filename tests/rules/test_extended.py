"""Ruleset ``extended`` (seed 004): random games of both variants end cleanly with the state
invariants holding and an outcome the camp tables allow; the identity skills all get played by
the random policy; the lord-death triggers come in the seed's order; nobody learns a hidden role
except through 立储 and 结党.

Default run: 20 games per variant and generals mode; ``-m slow`` plays 2,000 per variant.
"""

from __future__ import annotations

import re
from collections import Counter
from pathlib import Path

import msgspec
import pytest

from services.bots.random_policy import RandomPolicy
from services.rules import api
from services.rules.core import events as ev
from services.rules.core.ruleset import RULESETS
from services.rules.core.skills import SKILLS
from services.rules.core.state import Game
from services.rules.core.views import SPECTATOR, fold, redact
from services.rules.rulesets.extended import ROLE_SKILLS
from services.rules.rulesets.extended.base import IdentitySkill, state
from services.rules.rulesets.extended.frames import ORDER
from tests.rules.invariants import play_random
from tests.rules.test_redaction import LeakFinder

SIZE = {"beginner": 8, "advanced": 12}
GAMES = 20
SLOW_GAMES = 2_000
MAX_DECISIONS = 30_000
CAMPS = {
    "lord": "zz",
    "chujun": "zz",
    "loyalist": "zz",
    "chengxiang": "zz",
    "dajiang": "zz",
    "ninghuan": "nc",
    "dangren": "nc",
    "zeishou": "fz",
    "rebel": "fz",
    "qiongkou": "fz",
    "yizei": "fz",
    "baomin": "fz",
    "daofei": "fz",
    "renegade": "nj",
    "pantu": "nj",
}
SEED_SKILLS = {
    "君威",
    "立储",
    "罪己",
    "逆储",
    "继位",
    "辅政",
    "护威",
    "结党",
    "惑主",
    "弄权",
    "统义",
    "聚义",
    "势颓",
    "军溃",
    "赏令",
    "背水",
    "守义",
    "暴乱",
    "赃财",
    "策立",
    "纳赂",
    "仇叛",
}
LORD_DEATH_ORDER = ("逆储", "继位", "统义", "策立")


def play(
    variant: str, seed: int, generals: str = "draft", extra: dict[str, object] | None = None
) -> tuple[Game, list[ev.Event]]:
    """One random game, invariants checked after every submit; returns it and its events."""
    g, log = play_random(
        "extended",
        SIZE[variant],
        seed,
        {"variant": variant, "generals": generals, **(extra or {})},
        max_decisions=MAX_DECISIONS,
    )
    check_outcome(g, variant)
    check_lord_death_order(log)
    return g, log


def check_outcome(g: Game, variant: str) -> None:
    """The winners are one whole camp (by final roles) whose condition holds at the end."""
    if g.draw_game:
        return
    camps = {CAMPS[g.players[s].role] for s in g.winners}
    assert len(camps) == 1, camps
    camp = camps.pop()
    assert set(g.winners) == {p.seat for p in g.players if CAMPS[p.role] == camp}
    alive = {CAMPS[p.role] for p in g.players if p.alive}
    rulers = {p.role for p in g.players if p.alive and p.role in ("lord", "chujun")}
    if camp == "zz":
        assert not alive & {"fz", "nj"} and (variant == "beginner" or "nc" not in alive)
    elif camp == "fz":
        assert not rulers and "fz" in alive
    elif camp == "nj":
        assert not rulers and "fz" not in alive and "nj" in alive
        assert variant == "advanced" or alive == {"nj"}
    else:
        loyal = any(p.alive and p.role in ("chengxiang", "dajiang") for p in g.players)
        assert len(rulers) == 1 and not loyal and alive <= {"zz", "nc"}


def check_lord_death_order(log: list[ev.Event]) -> None:
    """After the lord's death the reveal skills come in the seed's order, before anything else
    the next death could bring."""
    lord_died = next(
        (i for i, e in enumerate(log) if isinstance(e, ev.Died) and e.role == "lord"), None
    )
    if lord_died is None:
        return
    seen: list[str] = []
    for e in log[lord_died + 1 :]:
        if isinstance(e, ev.Died | ev.TurnStarted):
            break
        if isinstance(e, ev.SkillInvoked) and e.skill in LORD_DEATH_ORDER:
            seen.append(e.skill)
    ranks = [LORD_DEATH_ORDER.index(s) for s in seen]
    assert ranks == sorted(ranks), seen


UNANNOUNCED = ("辅政", "赃财")


# the default suite plays as many seeds as meet every skill with some to spare (the beginner
# table meets them all in its first seed, the advanced one in its first 9), -m slow all GAMES
@pytest.mark.parametrize(
    ("variant", "seeds"),
    [
        ("beginner", 4),
        ("advanced", 10),
        pytest.param("beginner", GAMES, marks=pytest.mark.slow),
        pytest.param("advanced", GAMES, marks=pytest.mark.slow),
    ],
)
def test_random_games_end_with_invariants(variant: str, seeds: int) -> None:
    """Seeded random games (drafted and vanilla) end; the random policy plays every identity
    skill that can be offered in a random game."""
    skills = Counter[str]()
    for seed in range(seeds):
        for generals in ("draft", "vanilla"):
            _, log = play(variant, 70_000 + seed, generals)
            skills.update(e.skill for e in log if isinstance(e, ev.SkillInvoked))
            # unannounced (their holders are hidden): the ruler's / 贼首's draw shows them
            skills.update(
                e.reason for e in log if isinstance(e, ev.CardsMoved) and e.reason in UNANNOUNCED
            )
    own = {s for s in SEED_SKILLS if any(s in t for t in ROLE_SKILLS[variant].values())}
    never = {"仇叛", "护威", "弄权", "聚义"}  # modifiers, never "invoked" (their scenarios)
    never |= {"结党"}  # no public skill_invoked: it would name a 佞臣 (role_learned only)
    missing = own - never - set(skills)
    assert not missing, (missing, skills)


def test_options_flipped_still_run() -> None:
    """The A-004 switches at their non-default values keep games sane."""
    opts: dict[str, object] = {
        "beginner_use_advanced_table": True,
        "standard_rewards": True,
        "junwei_stacks": True,
        "all_cards_include_judge": True,
        "advanced_row_priority": "lord_camp",
    }
    for seed in range(10):
        play("beginner" if seed % 2 else "advanced", 90_000 + seed, "vanilla", opts)


@pytest.mark.slow
@pytest.mark.parametrize("variant", ["beginner", "advanced"])
def test_two_thousand_games(variant: str) -> None:
    """The issue's full count per variant."""
    for seed in range(SLOW_GAMES):
        play(variant, 3_000_000 + seed, "draft" if seed % 2 else "vanilla")


def test_roles_and_identity_skills() -> None:
    """8 and 12 seats with the seed's role lines; lord at seat 0 with 君威 (+1, not +2)."""
    for variant, roles in (
        (
            "beginner",
            {"lord": 1, "chujun": 1, "loyalist": 1, "zeishou": 1, "rebel": 3, "renegade": 1},
        ),
        (
            "advanced",
            {
                r: 1
                for r in (
                    "lord",
                    "chujun",
                    "chengxiang",
                    "dajiang",
                    "ninghuan",
                    "dangren",
                    "zeishou",
                    "qiongkou",
                    "yizei",
                    "baomin",
                    "daofei",
                    "renegade",
                )
            },
        ),
    ):
        g = api.new_game("extended", SIZE[variant], 5, {"variant": variant, "generals": "vanilla"})
        assert Counter(p.role for p in g.players) == roles
        assert g.players[0].role == "lord" and g.players[0].max_hp == 5
        for p in g.players:
            assert state(p).identity == list(ROLE_SKILLS[variant].get(p.role, ()))


def test_table_size_and_variant_are_checked() -> None:
    """The 10-player 标准版 is not given (U-004-01): no 10-seat game, no such variant."""
    with pytest.raises(api.UnknownOption):
        api.new_game("extended", 10, 1)
    with pytest.raises(api.UnknownOption):
        api.new_game("extended", 8, 1, {"variant": "advanced"})
    with pytest.raises(ValueError):
        api.new_game("extended", 10, 1, {"variant": "standard"})


def test_identity_skills_are_apart_from_general_skills() -> None:
    """A-004-01: every seed 004 skill is an identity skill no general has, and no general-skill
    module touches the identity skills (``IdentityState.identity``)."""
    for name in SEED_SKILLS:
        assert isinstance(SKILLS[name], IdentitySkill), name
    gens = RULESETS["extended"].generals()
    assert len(gens) >= 21
    assert not {s for x in gens.values() for s in x.skills} & SEED_SKILLS
    root = Path(__file__).resolve().parents[2] / "services" / "rules"
    for path in [*(root / "skills").glob("*.py"), *(root / "cards").glob("*.py")]:
        assert not re.search(r"\.identity\b", path.read_text()), path
    assert set(ORDER) <= SEED_SKILLS


# --- information: 立储 and 结党, and nothing else ------------------------------------------------

HIDDEN = (
    "chujun",
    "loyalist",
    "zeishou",
    "rebel",
    "renegade",
    "chengxiang",
    "dajiang",
    "ninghuan",
    "dangren",
    "qiongkou",
    "yizei",
    "baomin",
    "daofei",
)


def _known(g: Game, viewer: int) -> set[int]:
    """The seats whose role ``viewer`` may know at the start: itself, the lord, and through
    立储 (the lord knows the 储君) and 结党 (the 佞臣 know each other)."""
    out = {viewer, 0}
    roles = [p.role for p in g.players]
    if viewer == 0 and g.options["variant"] == "advanced":
        out.add(roles.index("chujun"))
    if roles[viewer] in ("ninghuan", "dangren"):
        out |= {s for s, r in enumerate(roles) if r in ("ninghuan", "dangren")}
    return out


@pytest.mark.parametrize("variant", ["beginner", "advanced"])
def test_setup_knowledge_is_exactly_lichu_and_jiedang(variant: str) -> None:
    """Folded views after the deal: each seat knows exactly the roles it may know; the encoded
    events it receives name no other seat's hidden role."""
    enc = msgspec.json.Encoder()
    for seed in range(6):
        g = api.new_game("extended", SIZE[variant], 40 + seed, {"variant": variant})
        setup = api.advance(g)
        for v in [*range(len(g.players)), SPECTATOR]:
            view = fold(setup, v)
            known = {s.seat for s in view.seats if s.role}
            assert known == (_known(g, v) if v >= 0 else {0}), (variant, seed, v)
            for s in known:
                assert view.seats[s].role == g.players[s].role
            allowed = {g.players[s].role for s in known}
            for e in setup:
                data = enc.encode(redact(e, v))
                for role in HIDDEN:
                    if role not in allowed:
                        assert f'"{role}"'.encode() not in data, (v, role, data)


class RevealAwareFinder(LeakFinder):
    """The standard leak finder, told that a public ``role_assigned`` (继位, 统义, 策立, 纳赂)
    reveals that seat's role as a death does."""

    def __init__(self, players: int, n_cards: int) -> None:
        super().__init__(players, n_cards)
        self.public: set[int] = set()

    def feed(self, e: ev.Event) -> None:
        if isinstance(e, ev.RoleAssigned) and e.seen_by is None:
            self.public.add(e.seat)
        super().feed(e)

    def allowed_roles(self, viewer: int) -> set[bytes]:
        for s in self.public:
            self.revealed[s] = True
        return super().allowed_roles(viewer)


@pytest.mark.parametrize("variant", ["beginner", "advanced"])
def test_no_viewer_sees_a_hidden_card_or_standard_role(variant: str) -> None:
    """The standard leak finder (cards as bytes; 忠臣/反贼/内奸 words) over whole games. Vanilla
    generals: the finder does not know the reveals of general skills (反间 shows the card it
    moves from hand to hand), and the identity rules are what this ruleset adds."""
    for seed in range(3):
        g = api.new_game(
            "extended", SIZE[variant], 600 + seed, {"variant": variant, "generals": "vanilla"}
        )
        finder = RevealAwareFinder(len(g.players), len(g.cards))
        pol = [RandomPolicy(seed + 100 * i) for i in range(len(g.players))]
        events = api.advance(g)
        while True:
            for e in events:
                finder.feed(e)
            finder.decision(g)
            assert not finder.leaks, finder.leaks[:3]
            if g.over:
                break
            d = api.pending(g)
            assert d is not None
            events = api.submit(g, pol[d.seat].act(d))


def test_twelve_players_pick_the_advanced_game_by_themselves() -> None:
    """`--players 12` without a variant is the advanced game (the only 12-seat table); 8 the
    beginner one; a variant given is kept, and a table it cannot seat names the option."""
    g = api.new_game("extended", 12, 3, {"generals": "vanilla"})
    assert g.options["variant"] == "advanced" and len(g.players) == 12
    assert "chengxiang" in {p.role for p in g.players}
    assert api.new_game("extended", 8, 3, {"generals": "vanilla"}).options["variant"] == "beginner"
    with pytest.raises(api.UnknownOption, match=r"variant 'beginner' seats 8 players, not 12"):
        api.new_game("extended", 12, 3, {"variant": "beginner"})
    with pytest.raises(api.UnknownOption, match=r"by variant — beginner: 8, advanced: 12"):
        api.new_game("extended", 10, 3)
