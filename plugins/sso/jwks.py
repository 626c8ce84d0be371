"""Verifying an identity provider's ID token (a JWT signed with RS256) against its published keys (JWKS).

`verify_id_token` is the one way in: the header's `alg` is checked before anything else (`none`, a
missing one and every algorithm but RS256 are refused, so an HMAC key confusion or an unsigned token
never reaches a signature check), then the signature with the key the header's `kid` names, then `iss`
(one of the accepted issuers), `aud` (must contain the client id), `exp` (required) and `nbf`/`iat`
with a small leeway. Refusals are TokenRefused, whose `reason` names what was wrong.

Keys are fetched through core.outbound.http (the guarded client) and kept per URL in this process for
the response's `Cache-Control: max-age` (an hour without one); a token naming a key not in the cached
set makes one new fetch (at most every MIN_REFETCH_SECONDS), which is how a provider's key rotation is
picked up.
"""
from __future__ import annotations

import base64
import json
import re
import threading
import time
from collections.abc import Iterable
from dataclasses import dataclass
from typing import Any

from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

from core.outbound import http as outbound

ALGORITHMS = ("RS256",)
DEFAULT_CACHE_SECONDS = 3600
MAX_CACHE_SECONDS = 24 * 3600
MIN_REFETCH_SECONDS = 60
LEEWAY_SECONDS = 60
MAX_KEYS_BYTES = 1024 * 1024


class TokenRefused(Exception):
    """The token is not accepted; `reason`: alg, format, keys, signature, issuer, audience, expired, claims."""

    def __init__(self, reason: str, message: str):
        super().__init__(message)
        self.reason = reason
        self.message = message


@dataclass(frozen=True)
class _Keys:
    keys: KeySet
    fetched_at: float
    expires_at: float


_cache: dict[str, _Keys] = {}
_lock = threading.Lock()


def clear_cache() -> None:
    with _lock:
        _cache.clear()


def _max_age(cache_control: str | None) -> int:
    found = re.search(r"max-age\s*=\s*(\d+)", cache_control or "")
    return min(int(found.group(1)), MAX_CACHE_SECONDS) if found else DEFAULT_CACHE_SECONDS


def _fetch(url: str, allowed_cidrs) -> _Keys:
    try:
        response = outbound.fetch("GET", url, headers={"Accept": "application/json"}, allowed_cidrs=allowed_cidrs,
                                  timeouts=outbound.Timeouts(connect=5.0, read=10.0, total=10.0),
                                  max_bytes=MAX_KEYS_BYTES, max_redirects=1)
    except outbound.OutboundError as exc:
        raise TokenRefused("keys", f"The identity provider's keys could not be fetched: {exc}") from None
    if response.status != 200:
        raise TokenRefused("keys", f"The identity provider's keys could not be fetched (HTTP {response.status}).")
    try:
        data = json.loads(response.body)
        keys = KeySet.import_key_set({"keys": [k for k in data["keys"] if isinstance(k, dict) and
                                               k.get("kty") == "RSA" and k.get("use", "sig") == "sig"]})
    except (ValueError, KeyError, TypeError, jose_errors.JoseError):
        raise TokenRefused("keys", "The identity provider's keys are not a JSON Web Key Set.") from None
    now = time.time()
    return _Keys(keys, now, now + _max_age(response.headers.get("cache-control")))


def provider_keys(url: str, allowed_cidrs: str | Iterable = (), refresh: bool = False) -> KeySet:
    """The key set at `url`, from the cache while it is fresh; `refresh` asks for a new fetch (done at
    most every MIN_REFETCH_SECONDS)."""
    now = time.time()
    with _lock:
        cached = _cache.get(url)
    if cached is not None and now < cached.expires_at and not (refresh and now - cached.fetched_at >= MIN_REFETCH_SECONDS):
        return cached.keys
    fresh = _fetch(url, allowed_cidrs)
    with _lock:
        _cache[url] = fresh
    return fresh.keys


def _header(token: str) -> dict:
    try:
        segment = token.split(".")[0]
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, UnicodeError):
        raise TokenRefused("format", "The ID token is not a signed JSON Web Token.") from None
    if not isinstance(header, dict):
        raise TokenRefused("format", "The ID token's header must be a JSON object.")
    return header


def verify_id_token(token: str, *, jwks_url: str, issuers: Iterable[str], audience: str,
                    allowed_cidrs: str | Iterable = (), now: float | None = None) -> dict[str, Any]:
    """The verified claims of `token`; raises TokenRefused."""
    if not isinstance(token, str) or token.count(".") != 2:
        raise TokenRefused("format", "The ID token is not a signed JSON Web Token.")
    alg = _header(token).get("alg")
    if not isinstance(alg, str) or alg.lower() == "none":
        raise TokenRefused("alg", "The ID token is not signed (`alg: none` or no `alg`) and is refused.")
    if alg not in ALGORITHMS:
        raise TokenRefused("alg", f"The ID token must be signed with {' or '.join(ALGORITHMS)}, not {alg}.")
    claims = _decode(token, provider_keys(jwks_url, allowed_cidrs), jwks_url, allowed_cidrs)
    _check_claims(claims, set(issuers), audience, time.time() if now is None else now)
    return claims


def _decode(token: str, keys: KeySet, jwks_url: str, allowed_cidrs) -> dict:
    for attempt in (1, 2):
        try:
            claims = jwt.decode(token, keys, algorithms=list(ALGORITHMS)).claims
            break
        except jose_errors.InvalidKeyIdError:
            if attempt == 2:
                raise TokenRefused("signature", "The ID token is signed with a key the identity provider does "
                                                "not publish.") from None
            keys = provider_keys(jwks_url, allowed_cidrs, refresh=True)  # the provider may have rotated its keys
        except jose_errors.BadSignatureError:
            raise TokenRefused("signature", "The ID token's signature does not match the provider's keys.") from None
        except (jose_errors.JoseError, ValueError, TypeError):
            raise TokenRefused("format", "The ID token could not be decoded.") from None
    if not isinstance(claims, dict):
        raise TokenRefused("format", "The ID token's payload must be a JSON object.")
    return claims


def _check_claims(claims: dict, issuers: set[str], audience: str, now: float) -> None:
    if claims.get("iss") not in issuers:
        raise TokenRefused("issuer", "The ID token comes from another issuer.")
    aud = claims.get("aud")
    if audience not in ([aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []):
        raise TokenRefused("audience", "The ID token was issued for another application (`aud`).")
    if "exp" not in claims:
        raise TokenRefused("claims", "The ID token has no expiry (`exp`).")
    registry = jwt.JWTClaimsRegistry(now=int(now), leeway=LEEWAY_SECONDS)
    try:
        registry.validate(claims)
    except jose_errors.ExpiredTokenError:
        raise TokenRefused("expired", "The ID token has expired.") from None
    except (jose_errors.JoseError, ValueError, TypeError) as exc:
        raise TokenRefused("claims", f"The ID token's `{getattr(exc, 'claim', '?')}` claim is not valid.") from None
