"""Signed embedding tokens: verifying the JSON Web Token an /api/embed or /api/preview-embed URL carries.

The rules are compat/security.md section 3 and Metabase's embedding/jwt.clj: HS256 only, keyed with the
`embedding-secret-key` text itself (Metabase signs with the string, not its hex-decoded bytes); a token
whose header has no `alg` or `alg: none` is refused before any verification; `exp`, `nbf` and `iat` are
checked with 60 s of leeway; a missing `exp` is accepted (Metabase) unless the deployment requires it.
Every failure is a 400 whose message says what was wrong, never a 500.

Verification uses joserfc, the JOSE library authlib's own `authlib.jose` is deprecated in favour of (and
which authlib itself depends on): its decode refuses any algorithm outside the allow-list, and its
claims registry validates the times.
"""
from __future__ import annotations

import base64
import binascii
import time
from typing import Any

from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import OctKey

from core.http import jsontext
from core.http.errors import Invalid

ALGORITHM = "HS256"
LEEWAY_SECONDS = 60


class TokenError(Invalid):
    """A 400 about the token itself (signature, algorithm, times, shape)."""


def _b64_json(segment: str) -> Any:
    padded = segment + "=" * (-len(segment) % 4)
    return jsontext.loads(base64.urlsafe_b64decode(padded.encode("ascii")))


def _header(token: str) -> dict:
    """The token's header, read without trusting it, so `alg` can be refused before verification."""
    parts = token.split(".")
    if len(parts) != 3:
        raise TokenError("The embedding token is not a signed JSON Web Token (header.payload.signature).")
    try:
        header = _b64_json(parts[0])
    except (binascii.Error, UnicodeError, ValueError, jsontext.JsonTextError):
        raise TokenError("The embedding token's header is not base64url-encoded JSON.") from None
    if not isinstance(header, dict):
        raise TokenError("The embedding token's header must be a JSON object.")
    return header


def check_algorithm(token: str) -> None:
    """Refuse a missing `alg`, `alg: none` and any algorithm but HS256, whatever the signature."""
    alg = _header(token).get("alg")
    if alg is None:
        raise TokenError("JWT is missing `alg`.")
    if not isinstance(alg, str):
        raise TokenError("JWT `alg` must be a string.")
    if alg.lower() == "none":
        raise TokenError("JWT `alg` cannot be `none`.")
    if alg != ALGORITHM:
        raise TokenError(f"JWT `alg` must be {ALGORITHM}; {alg[:20]} is not accepted.")


def unsign(token: str, secret: str | None, *, require_exp: bool = False, now: float | None = None) -> dict:
    """The verified claims of `token` signed with `secret` (the embedding-secret-key text).

    Raises a 400 (core.http.errors.Invalid) for an unset secret, a refused algorithm, a bad signature,
    an expired or not-yet-valid token, a missing `exp` when `require_exp`, or a payload that is not a
    JSON object.
    """
    if not isinstance(token, str) or not token:
        raise TokenError("The embedding token is empty.")
    check_algorithm(token)
    if not secret:
        raise Invalid("The embedding secret key has not been set.")
    try:
        decoded = jwt.decode(token, OctKey.import_key(secret), algorithms=[ALGORITHM])
    except jose_errors.BadSignatureError:
        raise TokenError("Message seems corrupt or manipulated: the token's signature does not match.") from None
    except jose_errors.UnsupportedAlgorithmError:
        raise TokenError(f"JWT `alg` must be {ALGORITHM}.") from None
    except jose_errors.DecodeError:
        raise TokenError("The embedding token could not be decoded: its payload is not JSON.") from None
    except jose_errors.JoseError as exc:
        # e.g. a `crit` header naming an extension this server does not implement
        raise TokenError(f"The embedding token was refused: {exc.description or exc.error}.") from None
    except (ValueError, TypeError):
        raise TokenError("The embedding token could not be decoded.") from None
    claims = decoded.claims
    if not isinstance(claims, dict):
        raise TokenError("The embedding token's payload must be a JSON object.")
    _check_times(claims, require_exp, time.time() if now is None else now)
    return claims


def _check_times(claims: dict, require_exp: bool, now: float) -> None:
    """exp, nbf and iat with the leeway; other registered claims (iss, aud...) are the embedder's business,
    as in Metabase, so only the times are given to the registry."""
    options = {"exp": {"essential": True}} if require_exp else {}
    registry = jwt.JWTClaimsRegistry(now=int(now), leeway=LEEWAY_SECONDS, **options)
    try:
        registry.validate({key: claims[key] for key in ("exp", "nbf", "iat") if key in claims})
    except jose_errors.ExpiredTokenError:
        raise TokenError("Token is expired.") from None
    except jose_errors.MissingClaimError:
        raise TokenError("Token is missing its expiry (`exp`), which this server requires.") from None
    except jose_errors.InvalidClaimError as exc:
        claim = getattr(exc, "claim", None)
        if claim in ("exp", "nbf", "iat") and "NumericDate" in str(exc.description):
            raise TokenError(f"Token claim `{claim}` must be a number of seconds since the epoch.") from None
        if claim == "nbf":
            raise TokenError("Token is not yet valid (`nbf` is in the future).") from None
        raise TokenError("Token was issued in the future (`iat`).") from None


def keypath(path: tuple[str, ...]) -> str:
    """A key path written as Metabase's messages write it: [:resource :question]."""
    return "[" + " ".join(":" + key for key in path) + "]"


def get_in(claims: dict, *path: str) -> Any:
    """The value at `path` in the claims; a 400 "Token is missing value for keypath [...]" when it is
    absent or null (an empty map is a value, as in Metabase)."""
    node: Any = claims
    for key in path:
        node = node.get(key) if isinstance(node, dict) else None
        if node is None or node is False:
            raise Invalid(f"Token is missing value for keypath {keypath(path)}")
    return node


def token_params(claims: dict) -> dict:
    """The token's `params`: required, and a map of slug -> value."""
    params = get_in(claims, "params")
    if not isinstance(params, dict):
        raise Invalid(f"Token value for keypath {keypath(('params',))} must be a map.")
    return params
