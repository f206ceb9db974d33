"""What a ``choose`` decision about a card or skill asks, for players' programs to word it (the
play API's labels, a page, a bot's client); the rules never read it.

The module that asks a choice registers it beside the asking code (``register_choice``), under
the decision's ``info["about"]``, so what a card's or skill's choice means has one home. A
``choose`` decision whose ``about`` is not registered is a plain one: the options' keys say what
they do (``draw``, ``recover``, ``extra_turn``, a card, a seat …).

``Choice.asks``, what the decision asks for (``ASKS``):

* ``arrange``: cards in the order they go on top of the draw pile (top first); the word
  ``bottom`` sends the others to the bottom (观星)
* ``take``: one of the cards shown, into the hand (五谷丰登)
* ``suit``: a suit (反间)
* ``show``: a hand card to show (火攻)
* ``give``: the seat that gets a card (``info["card"]`` when one is named: 遗计)
* ``either``: one of the options, each an effect on the one asked (刚烈, 雌雄双股剑)
* ``enhance``: how to 强化 ``info["card"]``, paying ``info["costs"][option]`` of
  ``info["rage"]`` 怒气; each option key names the card's new tags (谋攻)

``Choice.options`` says what an option does where its key alone says less, from ``EFFECTS``.
"""

from __future__ import annotations

import msgspec

ASKS = ("arrange", "take", "suit", "show", "give", "either", "enhance")
EFFECTS = (
    "discard_hand",  # discard one hand card
    "discard_hand_2",  # discard two hand cards
    "user_draws",  # the card's user draws one card
)


class Choice(msgspec.Struct, frozen=True):
    """One kind of ``choose`` decision (see the module's docstring)."""

    asks: str  # ASKS
    name: str = ""  # the card or skill it belongs to, where ``about`` is not its name
    ordered: bool = False  # the picks' order matters
    options: dict[str, str] = msgspec.field(default_factory=dict)  # option key -> EFFECTS


CHOICES: dict[str, Choice] = {}


def register_choice(about: str, choice: Choice) -> None:
    """Say what the ``choose`` decisions ``about`` ask."""
    if choice.asks not in ASKS:
        raise ValueError(f"{about}: asks {choice.asks!r}, not one of {ASKS}")
    if bad := set(choice.options.values()) - set(EFFECTS):
        raise ValueError(f"{about}: effects {sorted(bad)} not in {EFFECTS}")
    CHOICES[about] = choice
