"""OpenID Connect ID tokens: the provider's keys (JWKS) fetched and cached, and a token verified against
them. Shared by every method that receives an ID token (OpenID Connect sign-in, Google Sign-In).

`verify` refuses, with a SignInRefused saying why: a token that is not a signed JWT or whose `alg` is
`none`, missing or symmetric (an ID token is checked with the provider's public keys only); a signature
no published key makes; another issuer; an audience without the client id (and, with several audiences,
an `azp` naming another client); a missing or passed `exp`; a missing `iat`; a `nonce` other than the one
this sign-in sent; and, with `verified_email=True`, an `email_verified` claim that is present and not
true. Keys come through core.outbound.http (the SSRF guard: a provider on an internal network must be
inside `http-actions-allowed-cidrs`), are cached per URL for an hour, and are fetched again when a token
names a key id the cache does not have (the provider rotated its keys), at most once a minute per URL.
The clock (`clock`) is injectable so tests move time instead of waiting.
"""
from __future__ import annotations

import base64
import json
import threading
import time
from dataclasses import dataclass
from typing import Any, Callable

from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import KeySet

from core.http.errors import ApiError
from core.outbound import http as outbound

from .accounts import SignInRefused

ALGORITHMS = ("RS256", "RS384", "RS512", "PS256", "PS384", "PS512", "ES256", "ES384", "ES512", "EdDSA", "Ed25519")
LEEWAY_SECONDS = 60
KEYS_TTL_SECONDS = 3600
KEYS_REFETCH_SECONDS = 60
MAX_DOCUMENT_BYTES = 1024 * 1024
TIMEOUTS = outbound.Timeouts(connect=5.0, read=10.0, total=15.0)

clock: Callable[[], float] = time.time


class ProviderUnavailable(ApiError):
    """502: the identity provider's discovery document or keys could not be read."""

    status = 502
    message = "The identity provider could not be reached."

    def __init__(self, message: str):
        super().__init__(message, body={"errors": {"_error": message}})


def get_json(url: str, allowed_cidrs: str, what: str) -> dict:
    """A JSON object from the provider (discovery document, key set) through the outbound guard."""
    try:
        response = outbound.fetch("GET", url, headers={"Accept": "application/json"}, allowed_cidrs=allowed_cidrs,
                                  timeouts=TIMEOUTS, max_bytes=MAX_DOCUMENT_BYTES)
    except outbound.OutboundError as exc:
        raise ProviderUnavailable(f"The identity provider's {what} could not be read: {exc.message}") from None
    if response.status != 200:
        raise ProviderUnavailable(f"The identity provider's {what} could not be read: {url} answered "
                                  f"{response.status}.")
    try:
        document = json.loads(response.body)
    except ValueError:
        document = None
    if not isinstance(document, dict):
        raise ProviderUnavailable(f"The identity provider's {what} at {url} is not a JSON object.")
    return document


@dataclass
class _Cached:
    keys: KeySet
    fetched_at: float


class KeyCache:
    """Key sets by URL, shared by every request of the process."""

    def __init__(self):
        self._lock = threading.Lock()
        self._sets: dict[str, _Cached] = {}

    def keys(self, url: str, allowed_cidrs: str, *, kid: str | None = None) -> KeySet:
        now = time.monotonic()
        with self._lock:
            cached = self._sets.get(url)
        fresh = cached is not None and now - cached.fetched_at < KEYS_TTL_SECONDS
        if fresh and (kid is None or _has_kid(cached.keys, kid) or now - cached.fetched_at < KEYS_REFETCH_SECONDS):
            return cached.keys
        document = get_json(url, allowed_cidrs, "signing keys (JWKS)")
        try:
            keys = KeySet.import_key_set({"keys": [k for k in document.get("keys") or []
                                                   if isinstance(k, dict) and k.get("use", "sig") == "sig"]})
        except (jose_errors.JoseError, ValueError, TypeError, KeyError):
            raise ProviderUnavailable(f"The identity provider's signing keys at {url} could not be read.") from None
        with self._lock:
            self._sets[url] = _Cached(keys, now)
        return keys

    def clear(self) -> None:
        with self._lock:
            self._sets.clear()


KEYS = KeyCache()


