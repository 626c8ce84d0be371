"""Fixtures of the subscription tests: an SMTP server the settings point at, and a back-off for
e-mail retries short enough for tests (plugins.subscriptions.retry)."""
import pytest

from core.testing.app import set_setting

from .support import Inbox


@pytest.fixture
def app_config(app_config):
    return {**app_config, "TESSERA_MAIL_RETRY_ATTEMPTS": 3, "TESSERA_MAIL_RETRY_INITIAL_SECONDS": 0.05}


@pytest.fixture
def inbox(app):
    box = Inbox()
    set_setting(app, "email-smtp-host", "127.0.0.1")
    set_setting(app, "email-smtp-port", box.port)
    set_setting(app, "email-from-address", "tessera@example.com")
    yield box
    box.close()
