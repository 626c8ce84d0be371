"""core.assembly.heap: a server's worker sets its loaded heap aside from the cyclic collector for good,
and a sync's own set-aside neither undoes that nor outlives the sync where nothing was frozen."""
from __future__ import annotations

import gc

import pytest

from core.assembly.heap import collect_own_garbage
from core.assembly.server import settings


def _frozen(obj) -> bool:
    # gc.get_objects() lists the three generations the collector walks, never the frozen one.
    return gc.is_tracked(obj) and not any(seen is obj for seen in gc.get_objects())


@pytest.fixture
def thawed():
    """The test process's heap handed back to the collector, frozen again after (core.testing.app)."""
    gc.unfreeze()
    yield
    gc.collect()
    gc.freeze()


def test_a_gunicorn_worker_freezes_its_heap_once_its_app_is_loaded(thawed):
    loaded = [object()]
    hook = settings({"TESSERA_DATA_DIR": "/tmp"})["post_worker_init"]
    assert gc.get_freeze_count() == 0 and not _frozen(loaded)
    hook(None)  # gunicorn passes the worker
    assert _frozen(loaded)
    created_after = [object()]
    assert not _frozen(created_after)


def test_a_sync_leaves_a_frozen_heap_frozen(thawed):
    loaded = [object()]
    gc.freeze()
    with collect_own_garbage():
        during = [object()]
        assert not _frozen(during)
    assert _frozen(loaded)
    assert gc.get_freeze_count() > 0


def test_a_sync_in_a_process_with_nothing_frozen_hands_the_heap_back_after(thawed):
    before = [object()]
    with collect_own_garbage():
        assert _frozen(before)
    assert gc.get_freeze_count() == 0 and not _frozen(before)
