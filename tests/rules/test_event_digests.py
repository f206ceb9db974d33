"""The events (and decisions) a given input produces, pinned byte for byte.

Seeded random games of every ruleset and variant, at several table sizes, answered by a seeded
picker of this file (not a bot, so changing a bot changes nothing here): the SHA-256 chained
over every encoded event and every pending decision (its id, seat, kind, options in order,
bounds, info) must equal the digest recorded below.

These digests change only together with a ``RULES_VERSION`` bump: a rule change that alters the
events of a given input is one; anything else that moves a digest (an optimisation, a refactor)
is a bug. When ``RULES_VERSION`` is bumped on purpose, re-record them with
``python3 -m tests.rules.test_event_digests``.
"""

from __future__ import annotations

import hashlib
from typing import Any

import msgspec
import pytest

from services.rules import api

# (ruleset, players, options, seeds): every ruleset and variant, several table sizes
TABLES: list[tuple[str, int, dict[str, Any], range]] = [
    ("standard", 4, {}, range(100, 102)),
    ("standard", 5, {}, range(110, 112)),
    ("standard", 8, {}, range(120, 123)),
    ("standard", 10, {}, range(130, 132)),
    ("standard", 6, {"maneuvering": False, "double_renegade": True}, range(140, 142)),
    ("standard", 5, {"generals": "standard"}, range(150, 154)),
    ("standard", 8, {"generals": "standard"}, range(160, 164)),
    ("standard", 7, {"generals": "draft", "max_reshuffles": 1}, range(170, 173)),
    ("honglou", 5, {}, range(200, 203)),
    ("honglou", 8, {}, range(210, 214)),
    ("honglou", 10, {"genders": "source", "maneuvering": True}, range(220, 222)),
    (
        "honglou",
        6,
        {"zuima_optional": True, "jiuyuan_literal": True, "fanjian_damage_first": False},
        range(230, 232),
    ),
    ("jinyu", 8, {}, range(300, 304)),
    ("jinyu", 8, {"mougong": True}, range(310, 314)),
    ("jinyu", 6, {"mougong": True, "double_renegade": True, "pool": "all"}, range(320, 323)),
    ("jinyu", 5, {"pool": "honglou", "rage_cap": 3, "jade_cap": 2}, range(330, 332)),
    ("extended", 8, {"variant": "beginner"}, range(400, 404)),
    ("extended", 12, {"variant": "advanced"}, range(410, 414)),
    (
        "extended",
        12,
        {"generals": "vanilla", "advanced_row_priority": "lord_camp"},
        range(420, 422),
    ),
    ("extended", 8, {"junwei_stacks": True, "standard_rewards": True}, range(430, 432)),
    ("chengtian", 2, {}, range(500, 506)),
    ("chengtian", 2, {"victory": "first_fall", "face_down_skills": True}, range(510, 513)),
]

_ENC = msgspec.msgpack.Encoder()


def case_id(ruleset: str, players: int, options: dict[str, Any], seed: int) -> str:
    """A stable name for one game of the table."""
    opts = ",".join(f"{k}={v}" for k, v in sorted(options.items()))
    return f"{ruleset}-{players}-{opts or 'default'}-{seed}"


class Picker:
    """Seeded random answers: decline (when allowed, not in the play phase) as one more
    option, then a uniform number of picks in the bounds, each uniform among those left."""

    def __init__(self, seed: int) -> None:
        self.seed, self.n = seed, 0

    def below(self, k: int) -> int:
        self.n += 1
        return api.rng.below(self.seed, self.n, k)

    def act(self, d: api.Decision) -> api.Answer:
        opts = list(d.options)
        if d.declinable and d.kind != "play" and self.below(len(opts) + 1) == 0:
            return api.Answer(decision=d.id, seat=d.seat, picks=[])
        hi = min(d.max, len(opts))
        lo = min(max(d.min, 1), hi)
        k = lo + self.below(hi - lo + 1)
        picks = [opts.pop(self.below(len(opts))) for _ in range(k)]
        return api.Answer(decision=d.id, seat=d.seat, picks=picks)


def game_digest(ruleset: str, players: int, options: dict[str, Any], seed: int) -> str:
    """Play one seeded game to its end; the chained SHA-256 of its events and decisions."""
    g = api.new_game(ruleset, players, seed, options)
    picker = Picker(seed * 7919 + players)
    chain = hashlib.sha256()

    def record(events: list[api.Event]) -> None:
        for e in events:
            chain.update(api.encode_event(e))
        d = api.pending(g)
        chain.update(b"end" if d is None else b"decision" + _ENC.encode(d))

    record(api.advance(g))
    for _ in range(20_000):
        d = api.pending(g)
        if d is None:
            break
        record(api.submit(g, picker.act(d)))
    assert g.over, f"{case_id(ruleset, players, options, seed)} did not end"
    return chain.hexdigest()