def _has_kid(keys: KeySet, kid: str) -> bool:
    return any(key.kid == kid for key in keys.keys)


def _header(token: str) -> dict:
    try:
        segment = token.split(".")[0]
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, UnicodeError):
        header = None
    if not isinstance(header, dict):
        raise SignInRefused("The identity provider's ID token is not a signed JSON Web Token.")
    return header


def verify(token: Any, *, jwks_uri: str, issuer: str | tuple[str, ...], audience: str, nonce: str | None,
           allowed_cidrs: str = "", verified_email: bool = True) -> dict:
    """The claims of a valid ID token (see the module docstring); raises SignInRefused or
    ProviderUnavailable. `issuer` may be several spellings of one issuer (Google signs both
    "https://accounts.google.com" and "accounts.google.com"); `nonce` None means the sign-in sent none
    (Google's One Tap tokens)."""
    if not isinstance(token, str) or token.count(".") != 2:
        raise SignInRefused("The identity provider sent no ID token, or one that is not a signed JSON Web Token.")
    header = _header(token)
    alg = header.get("alg")
    if not isinstance(alg, str) or alg.lower() == "none":
        raise SignInRefused("The ID token is not signed (`alg: none` or no `alg`) and is refused.")
    if alg not in ALGORITHMS:
        raise SignInRefused(f"The ID token is signed with {alg}; only the provider's public-key algorithms "
                            f"({', '.join(ALGORITHMS[:3])}, ...) are accepted.")
    kid = header.get("kid") if isinstance(header.get("kid"), str) else None
    keys = KEYS.keys(jwks_uri, allowed_cidrs, kid=kid)
    try:
        claims = jwt.decode(token, keys, algorithms=[alg]).claims
    except (jose_errors.BadSignatureError, jose_errors.InvalidKeyIdError, jose_errors.MissingKeyError):
        raise SignInRefused("The ID token's signature does not match the identity provider's keys.") from None
    except (jose_errors.JoseError, ValueError, TypeError):
        raise SignInRefused("The ID token could not be decoded.") from None
    if not isinstance(claims, dict):
        raise SignInRefused("The ID token's payload must be a JSON object.")
    check_claims(claims, issuer=issuer, audience=audience, nonce=nonce)
    if verified_email:
        check_email_verified(claims)
    return claims


def check_claims(claims: dict, *, issuer: str | tuple[str, ...], audience: str, nonce: str | None) -> None:
    """Issuer, audience (and `azp`), expiry, issue time and nonce of verified claims."""
    issuers = (issuer,) if isinstance(issuer, str) else tuple(issuer)
    if claims.get("iss") not in issuers:
        raise SignInRefused(f"The ID token was issued by {claims.get('iss')!r}, not by the configured issuer "
                            f"{' or '.join(map(repr, issuers))}.")
    aud = claims.get("aud")
    audiences = [aud] if isinstance(aud, str) else aud if isinstance(aud, list) else []
    if audience not in audiences:
        raise SignInRefused("The ID token was issued for another application (its audience is not this "
                            "client id).")
    if len(audiences) > 1 and claims.get("azp") not in (None, audience):
        raise SignInRefused("The ID token was issued for another application (`azp`).")
    now = clock()
    exp, iat = claims.get("exp"), claims.get("iat")
    if not isinstance(exp, (int, float)) or isinstance(exp, bool):
        raise SignInRefused("The ID token has no expiry time (`exp`).")
    if exp + LEEWAY_SECONDS < now:
        raise SignInRefused("The ID token has expired: sign in again.")
    if not isinstance(iat, (int, float)) or isinstance(iat, bool):
        raise SignInRefused("The ID token has no issue time (`iat`).")
    if iat - LEEWAY_SECONDS > now:
        raise SignInRefused("The ID token was issued in the future: check the clocks of this server and the "
                            "identity provider.")
    if nonce is not None and claims.get("nonce") != nonce:
        raise SignInRefused("The ID token's nonce does not match this sign-in: start the sign-in again.")


def check_email_verified(claims: dict) -> None:
    """`email_verified`, when the provider sends it, must be true (a boolean, or the string some send)."""
    if "email_verified" in claims and claims["email_verified"] not in (True, "true"):
        raise SignInRefused("The identity provider has not verified this e-mail address: verify it there, "
                            "then sign in again.")
