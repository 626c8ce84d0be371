"""Fixtures of the subscription tests: an SMTP server the settings point at, and a back-off for
e-mail retries short enough for tests (plugins.subscriptions.retry)."""
import pytest

from .support import smtp_inbox


@pytest.fixture
def app_config(app_config):
    return {**app_config, "TESSERA_MAIL_RETRY_ATTEMPTS": 3, "TESSERA_MAIL_RETRY_INITIAL_SECONDS": 0.05}


@pytest.fixture
def inbox(app):
    with smtp_inbox(app) as box:
        yield box
