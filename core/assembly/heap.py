"""The process's heap and CPython's cyclic collector: which objects full collections leave aside.

A loaded app is about 260,000 objects (modules, classes, routes, models, validators) that live as long
as the process. A full collection walks every one of them: about 120 ms on a 2-core machine, holding
the GIL, so every thread of a gunicorn worker waits behind it; under many people's reads that was the
slowest hundredth of the requests. gc.freeze() moves the objects alive at that moment to a generation
the collector never visits: reference counting still frees them, only a cycle among them would stay.
The loaded heap is frozen once per process (a gunicorn worker once its app is loaded; the tests'
template once every plugin is imported) and stays frozen.
"""
from __future__ import annotations

import contextlib
import gc


def freeze_loaded_heap() -> None:
    """Free the garbage of loading, then set every object alive now aside for the life of the process."""
    gc.collect()
    gc.freeze()


@contextlib.contextmanager
def collect_own_garbage():
    """Keep full collections to the objects created inside the block.

    A sync keeps tens of thousands of objects alive until it writes; they alone make CPython run full
    collections, which would walk the whole heap each time (a third of a wide schema's sync). When the
    loaded heap is frozen already that walk is short, and it stays frozen; otherwise (a command-line
    sync) the heap is set aside for the block and handed back to the oldest generation after it.
    """
    if gc.get_freeze_count():
        yield
        return
    gc.freeze()
    try:
        yield
    finally:
        gc.unfreeze()
