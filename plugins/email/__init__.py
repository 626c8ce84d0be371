"""E-mail: the SMTP settings that core.outbound.mail sends with (invitations, resets, subscriptions), and
/api/email (views.py), which checks them against the server before storing them and sends a test message.
"""
from core import SettingDef, hookimpl
from core.http.errors import Invalid

SECURITY = ("none", "ssl", "tls", "starttls")


def _security(value):
    if str(value).lower() not in SECURITY:
        raise Invalid({"value": f"Invalid value for email-smtp-security: use one of {', '.join(SECURITY)}."})
    return str(value).lower()


def _port(value):
    if not 0 < int(value) < 65536:
        raise Invalid({"value": "Invalid value for email-smtp-port: use a port number from 1 to 65535."})
    return int(value)


def _address(value):
    from core.http.types import EMAIL_RE

    if not EMAIL_RE.match(str(value).strip()):
        raise Invalid({"value": "Invalid value for email-from-address: use an e-mail address."})
    return str(value).strip()


def _configured(session):
    from flask import current_app

    from core.outbound import mail

    return mail.is_configured(current_app.extensions["tessera"].settings, session)


@hookimpl
def register_routes():
    from .views import email_api

    return [email_api]


@hookimpl
def register_settings():
    return [
        SettingDef("email-smtp-host", description="The address of the SMTP server that sends e-mail."),
        SettingDef("email-smtp-port", type="integer", validate=_port, description="The port of the SMTP server."),
        SettingDef("email-smtp-security", type="keyword", default="none", validate=_security,
                   description="none, ssl, tls or starttls."),
        SettingDef("email-smtp-username", description="The user name to log in to the SMTP server with."),
        SettingDef("email-smtp-password", sensitive=True, description="The password of the SMTP user."),
        SettingDef("email-from-address", validate=_address, description="The address e-mail is sent from."),
        SettingDef("email-from-name", description="The name e-mail is sent from."),
        SettingDef("email-reply-to", type="json", description="Reply-to addresses (a list)."),
        # Public as in Metabase: the sign-in page offers a reset link by e-mail only when one can be sent.
        SettingDef("email-configured?", type="boolean", visibility="public", getter=_configured, env=False,
                   description="Whether an SMTP server and sender address are set."),
    ]
