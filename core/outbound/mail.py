"""Sending e-mail over SMTP with the email-* settings (declared by plugins.email).

Used for invitations and subscriptions (HTML with inline images, referenced as cid:<id>, and files). Without a configured host nothing is sent and
the caller is told (MailNotConfigured), so that no feature reports a success it did not achieve. One
attempt per call: a MailError says whether it is transient, and a caller that can wait retries
(plugins.subscriptions.retry for scheduled sends); a request never waits on a back-off.
"""
from __future__ import annotations

import smtplib
import ssl
from dataclasses import dataclass
from email.message import EmailMessage
from email.utils import formataddr

from sqlalchemy.orm import Session

from core.assembly.settings import SettingsRegistry

SMTP_TIMEOUT_SECONDS = 15


class MailError(Exception):
    """The message could not be handed to the SMTP server. `transient`: the server could not be reached or
    answered 4xx ("try again later"), so a later attempt may succeed; not a refusal (5xx, bad credentials,
    a certificate) that a retry would meet again."""

    def __init__(self, message: str, transient: bool = False):
        super().__init__(message)
        self.transient = transient


class MailNotConfigured(MailError):
    """No SMTP host (or sender address) is set."""


@dataclass(frozen=True)
class Part:
    """A file sent with a message: an inline image (`name` is its Content-ID, the HTML shows it as
    `cid:<name>`) or an attachment (`name` is its file name)."""

    name: str
    data: bytes
    content_type: str


def _get(registry: SettingsRegistry, session: Session, key: str):
    if key not in registry.definitions:
        return None
    return registry.get(session, key)


def is_configured(registry: SettingsRegistry, session: Session) -> bool:
    return bool(_get(registry, session, "email-smtp-host") and _get(registry, session, "email-from-address"))


def send(registry: SettingsRegistry, session: Session, *, to: list[str], subject: str, text: str,
         html: str | None = None, inline: list[Part] = (), attachments: list[Part] = ()) -> None:
    """Send one message to `to`, or raise MailNotConfigured / MailError. `inline` images go with the
    HTML part (multipart/related), `attachments` after it."""
    if not is_configured(registry, session):
        raise MailNotConfigured("E-mail is not configured: set the SMTP settings first.")
    host = _get(registry, session, "email-smtp-host")
    security = (_get(registry, session, "email-smtp-security") or "none").lower()
    port = _get(registry, session, "email-smtp-port") or _default_port(security)
    username = _get(registry, session, "email-smtp-username")
    password = _get(registry, session, "email-smtp-password")
    message = EmailMessage()
    message["Subject"] = subject
    message["From"] = formataddr((_get(registry, session, "email-from-name") or "", _get(registry, session, "email-from-address")))
    message["To"] = ", ".join(to)
    reply_to = _get(registry, session, "email-reply-to")
    if reply_to:
        message["Reply-To"] = ", ".join(reply_to) if isinstance(reply_to, list) else str(reply_to)
    message.set_content(text)
    if html:
        message.add_alternative(html, subtype="html")
        html_part = message.get_payload()[-1]
        for part in inline:
            maintype, subtype = part.content_type.split("/", 1)
            html_part.add_related(part.data, maintype=maintype, subtype=subtype, cid=f"<{part.name}>",
                                  disposition="inline", filename=part.name)
    for part in attachments:
        maintype, subtype = part.content_type.split("/", 1)
        message.add_attachment(part.data, maintype=maintype, subtype=subtype, filename=part.name)
    _session(host, port, security, username, password, lambda client: client.send_message(message))


def check(values: dict) -> None:
    """Connect and log in with these email-* values (nothing is sent): MailError when that fails. The caller
    passes the values it is about to store, so a server that cannot be reached is refused before saving."""
    if not values.get("email-smtp-host"):
        raise MailNotConfigured("E-mail is not configured: set the SMTP settings first.")
    security = (values.get("email-smtp-security") or "none").lower()
    port = values.get("email-smtp-port") or _default_port(security)
    _session(values["email-smtp-host"], port, security, values.get("email-smtp-username"),
             values.get("email-smtp-password"), lambda client: client.noop())


def _default_port(security: str) -> int:
    return 465 if security == "ssl" else 587 if security in ("tls", "starttls") else 25


def _session(host, port, security: str, username, password, work) -> None:
    """One SMTP connection (SSL, STARTTLS or plain), logged in when a user name is set, doing `work`."""
    try:
        if security == "ssl":
            client = smtplib.SMTP_SSL(host, int(port), timeout=SMTP_TIMEOUT_SECONDS, context=ssl.create_default_context())
        else:
            client = smtplib.SMTP(host, int(port), timeout=SMTP_TIMEOUT_SECONDS)
        with client:
            if security in ("tls", "starttls"):
                client.starttls(context=ssl.create_default_context())
            if username:
                client.login(username, password or "")
            work(client)
    except (smtplib.SMTPException, OSError) as exc:
        raise MailError(f"{type(exc).__name__}: {exc}", transient=_transient(exc)) from exc


def _transient(exc: Exception) -> bool:
    if isinstance(exc, smtplib.SMTPRecipientsRefused):
        return all(400 <= code < 500 for code, _ in exc.recipients.values())
    if isinstance(exc, smtplib.SMTPResponseException):
        return 400 <= exc.smtp_code < 500
    if isinstance(exc, ssl.SSLError):  # a certificate or protocol mismatch: configuration, not an outage
        return False
    return isinstance(exc, (smtplib.SMTPServerDisconnected, OSError))  # refused, reset, timed out, no route
