"""Passwords: argon2id hashing, Metabase's complexity rules and the common-password list.

The list (core/identity/data/common_passwords.txt, lowercase, one a line) is the 30,000 most common passwords
of the zxcvbn project (MIT licence), as Metabase ships zxcvbn's list for the same check.
"""
from __future__ import annotations

import functools
import hmac
import string
from pathlib import Path

from argon2 import PasswordHasher
from argon2.exceptions import InvalidHashError, VerificationError

COMMON_PASSWORDS_FILE = Path(__file__).parent / "data" / "common_passwords.txt"

COMPLEXITY_LEVELS = {
    "weak": {"total": 6},
    "normal": {"total": 6, "digit": 1},
    "strong": {"total": 8, "lower": 2, "upper": 2, "digit": 1, "special": 1},
}

TOO_COMMON = "password is too common."


@functools.lru_cache(maxsize=1)
def common_passwords() -> frozenset[str]:
    return frozenset(COMMON_PASSWORDS_FILE.read_text(encoding="utf-8").split())


def complexity(level: str = "normal", length: int | None = None) -> dict[str, int]:
    rules = dict(COMPLEXITY_LEVELS.get(level, COMPLEXITY_LEVELS["normal"]))
    if length:
        rules["total"] = int(length)
    return rules


def _counts(password: str) -> dict[str, int]:
    return {
        "total": len(password),
        "lower": sum(c.islower() for c in password),
        "upper": sum(c.isupper() for c in password),
        "letter": sum(c.isalpha() for c in password),
        "digit": sum(c.isdigit() for c in password),
        "special": sum(c in string.punctuation or c.isspace() for c in password),
    }


def is_valid(password: str, level: str = "normal", length: int | None = None) -> bool:
    """Metabase's rule: every minimum count met, and (except at `weak`) not a common password."""
    if not isinstance(password, str):
        return False
    counts = _counts(password)
    if any(counts.get(kind, 0) < minimum for kind, minimum in complexity(level, length).items()):
        return False
    return level == "weak" or password.lower() not in common_passwords()


class Hasher:
    """argon2id with a configurable cost; verify() costs the same whether or not the user exists."""

    def __init__(self, time_cost: int = 3, memory_kib: int = 65536):
        self._hasher = PasswordHasher(time_cost=time_cost, memory_cost=memory_kib, parallelism=1)
        # Verified against when no user matches, so a wrong e-mail takes as long as a wrong password.
        self._dummy = self._hasher.hash("tessera-dummy-password")

    def hash(self, password: str) -> str:
        return self._hasher.hash(password)

    def verify(self, stored: str | None, password: str) -> bool:
        try:
            return self._hasher.verify(stored or self._dummy, password) and stored is not None
        except (VerificationError, InvalidHashError):
            return False

    def needs_rehash(self, stored: str) -> bool:
        return self._hasher.check_needs_rehash(stored)


def constant_time_equals(a: str | None, b: str | None) -> bool:
    if a is None or b is None:
        return False
    return hmac.compare_digest(a.encode(), b.encode())
