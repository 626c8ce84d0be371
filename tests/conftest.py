"""Fixtures for every test directory: core.testing's (the app, its clients, the services) and the card
tests' warehouse, which the charts, dashboards, sharing, subscriptions and revisions tests use too."""
from pathlib import Path

import pytest

from tests.plugins.cards.fixtures import make_warehouse, register_warehouse

pytest_plugins = ["core.testing"]


def _long(item) -> bool:
    """Whether the test is of the kinds that take seconds: a browser, a server process or a benchmark's."""
    path = item.path
    return (path.parent.name == "tests" and path.name.startswith("test_") or path.parent.name == "bench"
            or path.stem.endswith(("_browser", "_journey")))


def pytest_collection_modifyitems(session, config, items):
    """The long tests first (order kept otherwise): pytest-xdist hands tests out in this order, and a
    long one handed out last kept one worker busy while the other had nothing left to do."""
    items.sort(key=lambda item: not _long(item))


@pytest.fixture
def warehouse(app, app_config) -> dict:
    """tests/plugins/cards/fixtures.py's SQLite warehouse, registered in this test's app DB; its ids by name."""
    return register_warehouse(app, make_warehouse(Path(app_config["TESSERA_DATA_DIR"])))
