"""The page folds entries exactly as the server does (#23 item 10, #41): whole self-played games
of every ruleset, logged (with 托管 control entries, an answer, a kind no reader knows and the
seed reveal among the events), sent as the one envelope the read side makes for a seat, a
spectator and the god view, folded by web/fold.js's foldEntry in a real browser and by the read
side's SeatFold, compared after every entry (view, seats on 托管, closed); every event kind
occurs. The log's words for each event are checked on the way: no raw event type or internal
word (processing, judge_phase …) reaches a player."""

from __future__ import annotations

import json
import zlib
from typing import Any

import msgspec

from services.bots.selfplay import make_policy
from services.eventlog.entry import (
    ANSWER,
    CONTROL,
    EVENT,
    GENESIS,
    SEED_REVEAL,
    Entry,
    encode_entry,
    seal,
)
from services.eventlog.records import AnswerRecord, SeatControl, SeedReveal, encode_payload
from services.readside.catalogue import ROLE_WORDS, printed_names
from services.readside.entries import envelope
from services.readside.fold import SeatFold
from services.readside.positions import positions_of
from services.rules import api
from services.rules.api import event_types, new_view, redact
from services.rules.api import fold_view as apply

from .conftest import Tab

# (ruleset, players, options, seed): together they produce every event kind, each ruleset (and
# both of extended's variants) once, in short games: the page's check costs per entry, and more
# for more seats (these take 3,180 events; the 8-seat jinyu and the seeds chosen before, 6,198)
GAMES = [
    ("chengtian", 2, {}, 8),
    ("standard", 5, {"generals": "draft"}, 2),
    ("jinyu", 6, {"mougong": True}, 14),
    ("extended", 8, {}, 3),
    ("extended", 12, {"variant": "advanced"}, 1),
]
# more games, tried in turn only while some event kind has not come up yet: the games above
# are played by the heuristic bot too, whose play (and so which events a seed gives) improves
# over time; the kinds compared stay every kind
MORE = [
    (r, n, o, seed)
    for seed in range(1, 21)
    for r, n, o in (
        ("standard", 5, {"generals": "draft"}),
        ("jinyu", 8, {"mougong": True}),
        ("extended", 8, {}),
    )
]
VIEWERS = (0, api.SPECTATOR, api.GOD)
_enc = msgspec.json.Encoder()


def canon(x: Any) -> str:
    """The canonical JSON both sides hash (keys sorted, no spaces)."""
    return json.dumps(x, sort_keys=True, separators=(",", ":"), ensure_ascii=False)


def play(ruleset: str, players: int, options: dict[str, Any], seed: int) -> list[api.Event]:
    """A whole game between heuristic and random bots, in-process; its events."""
    g = api.new_game(ruleset, players, seed, options)
    events = list(api.advance(g))
    pols = [
        make_policy("heuristic" if s % 2 else "random", seed * 31 + s, s) for s in range(players)
    ]
    views = [new_view(s) for s in range(players)]
    seen = 0
    while not g.over and (d := api.pending(g)) is not None and len(events) < 20_000:
        for e in events[seen:]:
            for s in range(players):
                r = redact(e, s)
                apply(views[s], r)
                pols[s].observe(r)
        seen = len(events)
        events += api.submit(g, pols[d.seat].act(d, views[d.seat]))
    assert g.over
    return events


CHECK = """([entries, hashes, cards, names, ruleset, viewer, ids, lang]) => {
  setLang(lang);
  const raw = new RegExp("(^|[^a-z_])(" + ids.join("|") + ")([^a-z_]|$)");
  const canon = (x) => Array.isArray(x) ? "[" + x.map(canon).join(",") + "]"
    : x !== null && typeof x === "object"
      ? "{" + Object.keys(x).sort().map((k) => JSON.stringify(k) + ":" + canon(x[k])).join(",") + "}"
      : JSON.stringify(x);
  const table = []; for (let i = 0; i < 256; i++) { let c = i; for (let k = 0; k < 8; k++) c = c & 1 ? 0xedb88320 ^ (c >>> 1) : c >>> 1; table.push(c >>> 0); }
  const crc = (s) => { let c = 0xffffffff; for (const b of new TextEncoder().encode(s)) c = table[(c ^ b) & 0xff] ^ (c >>> 8); return (c ^ 0xffffffff) >>> 0; };
  const n = namer(ruleset, cards, names);
  const S = (i) => `S${i}`;
  const f = newFold(viewer);
  const bad = [];
  for (let i = 0; i < entries.length; i++) {
    foldEntry(f, entries[i]);
    if (hashes !== null) {
      const state = canon([f.view, [...f.hosted].sort((a, b) => a - b), f.closed]);
      if (crc(state) !== hashes[i]) return { at: i, view: state, bad };
    }
    if (entries[i].kind !== "event") continue;
    const e = entries[i].event;
    const words = describe(e, n, S);
    if (words !== null && (typeof words !== "string" || /[a-z]+_[a-z]+|processing|undefined|NaN|\\[object|:  | \\(\\)/.test(words) || raw.test(words) || words === e.type
        || (lang === "zh" && /[A-Za-z]{3,}/.test(words))))
      bad.push([e.type, words]);
  }
  return { at: -1, bad };
}"""


