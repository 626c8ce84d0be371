"""Sharing settings logic: the embedding secret's format and its generation."""
from __future__ import annotations

import re
import secrets

from core.http.errors import Invalid

HEX_64 = re.compile(r"^[0-9a-fA-F]{64}$")


def valid_secret_key(value: str) -> str:
    if not HEX_64.match(value):
        raise Invalid({"value": "Invalid embedding-secret-key: it must be 64 hexadecimal characters (256 bits)."})
    return value.lower()


def ensure_embedding_secret(session, registry, enabled) -> None:
    """Turning an embedding toggle on generates a secret when none is set, as Metabase does."""
    if enabled and not registry.get(session, "embedding-secret-key"):
        registry.set(session, "embedding-secret-key", secrets.token_hex(32))
