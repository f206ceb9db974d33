"""Archives that prove their origin: the platform's Ed25519 key, and what it signs.

A hash chain proves a file is consistent, not who wrote it: anyone can re-chain an edited log,
or play a whole game of their own with their own seed. So the platform signs each archive with
a key of its own (Ed25519, from the `cryptography` library), and `arena verify` and the servers
check the signature against the platform's public key.

What is signed (`statement`): ``msgpack ["arena-archive-v1", game id, entry count, final chain
hash]``. The final chain hash commits to every entry before it: the header (ruleset, options,
rules version, seats with their player ids, names and bot flags, start time, seed commitment),
every answer (with its `auto` flag), every 托管 control entry and the seed reveal (end time,
winners). The signature and the key's id sit in the archive's index (archive.py); a file
without them is *unsigned*.

Where the key lives:

- ``ARENA_ARCHIVE_KEY``: the path of the private key file (PEM, PKCS#8) a signing service (an
  engine worker, `arena archive`) signs with; its public half also verifies.
- ``ARENA_ARCHIVE_PUBKEY``: the public key (64 hex digits), for services that only check
  (the web server).
- `arena up` keeps the pair in ``VAR/keys/`` (``archive.key``, mode 0600, made on the first
  start and kept: archives stay verifiable across runs; ``archive.pub`` beside it) and passes
  both variables to its children. `arena platform-key` prints the public key, and the web server
  serves it at ``GET /api/platform-key``.

Old archives from before signatures are *unsigned*: with a platform key configured they are
refused (not catalogued on a rebuild; `arena verify` fails them, naming why), unless the caller
asks for consistency only (`arena verify --consistency-only`).
"""

from __future__ import annotations

import functools
import hashlib
import os
from dataclasses import dataclass
from pathlib import Path

import msgspec
from cryptography.exceptions import InvalidSignature
from cryptography.hazmat.primitives import serialization
from cryptography.hazmat.primitives.asymmetric.ed25519 import Ed25519PrivateKey, Ed25519PublicKey

DOMAIN = "arena-archive-v1"
KEY_ENV = "ARENA_ARCHIVE_KEY"
PUBKEY_ENV = "ARENA_ARCHIVE_PUBKEY"
KEY_DIR = "keys"
KEY_FILE = "archive.key"
PUB_FILE = "archive.pub"


class BadKey(ValueError):
    """A platform key that cannot be read (a one-line reason)."""


def statement(game_id: str, entries: int, head: bytes) -> bytes:
    """The bytes an archive's signature signs (see the module docstring)."""
    return msgspec.msgpack.encode([DOMAIN, game_id, entries, head])


@dataclass(frozen=True)
class PublicKey:
    """A platform's public key: checks archive signatures."""

    key: Ed25519PublicKey

    @property
    def raw(self) -> bytes:
        """The 32 raw bytes."""
        return self.key.public_bytes(serialization.Encoding.Raw, serialization.PublicFormat.Raw)

    @property
    def hex(self) -> str:
        """What `arena platform-key` prints and `--key` takes."""
        return self.raw.hex()

    @property
    def key_id(self) -> str:
        """A short name of the key (what an archive's index records beside its signature)."""
        return hashlib.sha256(self.raw).hexdigest()[:16]

    def verifies(self, signature: bytes, message: bytes) -> bool:
        """Whether `signature` is this key's over `message`."""
        try:
            self.key.verify(signature, message)
        except InvalidSignature:
            return False
        return True

    @classmethod
    def from_hex(cls, text: str) -> PublicKey:
        """The key from its 64 hex digits; BadKey otherwise."""
        try:
            raw = bytes.fromhex(text.strip())
            return cls(Ed25519PublicKey.from_public_bytes(raw))
        except ValueError:
            raise BadKey("a platform key is 64 hex digits (arena platform-key)") from None


@dataclass(frozen=True)
class Signer:
    """A platform's private key: signs archives."""

    key: Ed25519PrivateKey

    @functools.cached_property
    def public(self) -> PublicKey:
        """Its public half."""
        return PublicKey(self.key.public_key())

    def sign(self, message: bytes) -> bytes:
        """The Ed25519 signature of `message`."""
        return self.key.sign(message)

    @classmethod
    def load(cls, path: Path) -> Signer:
        """The key in a PEM file; BadKey (one line) if it is missing or not an Ed25519 key."""
        try:
            key = serialization.load_pem_private_key(path.read_bytes(), password=None)
        except (OSError, ValueError, TypeError) as exc:
            raise BadKey(f"cannot read the platform key {path}: {exc}") from None
        if not isinstance(key, Ed25519PrivateKey):
            raise BadKey(f"{path} is not an Ed25519 private key")
        return cls(key)

    @classmethod
    def generate(cls) -> Signer:
        """A fresh key."""
        return cls(Ed25519PrivateKey.generate())

    def pem(self) -> bytes:
        """The private key as PEM (PKCS#8, unencrypted: the file's mode keeps it)."""
        return self.key.private_bytes(
            serialization.Encoding.PEM,
            serialization.PrivateFormat.PKCS8,
            serialization.NoEncryption(),
        )


def keep_in(var_dir: Path) -> tuple[Path, PublicKey]:
    """The platform key of `var_dir` (``VAR/keys/archive.key``), made on first use (mode 0600,
    its folder 0700) and kept; (its path, its public key). ``archive.pub`` is written beside."""
    folder = var_dir / KEY_DIR
    path = folder / KEY_FILE
    if not path.exists():
        folder.mkdir(parents=True, exist_ok=True, mode=0o700)
        signer = Signer.generate()
        fd = os.open(path, os.O_WRONLY | os.O_CREAT | os.O_EXCL, 0o600)
        with os.fdopen(fd, "wb") as f:
            f.write(signer.pem())
    signer = Signer.load(path)
    (folder / PUB_FILE).write_text(signer.public.hex + "\n")
    return path, signer.public


def signer_from_env() -> Signer | None:
    """The key ``ARENA_ARCHIVE_KEY`` names, or None when it is unset (BadKey if unreadable)."""
    path = os.environ.get(KEY_ENV, "")
    return _signer(path) if path else None


@functools.lru_cache(maxsize=4)
def _signer(path: str) -> Signer:
    return Signer.load(Path(path))


def platform_key() -> PublicKey | None:
    """The platform's public key as the environment gives it (``ARENA_ARCHIVE_PUBKEY``, else
    the public half of ``ARENA_ARCHIVE_KEY``), or None: no origin can be checked."""
    text = os.environ.get(PUBKEY_ENV, "")
    if text:
        return PublicKey.from_hex(text)
    signer = signer_from_env()
    return signer.public if signer is not None else None


def find_key(var_dir: Path) -> PublicKey | None:
    """The public key `arena up` keeps in `var_dir`, if any."""
    try:
        return PublicKey.from_hex((var_dir / KEY_DIR / PUB_FILE).read_text())
    except (OSError, BadKey):
        return None
