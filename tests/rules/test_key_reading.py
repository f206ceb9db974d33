"""Option keys are read only by ``core/keys.py`` (issue #23 item 4): no module of the rules
slice-parses a key (``int(pick[5:])``), splits one on its colon, or spells a key's prefix; and a
malformed key an answer carries gets a refusal naming it, never a traceback."""

from __future__ import annotations

import ast

import pytest

from services.rules import api
from tests.rules.test_no_service_imports import RULES

KEYS = RULES / "core" / "keys.py"
PREFIXES = ("card:", "seat:", "skill:", "recast:", "general:", "suit:")
PREFIX_LENGTHS = {len(p) for p in PREFIXES}


def key_parsing(source: str) -> list[str]:
    """Where ``source`` reads a key by hand: a string starting with a key prefix (a literal or
    an f-string), a split on ":", or a slice ``x[N:]`` cutting a prefix's length."""
    out: list[str] = []
    for node in ast.walk(ast.parse(source)):
        if isinstance(node, ast.JoinedStr) and node.values:
            first = node.values[0]
            if isinstance(first, ast.Constant) and str(first.value).startswith(PREFIXES):
                out.append(f"{node.lineno}: f-string {first.value!r}…")
        elif isinstance(node, ast.Compare | ast.Call):
            for c in ast.iter_child_nodes(node):
                if isinstance(c, ast.Constant) and str(c.value).startswith(PREFIXES):
                    out.append(f"{node.lineno}: {c.value!r}")
            if (
                isinstance(node, ast.Call)
                and isinstance(node.func, ast.Attribute)
                and node.func.attr in ("partition", "rpartition", "split", "rsplit")
                and any(isinstance(a, ast.Constant) and a.value == ":" for a in node.args)
            ):
                out.append(f"{node.lineno}: .{node.func.attr}(':')")
        elif isinstance(node, ast.Subscript) and isinstance(node.slice, ast.Slice):
            low, high = node.slice.lower, node.slice.upper
            if (
                high is None
                and isinstance(low, ast.Constant)
                and isinstance(low.value, int)
                and low.value in PREFIX_LENGTHS
            ):
                out.append(f"{node.lineno}: [{low.value}:]")
    return out


def test_no_module_of_the_rules_reads_a_key_by_hand() -> None:
    offenders = [
        f"{path.relative_to(RULES)}:{where}"
        for path in sorted(RULES.rglob("*.py"))
        if path != KEYS
        for where in key_parsing(path.read_text())
    ]
    assert not offenders, "keys read outside core/keys.py:\n" + "\n".join(offenders)


def test_the_check_can_fail() -> None:
    """What the rules did before: a slice, a partition, a spelt prefix in a test and in an
    f-string are each found; the keys module itself spells them."""
    assert key_parsing("x = int(pick[5:])") == ["1: [5:]"]
    assert key_parsing('kind, _, rest = pick.partition(":")') == ["1: .partition(':')"]
    assert key_parsing('ok = pick.startswith("card:")') == ["1: 'card:'"]
    assert key_parsing('k = f"seat:{n}"') == ["1: f-string 'seat:'…"]
    assert key_parsing("b = memoryview(data)[2:]") == []
    assert key_parsing(KEYS.read_text())


@pytest.mark.parametrize(
    ("pick", "words"),
    [
        ("seat:²", "there is no seat ²"),  # isdigit() but not a number int() reads
        ("seat:-1", "there is no seat -1"),
        ("seat: 1", "there is no seat  1"),
        ("card:99999", "there is no card 99999"),
        ("card:+3", "there is no card +3"),
        ("recast:x", "there is no card x"),
        ("frobnicate:3", "is not a legal option"),
    ],
)
def test_a_malformed_key_is_refused_in_words(pick: str, words: str) -> None:
    g = api.new_game("standard", 4, 7)
    api.advance(g)
    d = api.pending(g)
    assert d is not None
    before = api.snapshot(g)
    with pytest.raises(api.IllegalAnswer, match=words.replace("+", r"\+")):
        api.submit(g, api.Answer(decision=d.id, seat=d.seat, picks=[pick]))
    assert api.snapshot(g) == before


def test_keys_read_only_plain_numbers() -> None:
    keys = api.keys
    assert keys.parse("card:12") == keys.CardPick(12)
    assert keys.read("seat:3") == keys.SeatPick(3)
    assert keys.read("seat:-3") is None and keys.read("card:١") is None
    assert keys.read("nothing:1") is None and keys.read("end") == keys.Word("end")
    assert (keys.kind_of("recast:4"), keys.value_of("recast:4")) == ("recast", "4")
    assert (keys.kind_of("yes"), keys.value_of("yes")) == ("", "yes")
    with pytest.raises(ValueError):
        keys.card_of("card:+1")


@pytest.mark.parametrize(
    ("text", "number"),
    [
        ("0", True),
        ("12", True),
        ("9" * api.keys.MAX_DIGITS, True),
        ("9" * (api.keys.MAX_DIGITS + 1), False),  # int() refuses 4,300+ digits: never near it
        ("9" * 5000, False),
        ("", False),
        ("²", False),  # str.isdigit says yes, int() refuses it
        ("١", False),  # int() reads it as 1
        ("+1", False),
        ("-1", False),
        (" 1", False),
        ("1\n", False),
    ],
)
def test_is_number_is_what_int_reads_as_the_platform_wrote_it(text: str, number: bool) -> None:
    assert api.keys.is_number(text) is number
    if number:
        assert str(int(text)) == text.lstrip("0") or text.strip("0") == ""
