"""A counter-based random generator whose state is two integers in the game state.

Each SHA-256(seed || counter) digest gives four 64-bit numbers, so a game's randomness is a pure
function of its seed and how many numbers it has drawn; Python's ``random`` module is never used
(its algorithm is not a contract across versions).
"""

from __future__ import annotations

import hashlib
import struct

_PACK = struct.Struct(">QQ")
_UNPACK4 = struct.Struct(">QQQQ")
_MASK = (1 << 64) - 1


def block4(seed: int, block: int) -> tuple[int, int, int, int]:
    """Positions ``4*block`` .. ``4*block+3`` of the stream for ``seed``."""
    out: tuple[int, int, int, int] = _UNPACK4.unpack(
        hashlib.sha256(_PACK.pack(seed & _MASK, block)).digest()
    )
    return out


def random_u64(seed: int, counter: int) -> int:
    """The 64-bit number at position ``counter`` of the stream for ``seed``."""
    return block4(seed, counter >> 2)[counter & 3]


def below(seed: int, counter: int, n: int) -> int:
    """A number in ``range(n)`` from position ``counter`` (bias below 2**-50 for n < 2**14)."""
    return random_u64(seed, counter) % n


def shuffle_indices(seed: int, counter: int, n: int) -> tuple[list[int], int]:
    """A Fisher-Yates permutation of ``range(n)``; returns it and the counter after the draws."""
    perm = list(range(n))
    block: tuple[int, ...] = ()
    for i in range(n - 1, 0, -1):
        if not block or counter & 3 == 0:
            block = block4(seed, counter >> 2)
        j = block[counter & 3] % (i + 1)
        counter += 1
        perm[i], perm[j] = perm[j], perm[i]
    return perm, counter
