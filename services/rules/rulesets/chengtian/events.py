"""Seed 003 events: generals moving between the battlefield and the camp (all public).

A face-down (暗置) general's name is never in these: its ``general_chosen`` is seen by its owner
only, and a public ``general_chosen`` follows when it is revealed.
"""

from __future__ import annotations

from ...core.events import Event


class CampFormed(Event, frozen=True, tag="camp_formed"):
    """``seat`` has ``count`` generals in its camp (which ones is its own secret)."""

    seat: int
    count: int


class GeneralBenched(Event, frozen=True, tag="general_benched"):
    """走马换将 put ``seat``'s battlefield general at the bottom of its camp (``general`` is ""
    if it was still face down)."""

    seat: int
    general: str


class GeneralDeployed(Event, frozen=True, tag="general_deployed"):
    """``seat`` deployed (上阵) the top general of its camp, face down or face up."""

    seat: int
    face_down: bool
    camp: int  # generals left in the camp


class GeneralFell(Event, frozen=True, tag="general_fell"):
    """``seat``'s battlefield general was not saved from dying and left the game."""

    seat: int
    general: str
    killer: int
