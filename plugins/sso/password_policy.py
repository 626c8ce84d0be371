"""Turning password login off (Metabase's `enable-password-login`), with a break-glass administrator.

As Metabase's: the setting is effective only while a single sign-on method is enabled; with none, its
value is true whatever is stored, so nobody is locked out by a setting without another way in. While it
is false, a local account's password is refused at POST /api/session, and a password reset is refused
(forgot_password and reset_password), with Metabase's 400 "Password login is disabled for this
instance." LDAP logins go on: they are a sign-in method, not a local password.

The break-glass account (the address in TESSERA_BREAK_GLASS_ADMIN, an active administrator) keeps its
password, so an instance whose identity provider is down stays reachable. The refusal comes before any
password check (the core's `password_refusal` hook), so it says nothing about the password; it does say
which address is the break-glass one, which is why that account's password must be strong.
"""
from __future__ import annotations

from typing import Any

from flask import current_app
from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly.records import PasswordRefusal

SETTING = "enable-password-login"
BREAK_GLASS = "TESSERA_BREAK_GLASS_ADMIN"
REFUSED = "Password login is disabled for this instance."
# The switches of the sign-in methods of this plugin: password login may be off while one is on.
# (Metabase's sso-enabled?: Google, LDAP, and its paid JWT/SAML/OIDC.) OpenID Connect counts while a
# provider is configured (its list of sign-in buttons is not empty).
SSO_SWITCHES = ("google-auth-enabled", "ldap-enabled", "jwt-enabled", "oidc-sign-in-providers")


def _tessera():
    return current_app.extensions["tessera"]


def sso_enabled(session: Session) -> bool:
    settings = _tessera().settings
    return any(bool(settings.get_or(session, key, False)) for key in SSO_SWITCHES)


def effective(session: Session, value: Any) -> bool:
    """The setting's value as everyone reads it: the stored one only while a sign-on method is on."""
    return True if value is None or value or not sso_enabled(session) else False


def break_glass_email() -> str | None:
    value = str(_tessera().config.get(BREAK_GLASS) or "").strip().lower()
    return value or None


def is_break_glass(session: Session, email: str) -> bool:
    """Whether `email` is the configured break-glass address of an active administrator."""
    configured = break_glass_email()
    if configured is None or email.strip().lower() != configured:
        return False
    user = session.scalar(select(User).where(func.lower(User.email) == configured, User.type == "personal"))
    return user is not None and user.is_active and user.is_superuser


def refusal(session: Session, email: str) -> PasswordRefusal | None:
    if _tessera().settings.get(session, SETTING) or is_break_glass(session, email):
        return None
    return PasswordRefusal(REFUSED)
