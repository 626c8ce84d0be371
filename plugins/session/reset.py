"""Password reset: asking for a reset link by e-mail, checking a token, setting the password with it.

Tokens come from core.identity.users (single use, 48 hours, stored hashed); invitations use the same tokens.
forgot_password answers the same whether or not the address belongs to anyone, so it reveals no
accounts; it refuses only when the instance has no e-mail, which says nothing about any user.
"""
from __future__ import annotations

import logging

from sqlalchemy import func, select
from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly.settings import SettingsRegistry
from core.http import auth
from core.http.errors import Invalid
from core.identity import users
from core.outbound import mail

log = logging.getLogger("tessera.session")

INVALID_TOKEN = "Invalid reset token"


def forgot_password(session: Session, registry: SettingsRegistry, email: str, base_url: str) -> None:
    auth.check_password_allowed(session, email)
    if not mail.is_configured(registry, session):
        raise Invalid("E-mail is not configured on this instance: ask an administrator to reset your password.")
    user = session.scalar(select(User).where(func.lower(User.email) == email.strip().lower(), User.type == "personal"))
    if user is None or not user.is_active or user.sso_source:
        return
    token = users.issue_reset_token(session, user)
    site_url = (registry.get(session, "site-url") if "site-url" in registry.definitions else None) or base_url
    link = f"{site_url.rstrip('/')}/auth/reset_password/{token}"
    try:
        mail.send(registry, session, to=[user.email], subject="Password reset request",
                  text=f"Someone asked to reset the password of your account.\n\nTo choose a new password, "
                       f"open this link within 48 hours:\n{link}\n\nIf it was not you, ignore this message.\n")
    except mail.MailError as exc:
        session.rollback()
        log.warning("password reset e-mail to user %s not sent: %s", user.id, exc)
        return
    session.commit()


def token_valid(session: Session, token: str) -> bool:
    return users.user_for_reset_token(session, token) is not None


def reset_password(session: Session, token: str, password: str) -> str:
    """Set the password with a valid token; every other session ends; returns a new session token."""
    user = users.user_for_reset_token(session, token)
    if user is None:
        raise Invalid({"password": INVALID_TOKEN})
    auth.check_password_allowed(session, user.email)
    auth.check_password_rules(password, "password")
    user.password_hash = auth.tessera().hasher.hash(password)
    user.reset_token = None
    user.reset_triggered = None
    auth.end_all_sessions(session, user.id)
    new_token = auth.create_session(session, user)
    session.commit()
    return new_token
