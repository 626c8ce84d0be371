"""Shared pieces of the subscription tests: a real SMTP server on loopback (aiosmtpd), the SMTP
settings pointing at it, cards over the small warehouse, and received messages parsed."""
from __future__ import annotations

import contextlib
import email
import email.policy
import socket
import time

from core.testing.app import set_setting
from tests.plugins.cards.fixtures import card_body, mbql_query, native_query


class Inbox:
    """Messages an aiosmtpd server on 127.0.0.1 received, each parsed as an email.message.EmailMessage."""

    def __init__(self, start: bool = True, refuse: str | None = None):
        """`start=False`: the port is chosen but nothing listens until start() (a mail server that is down);
        `refuse`: the SMTP answer to every recipient (e.g. "550 ..."), instead of accepting mail."""
        from aiosmtpd.controller import Controller

        self.received: list[tuple[list[str], email.message.EmailMessage]] = []
        inbox = self

        class Handler:
            async def handle_RCPT(self, server, session, envelope, address, rcpt_options):  # noqa: N802
                if refuse:
                    return refuse
                envelope.rcpt_tos.append(address)
                return "250 OK"

            async def handle_DATA(self, server, session, envelope):  # noqa: N802 - aiosmtpd's name
                message = email.message_from_bytes(envelope.original_content, policy=email.policy.default)
                inbox.received.append((list(envelope.rcpt_tos), message))
                return "250 OK"

        # aiosmtpd's start-up check connects to the port it was given, so it needs a real one, not 0.
        with socket.socket() as probe:
            probe.bind(("127.0.0.1", 0))
            self.port = probe.getsockname()[1]
        self.controller = Controller(Handler(), hostname="127.0.0.1", port=self.port)
        self.started = False
        if start:
            self.start()

    def start(self):
        self.controller.start()
        self.started = True

    def wait(self, count: int, timeout: float = 10) -> list:
        deadline = time.monotonic() + timeout
        while len(self.received) < count and time.monotonic() < deadline:
            time.sleep(0.05)
        return self.received

    def close(self):
        if self.started:
            self.controller.stop()


@contextlib.contextmanager
def smtp_inbox(app):
    """An Inbox the app's e-mail settings point at, closed at the end."""
    box = Inbox()
    set_setting(app, "email-smtp-host", "127.0.0.1")
    set_setting(app, "email-smtp-port", box.port)
    set_setting(app, "email-from-address", "tessera@example.com")
    try:
        yield box
    finally:
        box.close()


def parts(message) -> dict[str, list]:
    """The message's parts by kind: html (text), images (Content-ID, bytes), files (name, bytes)."""
    out: dict[str, list] = {"html": [], "images": [], "files": []}
    for part in message.walk():
        if part.is_multipart():
            continue
        kind = part.get_content_type()
        if kind == "text/html":
            out["html"].append(part.get_content())
        elif kind.startswith("image/"):
            out["images"].append((part["Content-ID"], part.get_payload(decode=True)))
        elif part.get_filename():
            out["files"].append((part.get_filename(), part.get_payload(decode=True)))
    return out


def add_card(client, warehouse, name: str, display: str = "table", sql: str | None = None, **extra) -> dict:
    query = native_query(warehouse["db"], sql) if sql else mbql_query(warehouse["db"], **{"source-table": warehouse["people"]})
    response = client.post("/api/card", json=card_body(name, query, display=display, **extra))
    assert response.status_code == 200, response.json
    return response.json


def card_ref(card: dict, **extra) -> dict:
    return {"id": card["id"], "include_csv": False, "include_xls": False, "dashboard_card_id": None, **extra}


def daily(hour: int = 8, recipients=(), **extra) -> dict:
    return {"channel_type": "email", "enabled": True, "schedule_type": "daily", "schedule_hour": hour,
            "schedule_day": None, "recipients": list(recipients), **extra}
