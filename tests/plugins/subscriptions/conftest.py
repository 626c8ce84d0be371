"""Fixtures of the subscription tests: an SMTP server the settings point at."""
import pytest

from core.testing.app import set_setting

from .support import Inbox


@pytest.fixture
def inbox(app):
    box = Inbox()
    set_setting(app, "email-smtp-host", "127.0.0.1")
    set_setting(app, "email-smtp-port", box.port)
    set_setting(app, "email-from-address", "tessera@example.com")
    yield box
    box.close()
