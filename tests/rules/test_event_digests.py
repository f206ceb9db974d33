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


PINNED_RULES_VERSION = "5"
"""The RULES_VERSION the digests below were recorded with (keyed by case_id).

5 (issue 42): every game_started lists the options every ruleset now shares (max_reshuffles at
its new default 19, chain_hit_effects, equip_slash_keeps_range: A-STD-03/04/05), so every digest
moved. Replayed with the old readings (those two true, max_reshuffles 0) and game_started as
version 4 wrote it, 66 of the 67 games gave their version-4 digests; the other,
jinyu-6-…-321, only because 谋攻's 强化 +1 follows chain_hit_effects like every hit effect."""
DIGESTS: dict[str, str] = {
    "standard-4-default-100": "b5210232f6fd570175e2493aeec724ba90bd628eead0e9e6b5437d857e26a2cf",
    "standard-4-default-101": "7a3d55f1c89da61db266abd1487956bb89fbc600d6c6e584d88cb4abb58d5799",
    "standard-5-default-110": "24e22cb1a15defe33a6f3f226cc6b8ad3dcd8f44c7ce9a8fcad5b9c08744d303",
    "standard-5-default-111": "dc3237cb32e06fb3f3f60e9943db8390db6ced854a1b79dfd6537d8de2633c5b",
    "standard-8-default-120": "7f54847782cb8fe77642fd780ca3b1d4682b547af856d570acb9266d4d5ac329",
    "standard-8-default-121": "e7a34c5716c741a395a035ebf082fbc8fca01f5fc52ad437dcd3005f076c92c8",
    "standard-8-default-122": "cad6d69051487baef11ada54be79db22ed29afa0d4afba34d0c1f2069667486b",
    "standard-10-default-130": "106c1b0d54011b3a924df91907daea6545f7e63c73ba37af1e1aa72635ac3e44",
    "standard-10-default-131": "2b7ee4987127e0adada709e13414e00eb23de209f22eb1ca4a82308b4d5e69dd",
    "standard-6-double_renegade=True,maneuvering=False-140": "8848fe7fbdae29010b0ac44b578e5d12504e5818ffd94fe77c00141bc8bf3831",
    "standard-6-double_renegade=True,maneuvering=False-141": "71f797848df8b8008445619031e1226b0509618458a37471fec5b5d5298aa3c2",
    "standard-5-generals=standard-150": "5abcdfb6ce646d602a19936804af3eb1063859247dfa9f285413d04479d55286",
    "standard-5-generals=standard-151": "1a0e5e4a0d3b88e9a3b035998e051bd19a475a9b56cfa7c49a1a5d61d6cfff52",
    "standard-5-generals=standard-152": "4915351c0501e46111d1221c57d5b1e13e3f15a2467429e0c44337a1698772b5",
    "standard-5-generals=standard-153": "dd763749b7201b817e118512cef255203a393c9e9f7d239faef9e0fdf4d753a7",
    "standard-8-generals=standard-160": "09edd48e3201a89d9d90c16bc40c63a468828d5c085af45556cd62a1073414ff",
    "standard-8-generals=standard-161": "3d40de5266dc78a6a3657a4f33c22de1804390a06e9e9cdca21079eb693a90b7",
    "standard-8-generals=standard-162": "d0388cd364b7c4de85e0a799f99a9c70fa198d08c3d0e8327ae2ac6b729007e7",
    "standard-8-generals=standard-163": "80e7336b3726accf87e7f9daeadc453459f2490fcd2c2b801013b35d4d4a6147",
    "standard-7-generals=draft,max_reshuffles=1-170": "32f4a76c1e62171d33236bd34d6d2a3a8647c36f5dc1f2e25a9bd5f2314f1ead",
    "standard-7-generals=draft,max_reshuffles=1-171": "4e112ec46ac2471484867dec3977a8ba91270dcbdedbdf6c5dabb9b1d3407f95",
    "standard-7-generals=draft,max_reshuffles=1-172": "f5a3750b66a3a026cfd728bb97eb521fe26fbbebb42f31b0748c1d6a4a5f9592",
    "honglou-5-default-200": "98e5117592fda918e6b2dc2dc7b7d8331cfae52066b1e3e58a1e50170c79820e",
    "honglou-5-default-201": "12b3c1b7efa8929c8a351ddc402b99dec868def0c67c21b1ad8a699403147fc3",
    "honglou-5-default-202": "51fbc6df1e6217b8c8c043e02a9d78e6026a88af5e927e5e9a23fdff849a5a71",
    "honglou-8-default-210": "f6825d6ac66e5a6b6221506b283e225ed118dd45ba97b644761a53c4761ad295",
    "honglou-8-default-211": "4b802d0274405bbf12313f5e9567a05b14760b7246859f5289b6dae9e4f7af3a",
    "honglou-8-default-212": "5a80b12b9430e0d1b4925f75e0a6866c9972003adbe663bd537b8aa37c57fc96",
    "honglou-8-default-213": "7d84cfdbf02940e9481e5d11e389a55acbb143b17d0de5798dc13421bad2c55b",
    "honglou-10-genders=source,maneuvering=True-220": "4d21a65afe0c6d10dc0f8c3d02c633326bc007ebb9064a75ed9191849139ac6c",
    "honglou-10-genders=source,maneuvering=True-221": "f2faab608f7dd6adabeff2bf398b0d2879c4a2f3d6e4689f331e9356eb27492a",
    "honglou-6-fanjian_damage_first=False,jiuyuan_literal=True,zuima_optional=True-230": "fb99d8eb084dd9dd807f3179003d65d7f71e17496264e6dd2fa99a8fdbd40510",
    "honglou-6-fanjian_damage_first=False,jiuyuan_literal=True,zuima_optional=True-231": "c4b6d5fec0df1dd610241386793e4e89ed9c72dc1ee158085b77f222265986ec",
    "jinyu-8-default-300": "01c3fc05855d1a8b46c94bcc3a092cb1e184a721798e48fe92a793e7088d365a",
    "jinyu-8-default-301": "36749df8eb753ce0f5bec851944d1f90e6bf0c6ccf64a3ceec763a5fe9064ec0",
    "jinyu-8-default-302": "f04a03d6d081bfde55d56c0f696a6625da2d07b6f54c48042473f61947447cc8",
    "jinyu-8-default-303": "7686bea659a120990898858f1cedfc81604ea81b36258fabe76070d6679c940f",
    "jinyu-8-mougong=True-310": "c92ad92bfe786d62f701c0ada6cc49acd0a6eb8d5cc7688c4e25c0c96139bab8",
    "jinyu-8-mougong=True-311": "073571c4fc57e616227abfd666f377a02637f01be8bae86368a83e419375f417",
    "jinyu-8-mougong=True-312": "88b7b7e516bf1ad1ee7737d38ca583631de92b55540d7c1ebdd66aa81756854e",
    "jinyu-8-mougong=True-313": "88ef8f285b16b3b5f756a57e9a4ef8599bc403a18af2b5073633d91aad2932b6",
    "jinyu-6-double_renegade=True,mougong=True,pool=all-320": "795ee0df2657fd7b90043d4a4364595701658ffc7578fcda033042b28e129110",
    "jinyu-6-double_renegade=True,mougong=True,pool=all-321": "f7908aeadda7ca2862daf691aa9ce3fdcec55b971d8eb3ba1f09ad773974e59f",
    "jinyu-6-double_renegade=True,mougong=True,pool=all-322": "572669a1b30ea9b46057ebcdb01c4e6410d7a27ef03d22c8ca7fcea390896abf",
    "jinyu-5-jade_cap=2,pool=honglou,rage_cap=3-330": "614409f2b9e542b72f42ccf8a58c24d45ef17fab7760e5e905e784381024ab2f",
    "jinyu-5-jade_cap=2,pool=honglou,rage_cap=3-331": "c60727e77ef28a3f8f41fe54ed9d1a9357ce7092212c07e047b92a9726bd6ef3",
    "extended-8-variant=beginner-400": "b2d2a9bf1fa242324c66fbec8567355c08613c0d6a7ec7bf5e35b9baf15db4a2",
    "extended-8-variant=beginner-401": "db4df87225b9596ef017bdf41283b26636a758e96464fed02f4d10ee9e087c0f",
    "extended-8-variant=beginner-402": "6dc20b40c7338ba9ff1dfb512bf6add3db6c4b5c7a6508f515713de8b89706df",
    "extended-8-variant=beginner-403": "67671f60bd86993d282cca9e42b4fab85dcb12728ff12eb48da967b73130b354",
    "extended-12-variant=advanced-410": "e510d0341ff4ca2bd22b381970c611cbcf297d2a45ce324113013e64a67e6154",
    "extended-12-variant=advanced-411": "8624768ba9fb779ff87aa3584f04041ac9b2af9c48853761033e7c31c8092729",
    "extended-12-variant=advanced-412": "63aff3e3614cd7c7eaa924fc5dbfad15e43e49fae90a02a1f28c3b14e59b46b5",
    "extended-12-variant=advanced-413": "a0da39ddcf642d57f277afef42d478efbbd8dae67388572e28b5981a25239e3d",
    "extended-12-advanced_row_priority=lord_camp,generals=vanilla-420": "b4f3ff18eeeac871c033a6d40fb0318eb086ece8ced59780bd4bc0a1954ab9e9",
    "extended-12-advanced_row_priority=lord_camp,generals=vanilla-421": "1a40fc4dc1179a007434ec34fee9e413c3537019cb6174ec04657e4acd4e69ca",
    "extended-8-junwei_stacks=True,standard_rewards=True-430": "ddcc384f769c53654b76e9b89a7430a3f77a3d09bf7bbd55a3e9f184a4e7d458",
    "extended-8-junwei_stacks=True,standard_rewards=True-431": "bef0a51c3709c81a436d29f5d3817efd3e07063b6e349b484969e838f722230b",
    "chengtian-2-default-500": "66406adde823d17de76040394611e91353303c5c7c4d107aa23c64a41118559c",
    "chengtian-2-default-501": "914771bf04b849e9a924034fea8e7429478741a39d75cb38b9599d7028b89d02",
    "chengtian-2-default-502": "1e29f8c36c41e3593aee49c39377eb436d916cb75ae3d343b526577962517cc7",
    "chengtian-2-default-503": "7d146ae07e2cbe8d9ea30bc34f4f68d4b18ab3fa3a9530b70b74a5ddf3da6dfc",
    "chengtian-2-default-504": "712b5894814ceb7ad1ad0ffb7da7c4bece9ca911a32cc83a777cca1d8a0f785b",
    "chengtian-2-default-505": "653b5e14cbaeac376d5d6081843298ac61cfc30d75707534e9c359a688d9e02f",
    "chengtian-2-face_down_skills=True,victory=first_fall-510": "d4d1232aa3fca671ea78dfa817e9668fefc0c37bd542c75d71be093f07bcccdd",
    "chengtian-2-face_down_skills=True,victory=first_fall-511": "9322e7c5ea72a6d1661194169ffe1b3a9e8f1d21cc6c41da59892d5bce7f0a28",
    "chengtian-2-face_down_skills=True,victory=first_fall-512": "b3115952737b08eb47167f9a1bcd9e0154545bc30341538fdd44ce30e202c138",
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
SNAPSHOTS = "c767b9d0424a8b20dcc363e588b900e8b8b592a4c46f4431f5caa087c9dc3031"
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