def logged(events: list[api.Event]) -> list[Entry]:
    """The game's log as the engine keeps it, with what else a log holds between the events:
    seat 0 put on 托管 and taken back, an answer, a kind no reader knows, the seed reveal."""
    third = len(events) // 3
    items = [(EVENT, api.encode_event(e)) for e in events]
    items[2 * third : 2 * third] = [(CONTROL, encode_payload(SeatControl(0, False, "taken_back")))]
    items[third:third] = [
        (CONTROL, encode_payload(SeatControl(0, True, "timeouts"))),
        (ANSWER, encode_payload(AnswerRecord(5, 0, []))),
        ("abandoned", b"\x80"),
    ]
    items.append((SEED_REVEAL, encode_payload(SeedReveal(seed=1, salt=b"s"))))
    return seal(GENESIS, 1, items)


def state(f: SeatFold) -> str:
    """What the page's fold must hold after each entry (canonical JSON)."""
    return canon([msgspec.to_builtins(f.view), sorted(f.hosted), f.closed])


async def test_the_page_folds_every_event_kind_as_the_server_does(
    browser: Tab, replay_server: str
) -> None:
    await browser.goto(replay_server + "/")
    await browser.wait_for("typeof foldEntry === 'function' && typeof describe === 'function'")
    kinds: set[str] = set()
    wanted = set(event_types())
    for i, (ruleset, players, options, seed) in enumerate(GAMES + MORE):
        extra = i >= len(GAMES)
        if extra and kinds >= wanted:
            break
        events = play(ruleset, players, options, seed)
        tags = {type(e).__struct_config__.tag for e in events}  # type: ignore[misc]
        if extra and tags <= kinds:
            continue  # adds no kind: not worth the page's time
        kinds |= tags
        cards = [[c.name, c.suit, c.rank] for c in api.new_game(ruleset, players, 0, options).cards]
        names = printed_names(ruleset)
        # role ids shown as they are are not words (in English the standard four are)
        english = {"lord", "loyalist", "rebel", "renegade"}
        entries = logged(events)
        at = positions_of(enumerate((encode_entry(e) for e in entries), 1))
        for viewer in VIEWERS:
            sent, hashes, f = [], [], SeatFold(viewer)
            for seq, entry in enumerate(entries, 1):
                data = envelope(at.position(viewer, seq), entry, viewer)
                if data is None:
                    continue
                f.envelope(at.position(viewer, seq), data)
                sent.append(json.loads(data))
                hashes.append(zlib.crc32(state(f).encode()))
            assert f.closed and f.hosted == set() and f.unreadable == 0
            # every viewer's log in English, the god view's (every event whole) in Chinese too;
            # the fold is compared in the first pass (the language is the log's, not the fold's)
            for lang in ("en", "zh") if viewer == api.GOD else ("en",):
                ids = sorted(set(ROLE_WORDS) - english) if lang == "en" else sorted(ROLE_WORDS)
                compare = hashes if lang == "en" else None
                got = await browser.page.evaluate(
                    CHECK, [sent, compare, cards, names, ruleset, viewer, ids, lang]
                )
                if got["at"] >= 0 or got["bad"]:
                    break
            where = f"{ruleset} {options} seed {seed} viewer {viewer} ({lang})"
            if got["at"] >= 0:
                want = SeatFold(viewer)
                for x in sent[: got["at"] + 1]:
                    want.envelope(x["seq"], json.dumps(x))
                raise AssertionError(
                    f"{where}: after entry {got['at']} ({sent[got['at']]}) the page has\n"
                    f"{got['view']}\nthe server\n{state(want)}"
                )
            assert not got["bad"], f"{where}: log lines not in a player's words: {got['bad'][:5]}"
    missing = wanted - kinds
    assert not missing, f"no game above produced {sorted(missing)}: add one that does"
    assert not browser.errors, browser.errors


async def test_a_converted_card_is_shown_as_what_it_is_used_as(
    browser: Tab, replay_server: str
) -> None:
    """大乔's 国色 uses 闪♦J as 乐不思蜀: the log and the judgement area show 乐不思蜀 with the
    real card beside it (the page showed `judge: 闪♦J`); a card used as itself is just itself."""
    await browser.goto(replay_server + "/")
    await browser.wait_for("typeof namer === 'function' && typeof trackUse === 'function'")
    cards = [[c.name, c.suit, c.rank] for c in api.new_game("standard", 5, 0, {}).cards]
    dodge = next(i for i, c in enumerate(cards) if c == ["闪", "D", 11])
    slash = next(i for i, c in enumerate(cards) if c[0] == "杀")
    got = await browser.page.evaluate(
        """([cards, dodge, slash]) => {
          setLang('en');
          const n = namer('standard', cards, {});
          const S = (i) => `P${i}`;
          const used = { type: 'card_used', user: 0, name: '乐不思蜀', suit: 'D', rank: 11, cards: [dodge], targets: [1], skill: '国色' };
          const usedAs = {};
          trackUse(usedAs, used, n);
          const plain = { type: 'card_used', user: 0, name: '杀', suit: cards[slash][1], rank: cards[slash][2], cards: [slash], targets: [1], skill: '' };
          return [describe(used, n, S), cardsHtml([dodge], n, usedAs), describe(plain, n, S)];
        }""",
        [cards, dodge, slash],
    )
    assert got[0] == "P0 uses 乐不思蜀♦ (闪♦J) → P1 [国色]", got
    assert "乐不思蜀 (闪♦J)" in got[1] and "converted" in got[1], got
    assert "(" not in got[2] and got[2].startswith("P0 uses 杀"), got
