"""/api/email (superusers), as Metabase's: PUT stores the SMTP settings after connecting to the server with
them (a server that cannot be reached or refuses the login is a 400 naming the fields, and nothing is
stored), DELETE clears them, POST /test sends a test message to the caller."""
from typing import Any

from pydantic import RootModel

from core.appdb import db
from core.assembly.settings import coerce
from core.http import auth
from core.http.api import Api
from core.http.errors import Invalid
from core.outbound import mail

email_api = Api("email", __name__, url_prefix="/email", auth="superuser")

KEYS = ("email-smtp-host", "email-smtp-port", "email-smtp-security", "email-smtp-username", "email-smtp-password",
        "email-from-address", "email-from-name", "email-reply-to")
MASK = "**********"


class Settings(RootModel[dict[str, Any]]):
    pass


def _values(session, registry) -> dict:
    return {key: registry.get(session, key) for key in KEYS}


def _masked(values: dict) -> dict:
    password = values.get("email-smtp-password")
    return {**values, "email-smtp-password": MASK + str(password)[-2:] if password else None}


@email_api.put("/", body=Settings)
def update_email(body: Settings):
    """Check the SMTP server with the values sent (the others as stored), then store them."""
    session, registry = db.session(), auth.tessera().settings
    values = _values(session, registry)
    sent = {key: value for key, value in body.root.items() if key in KEYS}
    if str(sent.get("email-smtp-password") or "").startswith(MASK):
        sent.pop("email-smtp-password")  # the masked value a client read back: the stored password stays
    for key, value in sent.items():
        definition = registry.definition(key)
        value = coerce(definition, value) if value not in ("", None) else None
        if value is not None and definition.validate is not None:
            try:
                value = definition.validate(value)
            except Invalid as exc:
                raise Invalid({key: next(iter(exc.errors.values()))}) from None
        values[key] = value
    try:
        mail.check(values)
    except mail.MailNotConfigured:
        raise Invalid({"email-smtp-host": "Set the SMTP host."}) from None
    except mail.MailError as exc:
        refused = "Authentication" in str(exc)
        fields = ("email-smtp-username", "email-smtp-password") if refused else ("email-smtp-host", "email-smtp-port")
        word = "Wrong username or password" if refused else "Wrong host or port"
        raise Invalid({field: word for field in fields}, message=f"{word}: {exc}") from None
    for key in sent:
        registry.set(session, key, values[key])
    session.commit()
    return _masked(values)


@email_api.delete("/", status=204)
def clear_email():
    """Forget every SMTP setting: e-mail is off until set again."""
    session, registry = db.session(), auth.tessera().settings
    for key in KEYS:
        registry.set(session, key, None)
    session.commit()


@email_api.post("/test")
def send_test():
    """Send a test message to the caller with the stored settings; 400 with the server's words when it fails."""
    session, registry = db.session(), auth.tessera().settings
    user = auth.require_user()
    site = registry.get_or(session, "site-name", "Tessera")
    try:
        mail.send(registry, session, to=[user.email], subject=f"Test e-mail from {site}",
                  text=f"Your e-mail settings work: {site} can send e-mail.")
    except mail.MailError as exc:
        raise Invalid(str(exc)) from None
    return {"ok": True}