CASES = [(r, n, o, s) for r, n, o, seeds in TABLES for s in seeds]


def test_every_ruleset_is_pinned() -> None:
    assert {t[0] for t in TABLES} == set(api.RULESETS)
    assert set(DIGESTS) == {case_id(*c) for c in CASES}
    assert api.RULES_VERSION == PINNED_RULES_VERSION, "RULES_VERSION bumped: re-record DIGESTS"


@pytest.mark.parametrize(("ruleset", "players", "options", "seed"), CASES, ids=lambda v: str(v))
def test_events_are_pinned(ruleset: str, players: int, options: dict[str, Any], seed: int) -> None:
    key = case_id(ruleset, players, options, seed)
    assert game_digest(ruleset, players, options, seed) == DIGESTS[key], (
        f"{key}: the events or decisions changed; only a RULES_VERSION bump may do that"
    )


PINNED_RULES_VERSION = "4"
"""The RULES_VERSION the digests below were recorded with (keyed by case_id)."""
DIGESTS: dict[str, str] = {
    "standard-4-default-100": "77cf90be11570e9a9cb9605c0c0da60d369d9f41c676cfe3a1b287f6b5687f87",
    "standard-4-default-101": "557c7221a71dc553099a84420fbaa4ce2644978d2c4b0daf94aac84d95229c33",
    "standard-5-default-110": "4635b33dbb76bae05c394bf0ead9d04df740146140ff2a331dae8660c040faba",
    "standard-5-default-111": "f71c5c1a5232c0738531540193872df48c6a3691d0fc65dff3057126a8055c93",
    "standard-8-default-120": "85c1b0845856c3d1faf6c018fea8c05ead4864bd4f97fd9fea5696a57be53eef",
    "standard-8-default-121": "5a67baf950b4ea51a4dd77ec37411550d6c908897b9f1b68eae515ab998b39ea",
    "standard-8-default-122": "fe11697c295bfe0a9e5317394be30be666d5b8c72b1a9fb60a6481934d5e92b4",
    "standard-10-default-130": "ab61d2c73547665e5e8ecf9248debba6227640fbe3616aaf399951eb60feeca8",
    "standard-10-default-131": "bd6ab4285a4996fdb93911d47051ae4a5823c9aeb4bc4987eac74541ae6159b5",
    "standard-6-double_renegade=True,maneuvering=False-140": "5fed874e7f2aa381db4f0d03e458aa046900702f4be75c2b3aed2ffed100fd2f",
    "standard-6-double_renegade=True,maneuvering=False-141": "f4cdcfb1932e4ff030a45496a43d5ec9e825bac74e4bc5ffd2ae90172a29d6ab",
    "standard-5-generals=standard-150": "efa5e3f747774b4b823468c38cac3e69aac5c4d4b42069467b8a7ad386e71da9",
    "standard-5-generals=standard-151": "832207fdfdb5dee6980d52909d72185eab3018cb8ecd75b499574f242e6dbafe",
    "standard-5-generals=standard-152": "c918a1b4935142de6959c0cbf3c05207d34b524df7e6ea000582e21b6487b94d",
    "standard-5-generals=standard-153": "391c8bba2de66945deb56cfe75ba77727a3f93376ca9e79ad0d496e6c78493c2",
    "standard-8-generals=standard-160": "b9097f3840d25ad3c73378c537ab6bd9006b5960961915372b8d3d603300c9eb",
    "standard-8-generals=standard-161": "eb05b8114df8a7ac0dd15d008871e88f3c055dfebb5e47699cbb403ef11c4160",
    "standard-8-generals=standard-162": "c42f82cba4423c4fe4d4dd05c0f8a015efbd8d42afb8e9be000ce5914a6d945a",
    "standard-8-generals=standard-163": "b02a9f14a0d6344d7c13f0409cf7664e24c9bdfc0aeaf4abac0944979f874fc6",
    "standard-7-generals=draft,max_reshuffles=1-170": "f0a8577f32d9e99146ea8ef4024921704b9a672ffdba0a49cf7f3c101e0b7f99",
    "standard-7-generals=draft,max_reshuffles=1-171": "74d00919bc371a2d22269b9abeb6534960a8daeaff38521b4be68306d10f011e",
    "standard-7-generals=draft,max_reshuffles=1-172": "a8d99045f876376f64835b6ba3398150f7d26ccefe436c1063a784bb13dc2b67",
    "honglou-5-default-200": "ce92d1639b153e81bd20cf2df7f7ef1530cc0ffaee53c66a7ed27baa93af0bde",
    "honglou-5-default-201": "52fb007f6a3925e74e24d03e6ecfffb39dd2976895b6935c435216694c191677",
    "honglou-5-default-202": "fa4e2b1aa38ba839e13471bfb229e8b8eca66b00fa435e4f7dc7970604d8a8e3",
    "honglou-8-default-210": "2270cd87747082f292924ccb5ab7580575df828e8ca62022d6c82d064fc5ae76",
    "honglou-8-default-211": "1aa265e746892b2cec65b63725db2e3997e05032a703a968619a54141fd818db",
    "honglou-8-default-212": "3c27a28a0215adacd9ca80d0856f35152fe13353f86af74c964d2304d3e7adda",
    "honglou-8-default-213": "c99481160e9e9ef49a6ebd9071c25372c78c391afad56bc168ecd5e238b89f7d",
    "honglou-10-genders=source,maneuvering=True-220": "8d456fe180f337a3a790833c652cbc6d2a1f2ff0eb689babc8566b99f23ae16b",
    "honglou-10-genders=source,maneuvering=True-221": "22b1a68cbc14de241e17c4120750eb08b3e923c2b0b9e5907e5629350f3ee6b7",
    "honglou-6-fanjian_damage_first=False,jiuyuan_literal=True,zuima_optional=True-230": "40efa644b0d898062863e9599008bf0405a023f91d3843434e96bdd612327ed8",
    "honglou-6-fanjian_damage_first=False,jiuyuan_literal=True,zuima_optional=True-231": "4feca790f890b1683a8e33c41325510162d0a4df9c46fb55e70b5982518790a5",
    "jinyu-8-default-300": "b941c27bc6e689668edf6ba087cc5a72c5337ae235ffde4d932fcd1c37c86a03",
    "jinyu-8-default-301": "04557614026c8ce558687ecb05a962793292b368db1d52a81516f601ebc1353a",
    "jinyu-8-default-302": "86f0e6aa1e881f2f0bb6c62826e8ceab7f4654381a115e594b27f4bdb37f69bc",
    "jinyu-8-default-303": "8692fbe006f421e3347f158310ed1d9c69d348a11b9c2e978319695e87847c54",
    "jinyu-8-mougong=True-310": "95fd38b7d9b8f79153212f9d5f8321b8480d0a901ebd442794177b0f8a59f6ed",
    "jinyu-8-mougong=True-311": "b2a1282ecdc5ee24719734a3817da344362719f089a697d87bee7531549bb699",
    "jinyu-8-mougong=True-312": "50a8741a2545bcb19ddf943e2ca94564a418ad6b530182aa674f6ddfdbefd06b",
    "jinyu-8-mougong=True-313": "23f830538e778d60022bec073e2f8ddc5d921519ffb7ffa77fe1814a69f801f9",
    "jinyu-6-double_renegade=True,mougong=True,pool=all-320": "5be34e829614473eb368f5c0a93f8820c9546cf81280bca60ed3e2e2fcd15114",
    "jinyu-6-double_renegade=True,mougong=True,pool=all-321": "4d15e706f4947ce00cdabfcf0cdeb116eda26a7b2b889652208ec1e44cc363f6",
    "jinyu-6-double_renegade=True,mougong=True,pool=all-322": "ce3397e4538a0b526236b3a999d1f5ca5adb83e19dae269b7519dbac5646cb03",
    "jinyu-5-jade_cap=2,pool=honglou,rage_cap=3-330": "69236a61eead6b4204fc9b5a1e0525aa2ca313743190e10d736535eab577529a",
    "jinyu-5-jade_cap=2,pool=honglou,rage_cap=3-331": "46911f935931e4f265bd98318f34b5e3b1d9466bce0c5d8da178d68c6933ae0d",
    "extended-8-variant=beginner-400": "79bdbc709db462d6cb04de8319af2ffffb53d2674b3d04f39651b8bcc82c790c",
    "extended-8-variant=beginner-401": "b38b6ef98e49743dc254bd46d4f1271800a7fabfc5d29cb4b114fb817c25f628",
    "extended-8-variant=beginner-402": "a66d287e4085ce01666ff017e364636fc876603d05d9586a15d068a4a7d908f5",
    "extended-8-variant=beginner-403": "b7b39b6691201b31bd495ecd4cd3a5c35c19133d029587eda5bd5af124ae2399",
    "extended-12-variant=advanced-410": "d6c7630bf0e5e81de2004b0a5415366b5834488c7f79027e7229656e799c4e2b",
    "extended-12-variant=advanced-411": "de33e702a09871b09e2f626b34620a694ec9a91ba151811a4555b441be1e84f9",
    "extended-12-variant=advanced-412": "893938a6745344ef49c6591ccffdc77e45c2e2a739a6b4b69b9663932d12219c",
    "extended-12-variant=advanced-413": "cc2fa79e9d20091f1be6b796292e90f8ff42116268a37925d4a9b4146d446f93",
    "extended-12-advanced_row_priority=lord_camp,generals=vanilla-420": "5ea90bc040e8b7ec73ae92cf34b37b9cf2a114ff676a567ee36561718bf45bb7",
    "extended-12-advanced_row_priority=lord_camp,generals=vanilla-421": "48aae1c67785cae0165a10f736717ba9830fde7fbea4fb3f63d44737366db4f7",
    "extended-8-junwei_stacks=True,standard_rewards=True-430": "746b2c67e8439acea897683780b13d2eab0708554de013823bcdb166097f793a",
    "extended-8-junwei_stacks=True,standard_rewards=True-431": "ca292e069360b0ad7b6e7b417b1aaf6c66a29fae08f9cc4a3b0678d06bafd4d1",
    "chengtian-2-default-500": "b7e9351b5cd2ad99b03f0e50b8166abe52a26c1109b3466d0045509259b0fe18",
    "chengtian-2-default-501": "c786b7bd7f1018456c1b1dd8c079d9cb525021fa88a304ac7c6a2b153e4b268c",
    "chengtian-2-default-502": "65effadb3dfdb54ac319755e78039583e0a719ac3d04c47d7ff984eeb801c0b0",
    "chengtian-2-default-503": "165e240237593ddf2139952f2c1c6b19e273512216a78d4fe27558b720d18db0",
    "chengtian-2-default-504": "665d8a52357d236bc1d816382fa7f05e10744c7ee0c4aac94d4f65660c9e6116",
    "chengtian-2-default-505": "60709bb1e0c2937f5e131825023ddcc092a9a9fc537a365164c586c1bc26e7ec",
    "chengtian-2-face_down_skills=True,victory=first_fall-510": "1de33122b7f6f0e6cc306d713ef07878cf6afa77946f2d9e8e29c268b341bb2f",
    "chengtian-2-face_down_skills=True,victory=first_fall-511": "5b9e18fd92a81a28bc666c9131ccec893d33ed99dd82899e0e506de197209b20",
    "chengtian-2-face_down_skills=True,victory=first_fall-512": "f2a6b672db629b3e76e0b75769745e9bbea747e4b6fd0540bf8a558e2b438428",
}


