"""Fixtures for every test directory: core.testing's (the app, its clients, the services) and the card
tests' warehouse, which the charts, dashboards, sharing, subscriptions and revisions tests use too."""
from pathlib import Path

import pytest

from tests.plugins.cards.fixtures import make_warehouse, register_warehouse

pytest_plugins = ["core.testing"]


@pytest.fixture
def warehouse(app, app_config) -> dict:
    """tests/plugins/cards/fixtures.py's SQLite warehouse, registered in this test's app DB; its ids by name."""
    return register_warehouse(app, make_warehouse(Path(app_config["TESSERA_DATA_DIR"])))
