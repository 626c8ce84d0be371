"""Fixtures for every test directory: core.testing's (the app, its clients, the services) and the card
tests' warehouse, which the charts, dashboards, sharing, subscriptions and revisions tests use too."""
import gc
from pathlib import Path

import pytest

from tests.plugins.cards.fixtures import make_warehouse, register_warehouse

pytest_plugins = ["core.testing"]


@pytest.hookimpl(trylast=True)
def pytest_collection_finish(session):
    """Move the heap that collection built (every library and test module) out of the collector's sight:
    each test builds an app, and the full collections its allocations set off used to scan that whole
    heap again, a quarter of a second every few tests (core/sync/schema.py does the same for a sync)."""
    gc.collect()
    gc.freeze()


@pytest.fixture
def warehouse(app, app_config) -> dict:
    """tests/plugins/cards/fixtures.py's SQLite warehouse, registered in this test's app DB; its ids by name."""
    return register_warehouse(app, make_warehouse(Path(app_config["TESSERA_DATA_DIR"])))
