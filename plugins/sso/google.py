"""Google Sign-In as Metabase's open edition: POST /api/session/google_auth {token} and its settings.

The token is a Google ID token, verified here (plugins/sso/jwks.py: RS256 against Google's published
keys, issuer, `aud` = `google-auth-client-id`, expiry) rather than sent to Google's tokeninfo endpoint
as Metabase does: no request carries the token out, and the keys are fetched once an hour. The keys'
URL and the accepted issuers are the operator's (TESSERA_GOOGLE_JWKS_URL, TESSERA_GOOGLE_ISSUERS), not
settings an administrator could point elsewhere through the API.

`email_verified` must be true. A known e-mail address signs in (names refreshed); an unknown one gets an
account (sso_source "google") only when its domain is one of `google-auth-auto-create-accounts-domain`
(a comma-separated list, as Metabase's paid edition allows), otherwise Metabase's 401 "You'll need an
administrator to create a ... account before you can use Google to log in."
"""
from __future__ import annotations

import hmac
import re
from typing import Any

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly import events
from core.assembly.records import SettingDef
from core.assembly.settings import SettingsRegistry
from core.http import auth, throttle
from core.http.errors import Invalid

from . import jwks
from .accounts import Identity, Policy, SignInRefused, sign_in

SOURCE = "google"
CLIENT_ID_SUFFIX = ".apps.googleusercontent.com"
KEYS_URL = "https://www.googleapis.com/oauth2/v3/certs"
ISSUERS = "https://accounts.google.com,accounts.google.com"
# The operator's network: the keys' URL comes from configuration, never from a request.
ANY_ADDRESS = ("0.0.0.0/0", "::/0")
KEYS = ("google-auth-client-id", "google-auth-enabled", "google-auth-auto-create-accounts-domain")
DISABLED = "Google Auth is disabled."
NO_ACCOUNT = ("You'll need an administrator to create a Tessera account before you can use Google to log in.")
# Claims that are the token's own or already part of the account: not copied into login_attributes.
NOT_ATTRIBUTES = frozenset({"iss", "sub", "aud", "exp", "nbf", "iat", "jti", "azp", "at_hash", "c_hash", "nonce",
                            "auth_time", "email", "email_verified", "given_name", "family_name", "name"})
DOMAIN = re.compile(r"^(?=.{1,253}$)([a-z0-9]([a-z0-9-]{0,61}[a-z0-9])?\.)+[a-z]{2,63}$")


def valid_client_id(value: Any) -> str | None:
    text = str(value).strip()
    if not text:
        return None  # cleared, as Metabase's setter clears a blank one
    if not text.endswith(CLIENT_ID_SUFFIX) or len(text) == len(CLIENT_ID_SUFFIX):
        raise Invalid({"value": f'Invalid Google Sign-In Client ID: must end with "{CLIENT_ID_SUFFIX}"'})
    return text


def valid_domains(value: Any) -> str | None:
    if not str(value).strip():
        return None
    domains = [d.strip().lower() for d in str(value).split(",")]
    bad = [d for d in domains if not DOMAIN.match(d)]
    if bad:
        raise Invalid({"value": f"Invalid domain: {bad[0] or '(empty)'}. Give domains such as example.com, "
                                f"separated by commas."})
    return ",".join(dict.fromkeys(domains))


def _registry() -> SettingsRegistry:
    from flask import current_app

    return current_app.extensions["tessera"].settings


def _client_id(session: Session) -> str | None:
    return _registry().get(session, "google-auth-client-id")


def enabled(session: Session, value: Any) -> bool:
    """Metabase's getter: the stored switch, or (never set) whether a client id is; never without one."""
    client_id = _client_id(session)
    return bool(client_id) and (value is None or bool(value))


def _check_enabling(session: Session, registry: SettingsRegistry, value: Any) -> None:
    if value and not registry.get(session, "google-auth-client-id"):
        raise Invalid({"value": "Google Sign-In is not configured. Please set the Client ID first."})


SETTINGS = [
    SettingDef("google-auth-client-id", visibility="public", validate=valid_client_id,
               description="Client ID for Google Sign-In."),
    SettingDef("google-auth-enabled", type="boolean", visibility="public", effective=enabled,
               on_change=_check_enabling, description="Is Google Sign-In currently enabled?"),
    SettingDef("google-auth-configured", type="boolean", env=False,
               getter=lambda session: bool(_client_id(session)), description="Is Google Sign-In configured?"),
    SettingDef("google-auth-auto-create-accounts-domain", validate=valid_domains,
               description="When set, people whose Google e-mail address is in one of these domains "
                           "(comma-separated) get an account at their first sign-in."),
]


