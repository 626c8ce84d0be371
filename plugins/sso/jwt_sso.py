"""JWT single sign-on as Metabase's: the identity provider signs the person's claims with the shared
secret (HS256) and sends the browser to /auth/sso?jwt=...&return_to=...

`verify` checks the token: a missing or other `alg` (`none` above all) is refused before any signature
check, `exp` is checked, `iat` is required and may be at most MAX_AGE_SECONDS old, and each token is
used once: its `jti` (or the token itself) is remembered in the app DB until it could no longer be
accepted anyway, so a replay is refused on every worker and instance.
"""
from __future__ import annotations

import base64
import datetime as dt
import hashlib
import json
import time
from typing import Any

from joserfc import errors as jose_errors
from joserfc import jwt
from joserfc.jwk import OctKey
from sqlalchemy import delete, insert
from sqlalchemy.engine import Engine
from sqlalchemy.exc import IntegrityError

from .accounts import Identity, Policy, SignInRefused
from .models import UsedSsoToken

ALGORITHM = "HS256"
MAX_AGE_SECONDS = 180  # Metabase's JWT max age: a link is followed at once or not at all
LEEWAY_SECONDS = 30
REGISTERED_CLAIMS = frozenset({"iss", "sub", "aud", "exp", "nbf", "iat", "jti"})
SOURCE = "jwt"


def _header_alg(token: str) -> Any:
    try:
        segment = token.split(".")[0]
        header = json.loads(base64.urlsafe_b64decode(segment + "=" * (-len(segment) % 4)))
    except (ValueError, UnicodeError):
        raise SignInRefused("The sign-in token is not a signed JSON Web Token.") from None
    if not isinstance(header, dict):
        raise SignInRefused("The sign-in token's header must be a JSON object.")
    return header.get("alg")


def verify(token: str, secret: str | None, now: float | None = None) -> dict:
    """The verified claims of `token`; raises SignInRefused saying what was wrong."""
    if not secret:
        raise SignInRefused("JWT single sign-on has no shared secret: ask an administrator to set it.")
    if not token or token.count(".") != 2:
        raise SignInRefused("The sign-in token is not a signed JSON Web Token.")
    alg = _header_alg(token)
    if not isinstance(alg, str) or alg.lower() == "none":
        raise SignInRefused("The sign-in token is not signed (`alg: none` or no `alg`) and is refused.")
    if alg != ALGORITHM:
        raise SignInRefused(f"The sign-in token must be signed with {ALGORITHM}.")
    try:
        claims = jwt.decode(token, OctKey.import_key(secret), algorithms=[ALGORITHM]).claims
    except jose_errors.BadSignatureError:
        raise SignInRefused("The sign-in token's signature does not match the shared secret.") from None
    except (jose_errors.JoseError, ValueError, TypeError):
        raise SignInRefused("The sign-in token could not be decoded.") from None
    if not isinstance(claims, dict):
        raise SignInRefused("The sign-in token's payload must be a JSON object.")
    now = time.time() if now is None else now
    registry = jwt.JWTClaimsRegistry(now=int(now), leeway=LEEWAY_SECONDS, iat={"essential": True})
    try:
        registry.validate(claims)
    except jose_errors.ExpiredTokenError:
        raise SignInRefused("The sign-in token has expired.") from None
    except jose_errors.MissingClaimError:
        raise SignInRefused("The sign-in token has no issue time (`iat`).") from None
    except jose_errors.InvalidClaimError as exc:
        raise SignInRefused(f"The sign-in token's `{getattr(exc, 'claim', '?')}` claim is not valid.") from None
    if not isinstance(claims["iat"], (int, float)) or now - claims["iat"] > MAX_AGE_SECONDS + LEEWAY_SECONDS:
        raise SignInRefused("The sign-in token is too old: sign in again at the identity provider.")
    return claims


def _forget_after(claims: dict) -> float:
    """When the token could no longer pass `verify` anyway, so its record may go."""
    until = claims["iat"] + MAX_AGE_SECONDS
    if isinstance(claims.get("exp"), (int, float)):
        until = min(until, claims["exp"])
    return until + LEEWAY_SECONDS


def consume(engine: Engine, token: str, claims: dict, now: float | None = None) -> None:
    """Record the token as used, in its own committed transaction; refuse it when it already was."""
    jti = claims.get("jti")
    digest = hashlib.sha256((f"jti:{jti}" if isinstance(jti, str) and jti else token).encode()).hexdigest()
    now_dt = dt.datetime.fromtimestamp(time.time() if now is None else now, dt.timezone.utc)
    expires = dt.datetime.fromtimestamp(_forget_after(claims), dt.timezone.utc)
    try:
        with engine.begin() as conn:
            conn.execute(delete(UsedSsoToken).where(UsedSsoToken.expires_at < now_dt))
            conn.execute(insert(UsedSsoToken).values(digest=digest, expires_at=expires))
    except IntegrityError:
        raise SignInRefused("This sign-in token has already been used: sign in again at the identity "
                            "provider.") from None


def identity(claims: dict, settings: dict) -> Identity:
    """The person the claims describe, named by the `jwt-attribute-*` settings."""
    names = {key: settings[f"jwt-attribute-{key}"] for key in ("email", "firstname", "lastname", "groups")}
    email = claims.get(names["email"])
    if not isinstance(email, str):
        raise SignInRefused(f"The sign-in token has no e-mail address in its `{names['email']}` claim.")
    groups = claims.get(names["groups"])
    if groups is not None:
        groups = [groups] if isinstance(groups, str) else groups
        if not isinstance(groups, list) or not all(isinstance(g, str) for g in groups):
            raise SignInRefused(f"The sign-in token's `{names['groups']}` claim must be a list of group names.")
    used = set(names.values()) | REGISTERED_CLAIMS
    return Identity(source=SOURCE, email=email, first_name=_text(claims.get(names["firstname"])),
                    last_name=_text(claims.get(names["lastname"])), groups=groups,
                    attributes={k: v for k, v in claims.items() if k not in used})


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def policy(settings: dict) -> Policy:
    return Policy(create_accounts=bool(settings["jwt-user-provisioning-enabled"]),
                  group_sync=bool(settings["jwt-group-sync"]),
                  group_mappings=settings["jwt-group-mappings"] or {})