def snapshots_digest(cases: list[tuple[str, int, dict[str, Any], int]]) -> str:
    """The SHA-256 over the snapshot taken at every decision (and the end) of ``cases``."""
    chain = hashlib.sha256()
    for ruleset, players, options, seed in cases:
        g = api.new_game(ruleset, players, seed, options)
        picker = Picker(seed * 7919 + players)
        api.advance(g)
        while (d := api.pending(g)) is not None:
            chain.update(api.snapshot(g))
            api.submit(g, picker.act(d))
        chain.update(api.snapshot(g))
    return chain.hexdigest()


SNAPSHOT_CASES = CASES[::4]
PINNED_SNAPSHOT_FORMAT = 4
SNAPSHOTS = "7152ecc57b6161d6362bfe9e63e2457e1cfeb42635dc593641116b30cd1fcd3f"
"""The snapshots of SNAPSHOT_CASES at every decision: a stored snapshot of the same format must
restore into the same state, so this changes only with a SNAPSHOT_FORMAT (or RULES_VERSION)
bump."""


def test_snapshots_are_pinned() -> None:
    assert api.SNAPSHOT_FORMAT == PINNED_SNAPSHOT_FORMAT, "SNAPSHOT_FORMAT bumped: re-record"
    assert snapshots_digest(SNAPSHOT_CASES) == SNAPSHOTS, (
        "the state at some decision is laid out otherwise: bump SNAPSHOT_FORMAT"
    )


if __name__ == "__main__":  # re-record (only together with a RULES_VERSION bump)
    print(f"PINNED_RULES_VERSION = {api.RULES_VERSION!r}")
    print(f"SNAPSHOTS = {snapshots_digest(SNAPSHOT_CASES)!r}")
    for c in CASES:
        print(f'    "{case_id(*c)}": "{game_digest(*c)}",')
