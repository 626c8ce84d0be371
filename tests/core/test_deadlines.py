"""core.driver.deadlines: callbacks fire once at their time, never after cancel(), from one thread."""
from __future__ import annotations

import threading
import time

from core.driver.deadlines import PURGE_AT, Deadlines


def test_fires_in_due_order_and_once():
    deadlines = Deadlines()
    fired: list[tuple[str, float]] = []
    start = time.monotonic()
    deadlines.call_later(0.3, lambda: fired.append(("late", time.monotonic() - start)))
    deadlines.call_later(0.1, lambda: fired.append(("early", time.monotonic() - start)))  # wakes the thread
    time.sleep(0.6)
    assert [name for name, _ in fired] == ["early", "late"]
    assert 0.1 <= fired[0][1] < 0.25 and 0.3 <= fired[1][1] < 0.5
    assert deadlines.pending() == 0


def test_cancel_means_never():
    deadlines = Deadlines()
    fired = []
    handle = deadlines.call_later(0.05, lambda: fired.append(1))
    handle.cancel()
    handle.cancel()  # twice is harmless
    time.sleep(0.15)
    assert fired == [] and deadlines.pending() == 0


def test_cancel_waits_for_a_running_callback():
    deadlines = Deadlines()
    started, done = threading.Event(), []

    def slow():
        started.set()
        time.sleep(0.2)
        done.append(True)

    handle = deadlines.call_later(0.01, slow)
    assert started.wait(2)
    handle.cancel()
    assert done == [True]  # cancel() returned only once the callback had finished


def test_cancelled_entries_do_not_pile_up():
    deadlines = Deadlines()
    for _ in range(PURGE_AT * 10):
        deadlines.call_later(3600, lambda: None).cancel()
    assert len(deadlines._heap) < PURGE_AT * 2
    fired: list = []
    keep = deadlines.call_later(0.05, lambda: fired.append(1))
    time.sleep(0.2)
    assert fired == [1] and not keep.cancelled


def test_one_thread_serves_every_deadline():
    deadlines = Deadlines()
    before = threading.active_count()
    handles = [deadlines.call_later(60, lambda: None) for _ in range(50)]
    assert threading.active_count() <= before + 1
    for handle in handles:
        handle.cancel()
