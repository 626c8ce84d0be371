"""Statement timeouts that need a thread (DuckDB's `interrupt()`): one timer thread per process.

`call_later(seconds, fn)` schedules fn and returns a handle; `handle.cancel()` guarantees fn is not
running and never will. A threading.Timer per query started and woke a thread for every statement,
and each thread switch took the GIL from the request: 3 ms a query on a busy two-CPU host. Here the
thread sleeps until the earliest deadline and is woken only when a new one comes sooner; cancelled
entries stay in the heap (no wake-up) until they are due or make up half of it.
"""
from __future__ import annotations

import heapq
import itertools
import logging
import threading
import time
from typing import Callable

log = logging.getLogger("tessera.deadlines")
PURGE_AT = 64  # cancelled entries kept before the heap is rebuilt without them


class Handle:
    def __init__(self, due: float, fn: Callable[[], object], owner: "Deadlines"):
        self.due = due
        self._fn = fn
        self._owner = owner
        self._lock = threading.Lock()
        self.cancelled = False
        self.fired = False

    def cancel(self) -> None:
        with self._lock:  # waits for a firing fn to return
            if self.cancelled or self.fired:
                return
            self.cancelled = True
        self._owner._cancelled_one()

    def _fire(self) -> None:
        with self._lock:
            if self.cancelled:
                return
            self.fired = True
            try:
                self._fn()
            except Exception:  # the statement may have just ended: nothing to stop
                log.debug("deadline callback failed", exc_info=True)


class Deadlines:
    def __init__(self):
        self._cond = threading.Condition()
        self._heap: list[tuple[float, int, Handle]] = []
        self._seq = itertools.count()
        self._cancelled = 0
        self._waking_at: float | None = None  # the due time the thread sleeps until (None: forever)
        self._thread: threading.Thread | None = None

    def call_later(self, seconds: float, fn: Callable[[], object]) -> Handle:
        handle = Handle(time.monotonic() + seconds, fn, self)
        with self._cond:
            heapq.heappush(self._heap, (handle.due, next(self._seq), handle))
            if self._thread is None or not self._thread.is_alive():  # first use, or after a fork
                self._thread = threading.Thread(target=self._run, name="tessera-deadlines", daemon=True)
                self._thread.start()
            elif self._waking_at is None or handle.due < self._waking_at:
                self._cond.notify()
        return handle

    def pending(self) -> int:
        """Scheduled callbacks not yet fired or cancelled."""
        with self._cond:
            return sum(1 for _, _, h in self._heap if not h.cancelled)

    def _cancelled_one(self) -> None:
        with self._cond:
            self._cancelled += 1
            if self._cancelled >= PURGE_AT and self._cancelled * 2 >= len(self._heap):
                self._heap = [entry for entry in self._heap if not entry[2].cancelled]
                heapq.heapify(self._heap)
                self._cancelled = 0

    def _run(self) -> None:
        while True:
            with self._cond:
                while True:
                    while self._heap and self._heap[0][2].cancelled:
                        heapq.heappop(self._heap)
                        self._cancelled = max(0, self._cancelled - 1)
                    due = self._heap[0][0] if self._heap else None
                    if due is not None and due <= time.monotonic():
                        handle = heapq.heappop(self._heap)[2]
                        break
                    self._waking_at = due
                    self._cond.wait(None if due is None else due - time.monotonic())
                    self._waking_at = None
            handle._fire()


_deadlines = Deadlines()


def call_later(seconds: float, fn: Callable[[], object]) -> Handle:
    return _deadlines.call_later(seconds, fn)
