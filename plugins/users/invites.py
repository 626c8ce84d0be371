"""Invitation e-mails: a link with a fresh single-use token that lets the new user choose a password.

Sent through core.outbound.mail with the SMTP settings. Without them the caller is told with a 400; an
invitation is never reported as sent when it was not.
"""
from __future__ import annotations

import logging

from sqlalchemy.orm import Session

from core.appdb.models import User
from core.assembly.settings import SettingsRegistry
from core.http.errors import Invalid
from core.identity import users
from core.outbound import mail

log = logging.getLogger("tessera.users")

NOT_CONFIGURED = "E-mail is not configured: set the SMTP settings (email-smtp-host, email-from-address) first."


def _message(registry: SettingsRegistry, session: Session, user: User, inviter: User, base_url: str, token: str):
    site_name = registry.get(session, "site-name") if "site-name" in registry.definitions else "Tessera"
    site_url = (registry.get(session, "site-url") if "site-url" in registry.definitions else None) or base_url
    link = f"{site_url.rstrip('/')}/auth/reset_password/{token}#new"
    subject = f"You're invited to join {site_name}"
    text = (f"{inviter.common_name} invited you to join {site_name}.\n\n"
            f"Choose your password to get started (the link works for 48 hours):\n{link}\n")
    return subject, text


def send_invite(session: Session, registry: SettingsRegistry, inviter: User, user: User, base_url: str) -> None:
    """Issue a new token and e-mail the invitation; raise 400 when e-mail is off or sending fails.
    The new token is kept only when the message went out."""
    if not mail.is_configured(registry, session):
        raise Invalid(NOT_CONFIGURED)
    token = users.issue_reset_token(session, user)
    subject, text = _message(registry, session, user, inviter, base_url, token)
    try:
        mail.send(registry, session, to=[user.email], subject=subject, text=text)
    except mail.MailError as exc:
        session.rollback()
        raise Invalid(f"The invitation could not be sent: {exc}") from None
    session.commit()


def invite_if_configured(session: Session, registry: SettingsRegistry, inviter: User, user: User, base_url: str) -> bool:
    """After creating a user: invite them when e-mail is set up; a failure is logged, the user stays."""
    if not mail.is_configured(registry, session):
        return False
    try:
        send_invite(session, registry, inviter, user, base_url)
        return True
    except Invalid as exc:
        log.warning("invitation to user %s not sent: %s", user.id, exc.message)
        return False
