"""Making embedding tokens in tests: properly signed ones, and each kind of forgery, built by hand so
that no library's refusal to produce them hides a case."""
from __future__ import annotations

import base64
import hashlib
import hmac
import json
import time

SECRET = "0123456789abcdef" * 4


def b64(data: bytes) -> str:
    return base64.urlsafe_b64encode(data).rstrip(b"=").decode()


def encode(header: dict, payload: dict, key: str | bytes | None = SECRET, digest=hashlib.sha256) -> str:
    """A JWT with exactly this header and payload, signed with HMAC-`digest` over `key` (None: unsigned)."""
    signing_input = b64(json.dumps(header).encode()) + "." + b64(json.dumps(payload).encode())
    if key is None:
        return signing_input + "."
    key_bytes = key.encode() if isinstance(key, str) else key
    return signing_input + "." + b64(hmac.new(key_bytes, signing_input.encode(), digest).digest())


def sign(payload: dict, key: str = SECRET) -> str:
    return encode({"alg": "HS256", "typ": "JWT"}, payload, key)


def card_token(card_id, params=None, key: str = SECRET, **extra) -> str:
    return sign({"resource": {"question": card_id}, "params": {} if params is None else params,
                 "exp": int(time.time()) + 600, **extra}, key)


def dashboard_token(dashboard_id, params=None, key: str = SECRET, **extra) -> str:
    return sign({"resource": {"dashboard": dashboard_id}, "params": {} if params is None else params,
                 "exp": int(time.time()) + 600, **extra}, key)


def tamper(token: str, **changes) -> str:
    """The token with its payload changed (keys updated) and the original signature kept."""
    header, payload, signature = token.split(".")
    claims = json.loads(base64.urlsafe_b64decode(payload + "=" * (-len(payload) % 4)))
    claims.update(changes)
    return header + "." + b64(json.dumps(claims).encode()) + "." + signature
