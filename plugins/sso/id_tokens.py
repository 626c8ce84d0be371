"""The OpenID Connect checks of an ID token, on top of jwks.py's `verify_id_token` (the one ID-token
verifier of this plugin: `alg` first, RS256 only, the signature against the provider's JWKS fetched
through core.outbound.http and cached, `iss`, `aud`, `exp`).

`verify` adds what a code-flow sign-in needs: with several audiences, an `azp` naming this client; an
`iat`; the `nonce` this sign-in sent; and, with `verified_email=True`, an `email_verified` claim that is
present and not true refused. Every refusal is a SignInRefused saying why; keys that cannot be fetched
are a ProviderUnavailable (502). `get_json` reads the provider's other documents (discovery) through the
same guard. The clock (`clock`) is injectable so tests move time instead of waiting.
"""
from __future__ import annotations

import json
import time
from typing import Any, Callable

from core.http.errors import ApiError
from core.outbound import http as outbound

from . import jwks
from .accounts import SignInRefused

LEEWAY_SECONDS = jwks.LEEWAY_SECONDS
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
    """A JSON object from the provider (its discovery document) through the outbound guard."""
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


def verify(token: Any, *, jwks_uri: str, issuer: str, audience: str, nonce: str | None, allowed_cidrs: str = "",
           verified_email: bool = True) -> dict:
    """The claims of a valid ID token (see the module docstring); raises SignInRefused or
    ProviderUnavailable. `nonce` None: the sign-in sent none."""
    try:
        claims = jwks.verify_id_token(token, jwks_url=jwks_uri, issuers=[issuer], audience=audience,
                                      allowed_cidrs=allowed_cidrs, now=clock())
    except jwks.TokenRefused as refused:
        if refused.reason == "keys":
            raise ProviderUnavailable(refused.message) from None
        raise SignInRefused(refused.message) from None
    aud = claims.get("aud")
    if isinstance(aud, list) and len(aud) > 1 and claims.get("azp") not in (None, audience):
        raise SignInRefused("The ID token was issued for another application (`azp`).")
    if not isinstance(claims.get("iat"), (int, float)) or isinstance(claims.get("iat"), bool):
        raise SignInRefused("The ID token has no issue time (`iat`).")
    if nonce is not None and claims.get("nonce") != nonce:
        raise SignInRefused("The ID token's nonce does not match this sign-in: start the sign-in again.")
    if verified_email:
        check_email_verified(claims)
    return claims


def check_email_verified(claims: dict) -> None:
    """`email_verified`, when the provider sends it, must be true (a boolean, or the string some send)."""
    if "email_verified" in claims and claims["email_verified"] not in (True, "true"):
        raise SignInRefused("The identity provider has not verified this e-mail address: verify it there, "
                            "then sign in again.")
