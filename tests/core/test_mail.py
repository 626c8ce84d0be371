"""core.outbound.mail.send with inline images and attachments, received by a real SMTP server: the HTML
part and its images travel as multipart/related (the HTML refers to them by Content-ID), files come
after as attachments, and mail clients that show only text get the plain part."""
from __future__ import annotations

import pytest

from core.outbound import mail
from core.testing.app import set_setting
from tests.plugins.subscriptions.support import Inbox


def test_inline_images_and_attachments(app):
    inbox = Inbox()
    try:
        set_setting(app, "email-smtp-host", "127.0.0.1")
        set_setting(app, "email-smtp-port", inbox.port)
        set_setting(app, "email-from-address", "from@example.com")
        state = app.extensions["tessera"]
        png = b"\x89PNG\r\n\x1a\nfake"
        with app.app_context(), state.db.session() as session:
            mail.send(state.settings, session, to=["to@example.com"], subject="Charts", text="plain",
                      html='<img src="cid:chart-1@tessera">', inline=[mail.Part("chart-1@tessera", png, "image/png")],
                      attachments=[mail.Part("rows.csv", b"a,b\n1,2\n", "text/csv")])
        [(to, message)] = inbox.wait(1)
    finally:
        inbox.close()
    assert to == ["to@example.com"] and message.get_content_type() == "multipart/mixed"
    alternative, attachment = message.get_payload()
    assert alternative.get_content_type() == "multipart/alternative"
    plain, related = alternative.get_payload()
    assert plain.get_content().strip() == "plain" and related.get_content_type() == "multipart/related"
    html, image = related.get_payload()
    assert 'src="cid:chart-1@tessera"' in html.get_content()
    assert image["Content-ID"] == "<chart-1@tessera>" and image.get_payload(decode=True) == png
    assert attachment.get_filename() == "rows.csv" and attachment.get_payload(decode=True) == b"a,b\n1,2\n"


def test_unconfigured_mail_is_refused(app):
    state = app.extensions["tessera"]
    with app.app_context(), state.db.session() as session, pytest.raises(mail.MailNotConfigured):
        mail.send(state.settings, session, to=["to@example.com"], subject="x", text="x")