def save_settings(session: Session, registry: SettingsRegistry, changes: dict) -> None:
    """PUT /api/google/settings: the three settings in one transaction, as Metabase's (a key left out is
    cleared; no client id turns Google Sign-In off). The caller commits."""
    client_id = changes.get("google-auth-client-id")
    registry.set(session, "google-auth-client-id", client_id if client_id and str(client_id).strip() else None)
    domains = changes.get("google-auth-auto-create-accounts-domain")
    registry.set(session, "google-auth-auto-create-accounts-domain",
                 domains if domains and str(domains).strip() else None)
    # As Metabase's: the switch is set last (it needs the client id) and a missing one means off.
    registry.set(session, "google-auth-enabled", bool(changes.get("google-auth-enabled")))


def settings_for_sign_in(session: Session, registry: SettingsRegistry) -> dict:
    values = registry.get_many(session, KEYS)
    if not values["google-auth-client-id"] or not values["google-auth-enabled"]:
        raise Invalid(DISABLED)
    return values


def verify(token: str, config: dict, client_id: str) -> dict:
    """The claims of a Google ID token for this client; raises SignInRefused with Metabase's words."""
    try:
        claims = jwks.verify_id_token(token, jwks_url=config.get("TESSERA_GOOGLE_JWKS_URL") or KEYS_URL,
                                      issuers=[i.strip() for i in str(config.get("TESSERA_GOOGLE_ISSUERS") or ISSUERS)
                                               .split(",") if i.strip()],
                                      audience=client_id, allowed_cidrs=ANY_ADDRESS)
    except jwks.TokenRefused as exc:
        if exc.reason == "audience":
            raise SignInRefused("Google Sign-In token appears to be incorrect. Double check that it matches in "
                                "Google and Tessera.") from None
        raise SignInRefused(f"Invalid Google Sign-In token. {exc.message}") from None
    if claims.get("email_verified") not in (True, "true"):
        raise SignInRefused("Email is not verified.")
    return claims


def domain_allowed(email: str, domains: str | None) -> bool:
    domain = email.rsplit("@", 1)[-1].strip().lower()
    return bool(domains) and domain in {d.strip().lower() for d in domains.split(",")}


def identity_and_policy(session: Session, claims: dict, settings: dict) -> tuple[Identity, Policy]:
    email = claims.get("email")
    if not isinstance(email, str) or "@" not in email:
        raise SignInRefused("The Google Sign-In token has no e-mail address.")
    create = domain_allowed(email, settings["google-auth-auto-create-accounts-domain"])
    if not create and session.scalar(select(User.id).where(func.lower(User.email) == email.strip().lower())) is None:
        raise SignInRefused(NO_ACCOUNT)
    identity = Identity(source=SOURCE, email=email, first_name=_text(claims.get("given_name")),
                        last_name=_text(claims.get("family_name")),
                        attributes={k: v for k, v in claims.items() if k not in NOT_ATTRIBUTES})
    return identity, Policy(create_accounts=create, group_sync=False, group_mappings={})


def _text(value: Any) -> str | None:
    return value if isinstance(value, str) and value.strip() else None


def sign_in_with_token(session: Session, state, token: str, ip: str | None, nonce: str | None = None) -> str:
    """POST /api/session/google_auth (and the login page's redirect, which also checks the `nonce` it
    sent): a new session token for the token's person. Refusals count against the IP in the login
    throttle, as a wrong password does; the session is made as a password login's."""
    settings = settings_for_sign_in(session, state.settings)
    if state.config["TESSERA_DISABLE_SESSION_THROTTLE"] or not ip:
        user_id, session_token = _signed_in(session, state, settings, token, nonce)
    else:
        with throttle.attempt(state.db.engine, [(state.throttlers["ip"], ip)]):
            user_id, session_token = _signed_in(session, state, settings, token, nonce)
    events.emit("user-login", user_id, None, method=SOURCE)
    return session_token


def _signed_in(session: Session, state, settings: dict, token: str, nonce: str | None) -> tuple[int, str]:
    try:
        claims = verify(token, state.config, settings["google-auth-client-id"])
        if nonce is not None and not hmac.compare_digest(str(claims.get("nonce") or ""), nonce):
            raise SignInRefused("The Google sign-in was not started here (wrong nonce): sign in again.")
        identity, policy = identity_and_policy(session, claims, settings)
        user = sign_in(session, identity, policy)
        session_token = auth.create_session(session, user)
        user_id = user.id
        session.commit()
    except Exception:
        session.rollback()
        raise
    return user_id, session_token
