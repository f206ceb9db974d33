"""Leaks 2 and 3 of issue 17, measured as a spectator would: from the redacted stream only.

2. A skill of a hidden identity must not name its holder: in seed 004's 12-player game 辅政
   (丞相) and 赃财 (盗匪) announced ``skill_invoked`` with the holder's seat from round 1.
3. 谋攻's hidden lord must not be named by the draft: only the lord was offered the lord-skill
   generals, so a lord-skill general on the table was the lord.
"""

from __future__ import annotations

import msgspec
import pytest

from services.rules import api
from services.rules.api import RULESETS, SKILLS, SPECTATOR, View, new_view, redact
from services.rules.api import events as ev
from services.rules.api import fold_view as apply

from .play import Played, play, swap_perm

ADVANCED = {"variant": "advanced", "generals": "vanilla"}


def identity_announcements(p: Played) -> list[str]:
    """Every ``skill_invoked`` of an identity skill at a seat whose role the spectator does not
    know (its own folded view says so) by the end of that answer's events: each names a hidden
    role's holder. (A reveal skill — 统义, 继位 — announces itself just before the reveal.)"""
    seen = [redact(e, SPECTATOR) for e in p.events]
    views: list[View] = []
    view: View = new_view(SPECTATOR)
    for e in seen:
        apply(view, e)
        views.append(
            msgspec.structs.replace(view, seats=[msgspec.structs.replace(s) for s in view.seats])
        )
    out = []
    for i, e in enumerate(seen):
        if not isinstance(e, ev.SkillInvoked) or not getattr(
            SKILLS.get(e.skill), "identity", False
        ):
            continue
        after = views[p.batch_end(i) - 1]
        if 0 <= e.seat < len(after.seats) and not after.seats[e.seat].role:
            out.append(f"{e.skill} names seat {e.seat}")
    return out


def test_hidden_identity_skills_do_not_name_their_holders() -> None:
    """Twelve seeded advanced games (辅政 fires at the lord's first turn in every one of them)."""
    found: list[str] = []
    for seed in range(1, 13):
        found += [
            f"seed {seed}: {x}"
            for x in identity_announcements(play("extended", 12, seed, ADVANCED, limit=600))
        ]
    assert not found, found[:10]


def test_mougong_draft_does_not_name_the_hidden_lord() -> None:
    """The attacker's guess "the seat that took a lord-skill general is the lord", over 60
    seeded 谋攻 games, must do no better than chance (old draft: right in ~4 games of 5)."""
    lords = {n for n, x in RULESETS["jinyu"].generals().items() if x.lord}
    opts = {"mougong": True}
    hits = guesses = 0
    for seed in range(60):
        p = play("jinyu", 6, seed, opts, limit=12)
        g = p.game
        public = [redact(e, SPECTATOR) for e in p.events if isinstance(e, ev.GeneralChosen)]
        shown = [e for e in public if e.general in lords]
        if len(shown) == 1:
            guesses += 1
            hits += g.players[shown[0].seat].role == "lord"
    # chance is 1 in 6 per guess; 60 games put the honest rate far below half of the guesses
    assert guesses == 0 or hits * 3 < guesses, (hits, guesses)


def test_role_permutation_keeps_the_deal() -> None:
    """The permutation helper moves roles between seats and nothing else."""
    perm = swap_perm("standard", 5, {}, "rebel", "loyalist")
    a = play("standard", 5, 3, limit=0).game
    b = play("standard", 5, 3, limit=0, perm=perm).game
    assert sorted(p.role for p in a.players) == sorted(p.role for p in b.players)
    assert [p.role for p in a.players] != [p.role for p in b.players]
    assert [p.hand for p in a.players] == [p.hand for p in b.players]
    assert api.pending(a) == api.pending(b)


def test_mougong_lord_offer_is_a_named_option() -> None:
    """``mougong_draft: lord_offer`` keeps the base rules' lord offer (A-002-03), which names
    the lord; the default deals the hidden lord from the one pool, like every seat."""
    for draft, lord_first in (("lord_offer", True), ("shared", False)):
        p = play("jinyu", 6, 5, {"mougong": True, "mougong_draft": draft}, limit=0)
        lords = [n for n, x in RULESETS["jinyu"].roster(p.game).items() if x.lord]
        lord = next(q.seat for q in p.game.players if q.role == "lord")
        offers = {e.seat: e.generals for e in p.events if isinstance(e, ev.DraftOffered)}
        assert (offers[lord][: len(lords)] == lords) is lord_first
        assert len({len(x) for x in offers.values()}) == 1 or lord_first


def test_redaction_rules_belong_to_their_rulesets() -> None:
    """Seed 002's and seed 004's secret events are declared by those rulesets, not the core."""
    from services.rules.core.views import REDACTIONS

    owners = {
        ev.RoleLearned: "services.rules.rulesets.extended",
        ev.InsightRevealed: "services.rules.rulesets.jinyu.mougong",
        ev.RebelDisguised: "services.rules.rulesets.jinyu.mougong",
    }
    for cls, module in owners.items():
        assert REDACTIONS[cls].__module__ == module, cls


def test_redact_fails_closed_for_an_undeclared_secret(monkeypatch: pytest.MonkeyPatch) -> None:
    """A guarded event whose redaction nobody declared is an error, never sent whole."""
    from services.rules.core.views import REDACTIONS

    monkeypatch.delitem(REDACTIONS, ev.InsightRevealed)
    e = ev.InsightRevealed(seat=1, target=2, result="enemy", seen_by=[1])
    with pytest.raises(TypeError, match="no redaction rule"):
        redact(e, SPECTATOR)
    assert redact(e, 1) is e  # who may see it still gets it
